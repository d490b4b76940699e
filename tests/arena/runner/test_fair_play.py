"""What a bot is never told: the match's seed (it fixes every deal), in any message of a real match over
gRPC; and what a match id says: nothing (random, not derived from the set, rotation or seed)."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from google.protobuf.descriptor import Descriptor

from arena.runner import BotAddress, MatchSettings, new_match_id, run_match, seats_for_teams
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.v1 import bot_pb2 as pb
from fiftysix.v1 import bot_pb2_grpc as rpc
from sample_bots.random_bot import RandomBot
from sdk.server import BotServicer, bot_factory_for

SEED = 0x9E3779B97F4A7C15F39CC0605CEDC834
"""A seed of 128 bits whose every rendering is long enough not to turn up in a message by chance."""


class RecordingServicer(BotServicer):
    """The SDK's random bot, keeping every message the arena sends it, serialized as it arrived."""

    def __init__(self) -> None:
        super().__init__(bot_factory_for(RandomBot))
        self.received: list[bytes] = []
        self.lock = threading.Lock()

    def keep(self, message: pb.DescribeRequest | pb.PlaySeatRequest) -> None:
        with self.lock:
            self.received.append(message.SerializeToString())

    def Describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> pb.DescribeResponse:  # noqa: N802
        self.keep(request)
        return super().Describe(request, context)

    def PlaySeat(  # noqa: N802
        self, request_iterator: Iterator[pb.PlaySeatRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.PlaySeatResponse]:
        def kept() -> Iterator[pb.PlaySeatRequest]:
            for request in request_iterator:
                self.keep(request)
                yield request

        yield from super().PlaySeat(kept(), context)


def _varint(value: int) -> bytes:
    """`value` (0 to 2^64 - 1) as protobuf writes an integer field."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def renderings(seed: int) -> dict[str, bytes]:
    """Every way a message could carry `seed` or a half of it: as bytes, varints, decimal and hex text."""
    low, high = seed % 2**64, seed >> 64
    found = {
        "bytes, big-endian": seed.to_bytes(16, "big"),
        "bytes, little-endian": seed.to_bytes(16, "little"),
        "decimal": str(seed).encode(),
        "hex": f"{seed:x}".encode(),
        "HEX": f"{seed:X}".encode(),
    }
    for name, half in (("low", low), ("high", high)):
        found |= {
            f"{name} half, varint": _varint(half),
            f"{name} half, fixed64": half.to_bytes(8, "little"),
            f"{name} half, decimal": str(half).encode(),
            f"{name} half, signed decimal": str(half - 2**64 if half >= 2**63 else half).encode(),
            f"{name} half, hex": f"{half:x}".encode(),
        }
    return found


def test_no_message_names_a_seed() -> None:
    """The protocol has no field for a seed, in any message either way."""

    def fields(descriptor: Descriptor) -> Iterator[str]:
        for field in descriptor.fields:
            yield f"{descriptor.full_name}.{field.name}"
        for nested in descriptor.nested_types:
            yield from fields(nested)

    names = [name for message in pb.DESCRIPTOR.message_types_by_name.values() for name in fields(message)]
    assert len(names) > 50
    assert [name for name in names if re.search("seed|shuffle|random", name, re.IGNORECASE)] == []


@pytest.mark.parametrize("players", [4, 6])
def test_a_matchs_seed_is_in_no_message_sent_to_a_bot(players: int) -> None:
    servicer = RecordingServicer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    rpc.add_BotServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        rules = MatchRules(players, Ruleset.PAIRS, deal_cap=3)
        bots = [BotAddress(f"recorded-{team}", f"127.0.0.1:{port}") for team in range(rules.team_count)]
        settings = MatchSettings(rules, SEED)
        outcome = asyncio.run(run_match(settings, seats_for_teams(rules, bots)))
    finally:
        server.stop(1).wait()
    assert outcome.faults == []
    assert outcome.record.seed == SEED  # the record keeps it (held back until the set is over)
    received = servicer.received
    kinds = {pb.PlaySeatRequest.FromString(data).WhichOneof("event") for data in received[1:]}
    assert {"match_start", "decision", "deal_end", "match_end"} <= kinds
    everything = b"\x00".join(received)
    assert len(everything) > 10_000
    assert settings.match_id.encode() in everything  # what a bot is told is in there
    leaked = [name for name, rendering in renderings(SEED).items() if rendering in everything]
    assert leaked == []


def test_the_search_would_find_a_seed_that_was_sent() -> None:
    """The renderings looked for are what a message holding the seed would hold."""
    for text in (str(SEED), f"{SEED:x}"):
        message = pb.PlaySeatRequest(match_start=pb.MatchStart(match_id=text)).SerializeToString()
        assert any(rendering in message for rendering in renderings(SEED).values())
    assert _varint(300) == b"\xac\x02"  # protobuf's own example of a varint
    message = pb.PlaySeatRequest(match_start=pb.MatchStart(seat=300)).SerializeToString()
    assert _varint(300) in message


def test_match_ids_are_random_hex_of_16_characters() -> None:
    ids = [new_match_id() for _ in range(1000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch("[0-9a-f]{16}", match_id) for match_id in ids)
    # Every hex digit turns up about equally often in every position: nothing is a counter or a field.
    for position in range(16):
        counts = [sum(match_id[position] == digit for match_id in ids) for digit in "0123456789abcdef"]
        assert max(counts) < 120  # 62.5 expected; a position that says something would pile up
