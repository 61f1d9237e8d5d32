"""A market model of MegaGem bids learned offline from logged games (the price law).

For each card kind (treasure, loan, investment) a least-squares line predicts the bid as a
fraction of the bidder's limit from public features of the auction -- the lot's public chart
value over the limit, the bidder's coins over the starting coins, the share of auctionable gems
left, the round -- and the residuals' quantiles give a distribution around it. The fitted model
ships as ``data/price_law.json`` with its fit quality on held-out games; it is rebuilt with

    python -m arena_games.megagem.market --games 400 --write

which plays the scripted bots against each other (every seat rotation, seeded deals) and logs
every bid with the bidder's observation. The expert uses it with ``prior = "learned"``: as its
opponent model before any bid history (cold start) and as the prior mixed into the fitted law.
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .cards import GEMS_PER_COLOUR, NUM_COLOURS

KINDS = ("treasure", "loan", "investment")
QUANTILES = tuple(round(0.05 + 0.1 * k, 2) for k in range(10))
FEATURES = ("bias", "value/limit", "coins/start", "gems left", "round/25")
_START = {3: 35, 4: 25, 5: 20}
_HAND = {3: 5, 4: 4, 5: 3}


def features(obs: dict[str, Any], bidder: int, public_value: float) -> list[float]:
    """The features of ``bidder``'s bid on the current card as seen in ``obs`` (any seat's: all public)."""
    n = obs["num_players"]
    card = obs["current_card"]
    limit = obs["players"][bidder]["coins"] + (card["amount"] if card["type"] == "loan" else 0)
    left = obs["gem_deck_size"] + len(obs["pool"])
    start = GEMS_PER_COLOUR * NUM_COLOURS - n * _HAND.get(n, 3)
    return [
        1.0,
        public_value / max(limit, 1),
        obs["players"][bidder]["coins"] / _START.get(n, 20),
        left / max(start, 1),
        obs["round"] / 25.0,
    ]


class MarketModel:
    """Per kind: coefficients of the bid fraction and the residual quantiles."""

    def __init__(self, table: dict[str, Any]):
        self.table = table

    def bids(self, kind: str, x: list[float], limit: int) -> list[float]:
        """Ten equally likely bids (the residual deciles around the line), clamped to 0..limit."""
        entry = self.table["kinds"].get(kind)
        if entry is None or limit <= 0:
            return [0.0]
        mu = float(np.dot(entry["coef"], x))
        return [max(0.0, min(float(limit), (mu + r) * limit)) for r in entry["residual_quantiles"]]


_CACHED: MarketModel | None = None


def load() -> MarketModel:
    """The shipped model (``data/price_law.json``)."""
    global _CACHED
    if _CACHED is None:
        text = resources.files("arena_games.megagem").joinpath("data/price_law.json").read_text()
        _CACHED = MarketModel(json.loads(text))
    return _CACHED


# ---------------------------------------------------------------------- training
def _public_value(obs: dict[str, Any]) -> float:
    """The lot's value at today's display (0 off Treasure)."""
    card = obs["current_card"]
    if card is None or card["type"] != "treasure":
        return 0.0
    chart = obs["value_chart"]["values"]
    return float(sum(chart[min(obs["display_counts"][g], 5)] for g in obs["pool"][: card["gems"]]))


def log_bids(games: int, first_seed: int, field: tuple[str, ...]) -> list[tuple[int, str, list[float], float]]:
    """Play ``games`` 3-player games among ``field`` (rotated) and log (game, kind, features, fraction) per bid."""
    from arena_core.players import Decision
    from arena_core.registry import make_game, make_player

    from .rules import MegaGem, Phase

    game = make_game("megagem")
    if not isinstance(game, MegaGem):
        raise TypeError(f"the registered megagem game is not a MegaGem: {type(game).__name__}")
    rows: list[tuple[int, str, list[float], float]] = []
    for g in range(games):
        names = [field[(g + k) % len(field)] for k in range(3)]
        players = [make_player(name, seed=g) for name in names]
        pos = game.start(first_seed + g)
        while not game.is_over(pos):
            if pos.state.phase is Phase.BID and not pos.pending:
                obs = game.observe(pos, 0)
                kind = obs["current_card"]["type"]
                value = _public_value(obs)
                for p in game.players_to_act(pos):
                    answer = players[p].act(Decision.at(game, pos, p, first_seed + g))
                    limit = game.bid_limit(pos.state, p)
                    rows.append((g, kind, features(obs, p, value), answer.amount / max(limit, 1)))
                    pos = game.act(pos, p, answer)
                continue
            seat = game.players_to_act(pos)[0]  # the one seat to act (a reveal)
            pos = game.act(pos, seat, players[seat].act(Decision.at(game, pos, seat, first_seed + g)))
    return rows


def fit(rows: list[tuple[int, str, list[float], float]], holdout_every: int = 5) -> dict[str, Any]:
    """Least squares per kind on the games not held out; fit quality on the held-out games."""
    kinds: dict[str, dict[str, Any]] = {}
    out: dict[str, Any] = {"features": list(FEATURES), "quantiles": list(QUANTILES), "kinds": kinds}
    for kind in KINDS:
        train = [(x, y) for g, k, x, y in rows if k == kind and g % holdout_every]
        test = [(x, y) for g, k, x, y in rows if k == kind and not g % holdout_every]
        if len(train) < 20:
            continue
        X = np.array([x for x, _ in train])
        y = np.array([y for _, y in train])
        coef, *_ = np.linalg.lstsq(X, y, rcond=None)
        resid = y - X @ coef
        Xt = np.array([x for x, _ in test])
        yt = np.array([y for _, y in test])
        pred = Xt @ coef
        kinds[kind] = {
            "coef": [round(float(c), 6) for c in coef],
            "residual_quantiles": [round(float(q), 6) for q in np.quantile(resid, QUANTILES)],
            "train_bids": len(train),
            "heldout_bids": len(test),
            "heldout_mae_fraction": round(float(np.mean(np.abs(yt - pred))), 4),
            "heldout_mae_mean_only": round(float(np.mean(np.abs(yt - y.mean()))), 4),
            "heldout_r2": round(float(1 - np.sum((yt - pred) ** 2) / max(np.sum((yt - yt.mean()) ** 2), 1e-12)), 4),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Fit the MegaGem market model (price law) from logged bot games.")
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--seed", type=int, default=700_000)
    ap.add_argument(
        "--field", nargs="+", default=["megagem_expert", "megagem_market", "megagem_fair_value", "megagem_heuristic"]
    )
    ap.add_argument("--write", action="store_true", help="write src/arena_games/megagem/data/price_law.json")
    args = ap.parse_args(argv)
    rows = log_bids(args.games, args.seed, tuple(args.field))
    model = fit(rows)
    model["source"] = {"games": args.games, "first_seed": args.seed, "field": args.field, "holdout": "every 5th game"}
    text = json.dumps(model, indent=1)
    if args.write:
        (Path(__file__).parent / "data" / "price_law.json").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
