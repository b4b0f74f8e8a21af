"""The inspector page in a real browser (Debian's Chromium through Selenium and
chromium-driver) against a real ``kenning serve`` process with the real model, holding a
300-turn support conversation written through the REST client.

It checks what an operator relies on: the pinned order id and refund amount show, the
window's token total on the page is the one ``assemble`` returns, the old city shows as
superseded (and as valid at a time before the move), a read key gets no write buttons while a
write key does, and another tenant's key sees none of it. A screenshot of each page (1280×800)
is saved in the test's tmp folder, and also in ``$KENNING_INSPECTOR_SHOTS`` when set (that is
how ``docs/inspector/`` is made).

``make test`` installs the browser (scripts/browser-ci.sh) and sets KENNING_REQUIRE_BROWSER,
so there a missing browser fails; elsewhere the test is skipped without one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning import Client, Scope
from tests.inspector_story import MARKUP, ORDER_ID, REFUND_AMOUNT, Story, tell_story
from tests.processes import kenning, serving

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SYSTEM = "You are a helpful support agent."


def _browser_or_skip() -> Any:
    missing = [p for p in (CHROMIUM, DRIVER) if not Path(p).exists()]
    try:
        from selenium import webdriver
    except ImportError:
        missing.append("selenium")
    if missing:
        if os.environ.get("KENNING_REQUIRE_BROWSER"):
            pytest.fail(f"the browser test needs {missing}: run scripts/browser-ci.sh")
        pytest.skip(f"no browser here ({missing}); scripts/browser-ci.sh installs it")
    return webdriver


class Page:
    """The inspector in one headless Chromium, 1280×800."""

    def __init__(self, base: str, shots: list[Path]) -> None:
        from selenium.webdriver.chrome.service import Service

        webdriver = _browser_or_skip()
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                    "--disable-gpu", "--window-size=1280,800"):  # fmt: skip
            options.add_argument(arg)
        self.driver = webdriver.Chrome(service=Service(DRIVER), options=options)
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False,
        })  # fmt: skip
        self.base = f"{base}/ui/"
        self.shots = shots

    def wait(self, condition: Any, timeout: float = 20) -> Any:
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout).until(condition)

    def login(self, key: str) -> None:
        """Type the key and press Enter, as a keyboard user would."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        self.driver.get(self.base)
        field = self.wait(lambda d: d.find_element(By.ID, "key"))
        assert self.driver.switch_to.active_element == field  # focused on load
        field.send_keys(key, Keys.ENTER)
        self.wait(lambda d: d.find_element(By.ID, "tenant").text)

    def logout(self) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.ID, "logout").click()
        self.wait(lambda d: d.find_element(By.ID, "key").is_displayed())

    def show(self, route: str) -> Any:
        """Open ``#/route`` and wait until the page drew it; return the view element."""
        from selenium.webdriver.common.by import By

        self.driver.execute_script("document.getElementById('view').dataset.ready = ''")
        self.driver.get(f"{self.base}#/{route}")
        view = self.driver.find_element(By.ID, "view")
        self.wait(
            lambda d: view.get_attribute("data-ready") and not view.get_attribute("aria-busy")
        )
        return view

    def shot(self, name: str) -> None:
        path = self.shots[0] / f"{name}.png"
        self.driver.save_screenshot(str(path))
        for extra in self.shots[1:]:
            shutil.copyfile(path, extra / path.name)

    def text(self) -> str:
        return str(self.driver.find_element("id", "view").text)


def _key(where: list[str], tenant: str, scopes: str) -> str:
    made = subprocess.run(kenning("keys", "create", *where, "--tenant", tenant,
                                  "--scopes", scopes),
                          capture_output=True, text=True, check=True)  # fmt: skip
    return str(json.loads(made.stdout)["key"])


