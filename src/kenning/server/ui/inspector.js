// kenning inspector: a read-mostly view of one tenant's memory, built from /v1 answers.
// Every value is put in the page as text (never as HTML), and every call carries the key
// the user entered, so the page shows exactly what that key may read.
"use strict";

const KEY = "kenning.inspector.key";
const state = { key: null, me: null, canWrite: false };

// -- small DOM helpers ----------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "text") el.textContent = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function put(el, ...children) {
  // Element.append would write null as text and an array as its string.
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined && child !== false) el.append(child);
  }
  return el;
}

function table(caption, headers, rows, attrs) {
  return h("table", attrs || {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headers.length,
      class: "muted" }, "Nothing here."))));
}

function row(cells, attrs) {
  return h("tr", attrs || {}, cells.map((c) => h("td", {}, c)));
}

function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/:00Z$/, "Z");
}

function num(x, digits) {
  return x === null || x === undefined ? "—" : Number(x).toFixed(digits);
}

function badge(text, kind) {
  return h("span", { class: `badge ${kind || text}` }, text);
}

function say(text, isError) {
  const el = document.getElementById("status");
  el.textContent = text || "";
  el.classList.toggle("error", Boolean(isError));
}

// -- the API --------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, options) {
  const opts = options || {};
  let url = "/v1" + path;
  if (opts.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query)) {
      if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
    }
    if ([...q].length) url += "?" + q;
  }
  const headers = { Authorization: `Bearer ${state.key}` };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method: opts.method || (opts.body !== undefined ? "POST" : "GET"),
    headers,
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    cache: "no-store",
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const err = (data && data.error) || {};
    throw new ApiError(response.status, err.code || "http_error",
      err.message || `HTTP ${response.status}`);
  }
  return data;
}

const enc = encodeURIComponent;

// -- routing --------------------------------------------------------------------------------

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [page, query] = hash.split("?");
  return { page: page || "users", params: new URLSearchParams(query || "") };
}

function link(page, params, text) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  const s = [...q].length ? "?" + q : "";
  return h("a", { href: `#/${page}${s}` }, text);
}

function current() {
  // The user and session the pages share, from the address (so a page can be bookmarked).
  const { params } = route();
  return { user: params.get("user") || "", session: params.get("session") || "" };
}

