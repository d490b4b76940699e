"""The ladder's store: registered bots, duplicate sets, finished matches, rating events and what the site
keeps, saved and loaded as typed values (faults as FaultRecords). It persists; the ladder computes (pairing in
scheduler.py, what a match adds to its bots' totals and a set's rating event in ratings.py, standings in
standings.py).

The store is one open file (`StoreFile`: the connection, its transactions, its errors) and its parts, each
a small class over that file that a consumer takes alone: `registry` (the bots), `sets`, `leases`,
`matches`, `outputs` (what the started bots wrote in each match), `ratings` (totals, sums, fitted
ratings, rating events), `live` (the events of matches in play), `access` (tokens, the audit log, the
address policy), `sessions` (who is signed in to the site), `browse` (the site's pages of history),
`uploads` (their versions, launches and bundles' bytes) and `checks` (the compliance check of each
registration of a bot the arena starts).

Every finished match is written in its own transaction the moment it ends, and a set's rating event is
saved in one transaction with the check that the set was neither rated nor made void before, so a ladder
killed at any point (even by SIGKILL) loses no finished match and never rates a set twice or in part;
the next run resumes the unfinished sets. A set in which the arena itself failed (an error of ours, not
of a bot) is made void: kept in the history, never rated, never resumed. A row that does not hold what
the arena wrote (the file was edited by hand?) is a StoreError, not a crash further on.

Cost: what the ladder reads and writes for each match and each set does not grow with the history (see
matches.py and ratings.py).
"""

from __future__ import annotations

from pathlib import Path

from arena.ladder.store.access import AccessStore
from arena.ladder.store.browse import BrowseStore
from arena.ladder.store.checks import CheckStore
from arena.ladder.store.file import StoreFile
from arena.ladder.store.leases import LeaseStore
from arena.ladder.store.live import LiveStore
from arena.ladder.store.matches import MatchStore
from arena.ladder.store.outputs import OutputStore
from arena.ladder.store.ratings import RatingStore
from arena.ladder.store.registry import BotRegistry
from arena.ladder.store.schema import DEFAULT_DB
from arena.ladder.store.sessions import SessionStore
from arena.ladder.store.sets import SetStore
from arena.ladder.store.uploads import UploadStore


class LadderStore:
    """The ladder's store: an open file and its parts. Open it with `LadderStore(path)` (see StoreFile
    for `read_only` and `timeout`); close it with `close()`. Every error is a StoreError that names the
    file.
    """

    def __init__(
        self, path: str | Path = DEFAULT_DB, *, read_only: bool | None = None, timeout: float = 30.0
    ) -> None:
        self.file = StoreFile(path, read_only=read_only, timeout=timeout)
        """The open file (or server database) that every part reads and writes through."""
        self.name = self.file.name
        """The database as messages name it: the file's path, or a server database's URL."""
        self.path = self.file.path
        """The SQLite file (for a server database, its name as a path: StoreFile.path)."""
        self.files_stem = self.file.files_stem
        """Where the files kept beside the ladder start their names (StoreFile.files_stem)."""
        self.read_only = self.file.read_only
        self.sets = SetStore(self.file)
        self.registry = BotRegistry(self.file, self.sets)
        self.leases = LeaseStore(self.file, self.sets)
        self.matches = MatchStore(self.file)
        self.outputs = OutputStore(self.file)
        self.ratings = RatingStore(self.file)
        self.live = LiveStore(self.file)
        self.access = AccessStore(self.file)
        self.sessions = SessionStore(self.file)
        self.browse = BrowseStore(self.file)
        self.uploads = UploadStore(self.file)
        self.checks = CheckStore(self.file)

    def close(self) -> None:
        """Close the file (or the connection to the server)."""
        self.file.close()
