"""Sample bots: each runs as its own process, e.g. `python -m sample_bots.random_bot --port 50051`."""