function updateNav(page) {
  const { user, session } = current();
  for (const a of document.querySelectorAll("#nav a[data-page]")) {
    const p = a.dataset.page;
    const q = new URLSearchParams();
    if (user && p !== "users" && p !== "search") q.set("user", user);
    if (session && ["timeline", "window", "pins", "compaction"].includes(p)) q.set("session", session);
    if (p === "users" && user) q.set("user", user);
    a.href = `#/${p}${[...q].length ? "?" + q : ""}`;
    if (p === page) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  document.getElementById("where").textContent =
    user ? `user ${user}${session ? ` · session ${session}` : ""}` : "";
}

const PAGES = {};

async function render() {
  const view = document.getElementById("view");
  if (!state.me) return;
  const { page, params } = route();
  updateNav(page);
  const draw = PAGES[page] || PAGES.users;
  say("Loading…");
  view.replaceChildren();
  view.setAttribute("aria-busy", "true");
  try {
    await draw(view, params);
    say("");
  } catch (e) {
    put(view, h("p", { class: "error" }, `Could not load: ${e.message}`));
    say(e.message, true);
  } finally {
    view.removeAttribute("aria-busy");
    view.dataset.page = page;
    view.dataset.ready = String(Date.now());
  }
}

function needs(view, params, names, page) {
  const missing = names.filter((n) => !params.get(n));
  if (!missing.length) return false;
  put(view, h("h2", {}, page),
    h("p", {}, `Choose a ${missing.join(" and ")} first on `,
      link("users", {}, "Users and sessions"), "."));
  return true;
}

// -- users and sessions ---------------------------------------------------------------------

PAGES.users = async (view, params) => {
  const user = params.get("user") || "";
  const form = h("form", { class: "inline", role: "search" },
    h("label", { for: "user-filter" }, "Find users"),
    h("input", { id: "user-filter", type: "search", name: "contains",
      value: params.get("contains") || "" }),
    h("button", { type: "submit" }, "Find"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams({ contains: form.contains.value });
    location.hash = `#/users?${q}`;
  });
  put(view, h("h2", {}, "Users and sessions"), form);
  const data = await api("/users", { query: { contains: params.get("contains"), limit: 500 } });
  const rows = data.users.map((u) => row([
    link("users", { user: u.user }, u.user), u.sessions, u.events, when(u.first_at),
    when(u.last_at),
  ], { "aria-current": u.user === user ? "true" : null }));
  put(view, table(`${data.users.length} users, most recently active first`,
    ["User", "Sessions", "Events", "First active", "Last active"], rows, { id: "users" }));
  if (!user) return;
  const sessions = (await api(`/users/${enc(user)}/sessions`)).sessions;
  const filter = h("input", { id: "session-filter", type: "search" });
  const srows = sessions.slice().reverse().map((s) => row([
    h("strong", {}, s.session), s.events, when(s.first_at), when(s.last_at),
    h("span", { class: "links" },
      link("timeline", { user, session: s.session }, "Timeline"),
      link("window", { user, session: s.session }, "Window"),
      link("pins", { user, session: s.session }, "Pins"),
      link("compaction", { user, session: s.session }, "Compaction")),
  ], { "data-session": s.session }));
  filter.addEventListener("input", () => {
    const q = filter.value.toLowerCase();
    for (const tr of srows) tr.hidden = !tr.dataset.session.toLowerCase().includes(q);
  });
  put(view, h("h3", {}, `Sessions of ${user}`),
    h("p", { class: "links" }, link("facts", { user }, "Facts"),
      link("profile", { user }, "Profile, consent and holds")),
    h("div", { class: "inline" }, h("label", { for: "session-filter" }, "Filter sessions"), filter),
    table(`${sessions.length} sessions, latest first`,
      ["Session", "Events", "First event", "Last event", "Open"], srows, { id: "sessions" }));
};

// -- a session's timeline -------------------------------------------------------------------

function pinLabel(p) {
  const shown = p.amount && !p.value.includes(p.amount);
  const amount = shown ? ` (${p.amount} ${p.currency || ""})`.replace(" )", ")") : "";
  return `${p.kind}: ${p.value}${amount}${p.version > 1 ? ` v${p.version}` : ""}`;
}

function eventItem(ev, pinsBySource) {
  const pins = (pinsBySource.get(ev.id) || []).concat(pinsBySource.get(ev.idempotency_key) || []);
  const body = [];
  if (ev.tool_name) {
    body.push(h("details", { class: "tool" },
      h("summary", {}, `Tool ${ev.role === "tool" ? "result" : "call"}: ${ev.tool_name}`),
      ev.tool_args !== null ? h("pre", {}, "arguments " + JSON.stringify(ev.tool_args, null, 2)) : null,
      ev.tool_result !== null ? h("pre", {}, "result " + JSON.stringify(ev.tool_result, null, 2)) : null));
  }
  if (ev.content && !ev.tool_name) body.push(h("p", { class: "content" }, ev.content));
  else if (ev.content) body.push(h("p", { class: "content muted" }, ev.content));
  return h("li", { class: `event role-${ev.role}`, id: `seq-${ev.seq}`, "data-seq": ev.seq },
    h("div", { class: "meta" }, h("span", { class: "seq" }, `#${ev.seq}`), badge(ev.role, "role"),
      h("time", { datetime: ev.at }, when(ev.at)),
      pins.map((p) => h("span", { class: "badge pin", title: `pin ${p.key}` },
        `pinned ${pinLabel(p)}`))),
    body);
}

PAGES.timeline = async (view, params) => {
  if (needs(view, params, ["user", "session"], "Timeline")) return;
  const user = params.get("user"), session = params.get("session");
  const q = { user };
  const [events, summaries, pins] = await Promise.all([
    api(`/sessions/${enc(session)}/events`, { query: q }),
    api(`/sessions/${enc(session)}/summaries`, { query: q }),
    api(`/sessions/${enc(session)}/pins`, { query: { user, history: true } }),
  ]);
  const pinsBySource = new Map();
  for (const p of pins.pins) {
    if (!p.source_event_id) continue;
    if (!pinsBySource.has(p.source_event_id)) pinsBySource.set(p.source_event_id, []);
    pinsBySource.get(p.source_event_id).push(p);
  }
  const ranges = summaries.summaries.slice().sort((a, b) => a.first_seq - b.first_seq);
  const list = h("ol", { class: "timeline", id: "timeline" });
  let i = 0;
  const evs = events.events;
  while (i < evs.length) {
    const ev = evs[i];
    const s = ranges.find((r) => ev.seq >= r.first_seq && ev.seq <= r.last_seq);
    if (!s) { list.append(eventItem(ev, pinsBySource)); i += 1; continue; }
    const inner = [];
    while (i < evs.length && evs[i].seq <= s.last_seq) { inner.push(evs[i]); i += 1; }
    const pinned = inner.flatMap((e) => (pinsBySource.get(e.id) || [])
      .concat(pinsBySource.get(e.idempotency_key) || []).map((p) => [e, p]));
    list.append(h("li", { class: "summary", "data-first": s.first_seq, "data-last": s.last_seq },
      h("div", { class: "meta" }, badge(`summary level ${s.level}`, "summary"),
        `replaces #${s.first_seq}–#${s.last_seq} (${inner.length} events) · ${s.summarizer}`,
        pinned.map(([e, p]) => h("span", { class: "badge pin", title: `pin ${p.key}` },
          `pinned at #${e.seq} ${pinLabel(p)}`))),
      h("pre", { class: "summary-text" }, s.text),
      h("details", {}, h("summary", {}, `Show the ${inner.length} events it replaced`),
        h("ol", { class: "timeline" }, inner.map((e) => eventItem(e, pinsBySource))))));
  }
  put(view, h("h2", {}, `Timeline of ${session}`),
    h("p", { class: "muted" }, `${evs.length} events, ${summaries.summaries.length} active ` +
      `summaries, ${pins.pins.length} pin versions.`), list);
  const target = params.get("seq") && document.getElementById(`seq-${params.get("seq")}`);
  if (target) {
    // A link to one turn (a fact's source): open the summary that hides it and show it.
    for (let el = target.parentElement; el; el = el.parentElement) {
      if (el.tagName === "DETAILS") el.open = true;
    }
    target.classList.add("target");
    target.setAttribute("tabindex", "-1");
    target.scrollIntoView({ block: "center" });
  }
};

// -- the window -----------------------------------------------------------------------------

const MODELS = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o3", "gpt-4", "gpt-oss", "llama-3.1-8b",
  "qwen3", "claude-sonnet-4"];
