"""The long-term memory commands: facts, profile, consent, tenant policy, procedures, holds,
purge, consolidate, stats."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from kenning.cli.inputs import add_location, store_location
from kenning.errors import InvalidInput
from kenning.longterm.service import LongTermSettings
from kenning.memory import Memory
from kenning.records import Procedure, Scope, TenantPolicy, to_utc
from kenning.settings import Settings
from kenning.wire import stats_json

__all__ = ["add_parsers"]

_Command = Callable[[Memory, argparse.Namespace], None]


def add_parsers(sub: Any) -> None:
    """Add the long-term commands to the ``kenning`` parser, each with its handler."""
    _add_user_parsers(sub)
    _add_tenant_parsers(sub)


def _add_user_parsers(sub: Any) -> None:
    """``facts``, ``profile`` and ``consent``: one user's records."""
    p = sub.add_parser("facts", help="a user's long-term facts: list, history, revoke")
    p.add_argument("action", choices=("list", "history", "revoke"))
    _common(p, user=True)
    p.add_argument("--session", help="list: only facts read from this session")
    p.add_argument("--as-of", help="list: what was valid at this ISO time")
    p.add_argument("--all", action="store_true", help="list: closed facts too (any status)")
    p.add_argument("--id", help="history/revoke: the fact's id")
    p.set_defaults(handler=_editing(_facts))

    p = sub.add_parser("profile", help="a user's profile: show, export as JSON, erase the user")
    p.add_argument("action", choices=("show", "export", "erase"))
    _common(p, user=True)
    p.add_argument("--yes", action="store_true", help="erase: confirm erasing every record")
    p.set_defaults(handler=_editing(_profile))

    p = sub.add_parser("consent", help="a user's consent: show or set")
    p.add_argument("action", choices=("show", "set"))
    _common(p, user=True)
    choices = ("on", "off", "default")
    p.add_argument("--share", choices=choices, help="set: share facts across the user's sessions")
    p.add_argument("--sensitive", choices=choices, help="set: keep health/finance/family facts")
    p.set_defaults(handler=_editing(_consent))


def _add_tenant_parsers(sub: Any) -> None:
    """``policy``, ``procedures``, ``hold``, ``purge``, ``consolidate`` and ``stats``."""
    p = sub.add_parser("policy", help="a tenant's defaults and retention: show or set")
    p.add_argument("action", choices=("show", "set"))
    _common(p, user=False)
    p.add_argument("--share", choices=("on", "off"), help="set: users' facts reach their "
                   "other sessions unless a user said otherwise")  # fmt: skip
    p.add_argument("--sensitive", choices=("on", "off"), help="set: keep health/finance/family "
                   "statements as facts")  # fmt: skip
    p.add_argument("--episode-days", help="set: delete events older than this (none: keep)")
    p.add_argument("--fact-days", help="set: delete facts older than this (none: until revoked)")
    p.add_argument("--recent-sessions", type=int, help="set: sessions the rolling summary covers")
    p.add_argument("--fact-tools", help="set: comma-separated tools whose results are read for "
                   "facts (none: no tool)")  # fmt: skip
    p.add_argument("--authoritative-tools", help="set: comma-separated tools whose results may "
                   "grant approval and authorization pins (none: no tool)")  # fmt: skip
    p.add_argument("--file-read-tools", help="set: comma-separated tools that read files "
                   "(the action log lists the files they name; none: no tool)")  # fmt: skip
    p.add_argument("--file-write-tools", help="set: comma-separated tools that write files "
                   "(none: no tool)")  # fmt: skip
    p.add_argument("--file-path-args", help="set: comma-separated arguments of a file tool's "
                   "call that name its path (default path,file_path,filename)")  # fmt: skip
    p.set_defaults(handler=_editing(_policy))

    p = sub.add_parser("procedures", help="playbooks: list, show, approve")
    p.add_argument("action", choices=("list", "show", "approve"))
    _common(p, user=False)
    p.add_argument("--name", help="list: only this playbook")
    p.add_argument("--id", help="show/approve: the version's id")
    p.set_defaults(handler=_editing(_procedures))

    p = sub.add_parser("hold", help="legal holds: add, release, list")
    p.add_argument("action", choices=("add", "release", "list"))
    _common(p, user=False)
    p.add_argument("--user")
    p.add_argument("--session")
    p.add_argument("--reason", help="add: why (shown when an erase is refused)")
    p.set_defaults(handler=_editing(_hold))

    p = sub.add_parser("purge", help="remove a tenant's records past retention, every index")
    _common(p, user=False)
    p.add_argument("--now", help="ISO time to purge as of (default: now)")
    p.set_defaults(handler=_editing(_purge))

    p = sub.add_parser("consolidate", help="read every pending event for facts now")
    add_location(p, "SQLite database file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_consolidate)

    p = sub.add_parser("stats", help="what a tenant or user holds")
    _common(p, user=False)
    p.add_argument("--user")
    p.set_defaults(handler=_editing(_stats))


def _common(p: argparse.ArgumentParser, *, user: bool) -> None:
    add_location(p, "SQLite database file")
    p.add_argument("--tenant", required=True)
    if user:
        p.add_argument("--user", required=True)
    p.add_argument("--json", action="store_true", help="print JSON")


def _procedure_json(p: Procedure) -> dict[str, Any]:
    return {
        "id": p.id, "name": p.name, "version": p.version, "status": p.status.value,
        "tool_schema_hash": p.tool_schema_hash, "steps": list(p.steps),
        "description": p.description, "created_at": p.created_at.isoformat(),
    }  # fmt: skip


def _settings_lines(data: Mapping[str, Any]) -> list[str]:
    """``name: value`` lines, the same way for every command: on/off, none, lists joined."""
    return [f"{name}: {_shown(value)}" for name, value in data.items()]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        return ", ".join(_shown(v) for v in value) or "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_shown(v)}" for k, v in value.items()) or "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _print(value: Any, *, as_json: bool, lines: list[str]) -> None:
    if as_json:
        json.dump(value, sys.stdout, ensure_ascii=False, indent=2)
        print()
    else:
        print("\n".join(lines) if lines else "nothing")


