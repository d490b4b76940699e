"""Test set-up shared by every folder: the deliberately bad bots in tests/bots are importable by name."""

import sys
from pathlib import Path

BOTS = Path(__file__).resolve().parent / "bots"
if str(BOTS) not in sys.path:
    sys.path.insert(0, str(BOTS))
