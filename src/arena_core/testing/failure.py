"""The exception every conformance check raises when its claim does not hold (its own module so
that the checks' modules share it without importing one another)."""

from __future__ import annotations


class CheckFailure(AssertionError):
    """One conformance claim does not hold."""