const SIGNALS = ["bm25", "cosine", "session", "recency", "access", "weighted", "score"];
const SIGNAL_NAMES = { bm25: "BM25", cosine: "Vector", session: "Session", recency: "Recency",
  access: "Access", weighted: "Weighted", score: "Final" };

PAGES.window = async (view, params) => {
  if (needs(view, params, ["user", "session"], "Window")) return;
  const user = params.get("user"), session = params.get("session");
  const form = h("form", { class: "grid", id: "assemble-form" },
    h("label", { for: "budget" }, "Budget (tokens)"),
    h("input", { id: "budget", name: "budget", type: "number", min: 1, max: 10000000,
      value: params.get("budget") || 4000, required: true }),
    h("label", { for: "model" }, "Model"),
    h("input", { id: "model", name: "model", list: "models", required: true, size: 16,
      value: params.get("model") || "gpt-4o" }),
    h("datalist", { id: "models" }, MODELS.map((m) => h("option", { value: m }))),
    h("label", { for: "system" }, "System prompt"),
    h("input", { id: "system", name: "system", value: "You are a helpful support agent.",
      required: true, size: 50 }),
    h("label", { for: "wquery" }, "Retrieve for (optional)"),
    h("input", { id: "wquery", name: "query", value: params.get("query") || "", size: 50 }),
    h("span", {}), h("button", { type: "submit" }, "Assemble"));
  const out = h("div", { id: "window-out" });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.replaceChildren(h("p", {}, "Assembling…"));
    try {
      await drawWindow(out, user, session, {
        budget: Number(form.budget.value), model: form.model.value,
        system: form.system.value, query: form.query.value.trim(),
      });
    } catch (e) {
      out.replaceChildren(h("p", { class: "error" }, e.message));
    }
  });
  put(view, h("h2", {}, `Window of ${session}`),
    h("p", { class: "muted" }, state.canWrite
      ? "Assembling with a write key may queue a compaction, as any assemble does."
      : "This key only reads: assembling here writes nothing."), form, out);
};

