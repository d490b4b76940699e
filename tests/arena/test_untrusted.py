"""safe_text: nothing from outside reaches a terminal or the store unescaped or unbounded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arena.untrusted import safe_text


def test_printable_text_within_the_limit_is_unchanged() -> None:
    assert safe_text("illegal move 'JS': must follow hearts") == "illegal move 'JS': must follow hearts"


def test_terminal_escapes_and_direction_overrides_are_escaped() -> None:
    assert safe_text("a\x1b[2J\rb\x07\u202ec\n") == "a\\x1b[2J\\rb\\x07\\u202ec\\n"


def test_long_text_is_cut_with_a_note() -> None:
    assert safe_text("x" * 1000, limit=10) == "xxxxxxxxxx... [990 more characters]"


def test_escapes_count_towards_the_limit() -> None:
    assert safe_text("\x1b" * 100, limit=10) == "\\x1b\\x1b... [98 more characters]"


@given(st.text(), st.integers(min_value=0, max_value=50))
def test_output_is_printable_and_bounded(text: str, limit: int) -> None:
    shown = safe_text(text, limit)
    assert shown.isprintable()
    body = shown.split("... [", 1)[0] if shown != text else shown
    assert len(body) <= max(limit, len(text) if shown == text else 0)
    if text.isprintable() and len(text) <= limit:
        assert shown == text
