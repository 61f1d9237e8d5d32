"""Golden transcripts: seeded MegaGem games played through the text view, checked in under data/.

Each transcript is JSON lines: a header (game, seed, players, the system text), one line per
decision (seat, phase, the answer text, how it parsed, the action applied, and the full prompt
for seat 0), and the final scores. ``tests/test_megagem_golden.py`` replays them; regenerate
only on purpose, after a deliberate change to the rules or the text view:

    python -m arena_games.megagem.golden --write
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from arena_core.game import Position
from arena_core.players import Decision

from . import MegaGem  # the registered game: the rules with their views
from .bots import LEGACY, ExpertBidder, FairValueBidder, HeuristicBidder
from .rules import Action, Bid, MegaGemState

DATA_DIR = Path(__file__).parent / "data"
SEEDS = (1, 2, 3)
PROMPTED_SEAT = 0


def transcript_path(seed: int) -> Path:
    return DATA_DIR / f"golden_seed{seed}.jsonl"


def answer_text(action: Action) -> str:
    """A language-model-like answer for a bot's action: a line of reasoning, then the JSON."""
    if isinstance(action, Bid):
        return f'Weighing the lot against my coins.\n{{"bid": {action.amount}}}'
    return f'Revealing the gem that tells the others least.\n{{"reveal": "{str(action).split()[1]}"}}'


def generate(seed: int) -> list[dict[str, Any]]:
    """Play ``seed`` with the expert, fair-value and heuristic bots through prompts and the parser."""
    game = MegaGem()
    view = game.text_view()
    players = [
        ExpertBidder(seed=0, **LEGACY),
        FairValueBidder(seed=0),
        HeuristicBidder(seed=0),
    ]  # the transcripts' expert
    lines: list[dict[str, Any]] = [
        {
            "type": "header",
            "game": game.spec.id,
            "params": game.params.model_dump(mode="json"),
            "seed": seed,
            "players": [p.name for p in players],
            "system": game.rules_text(),
        }
    ]
    pos: Position[MegaGemState] = game.start(seed)
    while not game.is_over(pos):
        seat = game.players_to_act(pos)[0]  # the current player (the commit order at a bid)
        decision = Decision(game, seat, game.observe(pos, seat), game.legal(pos, seat), pos.ply, seed, pos)
        answer = answer_text(players[seat].act(decision))
        parsed = view.parse(game, pos, seat, answer)
        line = {
            "type": "decision",
            "ply": pos.ply,
            "round": pos.state.round,
            "seat": seat,
            "phase": decision.observation["phase"],
            "answer": answer,
            "parsed": parsed.telemetry(),
            "action": game.action_to_str(parsed.action),
        }
        if seat == PROMPTED_SEAT:
            prompt = view.prompt(game, pos, seat)
            line["prompt"] = prompt.user
            line["legal"] = [prompt.legal[0], prompt.legal[-1], len(prompt.legal)]
        lines.append(line)
        pos = game.act(pos, seat, parsed.action)
    lines.append(
        {
            "type": "end",
            "rounds": pos.state.round,
            "scores": game.score_breakdown(pos.state),
            "winner": game.winner(pos.state),
        }
    )
    return lines


def render(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n" for line in lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="overwrite the checked-in transcripts")
    args = parser.parse_args(argv)
    changed = 0
    for seed in SEEDS:
        text = render(generate(seed))
        path = transcript_path(seed)
        same = path.exists() and path.read_text(encoding="utf-8") == text
        changed += not same
        if args.write and not same:
            DATA_DIR.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
        print(f"{path.name}: {'unchanged' if same else ('written' if args.write else 'DIFFERS')}")
    return 0 if args.write or not changed else 1


if __name__ == "__main__":
    raise SystemExit(main())