async function drawWindow(out, user, session, opts) {
  const body = { user, budget_tokens: opts.budget, model: opts.model, system: opts.system };
  if (opts.query) body.query = opts.query;
  const w = await api(`/sessions/${enc(session)}/assemble`, { body });
  const budget = w.budget;
  const parts = [
    h("p", { class: "total" }, "Total ",
      h("strong", { id: "window-tokens", "data-tokens": w.tokens }, String(w.tokens)),
      ` of ${budget} tokens (${(w.utilization * 100).toFixed(1)}%) · pressure `,
      badge(w.pressure, `pressure-${w.pressure}`),
      ` · ${w.encoding}${w.exact ? "" : " (approximate count)"}`),
  ];
  if (w.degraded) parts.push(h("p", { class: "error" }, `Degraded: ${w.reasons.join("; ")}`));
  const tierRows = [];
  const skipped = [];
  for (const [name, acc] of Object.entries(w.tiers)) {
    const bar = h("span", { class: "bar" }, h("span", { class: "fill" }));
    bar.firstChild.style.width = `${Math.min(100, (acc.tokens / budget) * 100)}%`;
    if (acc.cap) {
      const cap = h("span", { class: "cap", title: `cap ${acc.cap}` });
      cap.style.left = `${Math.min(100, (acc.cap / budget) * 100)}%`;
      bar.append(cap);
    }
    tierRows.push(row([name, acc.tokens, acc.cap === null ? "—" : acc.cap, acc.included,
      acc.skipped.length, h("span", { role: "img",
        "aria-label": `${name}: ${acc.tokens} of ${budget} tokens` }, bar)],
    { "data-tier": name }));
    for (const s of acc.skipped) skipped.push(row([name, s.key, s.tokens, s.reason]));
  }
  parts.push(table("Tokens by tier, against the budget (the mark is the tier's cap)",
    ["Tier", "Tokens", "Cap", "Included", "Skipped", "Share of budget"], tierRows,
    { id: "tiers" }));
  parts.push(table("What was skipped, and why", ["Tier", "Item", "Tokens", "Reason"], skipped,
    { id: "skipped" }));
  parts.push(await memoriesTable(w, user, opts.query));
  parts.push(h("details", {}, h("summary", {}, `The ${w.messages.length} messages sent`),
    h("ol", { class: "messages" }, w.messages.map((m) =>
      h("li", {}, badge(m.role, "role"), h("pre", {}, m.content || JSON.stringify(m)))))));
  out.replaceChildren(...parts);
}

async function memoriesTable(w, user, query) {
  // The window cites what it retrieved with one score; the same query's search gives each
  // memory's signals, matched by id.
  const signals = new Map();
  if (query && w.citations.length) {
    const found = await api("/search", { body: { query, user, k: 50 } });
    for (const hit of found.hits) signals.set(hit.id, hit);
  }
  const rows = w.citations.map((c) => {
    const hit = signals.get(c.id);
    return row([`${c.session} #${c.seq}`, when(c.at), num(c.score, 3),
      ...["bm25", "cosine", "session", "recency"].map((k) =>
        hit && hit.scores && k in hit.scores ? num(hit.scores[k], 3) : "—"),
      hit ? hit.content : h("span", { class: "muted" }, c.id)]);
  });
  return table(query ? "Retrieved memories (signals from the same query's search)"
    : "Retrieved memories (give a query to see their signals)",
  ["Citation", "At", "Score", "BM25", "Vector", "Session", "Recency", "Text"], rows,
  { id: "memories" });
}

// -- pins -----------------------------------------------------------------------------------

PAGES.pins = async (view, params) => {
  if (needs(view, params, ["user", "session"], "Pins")) return;
  const user = params.get("user"), session = params.get("session");
  const data = await api(`/sessions/${enc(session)}/pins`, { query: { user, history: true } });
  const byKey = new Map();
  for (const p of data.pins) {
    if (!byKey.has(p.key)) byKey.set(p.key, []);
    byKey.get(p.key).push(p);
  }
  const rows = [];
  for (const [key, versions] of byKey) {
    versions.sort((a, b) => b.version - a.version);
    const p = versions[0];
    const history = versions.length > 1 ? h("details", {},
      h("summary", {}, `${versions.length} versions`),
      h("ol", {}, versions.map((v) => h("li", {},
        `v${v.version}: ${v.value}${v.amount ? ` (${v.amount} ${v.currency || ""})` : ""} · ` +
        `${v.status} · set ${when(v.created_at)}${v.closed_at ? ` · closed ${when(v.closed_at)}` : ""}`))))
      : "v1 only";
    rows.push(row([p.kind, key, h("strong", { class: "pin-value" }, p.value),
      p.amount ? `${p.amount} ${p.currency || ""}` : "—", badge(p.status), `v${p.version}`,
      p.source_event_id || "—", when(p.created_at), history], { "data-pin": key }));
  }
  put(view, h("h2", {}, `Pins of ${session}`),
    table(`${byKey.size} pins (${data.pins.length} versions)`,
      ["Kind", "Key", "Value", "Amount", "Status", "Version", "Source event", "Set", "History"],
      rows, { id: "pins" }));
};

