"""Any Arena game as a ``verifiers.v1`` taskset and env (verifiers 0.4).

    vf-eval arena-verifiers -m MODEL --env.taskset.game kuhn_poker --env.taskset.opponents random

The taskset id is ``arena-verifiers`` (verifiers imports the package and takes the one ``Taskset`` and the
one ``Env`` subclass in ``__all__``, as for its own ``tasksets/textarena``). Task ``i`` is deal
seed ``i`` with the model in seat ``i % num_players`` (``info`` names both, so per-seat baselines
can group by seat). The env steps the game host-side as the run's user: the model's reply is
read by the game's text view; an unreadable or illegal one is answered with feedback and retried
(``max_retries``), then forfeited; the other seats are Arena players; the seat's return is the
reward ``game_reward``, and ``info`` counts the faults. Modelled on verifiers'
``tasksets/textarena/taskset.py``; tests/test_eval_e2e.py runs it through ``vf-eval``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf

from arena_core.registry import make_game

from .seat import ModelSeatGame, SeatTask


class ArenaTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]  # verifiers' classes read as Any here
    game: str = "kuhn_poker"
    params: dict[str, Any] = {}
    num_players: int | None = None
    opponents: list[str] = []  # player specs of the other seats ("random" each by default)
    max_retries: int = 2


class ArenaTaskData(vf.TaskData):  # type: ignore[misc]  # as above
    info: dict[str, Any]
    """The SeatTask the env replays: game, params, seed, seat, opponents, retries."""


class ArenaTask(vf.Task[ArenaTaskData, vf.State, vf.TaskConfig]):  # type: ignore[misc]  # as above
    pass


class ArenaEnvConfig(vf.EnvConfig):  # type: ignore[misc]  # as above
    player: vf.AgentConfig = vf.AgentConfig()


def _seat_task(info: dict[str, Any]) -> SeatTask:
    return SeatTask(
        game=info["game"],
        seed=int(info["seed"]),
        seat=int(info["seat"]),
        opponents=tuple(info["opponents"]),
        params=dict(info["params"]),
        num_players=info["num_players"],
        max_retries=int(info["max_retries"]),
    )


class ArenaEnv(vf.Env[ArenaEnvConfig]):  # type: ignore[misc]  # as above
    async def run(self, task: ArenaTask, agents: Any) -> None:
        game = ModelSeatGame(_seat_task(task.data.info))
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()  # the task prompt is the model's first decision
            while not segment.terminated:
                user = game.reply(str(segment.last_reply))
                if user is None:
                    break
                segment = await interaction.turn(user)
        trace = interaction.trace
        trace.record_reward("game_reward", game.reward, 1.0)
        trace.info.update(game.info)


class ArenaTaskset(vf.Taskset[ArenaTask, ArenaTasksetConfig]):  # type: ignore[misc]  # as above
    INFINITE = True

    def load(self) -> Iterator[ArenaTask]:
        cfg = self.config
        n = make_game(cfg.game, cfg.params or None, num_players=cfg.num_players).num_players
        for i in itertools.count():
            info = {
                "game": cfg.game,
                "params": dict(cfg.params),
                "num_players": cfg.num_players,
                "seed": i,
                "seat": i % n,
                "opponents": list(cfg.opponents),
                "max_retries": cfg.max_retries,
            }
            system, user = ModelSeatGame(_seat_task(info)).messages()
            yield ArenaTask(
                ArenaTaskData(
                    name=f"{cfg.game}#{i}/seat{i % n}",
                    prompt=user["content"],
                    system_prompt=system["content"],
                    info=info,
                ),
                cfg.task,
            )
