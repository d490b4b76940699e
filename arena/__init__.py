"""The host: runs matches between remote bots, the ladder, the compliance checker and the command line."""