// -- facts ----------------------------------------------------------------------------------

PAGES.facts = async (view, params) => {
  if (needs(view, params, ["user"], "Facts")) return;
  const user = params.get("user");
  const asOf = params.get("as_of") || "";
  const form = h("form", { class: "inline" },
    h("label", { for: "as-of" }, "As of (ISO-8601, empty for now)"),
    h("input", { id: "as-of", name: "as_of", value: asOf, size: 28,
      placeholder: "2026-03-02T12:00:00Z" }),
    h("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams({ user });
    if (form.as_of.value.trim()) q.set("as_of", form.as_of.value.trim());
    location.hash = `#/facts?${q}`;
  });
  const [all, valid] = await Promise.all([
    api(`/users/${enc(user)}/facts`, { query: { include_closed: true } }),
    asOf ? api(`/users/${enc(user)}/facts`, { query: { as_of: asOf } }) : null,
  ]);
  const validIds = valid ? new Set(valid.facts.map((f) => f.id)) : null;
  const turns = await sourceTurns(user, all.facts);
  const groups = new Map();
  for (const f of all.facts) {
    const k = `${f.subject} · ${f.attribute}${f.qualifier ? ` (${f.qualifier})` : ""}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(f);
  }
  const sections = [];
  for (const [k, facts] of groups) {
    facts.sort((a, b) => (a.valid_from < b.valid_from ? -1 : 1));
    sections.push(h("section", { class: "fact-group" }, h("h3", {}, k),
      h("ol", { class: "fact-line" }, facts.map((f) => factItem(f, user, validIds, turns)))));
  }
  put(view, h("h2", {}, `Facts of ${user}`), form,
    asOf ? h("p", {}, `${valid.facts.length} facts were valid at ${asOf} (marked).`) : null,
    sections.length ? sections : h("p", { class: "muted" }, "No facts."));
};

async function sourceTurns(user, facts) {
  // The turns facts were read from, by event id and by the application's own id.
  const sessions = [...new Set(facts.map((f) => f.session).filter(Boolean))].slice(0, 20);
  const turns = new Map();
  const found = await Promise.all(sessions.map((s) =>
    api(`/sessions/${enc(s)}/events`, { query: { user } }).catch(() => ({ events: [] }))));
  for (const { events } of found) {
    for (const ev of events) {
      turns.set(ev.id, ev);
      if (ev.idempotency_key) turns.set(ev.idempotency_key, ev);
    }
  }
  return turns;
}

function factItem(f, user, validIds, turns) {
  const sources = (f.sources || []).map((s) => {
    const ev = turns.get(s);
    if (!ev) return h("span", {}, s);
    return h("span", { class: "source" },
      link("timeline", { user, session: ev.scope.session, seq: ev.seq },
        `${ev.scope.session} #${ev.seq}`),
      ` ${ev.role}: “${ev.content.length > 120 ? ev.content.slice(0, 117) + "…" : ev.content}”`);
  });
  const item = h("li", { class: `fact status-${f.status}`, "data-fact": f.id, "data-status": f.status,
    "data-valid": validIds ? String(validIds.has(f.id)) : null },
  h("div", { class: "meta" }, badge(f.status), validIds && validIds.has(f.id) ? badge("valid then", "asof") : null,
    `${when(f.valid_from)} → ${f.valid_to ? when(f.valid_to) : "now"}`),
  h("p", {}, h("strong", {}, f.value), ` — ${f.text}`),
  h("p", { class: "muted" }, `${f.source}, confidence ${num(f.confidence, 2)}, ` +
    `reinforced ${f.reinforced}×${f.superseded_by ? `, superseded by ${f.superseded_by}` : ""}`),
  h("p", { class: "sources" }, "Read from ", sources.length ? sources : "—"));
  if (state.canWrite && f.status === "active") item.append(factActions(f, user));
  return item;
}

