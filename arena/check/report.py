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
    """The verdict of one item. WARN never fails the check; SKIP is for what the bot does not play, for
    whole matches past a check's limit (`check_bot`'s `whole_matches`), and for the checker's check of its
    own requests when no scripted situation ran."""

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
    output: str | None = None
    """How the bot's output began (its first lines, escaped and cut; empty: it wrote nothing), on a
    failed item of a bot the arena started; None when not known (a bot at an address)."""

    def line(self) -> str:
        """The item as the report prints it: `PASS  handshake: ...`, and how the bot's output began when
        the item carries it."""
        text = f"{self.status.value:<5} {self.name}: {safe_text(self.reason, 2000)}"
        if self.output is None:
            return text
        after = " " if self.reason.endswith(("?", ".", "!")) else "; "
        said = f"its output: {safe_text(self.output, 2000)}" if self.output else "it wrote nothing"
        return f"{text}{after}{said}"

    def to_json(self) -> dict[str, object]:
        """The item as a JSON-ready dictionary."""
        output = {} if self.output is None else {"output": self.output}
        return {
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "kind": self.kind,
            **self.details,
            **output,
        }

    @classmethod
    def from_json(cls, document: object) -> CheckItem:
        """An item from what `to_json` made of it.

        :raises ValueError: a document that `to_json` did not make.
        """
        if not isinstance(document, dict):
            raise ValueError("a check item is a JSON object")
        name, status, reason, kind, output = (document.get(key) for key in _ITEM_FIELDS)
        if not (
            isinstance(name, str)
            and isinstance(status, str)
            and isinstance(reason, str)
            and isinstance(kind, str)
        ):
            raise ValueError("a check item has a name, a status, a reason and a kind, as text")
        if output is not None and not isinstance(output, str):
            raise ValueError("a check item's output is text")
        try:
            verdict = Status(status)
        except ValueError:
            raise ValueError(f"a check item's status is PASS, FAIL, SKIP or WARN, not {status!r}") from None
        details = {key: value for key, value in document.items() if key not in _ITEM_FIELDS}
        return cls(name, verdict, reason, kind, details, output)


_ITEM_FIELDS: Final = ("name", "status", "reason", "kind", "output")
"""The keys of an item's JSON that are its fields; the others are its details."""


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

    @classmethod
    def from_json(cls, document: object) -> CheckReport:
        """A report from what `to_json` made of it (the counts and the note are computed, not read).

        :raises ValueError: a document that `to_json` did not make.
        """
        if not isinstance(document, dict):
            raise ValueError("a check report is a JSON object")
        address, decision_ms, items = (document.get(key) for key in ("address", "decision_ms", "items"))
        if not isinstance(address, str) or type(decision_ms) is not int or not isinstance(items, list):
            raise ValueError("a check report has an address, decision_ms and a list of items")
        return cls(address, decision_ms, [CheckItem.from_json(item) for item in items])
