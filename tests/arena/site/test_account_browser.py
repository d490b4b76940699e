"""An entrant's pages in a real browser (Debian's Chromium driven by Playwright, as test_browser.py
drives it), end to end: entrant ann signs in with her token, uploads a bot that fails the arena's check
and reads why on her page (the check's report, item by item, with her bot's first words), uploads a fixed
one (accepted: version 1, its passed check on its page), sees it rated after a short ladder run (`arena
ladder run` in a process of its own, her bot in the sandbox against a host's bot), opens a match of it
and reads what her bot wrote in it; then entrant bea signs in and reaches none of ann's pages (her bot's
output included), and the host sees the entrants. Every page fits 375 px.

Screenshots (desktop and 375 px wide, `account-*.png`) are saved as the run's test artifacts to
`test-artifacts/screenshots/` (or `$SITE_SCREENSHOTS`), where test_browser.py saves its own (ignored by
git). Skipped without Chromium, Playwright or bubblewrap, except under CI, where that fails."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from site_support import CHROMIUM_FLAGS, ROOT, SCREENSHOTS, chromium, served

from arena.ladder.store import LadderStore
from arena.site.app import SiteSettings, create_app
from arena.site.sign_in import SignInLimits
from sample_bots.random_bot import RandomBot
from sdk import start
from tests.arena.sandbox.sandbox_support import random_bot_bundle, require_bubblewrap

BROKEN = 'raise SystemExit("this bot is broken: fix me")\n'
TALKING = """import sys

from sample_bots.random_bot import RandomBot
from sample_bots.run import run_bot


