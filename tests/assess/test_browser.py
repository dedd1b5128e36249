"""The HTML report in a real headless browser (Debian's chromium, driven by Playwright).

Checks what a string test cannot: the page loads from ``file://`` without a single network
request, without console errors or page errors, every section is there, links into the page
work, and a hostile project's file names and code lines show up as literal text with no dialog
fired. A screenshot is saved under the test's tmp_path.

Chromium comes from Debian (``apt-get install chromium``, done by ``.ci/run``); Playwright
cannot download browsers here and is pointed at it with ``executable_path``. Without a
browser the tests skip with the reason, except where ``GPUPORT_REQUIRE_BROWSER=1`` (CI) turns
that into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuport.render.assess_html import SECTIONS
from tests.assess.conftest import HOSTILE_CU, HOSTILE_NAME, hostile_project
from tests.conftest import EXAMPLE

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


def _chromium() -> str | None:
    for candidate in (os.environ.get("GPUPORT_CHROMIUM"), "chromium", "/usr/bin/chromium"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


def _need_browser() -> str:
    chromium = _chromium()
    missing = []
    if chromium is None:
        missing.append("Debian's chromium (apt-get install chromium)")
    if importlib.util.find_spec("playwright") is None:
        missing.append("playwright (pip install -e '.[dev]')")
    if missing:
        why = "browser test needs " + " and ".join(missing)
        if os.environ.get("GPUPORT_REQUIRE_BROWSER") == "1":
            pytest.fail(f"GPUPORT_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(f"{why}; CI sets GPUPORT_REQUIRE_BROWSER=1")
    assert chromium is not None
    return chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True, args=ARGS, timeout=60_000)
        try:
            yield b
        finally:
            b.close()


class Page:
    """A page that records console errors, page errors, dialogs and any non-file request."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.network: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

        def dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        self.page.on("dialog", dialog)

        def route(r: Any) -> None:
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                self.network.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)

    def open(self, path: Path) -> Any:
        self.page.goto(path.resolve().as_uri(), wait_until="load")
        return self.page

    def assert_clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.network == [], f"network requests attempted: {self.network}"
        assert self.dialogs == [], f"dialogs fired: {self.dialogs}"


def _report(cli: Any, project: Path, out: Path) -> Path:
    res = cli("assess", str(project), "--format", "html", "--output", str(out), "--no-progress")
    assert res.code in (0, 1), res.err
    assert out.stat().st_size > 0
    return out


def test_example_report_in_a_real_browser(browser: Any, cli: Any, tmp_path: Path) -> None:
    html = _report(cli, EXAMPLE, tmp_path / "assessment.html")
    p = Page(browser)
    page = p.open(html)
    for sid, _title in SECTIONS:
        section = page.locator(f"section#{sid}")
        assert section.count() == 1, sid
        assert section.locator("h2").first.is_visible(), sid
    assert page.locator("section#summary .badge").inner_text().strip().lower() == "blocked"
    assert page.locator("svg.chart").count() >= 3
    assert page.locator("script").count() == 0
    page.locator("#conclusions a[href='#finding-1']").first.click()
    assert page.url.endswith("#finding-1")
    assert page.locator("tr#finding-1").is_visible()
    shot = tmp_path / "assessment.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    p.assert_clean()
    p.context.close()


def test_hostile_names_and_snippets_render_as_text(browser: Any, cli: Any, tmp_path: Path) -> None:
    project = hostile_project(tmp_path / "hostile")
    html = _report(cli, project, tmp_path / "hostile.html")
    p = Page(browser)
    page = p.open(html)
    assert page.locator("script").count() == 0
    assert page.locator("img").count() == 0
    where = page.locator("td.where .path")
    texts = where.all_inner_texts()
    assert any(t.startswith(HOSTILE_NAME) for t in texts), texts
    assert any(t.startswith(HOSTILE_CU) for t in texts), texts
    assert page.get_by_text("<script>alert(2)</script>", exact=False).first.is_visible()
    page.screenshot(path=str(tmp_path / "hostile.png"), full_page=True)
    p.assert_clean()
    p.context.close()


def test_missing_browser_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.assess.test_browser as me

    monkeypatch.setattr(me, "_chromium", lambda: None)
    monkeypatch.delenv("GPUPORT_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        me._need_browser()
    monkeypatch.setenv("GPUPORT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="GPUPORT_REQUIRE_BROWSER=1"):
        me._need_browser()