def _flag(value: str | None) -> bool | None:
    return None if value in (None, "default") else value == "on"


def _consolidate(args: argparse.Namespace) -> int:
    path = store_location(args)
    with Memory.open(
        path, settings=_QUIET, resume=False
    ) as memory:  # the model, for near duplicates
        sessions = memory.facts.extract_all()
    _print({"sessions": sessions}, as_json=args.json,
           lines=[f"read {sessions} sessions for facts"])  # fmt: skip
    return 0


def _editing(command: _Command) -> Callable[[argparse.Namespace], int]:
    """The handler that runs *command* on the store: these commands read and edit facts;
    none needs the model, and none starts extraction."""

    def handler(args: argparse.Namespace) -> int:
        with Memory.open(
            store_location(args), embedder=None, settings=_QUIET, resume=False
        ) as memory:
            command(memory, args)
        return 0

    return handler


_QUIET = Settings(longterm=LongTermSettings(extract=False))


def _facts(memory: Memory, args: argparse.Namespace) -> None:
    user = Scope(args.tenant, args.user)
    if args.action == "list":
        scope = Scope(args.tenant, args.user, args.session)
        as_of = None if args.as_of is None else to_utc(args.as_of, what="--as-of")
        facts = memory.facts.list(scope, as_of=as_of, include_closed=args.all)
    elif args.id is None:
        raise InvalidInput(f"facts {args.action} needs --id")
    elif args.action == "history":
        facts = memory.facts.history(user, args.id)
    else:
        facts = [memory.facts.revoke(user, args.id)]
    lines = [f"{f.id}  {f.status.value:<10} {f.text}  (since {f.valid_from:%Y-%m-%d})"
             for f in facts]  # fmt: skip
    _print([f.to_json() for f in facts], as_json=args.json, lines=lines)


def _profile(memory: Memory, args: argparse.Namespace) -> None:
    user = Scope(args.tenant, args.user)
    if args.action == "erase":
        if not args.yes:
            raise InvalidInput("profile erase removes every record of the user: add --yes")
        erased = memory.forget(user)
        _print({"erased": erased}, as_json=args.json, lines=[f"erased {erased} records"])
        return
    if args.action == "export":
        _print(memory.facts.export(user), as_json=True, lines=[])
        return
    profile = memory.facts.profile(user)
    _print(profile.to_json(), as_json=args.json, lines=profile.lines())


def _consent(memory: Memory, args: argparse.Namespace) -> None:
    user = Scope(args.tenant, args.user)
    if args.action == "set":
        if args.share is None and args.sensitive is None:
            raise InvalidInput("consent set needs --share and/or --sensitive (on, off, default)")
        settings = memory.store.user_settings(user)
        share = settings.share_across_sessions if args.share is None else _flag(args.share)
        sensitive = settings.sensitive_facts if args.sensitive is None else _flag(args.sensitive)
        memory.facts.set_consent(user, share_across_sessions=share, sensitive_facts=sensitive)
    consent = memory.facts.consent(user)
    data = {"share_across_sessions": consent.share_across_sessions,
            "sensitive_facts": consent.sensitive_facts}  # fmt: skip
    _print(data, as_json=args.json, lines=_settings_lines(data))


