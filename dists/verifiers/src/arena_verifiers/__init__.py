"""Arena games as verifiers environments (issue 33 point 2): taskset id ``arena-verifiers``.

``arena_verifiers.seat``: one Arena game in which one seat is played by a model through text
(the seeded deal, legal moves, retry-then-forfeit for unreadable or illegal answers, counted;
the other seats by Arena players, or by a model too: opponent spec ``"model"``; each seat's
outcome as its reward). It imports the core only.
``arena_verifiers.taskset``: the ``verifiers.v1`` taskset and env over it (roles ``player`` and
``opponent``: self-play with a trace per seat). verifiers' loader
imports this package by the id and takes the one ``Taskset`` and one ``Env`` subclass of
``__all__``; without verifiers installed (Arena's development install) only ``seat`` is there.
"""

try:
    from .taskset import ArenaEnv, ArenaEnvConfig, ArenaTask, ArenaTaskData, ArenaTaskset, ArenaTasksetConfig
except ModuleNotFoundError as exc:  # only a missing verifiers is expected; anything else is a bug
    if exc.name is None or exc.name.split(".")[0] != "verifiers":
        raise
    __all__: list[str] = []
else:
    __all__ = ["ArenaEnv", "ArenaEnvConfig", "ArenaTask", "ArenaTaskData", "ArenaTaskset", "ArenaTasksetConfig"]
