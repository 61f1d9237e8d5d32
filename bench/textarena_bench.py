"""The TextArena adapter's cost per step against raw TextArena (``-raw`` envs), on the same
titles and the same action sequences, side by side in one run.

For each title, random-legal games are recorded through the adapter (seed -> TextArena seed
and action strings). Then, interleaved and repeated, the same games are run

- raw: ``ta.make(id + "-raw")``, ``reset(num_players, seed)``, then per step
  ``get_observation()`` (the acting player's new messages) and ``step(action)``, ``close()``;
- raw + isolation: the same, with the global ``random`` state saved and restored around
  every TextArena call as the adapter does (what the no-side-effect promise costs alone);
- floor: the least any adapter with the issue's guarantees must do, written inline with
  no framework: derive TextArena's seed from ours, make the env as the adapter does
  (``ta.make`` resolved once), run every TextArena call on a private generator (the adapter's
  own ``SwappedRandom``: lazily seeded, reached through the router in the title's modules), run
  the title's legality check before each step, hand the player its episode's messages as a
  fresh list (TextArena's own tuples, unconverted), and extend the history as a new tuple. No ``Game``/``Position`` machinery, no typed messages or state, no
  env cache, no end-reason typing;
- adapter: ``game.start(seed)``, then per step ``game.act`` (legality checked) and
  ``game.observe`` of the player to act (the episode-scoped, rebuilt observation), with the
  default isolation (the private generator) and with ``random_isolation="save_restore"``.

Times on this shared machine drift, so each title is also measured in Python bytecodes
executed per step (``sys.settrace`` opcode events, one traced pass of the same games): a
count that does not depend on the machine's load. It leaves out work done in C (building
tuples and dicts, string formatting), so it understates the cost of both sides.

    python bench/textarena_bench.py [--games N] [--repeats R]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time

from _report import machine, write_section
from arena_core.registry import make_game
from arena_core.seeding import deal_rng
from arena_games.textarena.adapter import SwappedRandom, _env_factory, _route_title, _ta

TITLES = [
    ("TicTacToe-v0", 2),
    ("KuhnPoker-v0", 2),
    ("ConnectFour-v0", 2),
    ("Othello-v0", 2),
    ("LiarsDice-v0", 3),
    ("Poker-v0", 3),
    ("GameOfPureStrategy-v0", 2),
]


def record_games(title: str, n: int, games: int) -> tuple[object, list[tuple[int, int, tuple[str, ...]]]]:
    game = make_game(f"textarena/{title}", num_players=n)
    out = []
    for seed in range(games):
        rng = random.Random(seed)
        pos = game.start(seed)
        while not game.is_over(pos):
            p = game.current_player(pos)
            pos = game.act(pos, p, rng.choice(game.legal(pos, p)))
        out.append((seed, pos.state.ta_seed, pos.state.actions))
    return game, out


def run_raw(title, n, kwargs, recorded, isolate: bool) -> tuple[float, int]:
    ta = _ta()
    steps = 0
    start = time.process_time()
    for _, ta_seed, actions in recorded:
        if isolate:
            outer = random.getstate()
            random.seed(ta_seed)
            env = ta.make(f"{title}-raw", **kwargs)
            env.reset(num_players=n, seed=ta_seed)
            inner = random.getstate()
            random.setstate(outer)
            for a in actions:
                outer = random.getstate()
                random.setstate(inner)
                env.get_observation()
                env.step(a)
                inner = random.getstate()
                random.setstate(outer)
            outer = random.getstate()
            random.setstate(inner)
            env.close()
            random.setstate(outer)
        else:
            env = ta.make(f"{title}-raw", **kwargs)
            env.reset(num_players=n, seed=ta_seed)
            for a in actions:
                env.get_observation()
                env.step(a)
            env.close()
        steps += len(actions)
    return time.process_time() - start, steps


def run_floor(title, n, kwargs, recorded, check) -> tuple[float, int]:
    """The floor row (see the module docstring), with the adapter's private generator (lazily
    seeded, routed to during each call)."""
    assert _route_title(title)
    make = _env_factory(f"{title}-raw", kwargs)  # ta.make resolved once, as the adapter does
    steps = 0
    start = time.process_time()
    for seed, _, actions in recorded:
        ta_seed = int(deal_rng(seed).integers(2**31 - 1))
        call = SwappedRandom(ta_seed).call  # every TextArena call draws from the private generator
        env = call(make)
        call(env.reset, num_players=n, seed=ta_seed)
        queues = env.state.observations
        history: tuple[str, ...] = ()
        for a in actions:
            p = env.state.current_player_id
            list(queues[p])  # the observation: this episode's messages, a fresh list
            if not check(env, p, a):
                raise AssertionError(f"{title}: recorded action {a!r} is not legal")
            call(env.step, a)
            history = history + (a,)
        call(env.close)
        steps += len(actions)
    return time.process_time() - start, steps


def run_adapter(game, recorded) -> tuple[float, int]:
    steps = 0
    start = time.process_time()
    for seed, _, actions in recorded:
        pos = game.start(seed)
        for a in actions:
            p = game.current_player(pos)
            game.observe(pos, p)
            pos = game.act(pos, p, a)
        steps += len(actions)
    return time.process_time() - start, steps


def bytecodes(run, *args) -> int:
    """Python bytecodes executed by ``run(*args)`` (every frame, the bench loop's own included)."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if event == "call":
            frame.f_trace_opcodes = True
        elif event == "opcode":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        run(*args)
    finally:
        sys.settrace(None)
    return count


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    rows = []
    for title, n in TITLES:
        game, recorded = record_games(title, n, args.games)
        for seed, ta_seed, _actions in recorded:  # the recorded sequences are the same games in raw TextArena
            assert make_game(f"textarena/{title}", num_players=n).start(seed).state.ta_seed == ta_seed
        kwargs = dict(game.title.env_kwargs)
        steps = sum(len(actions) for _, _, actions in recorded)
        best = {k: [math.inf] * len(recorded) for k in ("raw", "iso", "floor", "ours", "ours_sr")}
        for _ in range(args.repeats):
            # fresh game objects per repeat: a cold cache, so replay costs are paid
            ours = make_game(f"textarena/{title}", num_players=n)
            ours_sr = make_game(f"textarena/{title}", {"random_isolation": "save_restore"}, num_players=n)
            for i, one in enumerate(recorded):  # interleaved game by game, so machine noise hits every row alike
                timed = {
                    "raw": run_raw(title, n, kwargs, [one], isolate=False)[0],
                    "iso": run_raw(title, n, kwargs, [one], isolate=True)[0],
                    "floor": run_floor(title, n, kwargs, [one], game.title.check)[0],
                    "ours": run_adapter(ours, [one])[0],
                    "ours_sr": run_adapter(ours_sr, [one])[0],
                }
                for k, t in timed.items():
                    best[k][i] = min(best[k][i], t)
        raw, iso, floor, ours, ours_sr = (
            sum(best[k]) / steps * 1e6 for k in ("raw", "iso", "floor", "ours", "ours_sr")
        )
        warm = make_game(f"textarena/{title}", num_players=n)
        run_adapter(warm, recorded[:1])  # routing installed and the env factory made, as in the timed rows
        ops = {
            "raw": bytecodes(run_raw, title, n, kwargs, recorded, False),
            "floor": bytecodes(run_floor, title, n, kwargs, recorded, game.title.check),
            "ours": bytecodes(run_adapter, warm, recorded),
        }
        ops = {k: v / steps for k, v in ops.items()}
        rows.append((title, n, steps / len(recorded), raw, iso, ours, ours_sr, floor, ops))
        print(
            f"{title:28s} {n}p  raw {raw:8.2f}  raw+save/restore {iso:8.2f}  floor {floor:8.2f}  adapter {ours:8.2f}  "
            f"adapter(save/restore) {ours_sr:8.2f} µs  ratio {ours / raw:5.2f}x  floor {floor / raw:5.2f}x  "
            f"bytecodes/step raw {ops['raw']:.0f} floor {ops['floor']:.0f} adapter {ops['ours']:.0f}",
            flush=True,
        )
    load_after = os.getloadavg()[0]
    ratios = [r[5] / r[3] for r in rows]
    geo = statistics.geometric_mean(ratios)
    met = [r[0] for r, x in zip(rows, ratios) if x <= 1.15]
    lines = [
        "## TextArena adapter",
        "",
        f"Written by `bench/textarena_bench.py`; rerun it to refresh. Machine: {machine()}. "
        f"{args.games} random-legal games per title, recorded through the adapter, then replayed as the same "
        "TextArena seed and action strings by every row, interleaved game by game; each game's fastest of "
        f"{args.repeats} runs, summed. Per step = CPU time (process_time) of whole games (make/reset/start included) / steps. "
        f"Load average (1 min) {load_before:.1f} before and {load_after:.1f} after on a shared machine whose speed drifts "
        "(absolute times differ by up to 2× between runs); the ratios come from the same interleaved games.",
        "",
        "| title | players | steps/game | raw TextArena µs/step | raw + global save/restore µs/step | floor µs/step | floor / raw | adapter µs/step | adapter / raw | adapter (save_restore) µs/step | adapter (save_restore) / raw | bytecodes/step raw / floor / adapter | bytecodes adapter / raw |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (title, n, spg, raw, iso, ours, ours_sr, floor, ops), x in zip(rows, ratios):
        lines.append(
            f"| {title} | {n} | {spg:.1f} | {raw:.2f} | {iso:.2f} | {floor:.2f} | {floor / raw:.2f}× | {ours:.2f} | {x:.2f}× "
            f"| {ours_sr:.2f} | {ours_sr / raw:.2f}× | {ops['raw']:.0f} / {ops['floor']:.0f} / {ops['ours']:.0f} "
            f"| {ops['ours'] / ops['raw']:.2f}× |"
        )
    geo_sr = statistics.geometric_mean([r[6] / r[3] for r in rows])
    floor_ratios = [r[7] / r[3] for r in rows]
    floor_missed = [r[0] for r, x in zip(rows, floor_ratios) if x > 1.15]
    extra = [r[8]["ours"] - r[8]["raw"] for r in rows]
    floor_extra = [r[8]["floor"] - r[8]["raw"] for r in rows]
    op_ratios = [r[8]["ours"] / r[8]["raw"] for r in rows]
    lines += [
        "",
        (
            f"- Goal: adapter at most 1.15× raw TextArena per step. Geometric mean **{geo:.2f}×**; "
            + (f"met on {', '.join(met)}; " if met else "met on no title; ")
            + f"**not met** on {len(rows) - len(met)} of {len(rows)} titles."
        )
        if len(met) < len(rows)
        else f"- Goal: adapter at most 1.15× raw TextArena per step: **met** on every title (geometric mean {geo:.2f}×).",
        f"- The floor row (no framework at all, only what the issue's guarantees require; see the bench's docstring) is at "
        f"{min(floor_ratios):.2f}-{max(floor_ratios):.2f}× raw (geometric mean {statistics.geometric_mean(floor_ratios):.2f}×)"
        + (f" and itself misses 1.15× on {', '.join(floor_missed)}" if floor_missed else "")
        + ". A light title's raw step costs 10-20 µs on a quiet machine, so the goal leaves the adapter 1.5-3 µs a step.",
        f"- Bytecodes per step (load-independent): the adapter runs {min(extra):.0f}-{max(extra):.0f} more than raw "
        f"TextArena on every title (geometric mean of adapter / raw {statistics.geometric_mean(op_ratios):.2f}×), the floor "
        f"{min(floor_extra):.0f}-{max(floor_extra):.0f} more. Those extra bytecodes are the core's `current_player`, "
        "`Game.act` (turn check, legality hook, a new `Position`) and `observe`; the typed observation (each of TextArena's "
        "`(sender, text, type)` tuples converted once to a `Message`, the observation dict); the immutable "
        "`TextArenaState` per step; and the adapter's own structure (the live-env cache that makes branching and restored "
        "positions replay correctly, the livelock and decision-cap guards, the invalid-move cross-check, the typed outcome). "
        "Each piece is a few Python calls; none is large on its own.",
        f'- With `random_isolation="save_restore"` (the global state saved and restored around every TextArena call) '
        f"the geometric mean is **{geo_sr:.2f}×**: `random.getstate()` builds a 625-integer tuple and each call needs two. "
        "The default instead routes the title's modules to a private generator (a thread-local slot set and restored "
        "around each call, about 0.4 µs a call) that is seeded lazily: a title that never draws (TicTacToe, ConnectFour, "
        "Othello, ...) never sets up a Mersenne Twister, where raw TextArena reseeds the global one (about 5 µs) at every "
        "reset; the floor and the adapter get that back once a game.",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section("textarena", "\n".join(lines))


if __name__ == "__main__":
    main()
