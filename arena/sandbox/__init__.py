"""Running strangers' bots: the bubblewrap sandbox and its limits (bubblewrap.py), the socket a sandboxed
bot makes in its own /tmp reached from the host (sockets.py), uploaded bundles unpacked safely
(bundles.py), and the folders a bot wrote in removed whatever it left there (folders.py). The ladder starts
bots through it (arena/ladder/bots/processes.py)."""
