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

Two roles (verifiers' multi-agent env): ``player`` plays the task's seat; ``opponent`` plays every
seat whose opponent spec is ``"model"`` (``--env.taskset.opponents model``), as the run's model
(self-play: both roles' traces are training data, each with its own seat's return) unless
``--env.opponent.model`` pins another one; ``--env.train-opponent false`` marks its traces
untrainable. Traces carry the role (``agent.name``) and ``info.seat``, what per-role baselines
group by. Then the tasks have no prompt (the first position depends on the other model's moves):
each model seat's conversation opens with its first decision. Both roles default to verifiers'
``null`` harness (chat only) in the ``subprocess`` runtime: a game seat needs no tools or box.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf

from arena_core.registry import make_game

from .seat import MODEL, ModelSeatGame, SeatTask


class ArenaTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]  # verifiers' classes read as Any here
    game: str = "kuhn_poker"
    params: dict[str, Any] = {}
    num_players: int | None = None
    opponents: list[str] = []  # player specs of the other seats ("random" each by default; "model": the opponent role)
    max_retries: int = 2


class ArenaTaskData(vf.TaskData):  # type: ignore[misc]  # as above
    info: dict[str, Any]
    """The SeatTask the env replays: game, params, seed, seat, opponents, retries."""


class ArenaTask(vf.Task[ArenaTaskData, vf.State, vf.TaskConfig]):  # type: ignore[misc]  # as above
    pass


_CHAT_SEAT = {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}


class ArenaEnvConfig(vf.EnvConfig):  # type: ignore[misc]  # as above
    player: vf.AgentConfig = vf.AgentConfig(**_CHAT_SEAT)
    """The task's seat: the model under training (the run's model)."""
    opponent: vf.AgentConfig = vf.AgentConfig(**_CHAT_SEAT)
    """Every seat whose opponent spec is "model" (the run's model unless pinned)."""
    train_opponent: bool = True
    """Whether the opponent role's traces are training data (self-play) or not (a fixed model)."""


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


def _record(trace: Any, game: ModelSeatGame, seat: int, role: str) -> None:
    trace.record_reward("game_reward", game.reward_of(seat), 1.0)
    trace.info.update(game.info_of(seat), role=role)


class ArenaEnv(vf.Env[ArenaEnvConfig]):  # type: ignore[misc]  # as above
    async def setup(self, agents: Any) -> None:
        agents.opponent.trainable = self.config.train_opponent

    async def run(self, task: ArenaTask, agents: Any) -> None:
        game = ModelSeatGame(_seat_task(task.data.info))
        if game.model_seats == (game.task.seat,):
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn()  # the task prompt is the model's first decision
                while not segment.terminated:
                    user = game.reply(str(segment.last_reply))
                    if user is None:
                        break
                    segment = await interaction.turn(user)
            _record(interaction.trace, game, game.task.seat, "player")
            return
        await self._run_model_seats(task, agents, game)

    async def _run_model_seats(self, task: ArenaTask, agents: Any, game: ModelSeatGame) -> None:
        """Several model seats: one conversation per seat, opened at its first decision (the
        system message then is its rules), each turn relayed to the seat the game waits for. A
        conversation that ends without an answer (a turn or token limit) leaves the game
        unfinished: reward 0 for every seat, ``end_reason`` empty."""
        opened: dict[int, tuple[Any, str]] = {}
        async with contextlib.AsyncExitStack() as stack:
            seat = game.to_answer
            user = game.messages(seat)[-1]["content"] if seat is not None else None
            while seat is not None and user is not None:
                if seat not in opened:
                    role = "player" if seat == game.task.seat else "opponent"
                    system = game.messages(seat)[0]["content"]
                    data = task.data.model_copy(
                        update={"prompt": None, "system_prompt": system, "name": f"{task.data.name}/{role}@seat{seat}"}
                    )
                    agent = getattr(agents, role)
                    opened[seat] = (
                        await stack.enter_async_context(agent.interaction(type(task)(data, task.config))),
                        role,
                    )
                segment = await opened[seat][0].turn(user)
                if segment.terminated:
                    break
                user = game.reply(str(segment.last_reply), seat)
                seat = game.to_answer
        for s, (interaction, role) in opened.items():
            _record(interaction.trace, game, s, role)


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
            # with model opponents the first position depends on the other model: no prompt (run() opens each seat)
            system: str | None = None
            user: str | None = None
            if MODEL not in cfg.opponents:
                system, user = (m["content"] for m in ModelSeatGame(_seat_task(info)).messages())
            yield ArenaTask(
                ArenaTaskData(
                    name=f"{cfg.game}#{i}/seat{i % n}",
                    prompt=user,
                    system_prompt=system,
                    info=info,
                ),
                cfg.task,
            )
