"""`arena ladder export --html DIR`: the leaderboard of every pool and a replay of each of the newest
finished matches (of sets that are over) as self-contained HTML files that open from disk with no
server: the stylesheet and the scripts inlined, the data in the page, links only between the files
written. Every file is written whole (to a temporary name, then renamed)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from arena.ladder.store import LadderStore
from arena.site import data, render


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export wrote."""

    leaderboards: int
    replays: int
    skipped: int
    """Matches not written: their record does not replay."""


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def export_html(store: LadderStore, folder: Path, limit: int) -> Exported:
    """Write the site's static pages into `folder` (made if missing): the newest `limit` matches."""
    (folder / "matches").mkdir(parents=True, exist_ok=True)
    chosen: list[dict[str, object]] = []
    page = 1
    while len(chosen) < limit:
        listed = data.matches(store.browse, None, None, page)
        chosen.extend(match for match in listed["matches"] if match["set_over"])
        if not listed["has_next"]:
            break
        page += 1
    chosen = chosen[:limit]
    written: set[str] = set()
    skipped = 0
    for match in chosen:
        match_id = str(match["id"])
        try:
            view = data.match_view(store.browse, match_id)
        except data.SiteError:
            skipped += 1
            continue
        links = render.ExportLinks(1, written)
        html = render.page("match.html", links, inline=True, data=view, ranking=render.ranking(view))
        _write(folder / "matches" / render.export_name(match_id), html)
        written.add(match_id)
    pools = [line["pool"] for line in data.pools(store)] or [None]
    for index, pool in enumerate(pools):
        shown = data.standings(store, pool)
        recent = [match for match in chosen if match["pool"] == shown["pool"]][:50]
        html = render.page(
            "leaderboard.html", render.ExportLinks(0, written), inline=True, data=shown, recent=recent
        )
        _write(folder / render.pool_file(shown["pool"]), html)
        if index == 0:
            _write(folder / "index.html", html)
    return Exported(len(pools), len(written), skipped)
