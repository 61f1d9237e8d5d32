"""TextArena titles as arena games, and an arena game as a TextArena env.

    python examples/textarena_play.py [SEED]

1. Liar's Dice (3 players) from TextArena, played by arena random-legal players: exact legal
   bids, a seeded deal, the episode record, and the typed end reason.
2. SimpleNegotiation (free text): the candidate strings TextArena accepts now, and what
   happens to text it refuses (our illegal-action policy, with TextArena's reason).
3. Any TextArena env id (here ColonelBlotto, not in the title table) as a free-text arena
   game, with candidate moves so random-legal players can play it.
4. MegaGem (an arena game) behind TextArena's env API, played by TextArena-style agents.
"""

from __future__ import annotations

import random
import re
import sys

from arena_core import IllegalActionPolicy, Match, play_episode
from arena_core.registry import make_game, make_player
from arena_games.textarena import title_game
from arena_games.textarena.reverse import ArenaTextArenaEnv


def liars_dice(seed: int) -> None:
    game = make_game("textarena/LiarsDice-v0", num_players=3)
    players = [make_player("random", seed=i) for i in range(3)]
    record = play_episode(game, players, seed, policy=IllegalActionPolicy(mode="raise"))
    print(f"LiarsDice: {len(record.steps)} moves, first {[s.action for s in record.steps[:4]]}")
    match = Match(game, seed)  # the same deal again, to look at the final state
    for step in record.steps:
        match.submit(step.player, step.action)
    outcome = match.position.state.outcome
    print(f"  end: {outcome.kind.value} ({outcome.reason!r}), returns {record.end.returns}")
    print("  player 0's last message:", match.position.state.inbox[0][-1].text.strip().splitlines()[0])


def negotiation(seed: int) -> None:
    game = make_game("textarena/SimpleNegotiation-v0", {"max_observation_chars": 1200})
    match = Match(game, seed, policy=IllegalActionPolicy(mode="retry", max_retries=1))
    p = match.to_act()
    print(f"SimpleNegotiation: player {p} may say anything; accepted candidates now: {match.legal_actions(p)[:4]} ...")
    match.submit(p, "Hello! [Offer: 2 Wheat -> 1 Ore]")  # free text with an offer token
    q = match.to_act()
    sub = match.submit(q, "[Accept]")
    print(f"  player {q} accepts: accepted={sub.accepted}")
    print("  player 0 sees:\n    " + game.transcript(match.position.state, 0)[-300:].replace("\n", "\n    "))


def any_title(seed: int) -> None:
    splits = [f"[A{a} B{b} C{20 - a - b}]" for a in range(0, 21, 5) for b in range(0, 21 - a, 5)]
    blotto = title_game("ColonelBlotto-v0", vocabulary=splits, decision_cap=40)
    record = play_episode(blotto(), [make_player("random", seed=i) for i in range(2)], seed)
    print(
        f"ColonelBlotto via title_game ({blotto.spec.free_text=}): {len(record.steps)} moves, "
        f"end {record.end.reason.value}, returns {record.end.returns}"
    )


class BracketAgent:
    """A TextArena-style agent: text in, text out (picks one of the offered tokens)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def __call__(self, observation: str) -> str:
        options = re.findall(r"'\[([^\]]+)\]'", observation.rsplit("Available actions:", 1)[-1])
        return f"[{self.rng.choice(options)}]"


def megagem_as_textarena(seed: int) -> None:
    from textarena.wrappers import LLMObservationWrapper  # TextArena's own wrapper, over our env

    env = LLMObservationWrapper(ArenaTextArenaEnv("megagem"))
    env.reset(num_players=3, seed=seed)
    agents = [BracketAgent(seed + i) for i in range(3)]
    done, turns = False, 0
    while not done:
        pid, observation = env.get_observation()
        done, info = env.step(agents[pid](observation))
        turns += 1
    rewards, game_info = env.close()
    print(f"MegaGem via TextArena API: {turns} steps, rewards {rewards}, end {game_info[0]['end_reason']}")


def main(seed: int) -> None:
    liars_dice(seed)
    negotiation(seed)
    any_title(seed)
    megagem_as_textarena(seed)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
