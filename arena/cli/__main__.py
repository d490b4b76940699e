"""`python -m arena.cli`: the `arena` command without the console script."""

from __future__ import annotations

import sys

from arena.cli import main

sys.exit(main())