function factActions(f, user) {
  const field = h("input", { id: `fix-${f.id}`, name: "value", required: true, value: f.value });
  const correct = h("form", { class: "inline", hidden: true },
    h("label", { for: `fix-${f.id}` }, "Corrected value"), field,
    h("button", { type: "submit" }, "Save correction"));
  correct.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    await act(() => api(`/users/${enc(user)}/facts`, { body: {
      session: f.session, attribute: f.attribute, value: field.value.trim(),
      subject: f.subject, qualifier: f.qualifier, category: f.category } }), "Corrected.");
  });
  return h("div", { class: "actions" },
    h("button", { type: "button", onclick: async () => {
      if (!window.confirm(`Revoke “${f.text}”? It stops surfacing at once.`)) return;
      await act(() => api(`/users/${enc(user)}/facts/${enc(f.id)}/revoke`, { body: {} }), "Revoked.");
    } }, "Revoke"),
    h("button", { type: "button", onclick: () => {
      correct.hidden = false;
      field.focus();
    } }, "Correct"), correct);
}

async function act(call, done) {
  try {
    await call();
    await render();
    say(done);
  } catch (e) {
    say(e.message, true);
  }
}

// -- profile, consent and holds -------------------------------------------------------------

function dl(obj) {
  const entries = Object.entries(obj || {});
  if (!entries.length) return h("p", { class: "muted" }, "None.");
  return h("dl", {}, entries.flatMap(([k, v]) => [h("dt", {}, k),
    h("dd", {}, typeof v === "object" && v !== null ? JSON.stringify(v) : String(v))]));
}

PAGES.profile = async (view, params) => {
  if (needs(view, params, ["user"], "Profile")) return;
  const user = params.get("user");
  const [profile, consent, policy, holds] = await Promise.all([
    api(`/users/${enc(user)}/profile`), api(`/users/${enc(user)}/consent`), api("/policy"),
    api("/holds"),
  ]);
  const mine = holds.holds.filter((x) => !x.scope.user || x.scope.user === user);
  put(view, h("h2", {}, `Profile of ${user}`),
    h("div", { class: "cols" },
      h("section", {}, h("h3", {}, "Biography"), dl(profile.biography),
        h("h3", {}, "Preferences"), dl(profile.preferences),
        h("h3", {}, "Style"), dl(profile.style), h("h3", {}, "People"), dl(profile.people)),
      h("section", {}, h("h3", {}, "Activity"), dl({ sessions: profile.session_count,
        "first seen": when(profile.first_seen_at), "last session": profile.last_session,
        "last session at": when(profile.last_session_at) }),
      h("h3", {}, "Corrections"),
      table("Values the user corrected", ["Attribute", "Old", "New", "At"],
        (profile.corrections || []).map((c) => row([c.attribute, c.old, c.new, when(c.at)]))),
      h("h3", {}, "Consent (effective)"), dl(consent),
      h("h3", {}, "Tenant policy"), dl(policy),
      h("h3", {}, "Legal holds on this user or the tenant"),
      table("Holds", ["Scope", "Reason", "Since"], mine.map((x) =>
        row([x.scope.session ? `session ${x.scope.session}`
          : x.scope.user ? `user ${x.scope.user}` : "tenant", x.reason, when(x.created_at)]))))));
};

// -- compaction audit -----------------------------------------------------------------------

PAGES.compaction = async (view, params) => {
  if (needs(view, params, ["user", "session"], "Compaction")) return;
  const user = params.get("user"), session = params.get("session");
  const data = await api(`/sessions/${enc(session)}/compaction`, { query: { user } });
  put(view, h("h2", {}, `Compaction of ${session}`),
    table("Jobs", ["Id", "Status", "Reason", "Model", "Budget", "Attempts", "Queued", "Error"],
      data.jobs.map((j) => row([j.id, badge(j.status), j.reason, j.model, j.budget, j.attempts,
        when(j.created_at), j.error || "—"]))),
    table("Audit log: what was compressed, tokens before and after",
      ["At", "Action", "Events", "Tokens before", "Tokens after", "Saved", "Summary",
        "Summarizer", "Detail"],
      data.audit.map((a) => row([when(a.at), a.action,
        a.first_seq === null ? "—" : `#${a.first_seq}–#${a.last_seq}`, a.tokens_before ?? "—",
        a.tokens_after ?? "—", a.tokens_before !== null && a.tokens_after !== null
          ? a.tokens_before - a.tokens_after : "—", a.summary_id || "—", a.summarizer || "—",
        a.detail || ""])), { id: "audit" }));
};

