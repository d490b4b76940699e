"""Who may write through the site, and what was written: tokens, the audit log, and the host's policy for
the addresses participants give, in the ladder's file.

A token is `a56_` and 43 characters of `secrets.token_urlsafe` (256 random bits), shown once when it is
made and kept only as its SHA-256 digest: a token that random needs no salt nor slow hash, and a copy of
the file lets nobody write. A presented token is compared with every digest kept, each with
`hmac.compare_digest`, so the time taken says nothing of how close it came. A token is the host's (every
action) or a participant's (their own bot only, named as the token is).

The address policy (arena/runner/address_policy.py) lives here so that the site, which registers a
participant's address, and every runner on the file, which connects to it, apply the same one: `arena
serve --allow-addresses` keeps its ranges in `meta` when it starts (none without the option), and a runner
reads them each time it checks a participant's bot.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final, Literal

from sqlalchemy import delete, select

from arena.ladder.store.database import upsert
from arena.ladder.store.file import StoreError, StorePart, every_method_store_errors, is_number
from arena.ladder.store.relations import audit, meta, sessions, tokens
from arena.runner.address_policy import AddressPolicy

TOKEN_PREFIX: Final = "a56_"
COMMAND_LINE: Final = "host:command-line"
"""How the audit log names a write made on the host's command line (`arena bots`, `arena tokens`)."""
MAX_TOKEN_CHARS: Final = 200
"""A presented token longer than this is refused before it is hashed."""
ALLOWED_ADDRESSES: Final = "allowed_addresses"
"""The `meta` key of the address ranges the host allows participants' bots at (AddressPolicy.text)."""

Role = Literal["host", "participant"]


@dataclass(frozen=True, slots=True)
class TokenHolder:
    """Who a token belongs to: a name (a participant's is their bot's name) and a role."""

    name: str
    role: Role
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One write, with who made it."""

    at: float
    actor: str
    action: str
    target: str
    detail: str


def digest(token: str) -> str:
    """The SHA-256 digest kept for a token, in hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@every_method_store_errors
class AccessStore(StorePart):
    """The store's part that keeps tokens (as digests) and the audit log."""

    def add_token(self, name: str, role: Role, actor: str) -> str:
        """Make a token for `name` and return it (it is never kept, only its digest); one per name."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        with self._transaction():
            if self._conn.scalar(select(tokens.c.name).where(tokens.c.name == name)) is not None:
                raise StoreError(f"{name!r} has a token already (remove it first to make a new one)")
            self._conn.execute(
                tokens.insert().values(name=name, role=role, digest=digest(token), created_at=now)
            )
            self._audit(actor, "token_added", name, role)
        return token

    def remove_token(self, name: str, actor: str) -> None:
        """Revoke `name`'s token, and end its sessions on the site (sessions.py)."""
        with self._transaction():
            removed = self._conn.execute(delete(tokens).where(tokens.c.name == name))
            if removed.rowcount == 0:
                raise StoreError(f"no token for {name!r}")
            self._conn.execute(delete(sessions).where(sessions.c.token_name == name))
            self._audit(actor, "token_removed", name, "")

    def tokens(self) -> list[TokenHolder]:
        """Every token's holder, by name (never the token)."""
        if "tokens" not in self._relations():
            return []
        rows = self._conn.execute(
            select(tokens.c.name, tokens.c.role, tokens.c.created_at).order_by(tokens.c.name)
        )
        holders = []
        for name, role, created_at in rows:
            if role not in ("host", "participant") or not (isinstance(name, str) and is_number(created_at)):
                raise self._damaged(f"the token of {name!r}")
            holders.append(TokenHolder(name, role, float(created_at)))
        return holders

    def token_holder(self, token: str) -> TokenHolder | None:
        """Who `token` belongs to, or None; every digest kept is compared, in constant time each."""
        if "tokens" not in self._relations() or len(token) > MAX_TOKEN_CHARS:
            return None
        presented = digest(token)
        found: TokenHolder | None = None
        for name, role, kept in self._conn.execute(select(tokens.c.name, tokens.c.role, tokens.c.digest)):
            same = hmac.compare_digest(presented.encode(), str(kept).encode())
            if same and role in ("host", "participant"):
                found = TokenHolder(str(name), role)
        return found

    def record_write(self, actor: str, action: str, target: str, detail: str = "") -> None:
        """Add a write to the audit log (in its own transaction)."""
        with self._transaction():
            self._audit(actor, action, target, detail)

    def _audit(self, actor: str, action: str, target: str, detail: str) -> None:
        self._conn.execute(
            audit.insert().values(at=time.time(), actor=actor, action=action, target=target, detail=detail)
        )

    def write_times(self, actor: str, actions: Collection[str], since: float) -> list[float]:
        """When `actor` made writes of `actions` from `since` on, oldest first (what a quota counts)."""
        if "audit" not in self._relations():
            return []
        rows = self._conn.scalars(
            select(audit.c.at)
            .where(audit.c.actor == actor, audit.c.action.in_(list(actions)), audit.c.at >= since)
            .order_by(audit.c.at)
        )
        return [float(at) for at in rows]

    def audit_log(self, limit: int) -> list[AuditEntry]:
        """The newest `limit` writes, newest first."""
        if "audit" not in self._relations():
            return []
        rows = self._conn.execute(
            select(audit.c.at, audit.c.actor, audit.c.action, audit.c.target, audit.c.detail)
            .order_by(audit.c.id.desc())
            .limit(limit)
        )
        return [
            AuditEntry(float(at), str(actor), str(action), str(target), str(detail))
            for at, actor, action, target, detail in rows
        ]

    def address_policy(self) -> AddressPolicy:
        """The host's policy for the addresses participants give: public addresses, and the ranges the
        last `arena serve` allowed."""
        text = self._conn.scalar(select(meta.c.value).where(meta.c.key == ALLOWED_ADDRESSES))
        try:
            return AddressPolicy.parse(str(text or ""))
        except ValueError:
            raise self._damaged("the allowed address ranges") from None

    def set_address_policy(self, policy: AddressPolicy, actor: str) -> bool:
        """Keep `policy` for the site and every runner on the file; a change is audited. Whether it
        changed."""
        with self._transaction():
            kept = self._conn.scalar(select(meta.c.value).where(meta.c.key == ALLOWED_ADDRESSES))
            if str(kept or "") == policy.text:
                return False
            keeping = upsert(self._conn, meta).values(key=ALLOWED_ADDRESSES, value=policy.text)
            self._conn.execute(
                keeping.on_conflict_do_update(index_elements=["key"], set_={"value": policy.text})
            )
            self._audit(actor, "addresses_allowed", "", policy.text or "public addresses only")
        return True
