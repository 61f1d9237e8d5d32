"""Arena trainers, registered through the `arena.trainers` entry point group."""
