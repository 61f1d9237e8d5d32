"""The registered matrix game: parameters, label rotation, the own-view table, the text view
and parser, and the conformance kit on every (archetype, k)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import IllegalActionError, InvalidParamsError
from arena_core.registry import make_game
from arena_core.spec import CONFORMANCE_CHECKS, TurnStructure, Utility
from arena_core.testing import assert_conformance
from arena_games.matrix import ARCHETYPE_NAMES, K_VALUES, MatrixGame, payoff_matrices

ALL_CELLS = [(a, k) for a in ARCHETYPE_NAMES for k in K_VALUES]
FAST_CHECKS = [c for c in CONFORMANCE_CHECKS if c not in ("cross_process_determinism", "pettingzoo_api")]


def play(game, seed, labels):
    """Both players choose the given label indices; returns the final position."""
    pos = game.start(seed)
    pos = game.act(pos, 0, labels[0])
    return game.act(pos, 1, labels[1])


def test_registered_and_declared():
    game = make_game("matrix", {"archetype": "chicken", "k": 5})
    assert isinstance(game, MatrixGame)
    assert game.spec.turn_structure is TurnStructure.SIMULTANEOUS and game.num_players == 2
    assert game.spec.reward_bounds == (0.0, 5.0) and not game.spec.chance
    assert make_game("matrix", {"archetype": "hide_and_seek", "k": 3}).spec.utility is Utility.ZERO_SUM
    assert make_game("matrix", {"independent_order": True}).spec.chance
    pos = game.start(0)
    assert game.players_to_act(pos) == (0, 1)  # both act: the core commits then reveals


def test_family_bounds_cover_every_cell_tightly():
    from arena_games.matrix.rules import FAMILY_REWARD_BOUNDS

    lows = [min(payoff_matrices(a, k).A.min(), payoff_matrices(a, k).B.min()) for a, k in ALL_CELLS]
    highs = [max(payoff_matrices(a, k).A.max(), payoff_matrices(a, k).B.max()) for a, k in ALL_CELLS]
    assert FAMILY_REWARD_BOUNDS == (min(lows), max(highs)) == MatrixGame.spec.reward_bounds
    for a, k in ALL_CELLS:
        lo, hi = MatrixGame({"archetype": a, "k": k}).spec.reward_bounds
        assert FAMILY_REWARD_BOUNDS[0] <= lo <= hi <= FAMILY_REWARD_BOUNDS[1]


@pytest.mark.parametrize(
    "params,match",
    [
        ({"k": 1}, "greater than or equal to 2"),
        ({"k": 11}, "less than or equal to 10"),
        ({"archetype": "stag"}, "stag_hunt"),
        ({"k": 3, "rotation": 3}, "rotation must be in 0..k-1"),
        ({"k": 4, "labels": ["x", "y", "z"]}, "give at least k labels"),
        ({"k": 2, "labels": ["x", "X"]}, "distinct"),
        ({"k": 2, "labels": ["x y", "z"]}, "whitespace"),
        ({"prompt_variant": "player1"}, "asymmetric_cue"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_params_name_the_fix(params, match):
    with pytest.raises(InvalidParamsError, match=match):
        MatrixGame(params)


@pytest.mark.parametrize("k", K_VALUES)
def test_rotation_covers_every_label_and_position_once(k):
    """Over k trials (rotation t mod k) every action appears under every label and in every
    position exactly once; both players share the labels."""
    seen = {a: {"labels": [], "positions": []} for a in range(k)}
    for t in range(k):
        game = MatrixGame({"archetype": "coordination", "k": k, "rotation": t % k})
        pos = game.start(t)
        listing = game.legal(pos, 0)
        assert listing == game.legal(pos, 1)  # the same order for both copies
        for position, label in enumerate(listing):
            i, j = game.underlying_actions(play(game, t, (label, label)).state)
            assert i == j  # a label names the same action for both players
            seen[i]["labels"].append(game.action_to_str(label))
            seen[i]["positions"].append(position)
    for a in range(k):
        assert sorted(seen[a]["labels"]) == sorted(MatrixGame({"k": k}).labels)
        assert sorted(seen[a]["positions"]) == list(range(k))


@given(st.sampled_from(ARCHETYPE_NAMES), st.integers(2, 10), st.data(), st.integers(0, 2**31), st.booleans())
@settings(max_examples=60, deadline=None)
def test_own_view_table_is_what_the_player_gets(archetype, k, data, seed, independent):
    """Row r, column c of a player's table pays what that player gets when it picks its r-th
    listed label and the other player picks the label listed c-th in *its* view."""
    rotation = data.draw(st.integers(0, k - 1))
    game = MatrixGame({"archetype": archetype, "k": k, "rotation": rotation, "independent_order": independent})
    pos = game.start(seed)
    for player in (0, 1):
        obs = game.observe(pos, player)
        listing = game.legal(pos, player)
        assert obs["labels"] == [game.action_to_str(a) for a in listing]
        r, c = data.draw(st.integers(0, k - 1)), data.draw(st.integers(0, k - 1))
        mine, theirs = listing[r], listing[c]
        final = play(game, seed, (mine, theirs) if player == 0 else (theirs, mine))
        returns = game.final_returns(final)
        assert obs["own_payoffs"][r][c] == returns[player]
        assert obs["other_payoffs"][r][c] == returns[1 - player]


@given(st.integers(2, 10), st.integers(0, 2**31), st.data())
@settings(max_examples=40, deadline=None)
def test_independent_order_keeps_labels_attached(k, seed, data):
    rotation = data.draw(st.integers(0, k - 1))
    shared = MatrixGame({"archetype": "stag_hunt", "k": k, "rotation": rotation})
    own = MatrixGame({"archetype": "stag_hunt", "k": k, "rotation": rotation, "independent_order": True})
    a, b = data.draw(st.integers(0, k - 1)), data.draw(st.integers(0, k - 1))
    assert shared.final_returns(play(shared, seed, (a, b))) == own.final_returns(play(own, seed, (a, b)))
    listings = own.start(seed).state.listings
    assert all(sorted(listing) == list(range(k)) for listing in listings)


def test_independent_order_differs_between_players_somewhere():
    game = MatrixGame({"k": 6, "independent_order": True})
    assert any(game.start(s).state.listings[0] != game.start(s).state.listings[1] for s in range(20))
    assert len({game.start(s).state.listings[0] for s in range(20)}) > 1


@pytest.mark.parametrize("k", K_VALUES)
def test_battle_of_sexes_is_the_same_situation_for_both(k):
    """Role symmetry seen through the prompts: both tables hold the same cells, each player's
    favourite (3 for itself) at a different label, and favourites move with the rotation."""
    favourites = set()
    for r in range(k):
        game = MatrixGame({"archetype": "battle_of_sexes", "k": k, "rotation": r})
        pos = game.start(0)
        views = [game.observe(pos, p) for p in (0, 1)]
        assert sorted(map(sorted, views[0]["own_payoffs"])) == sorted(map(sorted, views[1]["own_payoffs"]))
        fav = [v["labels"][int(np.argmax(np.diag(v["own_payoffs"])))] for v in views]
        assert fav[0] != fav[1]
        favourites.add(fav[0])
    assert len(favourites) == k


def test_illegal_actions_rejected():
    game = MatrixGame({"k": 3})
    pos = game.start(0)
    for bad in (3, -1, "A", 1.0, True, None):
        with pytest.raises(IllegalActionError):
            game.act(pos, 0, bad)


def test_hidden_state_is_only_the_other_listing():
    game = MatrixGame({"archetype": "chicken", "k": 7, "independent_order": True})
    state = game.start(5).state
    from arena_core.seeding import make_rng

    sampled = game.sample_hidden_state(state, 0, make_rng(1))
    assert sampled.listings[0] == state.listings[0]
    assert MatrixGame({"k": 7}).sample_hidden_state(state, 0, make_rng(1)) is state


# ---------------------------------------------------------------------------- text view
def test_prompt_states_the_game():
    game = MatrixGame({"archetype": "stag_hunt", "k": 3})
    prompt = game.text_view().prompt(game, game.start(0), 0)
    text = prompt.system + prompt.user
    assert "one-shot" in text and "no communication" in text and "played exactly once" in text
    assert "independent copy of you: the same model, given the same instructions from its own point of view" in text
    assert "Player 1" not in text and "Answer: <label>" in text
    assert prompt.legal == ("A", "B", "C")
    assert "| C | 2, 4 | 4, 5 | 6, 6 |" in prompt.user  # effort 3 against efforts 1, 2, 3: (own, other)


def test_prompt_variants():
    cue = MatrixGame({"prompt_variant": "asymmetric_cue"})
    assert "You are Player 2" in cue.text_view().prompt(cue, cue.start(0), 1).system
    other = MatrixGame({"counterpart": "other"})
    system = other.text_view().prompt(other, other.start(0), 0).system
    assert "copy of you" not in system and "another independent decision maker" in system
    numbers = MatrixGame({"k": 10, "labels": "numbers"})
    assert numbers.text_view().prompt(numbers, numbers.start(0), 0).legal[-1] == "10"


@pytest.mark.parametrize(
    "answer,label,method",
    [
        ("B", "B", "exact"),
        ("  **C**. ", "C", "exact"),
        ("  **c**. ", None, "unparseable"),  # one-letter labels match in their own case ("a", "I")
        ('{"action": "A"}', "A", "json"),
        ("I weigh the options... a risk.\nAnswer: B", "B", "answer_line"),
        ("Final answer: **C**", "C", "answer_line"),
        ("My choice is A.", None, "unparseable"),  # prose, not an answer line
        ("Let me think.\nC", "C", "last_line"),
        ("I choose a strategy that is safe", None, "unparseable"),
        ("Answer: Q", None, "unparseable"),
        ('{"label": "Z"}', None, "unparseable"),
        ("", None, "unparseable"),
    ],
)
def test_parser(answer, label, method):
    game = MatrixGame({"k": 3})
    pos = game.start(0)
    result = game.text_view().parse(game, pos, 0, answer)
    assert result.method == method
    if label is None:
        assert result.default_used and not result.valid
    else:
        assert result.valid and not result.default_used and game.action_to_str(result.action) == label


@given(
    st.integers(2, 10),
    st.data(),
    st.sampled_from(["Answer: {}", "{}", "answer = {}", "Final answer: `{}`", "blah\n\n**{}**"]),
)
@settings(max_examples=60, deadline=None)
def test_parser_reads_every_label(k, data, template):
    game = MatrixGame({"k": k, "labels": "numbers"})
    pos = game.start(0)
    label = data.draw(st.sampled_from(game.labels))
    result = game.text_view().parse(game, pos, 1, template.format(label))
    assert result.valid and game.action_to_str(result.action) == label


# ---------------------------------------------------------------------------- conformance kit
@pytest.mark.parametrize("archetype,k", ALL_CELLS)
def test_conformance_every_cell(archetype, k):
    independent = k % 2 == 0  # both listing conditions across the table
    game = MatrixGame({"archetype": archetype, "k": k, "rotation": k - 1, "independent_order": independent})
    assert_conformance(game, max_examples=4, checks=FAST_CHECKS)


@pytest.mark.parametrize(
    "params",
    [
        {"archetype": "battle_of_sexes", "k": 4, "independent_order": True, "prompt_variant": "asymmetric_cue"},
        {"archetype": "hide_and_seek", "k": 10, "rotation": 3},
    ],
)
def test_full_conformance_kit(params):
    assert_conformance(MatrixGame(params), max_examples=6)


def test_golden_prompts():
    """The full prompts of a few seeded games are checked in; regenerate on purpose with
    ``python -m arena_games.matrix.golden --write``."""
    import json

    from arena_games.matrix.golden import GOLDEN, transcripts

    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    actual = json.loads(json.dumps(transcripts()))
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual):
        assert got == want, f"prompt for {want['params']} player {want['player']} changed (regenerate on purpose)"
