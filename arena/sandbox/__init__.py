"""Running strangers' bots: the bubblewrap sandbox and its limits (bubblewrap.py), and uploaded bundles
unpacked safely (bundles.py). The ladder starts bots through it (arena/ladder/local_bots.py)."""
