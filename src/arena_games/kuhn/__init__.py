"""Kuhn poker: the reference native game (chance deal, hidden cards)."""

from .rules import KuhnAction, KuhnPoker, KuhnState, nash_policy

__all__ = ["KuhnAction", "KuhnPoker", "KuhnState", "nash_policy"]
