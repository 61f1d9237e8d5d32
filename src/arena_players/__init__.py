"""Arena's own players, registered through the `arena.players` entry point group."""
