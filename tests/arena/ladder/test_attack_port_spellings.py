"""Attack (issue 22 follow-up): one endpoint written with two spellings of its port. The site accepts
`HOST:80,HOST:080` (a port of at most five digits) and `HOST:80,HOST:٨٠` (`str.isdigit` takes Arabic-Indic
digits, `int` reads them), and the policy pins both to the same `ipv4:HOST:80`; yet the aliases check
compares ports as written, so one process plays both partners while the standings say it does not
share seats (two addresses for a team of two)."""

from __future__ import annotations

import pytest

from arena.ladder.isolation import check_distinct_endpoints
from arena.runner.address_policy import AddressPolicy


@pytest.mark.parametrize("address", ["8.8.8.8:80,8.8.8.8:080", "8.8.8.8:80,8.8.8.8:\u0668\u0660"])
def test_the_same_policy_target_is_one_endpoint(address: str) -> None:
    first, second = address.split(",")
    assert AddressPolicy().pin(first) == AddressPolicy().pin(second)  # the arena connects to one place


@pytest.mark.xfail(strict=True, reason="ports are compared as written, not as numbers (issue 22 attack)")
@pytest.mark.parametrize("address", ["8.8.8.8:80,8.8.8.8:080", "8.8.8.8:80,8.8.8.8:\u0668\u0660"])
def test_two_spellings_of_one_port_are_refused_as_aliases(address: str) -> None:
    with pytest.raises(ValueError, match=r"same endpoint|given twice"):
        check_distinct_endpoints(address)
