"""The `search` player's learned opponent model (``opponents = "learned"``): worlds drawn by
replaying the episode under a model of the other seats learned online, and the long
TextArena titles the main search test leaves to the bench, in a cheap version."""

from __future__ import annotations

import pytest

from arena_core.players import Decision, begin_episodes
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_players.random_player import RandomPlayer
from arena_players.search import SearchPlayer

KUHN = make_game("kuhn_poker")


def _learner(**kw):
    opts = {"simulations": 20, "particles": 16, "opponents": "learned", **kw}
    return SearchPlayer(seed=3, **opts)


class _Untold:
    """A search player whose end_episode hook the game loop cannot see."""

    def __init__(self, player):
        self.player, self.name = player, player.name

    def begin_episode(self, game, seat, episode_seed):
        self.player.begin_episode(game, seat, episode_seed)

    def act(self, decision):
        return self.player.act(decision)


def _play(search, opp, deals, *, tell=True):
    me = search if tell else _Untold(search)
    for deal in range(deals):
        for seat in (0, 1):
            play_episode(KUHN, [me, opp] if seat == 0 else [opp, me], deal)  # the runner calls end_episode


def _first_bet_share(model, card):
    counts = model.get(f'{{"card": "{card}", "history": [], "player": 0, "pot": 2}}', {})
    total = sum(counts.values())
    return counts.get(1, 0.0) / total if total else None


def test_the_model_learns_where_the_opponent_bets_without_seeing_its_cards():
    search = _learner()
    _play(search, make_player("kuhn_king_only"), 40)
    assert search.stats["episodes_learned"] >= 70
    assert _first_bet_share(search.model, "K") > 0.7  # kuhn_king_only bets the king first ...
    assert _first_bet_share(search.model, "J") < 0.2 and _first_bet_share(search.model, "Q") < 0.2  # ... only it


def test_without_end_episode_it_learns_nothing_unless_asked_to():
    search = _learner()
    _play(search, make_player("kuhn_king_only"), 12, tell=False)
    assert search.model == {} and search.stats["episodes_untold"] == 22  # the last at each seat stays open
    keen = _learner(learn_untold=True)
    _play(keen, make_player("kuhn_king_only"), 30, tell=False)
    assert keen.stats["episodes_learned"] >= 50  # each episode explained at the next begin_episode
    assert _first_bet_share(keen.model, "K") > 0.6


def test_replayed_worlds_show_this_seat_exactly_what_it_saw():
    search = _learner()
    _play(search, make_player("kuhn_king_only"), 10)
    opp = make_player("kuhn_king_only")
    for deal in range(12):
        pos = KUHN.start(deal)
        begin_episodes([opp, search], KUHN, deal)
        pos = KUHN.act(pos, 0, opp.act(Decision.at(KUHN, pos, 0, deal)))
        decision = Decision.at(KUHN, pos, 1, deal)
        ep = search._episodes[1]
        worlds = search._worlds(ep, search_rng(deal), decision.observation, None, [0])
        assert worlds
        for world, steps in worlds:
            assert KUHN.observe(world, 1) == decision.observation and len(steps) == 1
        assert search.act(decision).action in decision.legal_actions


def search_rng(deal):
    from arena_core.seeding import make_rng

    return make_rng(0, "test", deal)


def test_the_same_seed_learns_the_same_model_and_plays_the_same():
    a, b = _learner(), _learner()
    _play(a, make_player("kuhn_king_only"), 8)
    _play(b, make_player("kuhn_king_only"), 8)
    assert a.model == b.model and a.stats["episodes_learned"] == b.stats["episodes_learned"]


def test_a_game_whose_replays_explain_nothing_falls_back_to_plain_sampling():
    game = make_game("megagem")
    search = SearchPlayer(
        seed=1, simulations=2, rollout="megagem_fair_value", candidates=2, opponents="learned", particles=2
    )
    players = [search, make_player("megagem_fair_value"), make_player("megagem_heuristic")]
    record = play_episode(game, players, 0, turn_cap=12)
    assert search.stats["decisions"] > 0 and search.stats["rollout_faults"] == 0
    assert search.stats["worlds_replayed"] + search.stats["worlds_fallback"] == search.stats["decisions"]
    assert record.end is not None


@pytest.mark.parametrize("title", ["textarena/Othello-v0", "textarena/UltimateTicTacToe-v0"])
def test_the_long_textarena_titles_in_a_cheap_version(title):
    """The main test plays the titles of up to 60 decisions to the end; these two for 6 decisions."""
    try:
        game = make_game(title)
    except Exception as exc:  # the textarena extra is not installed
        pytest.skip(f"{title}: {exc}")
    search = SearchPlayer(seed=1, simulations=2)
    record = play_episode(game, [search, RandomPlayer(seed=2)], 0, turn_cap=6)
    assert record.end.reason.value == "turn_cap"
    assert search.stats["decisions"] == 3 and search.stats["rollout_faults"] == 0 and search.stats["truncated"] == 0


def test_the_options_are_part_of_the_player_spec():
    p = make_player('search{opponents = "learned", model_prior = 0.5, particles = 8, simulations = 4}', seed=0)
    assert p.settings.opponents == "learned" and p.settings.model_prior == 0.5 and p.settings.particles == 8
    with pytest.raises(Exception, match="known options"):
        make_player('search{opponents = "oracle"}', seed=0)