// -- search playground ----------------------------------------------------------------------

PAGES.search = async (view, params) => {
  const form = h("form", { class: "grid", role: "search" },
    h("label", { for: "squery" }, "Query"),
    h("input", { id: "squery", name: "query", required: true, size: 50,
      value: params.get("query") || "" }),
    h("label", { for: "suser" }, "User (optional)"),
    h("input", { id: "suser", name: "user", value: params.get("user") || "" }),
    h("label", { for: "ssession" }, "Session (optional, needs the user)"),
    h("input", { id: "ssession", name: "session", value: params.get("session") || "" }),
    h("label", { for: "sk" }, "Hits"),
    h("input", { id: "sk", name: "k", type: "number", min: 1, max: 100,
      value: params.get("k") || 10 }),
    h("span", {}), h("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const n of ["query", "user", "session", "k"]) if (form[n].value) q.set(n, form[n].value);
    location.hash = `#/search?${q}`;
  });
  put(view, h("h2", {}, "Search playground"), form);
  const query = params.get("query");
  if (!query) return;
  const body = { query, k: Number(params.get("k") || 10) };
  if (params.get("user")) body.user = params.get("user");
  if (params.get("session")) body.session = params.get("session");
  const found = await api("/search", { body });
  const rows = found.hits.map((hit, i) => row([i + 1,
    ...SIGNALS.map((k) => (hit.scores && k in hit.scores ? num(hit.scores[k], 3) : "—")),
    hit.kind, `${hit.user || "—"} / ${hit.session || "—"}${hit.seq ? ` #${hit.seq}` : ""}`,
    hit.content]));
  put(view, found.degraded ? h("p", { class: "error" }, `Degraded: ${found.reason}`) : null,
    table(`${found.hits.length} hits, best first, each signal side by side`,
      ["#", ...SIGNALS.map((k) => SIGNAL_NAMES[k]), "Kind", "Where", "Text"], rows,
      { id: "hits" }));
};

// -- the key --------------------------------------------------------------------------------

async function open(key) {
  state.key = key;
  try {
    state.me = await api("/me");
  } catch (e) {
    state.key = null;
    state.me = null;
    sessionStorage.removeItem(KEY);
    say(e.status === 401 ? "That key was not accepted." : e.message, true);
    return;
  }
  sessionStorage.setItem(KEY, key);
  state.canWrite = state.me.scopes.includes("write");
  document.getElementById("tenant").textContent = state.me.tenant;
  document.getElementById("scopes").textContent =
    `key ${state.me.key_id} · ${state.canWrite ? "read and write" : "read only"}`;
  document.getElementById("login").hidden = true;
  document.getElementById("who").hidden = false;
  document.getElementById("nav").hidden = false;
  await render();
  document.getElementById("view").focus({ preventScroll: true });
}

function logout() {
  sessionStorage.removeItem(KEY);
  state.key = null;
  state.me = null;
  state.canWrite = false;
  document.getElementById("login").hidden = false;
  document.getElementById("who").hidden = true;
  document.getElementById("nav").hidden = true;
  document.getElementById("view").replaceChildren(h("p", {}, "Key forgotten."));
  document.getElementById("key").value = "";
  document.getElementById("key").focus();
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    open(document.getElementById("key").value.trim());
  });
  document.getElementById("logout").addEventListener("click", logout);
  // The skip link focuses the content without touching the address (which holds the page).
  document.querySelector(".skip").addEventListener("click", (ev) => {
    ev.preventDefault();
    document.getElementById("view").focus({ preventScroll: true });
  });
  window.addEventListener("hashchange", async () => {
    await render();
    document.getElementById("view").focus({ preventScroll: true });
  });
  const saved = sessionStorage.getItem(KEY);
  if (saved) open(saved);
  else document.getElementById("key").focus();
});