def _days(value: str | None, name: str, current: float | None) -> float | None:
    if value is None:
        return current
    if value.lower() == "none":
        return None
    try:
        return float(value)
    except ValueError:
        raise InvalidInput(f"{name} must be a number of days or 'none', not {value!r}") from None


def _tools(value: str | None, current: tuple[str, ...], flag: str) -> tuple[str, ...]:
    if value is None:
        return current
    if value.strip().lower() == "none":
        return ()
    names = tuple(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    if not names:
        raise InvalidInput(f"{flag} takes tool names separated by commas, or none")
    return names


def _policy(memory: Memory, args: argparse.Namespace) -> None:
    policy = memory.retention.policy(args.tenant)
    if args.action == "set":
        changes = (args.share, args.sensitive, args.episode_days, args.fact_days,
                   args.recent_sessions, args.fact_tools, args.authoritative_tools,
                   args.file_read_tools, args.file_write_tools, args.file_path_args)  # fmt: skip
        if all(c is None for c in changes):
            raise InvalidInput(
                "policy set needs one of --share, --sensitive, --episode-days, --fact-days, "
                "--recent-sessions, --fact-tools, --authoritative-tools, --file-read-tools, "
                "--file-write-tools, --file-path-args"
            )
        policy = TenantPolicy(
            share_across_sessions=(
                policy.share_across_sessions if args.share is None else args.share == "on"
            ),
            sensitive_facts=(
                policy.sensitive_facts if args.sensitive is None else args.sensitive == "on"
            ),
            episode_days=_days(args.episode_days, "--episode-days", policy.episode_days),
            fact_days=_days(args.fact_days, "--fact-days", policy.fact_days),
            recent_sessions=(
                policy.recent_sessions if args.recent_sessions is None else args.recent_sessions
            ),
            fact_tools=_tools(args.fact_tools, policy.fact_tools, "--fact-tools"),
            authoritative_tools=_tools(
                args.authoritative_tools, policy.authoritative_tools, "--authoritative-tools"
            ),
            file_read_tools=_tools(
                args.file_read_tools, policy.file_read_tools, "--file-read-tools"
            ),
            file_write_tools=_tools(
                args.file_write_tools, policy.file_write_tools, "--file-write-tools"
            ),
            file_path_args=_tools(args.file_path_args, policy.file_path_args, "--file-path-args"),
        )
        memory.retention.set_policy(args.tenant, policy)
    data = policy.to_json()
    _print(data, as_json=args.json, lines=_settings_lines(data))


def _procedures(memory: Memory, args: argparse.Namespace) -> None:
    if args.action == "list":
        found = memory.procedures.list(args.tenant, name=args.name)
    elif args.id is None:
        raise InvalidInput(f"procedures {args.action} needs --id")
    elif args.action == "show":
        found = [memory.procedures.show(args.tenant, args.id)]
    else:
        found = [memory.procedures.approve(args.tenant, args.id)]
    lines = [f"{p.id}  {p.name} v{p.version} ({p.status.value}): " + " / ".join(p.steps)
             for p in found]  # fmt: skip
    _print([_procedure_json(p) for p in found], as_json=args.json, lines=lines)


def _hold(memory: Memory, args: argparse.Namespace) -> None:
    scope = Scope(args.tenant, args.user, args.session)
    if args.action == "add":
        if not args.reason:
            raise InvalidInput("hold add needs --reason")
        memory.retention.hold(scope, reason=args.reason)
    elif args.action == "release" and not memory.retention.release(scope):
        raise InvalidInput("there is no hold on exactly this scope")
    holds = memory.retention.holds(args.tenant)
    data = [{"user": h.scope.user, "session": h.scope.session, "reason": h.reason,
             "since": h.created_at.isoformat()} for h in holds]  # fmt: skip
    lines = [f"{h['user'] or '*'} / {h['session'] or '*'}: {h['reason']}" for h in data]
    _print(data, as_json=args.json, lines=lines or [f"no legal holds on tenant {args.tenant}"])


def _purge(memory: Memory, args: argparse.Namespace) -> None:
    now = datetime.now(UTC) if args.now is None else to_utc(args.now, what="--now")
    removed = memory.retention.purge(args.tenant, now=now)
    _print({"removed": removed}, as_json=args.json, lines=[f"removed {removed} records"])


def _stats(memory: Memory, args: argparse.Namespace) -> None:
    stats = memory.store.stats(Scope(args.tenant, args.user), now=datetime.now(UTC))
    data = stats_json(stats)
    lines = _settings_lines({k: v for k, v in data.items() if k != "unread_events"})
    waiting = " (kenning consolidate reads them)" if stats.unread_events else ""
    lines.append(f"events not yet read for facts: {stats.unread_events}{waiting}")
    _print(data, as_json=args.json, lines=lines)
