"""What the host says of the bots it starts: how sandboxed ones run (the limits the host gave) and the
host's files no bot may see (the ladder's file, its logs folder, the uploaded bundles). The sandbox
shows every bot the arena's Python installation read-only, so a ladder kept inside it would be open to
every bot: `BotHost.check` refuses such a sandbox before any bot starts. Light on purpose (no process
pool): the site holds one to check uploads with."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from arena.errors import UsageError
from arena.sandbox.bubblewrap import Sandbox


class ExposedFilesError(UsageError):
    """A sandbox that would show bots one of the host's files it must hide."""


@dataclass(frozen=True, slots=True)
class BotHost:
    """What the host says of the bots it starts: how sandboxed ones run (`sandbox`: the limits the host
    gave) and the host's files that no bot may see (`hidden`)."""

    sandbox: Sandbox = field(default_factory=Sandbox)
    hidden: tuple[Path, ...] = ()

    def check(self) -> None:
        """Refuse a sandbox that would show bots one of `hidden`.

        :raises ExposedFilesError: naming the folder shared and the file it holds.
        """
        try:
            self.sandbox.check_hidden(self.hidden)
        except ValueError as error:
            raise ExposedFilesError(
                f"{error}: move the ladder's file out of the arena's Python installation"
            ) from None
