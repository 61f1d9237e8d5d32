"""Property tests on a shared, busy machine: no per-example time limit (hypothesis' default
of 200 ms would make a slow moment look like a failure)."""

from hypothesis import settings

settings.register_profile("no_deadline", deadline=None)
settings.load_profile("no_deadline")
