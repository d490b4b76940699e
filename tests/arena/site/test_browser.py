"""The site in a real browser: Debian's Chromium driven by Playwright for Python (never Playwright's own
browser download), one browser session for the module. The server runs `arena serve`'s app on a ladder
with finished matches and a match in play whose events arrive while the page watches.

Skipped when Chromium or Playwright is missing, except under CI (CI set), where that fails: CI must never
skip these silently. Screenshots go to test-artifacts/screenshots (or $SITE_SCREENSHOTS), not committed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_support import CHROMIUM_FLAGS, EVIL, SCREENSHOTS, Ladder56, build, chromium, served, stop

from arena.ladder.store import LadderStore
from arena.ladder.store.live import event_text
from arena.site.app import SiteSettings, create_app
from arena.site.replay_view import replay_view


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder56]:
    built = build(tmp_path_factory.mktemp("browser"))
    yield built
    stop(built)


@pytest.fixture(scope="module")
def site(ladder: Ladder56) -> Iterator[str]:
    """The site's address, served by uvicorn in a thread."""
    with served(create_app(SiteSettings(ladder.path))) as address:
        yield address


@pytest.fixture(scope="module")
def page(site: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One browser for the module, opened after the ladder is built (Playwright's sync API runs an
    event loop in this thread, and the ladder is played with asyncio.run)."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        opened = context.new_page()
        dialogs: list[str] = []
        opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        errors: list[str] = []
        opened.on("pageerror", lambda error: errors.append(str(error)))
        yield opened
        context.close()
    assert dialogs == [], "a page ran a script from a bot's name"
    assert errors == [], f"the pages' scripts failed: {errors}"


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_the_leaderboard_shows_every_bot_and_a_script_name_as_text(page: Any, site: str) -> None:
    page.goto(site + "/")
    names = page.locator("table.standings td.name").all_inner_texts()
    assert {"bot0", "bot1", EVIL} <= {name.strip() for name in names}
    assert "probation" in page.locator("table.standings").inner_text()
    shot(page, "leaderboard")


def test_a_bot_page_opens_from_the_leaderboard(page: Any, site: str) -> None:
    page.goto(site + "/")
    page.get_by_role("link", name="bot0", exact=True).first.click()
    page.wait_for_url("**/bots/bot0")
    assert page.locator("svg.chart polyline").count() == 1
    assert "bot1" in page.locator("main").inner_text()
    shot(page, "bot")


def store_record(ladder: Ladder56, match_id: str) -> dict[str, Any]:
    store = LadderStore(ladder.path, read_only=True)
    try:
        return store.browse.match_record(match_id)
    finally:
        store.close()


def expected_hands(view: dict[str, Any], deal_index: int, cards_played: int) -> list[list[str] | None]:
    deal = view["deals"][deal_index]
    plays = [play for trick in deal["tricks"] for play in trick["plays"]][:cards_played]
    hands: list[list[str] | None] = []
    for seat, hand in enumerate(deal["hands"]):
        if hand is None:
            hands.append(None)
            continue
        left = list(hand)
        for play in plays:
            if play["seat"] == seat:
                left.remove(play["card"])
        hands.append(left)
    return hands


SHOWN = """() => [...document.querySelectorAll('#table .seat')].map(seat => {
  const hand = seat.querySelector('.hand');
  if (hand.querySelector('.out')) return null;
  return [...hand.querySelectorAll('.card')].map(card => card.dataset.card);
})"""


PLAYED = "() => [...document.querySelectorAll('#table .played .card')].map(card => card.dataset.card)"


def test_a_whole_deal_stepped_with_the_keyboard_shows_the_records_cards(
    page: Any, site: str, ladder: Ladder56
) -> None:
    store = LadderStore(ladder.path, read_only=True)
    try:
        match = store.matches.recent_matches("bot1", 1)[0]
        view = replay_view(store.browse.match_record(match.id))
    finally:
        store.close()
    page.goto(f"{site}/matches/{match.id}")
    deal = view["deals"][0]
    record = store_record(ladder, match.id)
    # The viewer's deal is the record's: its hands, and its cards in the order played.
    assert deal["hands"] == record["deals"][0]["hands"]
    assert [play["card"] for trick in deal["tricks"] for play in trick["plays"]] == record["deals"][0][
        "cards"
    ]
    cards = sum(len(trick["plays"]) for trick in deal["tricks"])
    steps = [0] * (1 + len(deal["calls"])) + list(range(1, cards + 1)) + [cards]
    for number, played in enumerate(steps):
        if number:
            page.keyboard.press("ArrowRight")
        assert page.evaluate(SHOWN) == expected_hands(view, 0, played), f"step {number + 1}"
        if number == len(deal["calls"]) + 3:
            shot(page, "replay-trick")
    assert "over" in page.locator("#step-label").inner_text()
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(SHOWN) == expected_hands(view, 0, cards)
    # A link to a step: trick 2 complete, its cards on the table and its winner marked.
    page.goto(f"{site}/matches/{match.id}#deal-1-trick-2")
    page.reload()
    trick = deal["tricks"][1]
    shown = page.evaluate(PLAYED)
    assert sorted(shown) == sorted(play["card"] for play in trick["plays"])
    winner = page.locator(f'#table .seat[data-seat="{trick["winner"]}"]')
    assert "winner" in winner.get_attribute("class").split()
    assert page.locator("#step-link").get_attribute("href") == "#deal-1-trick-2"


def test_faults_are_marked_where_they_happened(page: Any, site: str, ladder: Ladder56) -> None:
    store = LadderStore(ladder.path, read_only=True)
    try:
        match = store.matches.recent_matches("illegal", 1)[0]
        record = store.browse.match_record(match.id)
    finally:
        store.close()
    page.goto(f"{site}/matches/{match.id}")
    label = page.locator("#step-label")
    for _ in range(match.decisions + 20):
        if "fault" in (label.get_attribute("class") or "").split():
            break
        page.keyboard.press("ArrowRight")
    text = label.inner_text()
    assert "fault: seat" in text
    assert "illegal_move" in text
    # On the card played in the bot's place: the move after the `move_number` moves made before it.
    fault = next(fault for fault in match.faults if fault.substituted)
    assert fault.move_number is not None
    deal = next(deal for deal in record["deals"] if deal["number"] == fault.deal_number)
    card = fault.move_number + 1 - len(deal["calls"])  # 1-based among the deal's cards
    players = sum(hand is not None for hand in deal["hands"])
    trick, in_trick = (card - 1) // players + 1, (card - 1) % players + 1
    step = f"deal-{fault.deal_number}-trick-{trick}" + ("" if in_trick == players else f"-card-{in_trick}")
    assert page.locator("#step-link").get_attribute("href") == f"#{step}"
    shot(page, "replay-fault")


def test_a_live_match_receives_moves_as_they_are_published(page: Any, site: str, ladder: Ladder56) -> None:
    events = ladder.live_events
    store = LadderStore(ladder.path)
    store.live.add_live_events("live-match-2", [(0, time.time(), event_text(events[0]))])
    stop_feeding = threading.Event()

    def feed() -> None:
        writer = LadderStore(ladder.path)
        try:
            for seq, event in enumerate(events[1:], start=1):
                if stop_feeding.wait(0.04):
                    return
                writer.live.add_live_events("live-match-2", [(seq, time.time(), event_text(event))])
        finally:
            writer.close()

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        page.goto(site + "/live")
        page.get_by_role("link", name="live-match-2").click()
        page.wait_for_function("() => window.liveMoves && window.liveMoves() > 3", timeout=20_000)
        first = page.evaluate("window.liveMoves()")
        page.wait_for_function(f"() => window.liveMoves() > {first + 5}", timeout=20_000)
        shot(page, "live")
        page.wait_for_function(f"() => window.liveMoves() >= {len(events)}", timeout=30_000)
        assert "over" in page.locator("#live-status").inner_text()
    finally:
        stop_feeding.set()
        feeder.join()
        store.live.delete_live_events("live-match-2")
        store.close()


def test_an_exported_replay_opens_from_disk(page: Any, ladder: Ladder56, tmp_path: Path) -> None:
    from arena.cli import main

    assert main(["ladder", "export", "--db", str(ladder.path), "--html", str(tmp_path), "--limit", "2"]) == 0
    page.goto((tmp_path / "index.html").as_uri())
    page.locator("table.matches a").first.click()
    page.wait_for_selector("#table .seat .card")
    page.keyboard.press("ArrowRight")
    assert "step 2 of" in page.locator("#step-label").inner_text()
    shot(page, "exported-replay")


@pytest.mark.parametrize("path", ["/", "/bots/bot0", "/matches", "/live"])
def test_the_pages_fit_a_phones_width(page: Any, site: str, path: str, ladder: Ladder56) -> None:
    page.set_viewport_size({"width": 375, "height": 800})
    try:
        page.goto(site + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        shot(page, "phone" + path.replace("/", "-"))
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_the_replay_fits_a_phones_width(page: Any, site: str, ladder: Ladder56) -> None:
    store = LadderStore(ladder.path, read_only=True)
    try:
        match_id = store.matches.recent_matches("bot1", 1)[0].id
    finally:
        store.close()
    page.set_viewport_size({"width": 375, "height": 800})
    try:
        page.goto(f"{site}/matches/{match_id}#deal-1-trick-1")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        shot(page, "phone-replay")
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
