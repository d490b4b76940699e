"""Game records written by a stranger: whatever a file holds, loading and replaying it either works or
raises RecordError with a message, never another exception (which `arena replay` would show as a crash).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.cli import main
from fiftysix.record import FORMAT, MAX_DEPTH, RecordError, loads
from fiftysix.replay import replay

DEEP = "\x00deep"
HUGE = "\x00huge"
"""Placeholders spliced into the JSON text after json.dumps, which cannot write either itself."""


def spliced(document: Any, depth: int = 200_000) -> str:
    """The document as JSON text, with DEEP replaced by lists nested `depth` deep and HUGE by an
    integer of 5,000 digits."""
    text = json.dumps(document)
    text = text.replace(json.dumps(DEEP), "[" * depth + "]" * depth)
    return text.replace(json.dumps(HUGE), "9" * 5000)


def replays_or_refuses(text: str) -> None:
    """The property: a record either replays or is refused with RecordError."""
    message = "replayed"
    try:
        replay(loads(text))
    except RecordError as error:
        message = str(error)
    assert message


@pytest.fixture(scope="module")
def saved_record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A record as `arena play --save` writes it."""
    path = tmp_path_factory.mktemp("record") / "match.json"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["play", "--seed", "3", "--save", str(path)]) == 0
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    replay(loads(path.read_text(encoding="utf-8")))
    return document


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 200_000 + "]" * 200_000, "nested more than"),
        ('{"format": "fiftysix-game-record", "x": ' + "[" * 900 + "]" * 900 + "}", "nested more than"),
        ('{"format": "fiftysix-game-record", "version": ' + "9" * 5000 + "}", "thousands of digits"),
        ('{"format": "fiftysix-game-record", "version": NaN}', "NaN is not a JSON number"),
    ],
    ids=["200,000 deep", "900 deep inside", "5,000 digits", "NaN"],
)
def test_json_that_breaks_the_parser_is_a_record_error(text: str, message: str) -> None:
    """200,000-deep nesting raised RecursionError and a 5,000-digit integer ValueError."""
    with pytest.raises(RecordError, match=message):
        loads(text)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("players",), 10**30, "4, 6 or 8"),
        (("deal_cap",), 10**20, "deal cap must be 1 to 10,000"),
        (("seed",), 2**128, r"'seed' must be a whole number from -\(2\^63-1\) to 2\^128-1"),
        (("seed",), -(2**63), "'seed' must be a whole number"),
        (("seed",), -(10**300), "'seed' must be a whole number"),
        (("first_dealer",), 10**30, "'first_dealer' must be a seat number, 0 to 3"),
        (("first_dealer",), -1, "'first_dealer' must be a seat number"),
        (("deals", 0, "dealer"), 10**30, "deal 1: 'dealer' must be a seat number"),
        (("deals", 0, "dealer"), 4, "deal 1: 'dealer' must be a seat number"),
        (("deals", 0, "hands", 0, 0), 7, "deal 1: each hand must be a list of cards"),
        (("deals", 0, "cards", 0), {"card": "JS"}, "deal 1: 'cards' must be a list of strings"),
        (("deals", 0, "calls", 0), "\x1b[2J" * 1000, "deal 1, move 1"),
        (("deals", 0, "hands", 0), DEEP, "nested more than"),
        (("deals", 0, "number"), HUGE, "thousands of digits"),
        (("result",), [1, 2], "'result' must be an object or null"),
    ],
    ids=lambda value: "/".join(map(str, value)) if isinstance(value, tuple) else "",
)
def test_hostile_values_are_record_errors(
    saved_record: dict[str, Any], path: tuple[str | int, ...], value: Any, message: str
) -> None:
    document = copy.deepcopy(saved_record)
    parent: Any = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    with pytest.raises(RecordError, match=message):
        replay(loads(spliced(document, depth=MAX_DEPTH + 1)))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
HOSTILE_VALUES = (
    JSON_VALUES
    | st.sampled_from([DEEP, HUGE, 2**63, -(2**63) - 1, 10**100, -1, "", "\x1b[2J\r", "\u202e"])
    | st.integers(min_value=-2, max_value=9)
    | st.text()
)
KNOWN_KEYS = ["version", "ruleset", "players", "deal_cap", "seats", "seed", "first_dealer", "deals", "result"]


@settings(max_examples=150, deadline=None)
@given(document=JSON_VALUES)
def test_any_json_document_is_replayed_or_refused(document: Any) -> None:
    replays_or_refuses(json.dumps(document))


@settings(max_examples=150, deadline=None)
@given(fields=st.dictionaries(st.sampled_from(KNOWN_KEYS), HOSTILE_VALUES))
def test_any_record_shaped_document_is_replayed_or_refused(fields: dict[str, Any]) -> None:
    replays_or_refuses(spliced({"format": FORMAT, "version": 1, **fields}))


def every_path(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside a document, the document itself first."""
    paths = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            paths += every_path(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            paths += every_path(child, (*prefix, index))
    return paths


def mutate(document: dict[str, Any], picks: list[tuple[int, bool, Any]]) -> dict[str, Any] | None:
    """A copy of `document` with, for each pick, the value at one path replaced or dropped."""
    changed = copy.deepcopy(document)
    for index, drop, value in picks:
        paths = every_path(changed)[1:]
        if not paths:
            return None
        path = paths[index % len(paths)]
        parent: Any = changed
        for key in path[:-1]:
            parent = parent[key]
        if drop:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    return changed


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(
        st.tuples(st.integers(min_value=0, max_value=10**6), st.booleans(), HOSTILE_VALUES),
        min_size=1,
        max_size=3,
    ),
    without_seed=st.booleans(),
)
def test_any_mutation_of_a_saved_record_is_replayed_or_refused(
    saved_record: dict[str, Any], picks: list[tuple[int, bool, Any]], without_seed: bool
) -> None:
    """Drop keys, change types, huge integers, deep nesting, non-string cards, random text for moves;
    without a seed the hands are not checked against one, so altered hands reach the engine."""
    document = dict(saved_record, seed=None) if without_seed else saved_record
    mutated = mutate(document, picks)
    if mutated is not None:
        replays_or_refuses(spliced(mutated, depth=MAX_DEPTH + 1))


@settings(max_examples=100, deadline=None)
@given(
    content=st.binary(max_size=200) | st.text(max_size=200).map(str.encode),
    splice_at=st.none() | st.integers(min_value=0, max_value=10**6),
)
def test_arena_replay_of_any_file_exits_0_or_1_with_one_error_line(
    saved_record: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
    content: bytes,
    splice_at: int | None,
) -> None:
    """Any bytes (invalid UTF-8 too), alone or spliced into a real record, through `arena replay`."""
    if splice_at is not None:
        whole = json.dumps(saved_record, indent=1).encode()
        at = splice_at % len(whole)
        content = whole[:at] + content + whole[at + len(content) // 2 :]
    path = tmp_path_factory.mktemp("replay") / "record.json"
    path.write_bytes(content)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["replay", str(path)])
    if status == 0:
        assert err.getvalue() == ""
        assert "every move legal" in out.getvalue()
    else:
        assert status == 1
        lines = err.getvalue().splitlines()
        assert len(lines) == 1
        assert lines[0].startswith(f"arena replay: error: {path}: ")
