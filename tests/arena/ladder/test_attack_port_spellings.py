"""Attack (issue 22 follow-up): one endpoint written with two spellings of its port. `HOST:80,HOST:080`
pins both to the same `ipv4:HOST:80`, so the aliases check compares ports as numbers and refuses it (one
process would play both partners while the standings said it did not share seats); other scripts' digits
(`HOST:٨٠`, which `str.isdigit` and `int` take as 80) are no port at all."""

from __future__ import annotations

import pytest

from arena.ladder.isolation import check_distinct_endpoints
from arena.runner import check_address
from arena.runner.address_policy import AddressPolicy


def test_two_spellings_of_one_port_are_one_endpoint_and_refused_as_aliases() -> None:
    assert AddressPolicy().pin("8.8.8.8:80") == AddressPolicy().pin("8.8.8.8:080")
    with pytest.raises(ValueError, match="same endpoint"):
        check_distinct_endpoints("8.8.8.8:80,8.8.8.8:080")
    with pytest.raises(ValueError, match="same endpoint"):
        check_distinct_endpoints("127.0.0.1:5005,localhost:05005")


@pytest.mark.parametrize("port", ["\u0668\u0660", "\uff18\uff10", "\u00b2", "\u0968\u0966"])
def test_a_port_in_other_digits_than_ascii_is_refused(port: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        check_address(f"8.8.8.8:{port}")