class TalkingBot(RandomBot):
    def on_deal_end(self, result):
        print(f"ann's bot: deal {result.number} over", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run_bot(TalkingBot)
"""


def broken_bundle(folder: Path) -> Path:
    """A bundle whose bot.py exits at once, with a message of its own."""
    source = folder / "bot.py"
    source.write_text(BROKEN)
    archive = folder / "broken.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, "bot.py")
    return archive


def talking_bundle(folder: Path) -> Path:
    """The random bot's bundle with a bot.py that says a line on its standard error at each deal's end."""
    archive = random_bot_bundle(folder)
    source = folder / "talking.py"
    source.write_text(TALKING)
    talking = folder / "talking.tar.gz"
    with tarfile.open(archive) as old, tarfile.open(talking, "w:gz") as new:
        for member in old.getmembers():
            if member.name != "bot.py":
                new.addfile(member, old.extractfile(member) if member.isfile() else None)
        new.add(source, "bot.py")
    return talking


def ladder_run(db: Path) -> None:
    """Two matches of one deal: a set rated, ann's bot started in the sandbox (a process of its own: a
    ladder run takes the signals of its process, and Playwright runs its loop in this one)."""
    command = [sys.executable, "-m", "arena.cli", "ladder", "run", "--matches", "2", "--deal-cap", "1"]
    command += ["--bot-memory", "512", "--bot-processes", "48", "--log-level", "warning", "--db", str(db)]
    with tempfile.TemporaryDirectory(prefix="s", dir="/tmp") as tmpdir:  # a socket's path stays short
        environment = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": tmpdir}
        done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "1 sets rated" in done.stdout, done.stdout


def fits_a_phone(page: Any, name: str) -> None:
    page.set_viewport_size({"width": 375, "height": 800})
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, name
        page.screenshot(path=str(SCREENSHOTS / f"account-{name}-phone.png"), full_page=True)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def sign_in(page: Any, site: str, token: str) -> None:
    page.goto(site + "/account")
    page.wait_for_url("**/sign-in")
    fits_a_phone(page, "sign-in")
    page.fill("input[name=token]", token)
    page.click("form.sign-in button")
    page.wait_for_url("**/account")


def test_an_entrant_uploads_is_refused_fixes_it_sees_it_rated_and_nobody_else_sees_it(tmp_path: Path) -> None:
    require_bubblewrap()
    executable = chromium()
    from playwright.sync_api import sync_playwright

    db = tmp_path / "ladder.db"
    rival = start(RandomBot)
    store = LadderStore(db)
    try:
        ann = store.access.add_token("ann", "participant", "host:command-line")
        bea = store.access.add_token("bea", "participant", "host:command-line")
        boss = store.access.add_token("boss", "host", "host:command-line")
        store.registry.add_bot("rival", address=f"127.0.0.1:{rival.port}")
    finally:
        store.close()
    broken, fixed = broken_bundle(tmp_path), talking_bundle(tmp_path)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    settings = SiteSettings(db, sign_in=SignInLimits(delay_s=0.05))
    try:
        with served(create_app(settings)) as site, sync_playwright() as driver:
            context = driver.chromium.launch_persistent_context(
                str(tmp_path / "profile"),
                executable_path=executable,
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1280, "height": 900},
            )
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            sign_in(page, site, ann)
            fits_a_phone(page, "sign-in-done")

            # Refused: the arena's check, and why, on her page.
            page.fill("input[name=run]", "python bot.py")
            page.set_input_files("input[name=bundle]", str(broken))
            page.click("form.upload-form button")
            refusal = page.locator(".refusal")
            refusal.wait_for()
            assert "did not start" in refusal.inner_text()
            assert "this bot is broken: fix me" in refusal.inner_text()
            report = page.locator("#checks details.check.refused").first
            assert "refused" in report.locator("summary").inner_text()
            failed = report.locator("li.item.fail").first.inner_text()
            assert "FAIL" in failed
            assert "this bot is broken: fix me" in failed
            page.screenshot(path=str(SCREENSHOTS / "account-refused.png"), full_page=True)
            fits_a_phone(page, "refused")

            # Accepted: version 1 on the bot's page.
            page.fill("input[name=run]", "python bot.py")
            page.set_input_files("input[name=bundle]", str(fixed))
            page.click("form.upload-form button")
            page.wait_for_url("**/account/bots/ann?uploaded=1")
            assert "version 1" in page.locator(".accepted").inner_text()
            assert "running now" in page.locator("#version-1").inner_text()
            assert "passed" in page.locator("#version-1 details.check.passed summary").inner_text()

            # Rated after a ladder run; a match of it opens.
            ladder_run(db)
            page.reload()
            version = page.locator("#version-1").inner_text()
            assert "after 1 set rated while it was current" in version
            assert page.locator("article.match").count() == 2
            page.screenshot(path=str(SCREENSHOTS / "account-bot.png"), full_page=True)
            fits_a_phone(page, "bot")
            # Her bot's own output in a match: the line it wrote at the end of the match's one deal.
            page.locator("article.match .output-link").first.click()
            page.wait_for_url("**/output")
            output_url = page.url
            said = page.locator("section.seat-output pre.output").first.inner_text()
            assert "ann's bot: deal 1 over" in said
            page.screenshot(path=str(SCREENSHOTS / "account-output.png"), full_page=True)
            fits_a_phone(page, "output")
            page.go_back()
            page.locator("article.match h3 a").first.click()
            page.wait_for_url("**/matches/*")
            page.wait_for_selector("#table .seat .card")
            assert "ann" in page.locator("#table").inner_text()
            match_url = page.url

            # Another entrant reaches none of ann's pages.
            page.goto(site + "/account")
            page.click("nav .sign-out button")
            page.wait_for_url(site + "/")
            sign_in(page, site, bea)
            assert "ann" not in page.locator("main").inner_text()
            for path in ("/account/bots/ann", "/account/bots/ann?page=1", output_url.removeprefix(site)):
                answer = page.goto(site + path)
                assert answer is not None
                assert answer.status == 404
                assert "no such page" in page.locator("main").inner_text()
            page.screenshot(path=str(SCREENSHOTS / "account-other-entrant.png"), full_page=True)
            assert page.goto(match_url) is not None  # a finished set's replay is public, as before

            # The host's page: the entrants and their bots.
            page.goto(site + "/account")
            page.click("nav .sign-out button")
            page.wait_for_url(site + "/")
            sign_in(page, site, boss)
            assert "ann" in page.locator("table.entrants").inner_text()
            page.screenshot(path=str(SCREENSHOTS / "account-host.png"), full_page=True)
            fits_a_phone(page, "host")
            context.close()
            assert errors == [], f"the pages' scripts failed: {errors}"
    finally:
        rival.stop(0)
