"""The site's HTML: Jinja2 templates rendered from the dictionaries of data.py, for the server (links
to the other pages, assets served) and for the static export (self-contained pages: assets inlined,
links only to the files it writes). Autoescaping is on everywhere: every name from outside is text."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, urlencode

__all__ = ["ExportLinks", "Links", "assets", "bot_chart", "environment", "page", "ranking", "urlencode"]

from jinja2 import Environment, FileSystemLoader, select_autoescape

from arena.site.chart import rating_chart
from arena.site.data import BOT_MATCHES

HERE: Final = Path(__file__).resolve().parent
STATIC: Final = HERE / "static"


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")


@cache
def environment() -> Environment:
    """The templates, loaded once."""
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.filters["quote"] = lambda text: quote(str(text), safe="")
    env.filters["when"] = _when
    return env


@cache
def assets() -> dict[str, str]:
    """The stylesheet and scripts, for pages that inline them."""
    return {
        "css": (STATIC / "site.css").read_text(encoding="utf-8"),
        "cards_js": (STATIC / "cards.js").read_text(encoding="utf-8").replace("</", "<\\/"),
        "replay_js": (STATIC / "replay.js").read_text(encoding="utf-8").replace("</", "<\\/"),
    }


class Links:
    """Where a page links to: the server's routes, from the site's root."""

    root = "/"

    def bot(self, name: str) -> str | None:
        return f"/bots/{quote(name, safe='')}"

    def match(self, match_id: str, set_over: bool) -> str | None:
        return f"/matches/{quote(match_id, safe='')}" if set_over else None

    def pool(self, pool: str) -> str:
        return f"/?{urlencode({'pool': pool})}"


class ExportLinks(Links):
    """Links of the static export: the leaderboards and the replays it writes, nothing else."""

    root = ""

    def __init__(self, depth: int, exported: set[str]) -> None:
        self.up = "../" * depth
        self.root = self.up
        self.exported = exported

    def bot(self, name: str) -> str | None:
        return None

    def match(self, match_id: str, set_over: bool) -> str | None:
        if match_id not in self.exported:
            return None
        return f"{self.up}matches/{export_name(match_id)}"

    def pool(self, pool: str) -> str:
        return f"{self.up}{pool_file(pool)}"


def export_name(match_id: str) -> str:
    """The file of a match's replay in the export (a match id is the arena's own: letters, digits, -)."""
    return quote(match_id, safe="") + ".html"


def pool_file(pool: str) -> str:
    return f"pool-{quote(pool, safe='')}.html"


def page(template: str, links: Links, inline: bool = False, **context: Any) -> str:
    """One page."""
    globals_: dict[str, Callable[..., Any] | str | bool | dict[str, str] | int] = {
        "root": links.root,
        "bot_url": links.bot,
        "match_url": links.match,
        "pool_url": links.pool,
        "inline": inline,
        "assets": assets() if inline else {},
        "bot_matches": BOT_MATCHES,
    }
    return environment().get_template(template).render(**globals_, **context)


def ranking(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The teams of a replayed match by rank, each with its bots' names."""
    result = view.get("result") or {}
    ranks = result.get("ranking") or []
    teams: dict[int, list[str]] = {}
    for seat, team in enumerate(view["teams"]):
        if view["seats"][seat] not in teams.setdefault(team, []):
            teams[team].append(view["seats"][seat])
    listed = [{"rank": rank, "names": ", ".join(teams.get(team, []))} for team, rank in enumerate(ranks)]
    return sorted(listed, key=lambda line: line["rank"])


def bot_chart(data: dict[str, Any]) -> str:
    """The rating chart of a bot page's data."""
    history = data["rating_history"]
    ratings = [history[0]["before"], *(point["after"] for point in history)] if history else []
    return rating_chart(ratings)
