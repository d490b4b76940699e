"""Waiting out a store that went away (outages.py): a call tried again with backoff until the store
answers, each attempt one log line; past the bound the error as it was; one outage for all the callers
that meet it, tried by one of them at a time; only an unreachable server waited for."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable

import pytest
from structlog.testing import capture_logs

from arena.ladder.outages import StoreWait
from arena.ladder.store import StoreError, StoreUnreachableError

AWAY = "cannot reach postgresql://arena:***@127.0.0.1:5432/ladder (connection refused)"


def failing(times: int, answer: str = "done") -> tuple[Callable[[], str], list[float]]:
    """A call that finds the server away `times` times, then answers; and when each attempt was made."""
    attempts: list[float] = []

    def call() -> str:
        attempts.append(time.monotonic())
        if len(attempts) <= times:
            raise StoreUnreachableError(AWAY)
        return answer

    return call, attempts


def test_a_call_is_tried_again_with_backoff_each_attempt_one_line() -> None:
    call, attempts = failing(3)
    waits = StoreWait(10.0, first_s=0.02, longest_s=0.05)
    back: list[bool] = []
    waits.on_back.append(lambda: back.append(True))
    with capture_logs() as logs:
        assert asyncio.run(waits.call(call)) == "done"
    assert len(attempts) == 4
    gaps = [later - earlier for earlier, later in itertools.pairwise(attempts)]
    assert [gap >= least for gap, least in zip(gaps, (0.02, 0.04, 0.05), strict=True)] == [True] * 3
    tried = [entry for entry in logs if entry["event"] == "store_unreachable"]
    assert [(entry["attempt"], entry["retry_in_s"], entry["reason"]) for entry in tried] == [
        (1, 0.02, AWAY),
        (2, 0.04, AWAY),
        (3, 0.05, AWAY),
    ]
    assert all(entry["log_level"] == "warning" for entry in tried)
    [again] = [entry for entry in logs if entry["event"] == "store_reached_again"]
    assert again["attempts"] == 3
    assert back == [True]  # the run renews its leases at once
    assert not waits.away
    assert waits.outages == 1


def test_past_the_bound_the_error_is_raised_as_it_was() -> None:
    call, attempts = failing(1000)
    waits = StoreWait(0.2, first_s=0.02, longest_s=0.05)
    started = time.monotonic()
    with capture_logs() as logs, pytest.raises(StoreUnreachableError, match="cannot reach"):
        asyncio.run(waits.call(call))
    assert 0.2 <= time.monotonic() - started < 2.0
    assert 3 <= len(attempts) <= 10
    assert logs[-1]["event"] == "store_wait_exceeded"
    # Given up: the next call tries once and raises at once, until one succeeds.
    again, tried = failing(1000)
    with pytest.raises(StoreUnreachableError):
        asyncio.run(waits.call(again))
    assert len(tried) == 1
    answers, _ = failing(0, "back")
    assert asyncio.run(waits.call(answers)) == "back"
    assert not waits.given_up


def test_a_bound_of_zero_stops_at_once() -> None:
    call, attempts = failing(1)
    with capture_logs() as logs, pytest.raises(StoreUnreachableError):
        asyncio.run(StoreWait(0.0).call(call))
    assert len(attempts) == 1
    assert logs == []  # the caller says it, in one line, as it did before


def test_only_an_unreachable_server_is_waited_for() -> None:
    attempts: list[str] = []

    def locked() -> str:
        attempts.append("tried")
        raise StoreError("arena.db is locked by another program (waited 30 s); try again later")

    with pytest.raises(StoreError, match="locked"):
        asyncio.run(StoreWait(10.0, first_s=0.01).call(locked))
    assert attempts == ["tried"]


def test_again_runs_after_the_first_failure() -> None:
    calls: list[str] = []

    def first() -> str:
        calls.append("first")
        raise StoreUnreachableError(AWAY)

    def again() -> str:
        calls.append("again")
        return "found"

    assert asyncio.run(StoreWait(5.0, first_s=0.01).call(first, again)) == "found"
    assert calls == ["first", "again"]


def test_one_outage_is_tried_by_one_caller_at_a_time() -> None:
    waits = StoreWait(10.0, first_s=0.05, longest_s=0.05)
    away_until = time.monotonic() + 0.3
    attempts = 0
    in_flight = 0
    most_in_flight = 0

    async def attempt() -> str:
        nonlocal attempts, in_flight, most_in_flight
        attempts += 1
        in_flight += 1
        if attempts > 8:  # past the first attempt of each caller, made before any knew of the outage
            most_in_flight = max(most_in_flight, in_flight)
        try:
            await asyncio.sleep(0.005)
            if time.monotonic() < away_until:
                raise StoreUnreachableError(AWAY)
            return "done"
        finally:
            in_flight -= 1

    async def many() -> list[str]:
        return await asyncio.gather(*(waits.run(attempt) for _ in range(8)))

    with capture_logs() as logs:
        assert asyncio.run(many()) == ["done"] * 8
    assert most_in_flight == 1  # the others queued behind the one trying
    # 8 first attempts, one every 50 ms for 300 ms, then each of the 7 others once: not 8 callers each
    # trying every 50 ms.
    assert attempts <= 8 + 8 + 7
    lines = [entry for entry in logs if entry["event"] == "store_unreachable"]
    assert 3 <= len(lines) <= 8


def test_a_refusal_is_an_answer_the_next_caller_does_not_wait() -> None:
    """A rotation stored already (by the runner that took the set over) says the server is back: the
    callers queued behind go on at once, and the run renews its leases."""
    waits = StoreWait(10.0, first_s=0.3, longest_s=0.3)
    calls: list[str] = []
    back: list[bool] = []
    waits.on_back.append(lambda: back.append(True))

    def refused() -> str:
        calls.append("refused")
        if len(calls) == 1:
            raise StoreUnreachableError(AWAY)
        raise StoreError("set 2 rotation 0 is stored already (by another runner?)")

    def read() -> str:
        calls.append("read")
        return "read"

    async def both() -> tuple[BaseException | str, ...]:
        first = asyncio.create_task(waits.call(refused))
        await asyncio.sleep(0.05)  # the first found the server away and waits; the second queues
        second = asyncio.create_task(waits.call(read))
        return tuple(await asyncio.gather(first, second, return_exceptions=True))

    started = time.monotonic()
    refusal, answer = asyncio.run(both())
    assert isinstance(refusal, StoreError)
    assert answer == "read"
    assert time.monotonic() - started < 0.55  # one wait of 0.3 s, not two
    assert calls == ["refused", "refused", "read"]
    assert back == [True]
    assert not waits.away
