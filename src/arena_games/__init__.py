"""Arena's own games, registered through the `arena.games` entry point group like any plugin."""
