"""The arena's version, read from the installed package's metadata (pyproject.toml is the one place)."""

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("fiftysix-arena")
except PackageNotFoundError:  # run from a source tree that was never installed
    VERSION = "0+unknown"
