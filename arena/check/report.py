"""The compliance check's report: one item per check, its verdict and a one-line reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from arena.untrusted import safe_text

NOTE: Final = (
    "In the scripted situations the checker plays every seat up to the situation (earlier moves of the "
    "bot's own seat included, as the arena does when it substitutes a move); then the bot plays its seat "
    "to the end of the deal. No bank of spare time is given: every answer must come within decision_ms."
)


class Status(Enum):
    """The verdict of one item. WARN never fails the check; SKIP is for what the bot does not play (and for
    the checker's check of its own requests when no scripted situation ran)."""

    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"
    WARN = "WARN"


def plural(count: int, word: str) -> str:
    """`1 answer`, `2 answers`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One line of the report: an item's name, its verdict and a one-line reason."""

    name: str
    status: Status
    reason: str
    kind: str
    """`handshake`, `match`, `situation` or `arena` (the checker's check of its own requests): the part of
    the check the item belongs to."""
    details: Mapping[str, object] = field(default_factory=dict)
    """Machine-readable extras for --json (the configuration a situation was played in, its seat)."""

    def line(self) -> str:
        """The item as the report prints it: `PASS  handshake: ...`."""
        return f"{self.status.value:<5} {self.name}: {safe_text(self.reason, 2000)}"

    def to_json(self) -> dict[str, object]:
        """The item as a JSON-ready dictionary."""
        return {
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "kind": self.kind,
            **self.details,
        }


@dataclass
class CheckReport:
    """Everything the check found about one bot."""

    address: str
    decision_ms: int
    items: list[CheckItem] = field(default_factory=list)

    def count(self, status: Status) -> int:
        """How many items have `status`."""
        return sum(1 for item in self.items if item.status is status)

    @property
    def ok(self) -> bool:
        """Whether nothing failed."""
        return self.count(Status.FAIL) == 0

    def summary(self) -> str:
        """The last line: `N passed, M failed` and, when there are any, skips and warnings."""
        text = f"{self.count(Status.PASS)} passed, {self.count(Status.FAIL)} failed"
        skipped, warnings = self.count(Status.SKIP), self.count(Status.WARN)
        if skipped:
            text += f", {skipped} skipped"
        if warnings:
            text += f", {warnings} warning" + ("s" if warnings > 1 else "")
        return text

    def to_json(self) -> dict[str, object]:
        """The report as a JSON-ready dictionary."""
        return {
            "address": self.address,
            "decision_ms": self.decision_ms,
            "ok": self.ok,
            "passed": self.count(Status.PASS),
            "failed": self.count(Status.FAIL),
            "skipped": self.count(Status.SKIP),
            "warnings": self.count(Status.WARN),
            "note": NOTE,
            "items": [item.to_json() for item in self.items],
        }
