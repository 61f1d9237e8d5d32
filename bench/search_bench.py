"""The `search` player against named opponents: Kuhn poker, MegaGem, perfect-information TextArena titles.

    python bench/search_bench.py kuhn --deals 300 --simulations 200 --rollouts random,none   # none: random's own value
    python bench/search_bench.py kuhn --deals 300 --opponent-model learned   # learned online
    python bench/search_bench.py kuhn --deals 300 --opponent-model learned --no-end   # ... without end_episode
    python bench/search_bench.py megagem --deals 0:100 --simulations 12 --candidates 5 --out runs/search_megagem.jsonl
    python bench/search_bench.py megagem --summary runs/search_megagem.jsonl
    python bench/search_bench.py textarena --title textarena/TicTacToe-v0 --games 40 --simulations 100

Every game is one JSON line (deal, seat, returns, seconds, simulations); summaries cluster by deal
(``arena_core.stats.cluster_mean_interval``: all seats of one deal are one cluster) or use Wilson
intervals for win rates. Results are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict

from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_core.stats import cluster_mean_interval, wilson_interval
from arena_players.search import SearchPlayer


def _deals(text: str) -> range:
    a, _, b = text.partition(":")
    return range(int(a), int(b)) if b else range(int(a))


class _Untold:
    """The player, minus its ``end_episode`` hook: the game loop cannot tell it how episodes end."""

    def __init__(self, player):
        self.player, self.name = player, player.name

    def begin_episode(self, game, seat, episode_seed):
        self.player.begin_episode(game, seat, episode_seed)

    def act(self, decision):
        return self.player.act(decision)


def kuhn(args) -> None:
    game = make_game("kuhn_poker")
    for rollout in args.rollouts.split(","):
        for opp in args.opponents.split(","):
            s = (
                SearchPlayer(
                    seed=args.seed,
                    simulations=args.simulations,
                    rollout=rollout,
                    opponents=args.opponent_model,
                    model_prior=args.model_prior,
                    learn_untold=args.learn_untold,
                )
                if rollout != "none"
                else make_player("random", seed=args.seed)
            )  # "none": the random player itself, the baseline
            o = make_player(opp, seed=args.seed + 1)
            sums, counts = [], []
            for deal in _deals(args.deals):  # one player object for the whole run: a learned model carries over
                tot = 0.0
                for seat in (0, 1):
                    me = _Untold(s) if args.no_end else s
                    rec = play_episode(game, [me, o] if seat == 0 else [o, me], deal)  # it calls end_episode
                    tot += rec.end.returns[seat]
                sums.append(tot)
                counts.append(2)
            mean = sum(sums) / sum(counts)
            lo, hi = cluster_mean_interval(sums, counts)
            if not math.isfinite(lo):  # no spread at all (e.g. every game +1): the bounded interval
                lo, hi = cluster_mean_interval(sums, counts, bounds=game.spec.reward_bounds)
            half = len(sums) // 2
            late = sum(sums[half:]) / (2 * (len(sums) - half))
            model = (
                f"{args.opponent_model}{' (no end_episode)' if args.no_end else ''}"
                f"{' learn_untold' if args.learn_untold else ''}"
                if rollout != "none"
                else "-"
            )
            print(
                f"kuhn  rollout={rollout:8s} opponents={model} vs {opp:15s} {mean:+.3f} a game [{lo:+.3f}, {hi:+.3f}]  "
                f"(second half {late:+.3f})  {len(sums)} deals x 2 seats, {args.simulations} sims/decision, "
                f"{s.simulations_per_second() if rollout != 'none' else 0:.0f} sims/s",
                flush=True,
            )


def megagem(args) -> None:
    if args.summary:
        return megagem_summary(args.summary)
    game = make_game("megagem")
    out = open(args.out, "a") if args.out else sys.stdout
    for deal in _deals(args.deals):
        for seat in range(3):
            s = SearchPlayer(
                seed=args.seed,
                simulations=args.simulations,
                rollout=args.rollout,
                candidates=args.candidates,
                objective=args.objective,
            )
            players = [make_player(args.opponent, seed=args.seed + 1 + p) for p in range(3)]
            players[seat] = s
            t = time.perf_counter()
            rec = play_episode(game, players, deal)
            out.write(
                json.dumps(
                    {
                        "deal": deal,
                        "seat": seat,
                        "returns": list(rec.end.returns),
                        "seconds": round(time.perf_counter() - t, 3),
                        "simulations": s.stats["simulations"],
                        "search_seconds": round(s.stats["seconds"], 3),
                        "rollout_faults": s.stats["rollout_faults"],
                        "truncated": s.stats["truncated"],
                        "budget": args.simulations,
                        "candidates": args.candidates,
                        "rollout": args.rollout,
                        "opponent": args.opponent,
                    }
                )
                + "\n"
            )
            out.flush()


def megagem_summary(path: str) -> None:
    by_deal: dict[int, list[float]] = defaultdict(list)
    sims = secs = 0.0
    rows = [json.loads(line) for line in open(path) if line.strip()]
    for r in rows:
        ret = r["returns"]
        others = [x for p, x in enumerate(ret) if p != r["seat"]]
        by_deal[r["deal"]].append(ret[r["seat"]] - sum(others) / len(others))
        sims += r["simulations"]
        secs += r["search_seconds"]
    sums = [sum(v) for v in by_deal.values()]
    counts = [len(v) for v in by_deal.values()]
    mean = sum(sums) / sum(counts)
    lo, hi = cluster_mean_interval(sums, counts)
    r0 = rows[0]
    print(
        f"megagem search{{simulations={r0['budget']}, candidates={r0['candidates']}, rollout={r0['rollout']}}} vs 2 x {r0['opponent']}: "
        f"margin {mean:+.2f} points a game [{lo:+.2f}, {hi:+.2f}] over {len(sums)} deals ({sum(counts)} games), "
        f"{sims / secs:.0f} sims/s, rollout faults {sum(r['rollout_faults'] for r in rows)}, truncated {sum(r['truncated'] for r in rows)}"
    )


def textarena(args) -> None:
    game = make_game(args.title)
    wins = draws = losses = 0
    s = SearchPlayer(seed=args.seed, simulations=args.simulations, rollout="random")
    for g in range(args.games):
        seat = g % game.num_players
        players = [make_player("random", seed=args.seed + 1) for _ in range(game.num_players)]
        players[seat] = s
        rec = play_episode(game, players, g)
        ret = rec.end.returns
        if ret is None:
            losses += 1
            continue
        best = max(ret)
        if ret[seat] == best and sum(1 for x in ret if x == best) == 1:
            wins += 1
        elif ret[seat] == best:
            draws += 1
        else:
            losses += 1
    lo, hi = wilson_interval(wins, args.games)
    print(
        f"{args.title}: search{{simulations={args.simulations}, rollout=random}} vs random: wins {wins}, draws {draws}, "
        f"losses {losses} of {args.games}; win rate {wins / args.games:.2f} [{lo:.2f}, {hi:.2f}], "
        f"{s.simulations_per_second():.0f} sims/s"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("kuhn")
    k.add_argument("--deals", default="300")
    k.add_argument("--simulations", type=int, default=200)
    k.add_argument("--rollouts", default="random")
    k.add_argument("--opponents", default="kuhn_king_only,random,first_legal")
    k.add_argument("--seed", type=int, default=0)
    k.add_argument("--opponent-model", default="rollout", choices=("rollout", "learned"))
    k.add_argument("--model-prior", type=float, default=0.25)
    k.add_argument("--no-end", action="store_true", help="hide the player's end_episode hook from the game loop")
    k.add_argument("--learn-untold", action="store_true", help="learn from episodes whose end was not told")
    k.set_defaults(fn=kuhn)
    m = sub.add_parser("megagem")
    m.add_argument("--deals", default="0:100")
    m.add_argument("--simulations", type=int, default=12)
    m.add_argument("--candidates", type=int, default=5)
    m.add_argument("--objective", default="return")
    m.add_argument("--rollout", default="megagem_expert")
    m.add_argument("--opponent", default="megagem_expert")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--out", default="")
    m.add_argument("--summary", default="")
    m.set_defaults(fn=megagem)
    t = sub.add_parser("textarena")
    t.add_argument("--title", required=True)
    t.add_argument("--games", type=int, default=40)
    t.add_argument("--simulations", type=int, default=100)
    t.add_argument("--seed", type=int, default=0)
    t.set_defaults(fn=textarena)
    args = ap.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
