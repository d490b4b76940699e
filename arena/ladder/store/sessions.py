"""Who is signed in to the site: a session per sign-in with a token, kept in the ladder's database so that
every site process on one store shares them (a sign-in on one is honoured by the others, a sign-out ends
it on all).

A session's id is 256 random bits (`secrets.token_urlsafe`), handed to the browser once, in its cookie,
and kept only as its SHA-256 digest (as tokens are: that random an id needs no salt nor slow hash, and a
copy of the database signs nobody in). It is looked up by that digest, an index lookup of a hash, which
tells a guesser nothing. A session holds only while the token it was made with does: it is read through
a token of the same name and the same digest, so a token revoked (its sessions are removed with it) or
replaced by a new one ends its sessions at once, on every site process, whoever removed it. It ends too
at its expiry (a bounded lifetime from the sign-in) and after being idle too long."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import delete, or_, select, update

from arena.ladder.store.access import TokenHolder, digest
from arena.ladder.store.file import StorePart, every_method_store_errors, is_number
from arena.ladder.store.relations import sessions, tokens


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in session: whose token it was made with, and its times (seconds since the epoch)."""

    holder: TokenHolder
    created_at: float
    last_seen: float
    expires_at: float


@every_method_store_errors
class SessionStore(StorePart):
    """The store's part that keeps the site's sessions."""

    def start(self, holder: TokenHolder, token: str, now: float, lifetime_s: float, idle_s: float) -> str:
        """A new session for `holder`, who presented `token` (its digest binds the session to it), ending
        `lifetime_s` from `now`; the session's id, never kept. Sessions ended by time go with it."""
        session_id = secrets.token_urlsafe(32)
        with self._transaction():
            self._sweep(now, idle_s)
            self._conn.execute(
                sessions.insert().values(
                    digest=digest(session_id),
                    token_name=holder.name,
                    token_digest=digest(token),
                    created_at=now,
                    last_seen=now,
                    expires_at=now + lifetime_s,
                )
            )
        return session_id

    def session(self, session_id: str, now: float, idle_s: float) -> Session | None:
        """The live session of `session_id`, or None: unknown, ended, expired, idle over `idle_s`, or its
        token revoked or replaced. Reads only (a read-only store answers too)."""
        if not {"sessions", "tokens"} <= self._relations():
            return None
        row = self._conn.execute(
            select(
                tokens.c.name,
                tokens.c.role,
                sessions.c.created_at,
                sessions.c.last_seen,
                sessions.c.expires_at,
            )
            .select_from(
                sessions.join(
                    tokens,
                    (tokens.c.name == sessions.c.token_name) & (tokens.c.digest == sessions.c.token_digest),
                )
            )
            .where(sessions.c.digest == digest(session_id))
        ).first()
        if row is None:
            return None
        name, role, created_at, last_seen, expires_at = row
        if role not in ("host", "participant") or not all(
            is_number(value) for value in (created_at, last_seen, expires_at)
        ):
            raise self._damaged("a session")
        if expires_at <= now or last_seen <= now - idle_s:
            return None
        return Session(TokenHolder(str(name), role), float(created_at), float(last_seen), float(expires_at))

    def touch(self, session_id: str, now: float) -> None:
        """The session was used at `now` (what its idle time counts from)."""
        with self._transaction():
            self._conn.execute(
                update(sessions).where(sessions.c.digest == digest(session_id)).values(last_seen=now)
            )

    def end(self, session_id: str) -> None:
        """Sign the session out (nothing when it has ended already)."""
        with self._transaction():
            self._conn.execute(delete(sessions).where(sessions.c.digest == digest(session_id)))

    def _sweep(self, now: float, idle_s: float) -> None:
        self._conn.execute(
            delete(sessions).where(or_(sessions.c.expires_at <= now, sessions.c.last_seen <= now - idle_s))
        )
