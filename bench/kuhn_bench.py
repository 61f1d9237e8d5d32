"""Random legal play of full games, per decision step, measured side by side in one run:
our Kuhn poker (rules hooks, the checked machinery, the AEC env), OpenSpiel's C++ kuhn_poker
through pyspiel, and PettingZoo classic env() (tictactoe_v3, connect_four_v3: PettingZoo has
no Kuhn poker without rlcard).

    python bench/kuhn_bench.py [--games N]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from _report import aec_random_play, machine, machinery_random_play, openspiel_random_play, write_section
from arena_core.env import ArenaAECEnv
from arena_core.seeding import deal_rng
from arena_games.kuhn import KuhnPoker

warnings.filterwarnings("ignore")


def best_of(fn, repeats: int = 5) -> tuple[float, int]:
    """(best seconds per decision, decisions per run)."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        decisions = fn()
        runs.append((time.perf_counter() - start) / decisions)
    return min(runs), decisions


def ours_hooks(games: int, choices: np.ndarray):
    game = KuhnPoker()

    def run():
        n = 0
        for g in range(games):
            state = game.initial_state(deal_rng(g))  # the same seeded deal every path pays for
            while not game.is_terminal(state):
                (player,) = game.to_move(state)
                legal = game.legal_actions(state, player)
                state = game.next_state(state, {player: legal[choices[n] % len(legal)]})
                n += 1
        return n

    return run


def ours_machinery(games: int, choices: np.ndarray):
    return machinery_random_play(KuhnPoker(), games, choices)


def ours_aec(games: int, choices: np.ndarray):
    return aec_random_play(ArenaAECEnv(KuhnPoker()), games, choices)


def openspiel(games: int, choices: np.ndarray):
    return openspiel_random_play("kuhn_poker", games, choices)


def pettingzoo_classic(module, games: int, choices: np.ndarray):
    return aec_random_play(module.env(), games, choices)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=20000)
    args = parser.parse_args()
    choices = np.random.default_rng(1).integers(0, 1 << 30, size=args.games * 50)
    rows = {}
    rows["arena kuhn_poker: rules hooks (seeded deal + pure transitions)"] = best_of(ours_hooks(args.games, choices))
    rows["arena kuhn_poker: checked machinery (Game.act)"] = best_of(ours_machinery(args.games, choices))
    rows["arena kuhn_poker: AEC env"] = best_of(ours_aec(args.games // 4, choices))
    try:
        rows["OpenSpiel kuhn_poker (pyspiel, C++)"] = best_of(openspiel(args.games, choices))
    except ImportError:
        print("pyspiel not installed: pip install open-spiel")
    from pettingzoo.classic import connect_four_v3, tictactoe_v3

    rows["PettingZoo classic tictactoe_v3 env()"] = best_of(pettingzoo_classic(tictactoe_v3, args.games // 20, choices))
    rows["PettingZoo classic connect_four_v3 env()"] = best_of(
        pettingzoo_classic(connect_four_v3, args.games // 40, choices)
    )

    aec = rows["arena kuhn_poker: AEC env"][0]
    lines = ["| what | µs per decision | AEC env relative |", "|---|---:|---:|"]
    for name, (sec, _) in rows.items():
        lines.append(f"| {name} | {sec * 1e6:.2f} | {aec / sec:.2f}× |")
        print(f"{name:<52} {sec * 1e6:8.2f} µs/decision")
    hooks = rows["arena kuhn_poker: rules hooks (seeded deal + pure transitions)"][0]
    mach = rows["arena kuhn_poker: checked machinery (Game.act)"][0]
    goals = [
        f"- AEC adapter vs raw rules (goal ≤ 1.3×): **{aec / hooks:.2f}×** the rules hooks, **{aec / mach:.2f}×** the checked machinery.",
    ]
    if "OpenSpiel kuhn_poker (pyspiel, C++)" in rows:
        osp = rows["OpenSpiel kuhn_poker (pyspiel, C++)"][0]
        goals.append(
            f"- Our per-step cost vs OpenSpiel's C++ (goal within 2×): machinery **{mach / osp:.2f}×**, AEC env **{aec / osp:.2f}×**."
        )
    pz = min(rows["PettingZoo classic tictactoe_v3 env()"][0], rows["PettingZoo classic connect_four_v3 env()"][0])
    goals.append(
        f"- PettingZoo classic env() vs our AEC env (goal ≥ 10× cheaper): ours is **{pz / aec:.2f}×** cheaper per decision than the faster classic env."
    )
    body = "\n".join(
        [
            "## Core: Kuhn poker, random legal play (bench/kuhn_bench.py)",
            "",
            f"Machine: {machine()}. Best of 5 runs; {args.games} games for the rules, fewer for the envs. "
            "Per decision = total time of full games (deal included) / player decisions.",
            "",
            *lines,
            "",
            *goals,
        ]
    )
    write_section("core-kuhn", body)
    print(body)


if __name__ == "__main__":
    main()
