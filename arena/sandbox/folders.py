"""Removing a folder that a bot could write in (the host socket folder of an unsandboxed `{socket}` bot),
whatever it left there: folders it closed to its own user (mode 000, or read-only), which shutil.rmtree
leaves when the arena is that user, and folders nested thousands deep, where rmtree's recursion fails and
paths grow longer than the system takes. The bot must be gone: nothing may write there while it is removed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
from collections.abc import Iterator
from pathlib import Path

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def remove_folder(folder: Path) -> bool:
    """Remove `folder` and everything in it, following no symbolic link; whether it is gone.

    It holds two descriptors at a time, at any depth: each folder found in `folder` is emptied into it
    (its entries renamed up, under new names) and removed, pass after pass, until nothing is left.
    """
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            os.unlink(folder)
            return True
        os.chmod(folder, 0o700)
        top = os.open(folder, _FOLDER_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    new_names = (f".removed-{number}" for number in itertools.count())
    try:
        left = os.listdir(top)
        while left:
            for name in left:
                with contextlib.suppress(OSError):
                    _remove_entry(top, name, new_names)
            before, left = left, os.listdir(top)
            if set(left) == set(before):
                break  # a pass that removed nothing: what is left cannot be removed
    except OSError:
        pass
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(folder)
    return not os.path.lexists(folder)


def _remove_entry(top: int, name: str, new_names: Iterator[str]) -> None:
    """Remove what is not a folder in the folder open at `top`; empty a folder into it, then remove that."""
    if not stat.S_ISDIR(os.lstat(name, dir_fd=top).st_mode):
        os.unlink(name, dir_fd=top)
        return
    os.chmod(name, 0o700, dir_fd=top)
    inner = os.open(name, _FOLDER_FLAGS, dir_fd=top)
    try:
        for entry in os.listdir(inner):
            if stat.S_ISDIR(os.lstat(entry, dir_fd=inner).st_mode):
                os.chmod(entry, 0o700, dir_fd=inner)  # moving a folder writes its `..`
            new_name = next(new_names)
            while _exists(new_name, top):
                new_name = next(new_names)
            os.rename(entry, new_name, src_dir_fd=inner, dst_dir_fd=top)
    finally:
        os.close(inner)
    os.rmdir(name, dir_fd=top)


def _exists(name: str, folder: int) -> bool:
    try:
        os.lstat(name, dir_fd=folder)
    except FileNotFoundError:
        return False
    return True