@pytest.fixture(params=["sqlite", "postgresql"])
def page(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Page, Story, dict[str, str], str]]:
    _browser_or_skip()
    where = (
        ["--db", str(tmp_path / "served.db")]
        if request.param == "sqlite"
        else ["--store", request.getfixturevalue("pg_url")]
    )
    keys = {"write": _key(where, "acme", "read,write"), "read": _key(where, "acme", "read"),
            "other": _key(where, "globex", "read,write")}  # fmt: skip
    shots = [tmp_path / "screens"]
    if os.environ.get("KENNING_INSPECTOR_SHOTS") and request.param == "sqlite":
        shots.append(Path(os.environ["KENNING_INSPECTOR_SHOTS"]))
    for folder in shots:
        folder.mkdir(parents=True, exist_ok=True)
    with serving(*where, log=tmp_path / "server.log") as served:
        with Client(served.url, api_key=keys["write"]) as client:
            story = tell_story(client, "acme")
        browser = Page(served.url, shots)
        try:
            yield browser, story, keys, served.url
        finally:
            browser.driver.quit()


def test_the_inspector_shows_one_tenants_memory_as_the_api_holds_it(
    page: tuple[Page, Story, dict[str, str], str],
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser, story, keys, url = page
    scope = story.scope
    session = f"user={scope.user}&session={scope.session}"
    browser.login(keys["read"])
    d = browser.driver
    assert d.find_element(By.ID, "tenant").text == "acme"
    assert "read only" in d.find_element(By.ID, "scopes").text

    browser.show(f"users?user={scope.user}")
    users = [r.text.split()[0] for r in d.find_elements(By.CSS_SELECTOR, "#users tbody tr")]
    assert users == ["erik", "dana"]
    assert "support-1 300" in browser.text()
    browser.shot("users")

    # What a customer typed is shown as text: its markup does not run.
    browser.show(f"timeline?user={scope.user}&session=support-0")
    assert MARKUP in browser.text() and d.execute_script("return window.pwned") is None

    view = browser.show(f"timeline?{session}")
    assert view.find_elements(By.CSS_SELECTOR, "li.summary")  # the compacted start
    marked = " ".join(b.text for b in view.find_elements(By.CSS_SELECTOR, ".badge.pin"))
    assert f"entity_id: {ORDER_ID}" in marked and f"({REFUND_AMOUNT} EUR) v2" in marked
    browser.shot("timeline")
    # A link to one turn opens the summary that replaced it: the tool's result, folded.
    browser.show(f"timeline?{session}&seq=201")
    turn = d.find_element(By.ID, "seq-201")
    assert turn.is_displayed() and "Tool result: lookup_order" in turn.text
    assert f"pinned amount: {REFUND_AMOUNT} EUR" in turn.text
    browser.shot("timeline-turn")

    # By keyboard: the pages are links in the tab order; Enter on one opens it.
    pins_link = d.find_element(By.CSS_SELECTOR, "#nav a[data-page='pins']")
    assert pins_link.get_attribute("href").endswith(f"#/pins?{session}")
    pins_link.send_keys(Keys.ENTER)
    browser.wait(lambda d: d.find_element(By.ID, "view").get_attribute("data-page") == "pins")
    refund = d.find_element(By.CSS_SELECTOR, "#pins tr[data-pin='refund']").text
    assert f"{REFUND_AMOUNT} EUR" in refund and "v2" in refund
    order = d.find_element(By.CSS_SELECTOR, "#pins tr[data-pin='order']").text
    assert ORDER_ID in order
    browser.shot("pins")

    _window(browser, story, url, keys["read"])

    _facts(browser, story, keys, url)

    browser.show(f"compaction?{session}")
    assert d.find_elements(By.CSS_SELECTOR, "#audit tbody tr td")
    browser.shot("compaction")
    browser.show(f"profile?user={scope.user}")
    assert "Berlin" in browser.text() and "Lisbon" in browser.text()
    browser.shot("profile")
    browser.show(f"search?query=refund+amount&user={scope.user}")
    first = d.find_elements(By.CSS_SELECTOR, "#hits tbody tr")[0].text
    assert REFUND_AMOUNT in first
    browser.shot("search")

    _another_tenant(browser, story, keys["other"])


def _window(browser: Page, story: Story, url: str, key: str) -> None:
    """Assemble on the page, then through the client with the same settings: one total."""
    from selenium.webdriver.common.by import By

    d = browser.driver
    browser.show(f"window?user={story.scope.user}&session={story.scope.session}")
    budget = d.find_element(By.ID, "budget")
    budget.clear()
    budget.send_keys("1500")
    model = d.find_element(By.ID, "model")
    model.clear()
    model.send_keys("gpt-4o")
    d.find_element(By.ID, "wquery").send_keys("refund for the order")
    d.find_element(By.CSS_SELECTOR, "#assemble-form button[type=submit]").click()
    total = browser.wait(lambda d: d.find_element(By.ID, "window-tokens"))
    shown = int(total.get_attribute("data-tokens"))
    with Client(url, api_key=key) as client:
        window = client.assemble(story.scope, budget_tokens=1500, model="gpt-4o",
                                 system=SYSTEM, query="refund for the order")  # fmt: skip
    assert shown == window.tokens and int(total.text) == window.tokens
    tiers = d.find_elements(By.CSS_SELECTOR, "#tiers tbody tr")
    shown_tiers = {r.get_attribute("data-tier"): int(r.find_elements(By.TAG_NAME, "td")[1].text)
                   for r in tiers}  # fmt: skip
    assert shown_tiers == {tier.value: acc.tokens for tier, acc in window.tiers.items()}
    assert d.find_elements(By.CSS_SELECTOR, "#memories tbody tr td")
    browser.shot("window")


def _facts(browser: Page, story: Story, keys: dict[str, str], url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    d = browser.driver
    user = story.scope.user
    browser.show(f"facts?user={user}")

    def fact(fact_id: str) -> Any:
        return d.find_element(By.CSS_SELECTOR, f"li[data-fact='{fact_id}']")

    old = fact(story.old_city.id)
    assert old.get_attribute("data-status") == "superseded" and "superseded" in old.text
    assert "Berlin" in old.text
    assert fact(story.new_city.id).get_attribute("data-status") == "active"
    assert fact(story.preference.id).get_attribute("data-status") == "revoked"
    assert not d.find_elements(By.XPATH, "//button[text()='Revoke']")  # a read key

    # Between the two statements, the page marks Berlin as what was valid then.
    between = story.old_city.valid_from.isoformat().replace("+00:00", "Z")
    browser.show(f"facts?user={user}&as_of={between}")
    assert fact(story.old_city.id).get_attribute("data-valid") == "true"
    assert fact(story.new_city.id).get_attribute("data-valid") == "false"

    browser.logout()
    browser.login(keys["write"])
    browser.show(f"facts?user={user}")
    revoke = fact(story.new_city.id).find_elements(By.XPATH, ".//button[text()='Revoke']")
    assert len(revoke) == 1
    assert not fact(story.old_city.id).find_elements(By.TAG_NAME, "button")
    browser.shot("facts")

    # A correction typed on the page goes through the API: Porto supersedes Lisbon.
    fact(story.new_city.id).find_element(By.XPATH, ".//button[text()='Correct']").click()
    field = d.switch_to.active_element
    assert field.get_attribute("id") == f"fix-{story.new_city.id}"
    field.clear()
    field.send_keys("Porto", Keys.ENTER)
    browser.wait(lambda d: "Porto" in browser.text())
    assert fact(story.new_city.id).get_attribute("data-status") == "superseded"
    with Client(url, api_key=keys["read"]) as client:
        now = client.facts.list(Scope("acme", user))
    assert [f.value for f in now if f.attribute == "location"] == ["Porto"]


def _another_tenant(browser: Page, story: Story, key: str) -> None:
    from selenium.webdriver.common.by import By

    browser.logout()
    browser.login(key)
    d = browser.driver
    assert d.find_element(By.ID, "tenant").text == "globex"
    scope: Scope = story.scope
    session = f"user={scope.user}&session={scope.session}"
    browser.show("users")
    assert not d.find_elements(By.CSS_SELECTOR, "#users tbody tr a")
    for route in (f"users?user={scope.user}", f"timeline?{session}", f"pins?{session}",
                  f"facts?user={scope.user}", f"profile?user={scope.user}",
                  f"compaction?{session}", f"search?query=refund+{ORDER_ID}"):  # fmt: skip
        browser.show(route)
        text = browser.text()
        for secret in (ORDER_ID, REFUND_AMOUNT, "Berlin", "Lisbon", "support-1 300"):
            assert secret not in text, (route, secret)
