"""MegaGem: a seeded game among the bots, the language-model view of one decision, a text
player through the runner, and the published-rules variant.

    python examples/megagem_game.py [OUTDIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from arena_core import IllegalActionPolicy, play_episode
from arena_core.registry import make_game, make_player


class EchoLLM:
    """A stand-in for a language model: reads its prompt, answers in the benchmark's format."""

    name = "echo_llm"

    def act(self, decision):
        prompt = decision.prompt()  # system text (rules) + compact JSON lines
        if '"phase":"gem_reveal"' in prompt.user:
            return 'I will show a gem the others cannot use.\n{"reveal": "blue"}'  # not always in hand: default used
        return "Cheap lots first. I'll bid 2"  # no JSON: the prose fallback reads 2


def main(outdir: str) -> None:
    game = make_game("megagem")  # MegagemBench rules, 3 players, chart A
    bots = [
        make_player("megagem_expert", seed=1),
        make_player("megagem_fair_value", seed=2),
        make_player("megagem_heuristic", seed=3),
    ]
    Path(outdir).mkdir(parents=True, exist_ok=True)
    log = Path(outdir) / "megagem.jsonl"
    record = play_episode(game, bots, seed=770001, log_path=str(log))
    print(f"bots: {len(record.steps)} decisions, end {record.end.reason.value}, scores {record.end.returns}")

    pos = game.start(770001)
    prompt = game.text_view().prompt(game, pos, 0)
    print("prompt user lines:", len(prompt.user.split("\n\n")), "| first:", prompt.user.split("\n\n")[0])
    answer = 'Red is rising.\n```json\n{"bid": 6}\n```'
    parsed = game.text_view().parse(game, pos, 0, answer)
    print(f"parsed: {game.action_to_str(parsed.action)} via {parsed.method} (legal={parsed.legal})")

    players = [EchoLLM(), make_player("megagem_market", seed=4), make_player("random", seed=5)]
    record = play_episode(game, players, seed=770002, policy=IllegalActionPolicy(mode="default"))
    # parse telemetry rides on accepted steps; answers replaced by the default are policy events
    used = [e.telemetry["parse_method"] for e in record.events if e.player == 0 and "parse_method" in e.telemetry]
    defaults = sum(1 for e in record.events if e.type == "policy" and e.player == 0)
    print(
        f"text player: parse methods {sorted(set(used))}, {defaults} defaults, end {record.end.reason.value}, scores {record.end.returns}"
    )

    published = make_game(
        "megagem", {"reveal_by": "every_winner", "illegal_bid": "clamp", "flex_3_diff_reward": 10}, num_players=4
    )
    record = play_episode(published, [make_player("megagem_expert", seed=s) for s in range(4)], seed=3)
    print(f"published variant, 4 players: {len(record.steps)} decisions, scores {record.end.returns}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
