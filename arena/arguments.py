"""Command-line argument types: each turns a string into a value or raises an argparse error that says
what was expected. Shared by `arena` and its subcommands."""

from __future__ import annotations

import argparse
import re

from arena.engine import Ruleset
from arena.local_bots import command_arguments
from arena.runner import BotAddress, check_address, split_addresses


def players(text: str) -> int:
    """4, 6 or 8."""
    value = whole_number(text)
    if value not in (4, 6, 8):
        raise argparse.ArgumentTypeError(f"56 is played by 4, 6 or 8 players, not {value}")
    return value


def ruleset(text: str) -> Ruleset:
    """pairs or partnership."""
    try:
        return Ruleset.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def whole_number(text: str) -> int:
    """Any integer (a seed)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive(text: str) -> int:
    """1 or more."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value}")
    return value


def non_negative(text: str) -> int:
    """0 or more."""
    value = whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected zero or more, got {value}")
    return value


def address(text: str) -> str:
    """HOST:PORT, or several separated by commas (one per seat)."""
    parts = split_addresses(text)
    try:
        for part in parts:
            check_address(part)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return ",".join(parts)


def bot_name(text: str) -> str:
    """1-64 letters, digits, '_', '.' or '-', starting with a letter or digit."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", text):
        raise argparse.ArgumentTypeError(
            "a bot name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit; "
            f"got {text!r}"
        )
    return text


def bot_command(text: str) -> str:
    """A command line with {port} in it."""
    try:
        command_arguments(text, 1)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def bot_address(text: str) -> BotAddress:
    """NAME=HOST:PORT[,HOST:PORT...]."""
    try:
        return BotAddress.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
