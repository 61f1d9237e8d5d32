"""The TextArena adapter's cost per step against raw TextArena (``-raw`` envs), on the same
titles and the same action sequences, side by side in one run.

For each title, random-legal games are recorded through the adapter (seed -> TextArena seed
and action strings). Then, interleaved and repeated, the same games are run

- raw: ``ta.make(id + "-raw")``, ``reset(num_players, seed)``, then per step
  ``get_observation()`` (the acting player's new messages) and ``step(action)``, ``close()``;
- raw + isolation: the same, with the global ``random`` state saved and restored around
  every TextArena call as the adapter does (what the no-side-effect promise costs alone);
- adapter: ``game.start(seed)``, then per step ``game.act`` (legality checked) and
  ``game.observe`` of the player to act (the episode-scoped, rebuilt observation), with the
  default isolation (a private generator swapped into the title's modules) and with
  ``random_isolation="save_restore"``.

    python bench/textarena_bench.py [--games N] [--repeats R]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from _report import machine, write_section
from arena_core.registry import make_game
from arena_games.textarena.adapter import _ta

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
        for seed, ta_seed, actions in recorded:  # the recorded sequences are the same games in raw TextArena
            assert make_game(f"textarena/{title}", num_players=n).start(seed).state.ta_seed == ta_seed
        kwargs = dict(game.title.env_kwargs)
        best = {"raw": [], "iso": [], "ours": [], "ours_sr": []}
        for _ in range(args.repeats):  # interleaved, so machine noise hits all three alike
            t, steps = run_raw(title, n, kwargs, recorded, isolate=False)
            best["raw"].append(t / steps)
            t, _ = run_raw(title, n, kwargs, recorded, isolate=True)
            best["iso"].append(t / steps)
            fresh = make_game(f"textarena/{title}", num_players=n)  # cold cache: replay costs are paid
            t, _ = run_adapter(fresh, recorded)
            best["ours"].append(t / steps)
            fresh = make_game(f"textarena/{title}", {"random_isolation": "save_restore"}, num_players=n)
            t, _ = run_adapter(fresh, recorded)
            best["ours_sr"].append(t / steps)
        raw, iso, ours, ours_sr = (min(best[k]) * 1e6 for k in ("raw", "iso", "ours", "ours_sr"))
        rows.append((title, n, steps / len(recorded), raw, iso, ours, ours_sr))
        print(f"{title:28s} {n}p  raw {raw:8.2f}  raw+save/restore {iso:8.2f}  adapter {ours:8.2f}  adapter(save/restore) {ours_sr:8.2f} µs  ratio {ours / raw:5.2f}x", flush=True)
    load_after = os.getloadavg()[0]
    ratios = [r[5] / r[3] for r in rows]
    geo = statistics.geometric_mean(ratios)
    met = [r[0] for r, x in zip(rows, ratios) if x <= 1.15]
    lines = [
        "## TextArena adapter",
        "",
        f"Written by `bench/textarena_bench.py`; rerun it to refresh. Machine: {machine()}. "
        f"{args.games} random-legal games per title, recorded through the adapter, then replayed as the same "
        "TextArena seed and action strings by every row; fastest of "
        f"{args.repeats} interleaved runs. Per step = CPU time (process_time) of whole games (make/reset/start included) / steps. "
        f"Load average (1 min) {load_before:.1f} before and {load_after:.1f} after on a shared machine: absolute times "
        "are inflated, the ratios come from the same interleaved runs.",
        "",
        "| title | players | steps/game | raw TextArena µs/step | raw + global save/restore µs/step | adapter µs/step | adapter / raw | adapter (save_restore) µs/step | adapter (save_restore) / raw |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (title, n, spg, raw, iso, ours, ours_sr), x in zip(rows, ratios):
        lines.append(f"| {title} | {n} | {spg:.1f} | {raw:.2f} | {iso:.2f} | {ours:.2f} | {x:.2f}× | {ours_sr:.2f} | {ours_sr / raw:.2f}× |")
    geo_sr = statistics.geometric_mean([r[6] / r[3] for r in rows])
    lines += [
        "",
        f"- Goal: adapter at most 1.15× raw TextArena per step. Geometric mean **{geo:.2f}×**; "
        + (f"met on {', '.join(met)}; " if met else "met on no title; ")
        + f"**not met** on {len(rows) - len(met)} of {len(rows)} titles." if len(met) < len(rows) else f"- Goal: adapter at most 1.15× raw TextArena per step: **met** on every title (geometric mean {geo:.2f}×).",
        f"- With `random_isolation=\"save_restore\"` (the global state saved and restored around every TextArena call) "
        f"the geometric mean is **{geo_sr:.2f}×**: `random.getstate()` builds a 625-integer tuple and each call needs two; "
        "the default swaps a private generator into the title's modules instead (about 1 µs a call) and never touches "
        "the global generator.",
        "- Per step the adapter now pays: `Game.act`'s machinery (turn check, a new `Position`), the title's cheap "
        "legality check on the live env (the typed legal set is built only when `legal`/`mask`/a prompt asks for it; "
        "titles without a check still derive it every step), one TextArena step with the private generator swapped in, "
        "a new immutable state (the history plus each player's message count; the inbox is read from TextArena's "
        "append-only queues on first use), and the observation (the player's messages, each converted once, copied "
        "into a fresh list). Per game: the seeded deal (numpy, about 5 µs) and seeding the private Mersenne Twister "
        "(about 5 µs) on top of TextArena's own make/reset.",
        "- Why 1.15× is out of reach on the light titles: their raw step costs 10-20 µs, so the budget is 1.5-3 µs a "
        "step, and the Python-level calls above (each 0.1-1 µs: `players_to_act`, the check, `Position`, the state "
        "tuple, the observation dict and message list) add up to several µs whatever the title. The gap closes as "
        "the TextArena step gets heavier (Othello, Poker).",
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section("textarena", "\n".join(lines))


if __name__ == "__main__":
    main()
