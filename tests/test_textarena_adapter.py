"""The adapter's promises: no global RNG side effects, episode-scoped observations rebuilt
from state, a length budget, exact legal sets that agree with what the title prints,
branch/restore equal to fresh replay, TextArena's invalid moves mapped onto our policy, and
the livelock guard."""

from __future__ import annotations

import json
import random
import re

import pytest

pytest.importorskip("textarena")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from arena_core.errors import IllegalActionError  # noqa: E402
from arena_core.match import Match  # noqa: E402
from arena_core.policy import IllegalActionPolicy  # noqa: E402
from arena_core.registry import make_game  # noqa: E402
from arena_games.textarena.adapter import (  # noqa: E402
    NO_INDEX,
    EndKind,
    Message,
    PrivateRandom,
    TextArenaState,
    _LiveEnv,
    _ta,
    budget,
)
from arena_games.textarena.titles import TITLES  # noqa: E402

FAST = [
    "TicTacToe-v0",
    "KuhnPoker-v0",
    "LiarsDice-v0",
    "ConnectFour-v0",
    "GameOfPureStrategy-v0",
    "PigDice-v0",
    "SimpleNegotiation-v0",
]


def _random_walk(game, seed, choice_seed, max_steps=None):
    rng = random.Random(choice_seed)  # the test's own generator: never the global one
    pos = game.start(seed)
    positions = [pos]
    while not game.is_over(pos) and (max_steps is None or len(positions) <= max_steps):
        p = game.current_player(pos)
        pos = game.act(pos, p, rng.choice(game.legal(pos, p)))
        positions.append(pos)
    return positions


@settings(max_examples=15, deadline=None)
@given(
    title=st.sampled_from(FAST),
    mode=st.sampled_from(["swap", "save_restore"]),
    seed=st.integers(0, 2**20),
    choice=st.integers(0, 2**20),
    outer=st.integers(0, 2**20),
)
def test_global_random_is_never_touched(title, mode, seed, choice, outer):
    random.seed(outer)
    before = random.getstate()
    game = make_game(f"textarena/{title}", {"random_isolation": mode})
    positions = _random_walk(game, seed, choice)
    for pos in positions[::3]:
        for p in range(game.num_players):
            game.observe(pos, p)
            game.legal(pos, p)
    assert random.getstate() == before


def test_a_textarena_reset_inside_the_adapter_does_not_reseed_other_code():
    random.seed(123)
    expected = [random.random() for _ in range(3)]
    random.seed(123)
    game = make_game("textarena/KuhnPoker-v0")
    pos = game.start(7)
    game.act(pos, game.current_player(pos), game.legal(pos, game.current_player(pos))[0])
    assert [random.random() for _ in range(3)] == expected


def test_games_in_threads_keep_their_own_streams_and_the_global_one():
    """Two threads play TextArena titles that draw during play while a third draws from the
    global ``random``, with the interpreter switching threads every microsecond: each game is
    the one it is when played alone, and the global stream is the one it is without them."""
    import sys
    import threading

    def play(title, n, seeds):
        game = make_game(f"textarena/{title}", num_players=n)
        return [_random_walk(game, seed, seed, max_steps=40)[-1].state for seed in seeds]

    jobs = {"dice": ("LiarsDice-v0", 3, range(6)), "poker": ("Poker-v0", 3, range(6))}
    alone = {name: play(*job) for name, job in jobs.items()}
    random.seed(99)
    global_alone = [random.random() for _ in range(20000)]
    together: dict[str, list] = {}
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        random.seed(99)
        threads = [
            threading.Thread(target=lambda n=name, j=job: together.__setitem__(n, play(*j)))
            for name, job in jobs.items()
        ]
        threads.append(
            threading.Thread(target=lambda: together.__setitem__("global", [random.random() for _ in range(20000)]))
        )
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert together["dice"] == alone["dice"] and together["poker"] == alone["poker"]
    assert together["global"] == global_alone


@settings(max_examples=10, deadline=None)
@given(title=st.sampled_from(FAST), seed=st.integers(0, 2**20), choice=st.integers(0, 2**20))
def test_inboxes_only_grow_and_observations_are_fresh(title, seed, choice):
    game = make_game(f"textarena/{title}")
    positions = _random_walk(game, seed, choice)
    for before, after in zip(positions, positions[1:]):
        for p in range(game.num_players):
            old, new = before.state.inbox[p], after.state.inbox[p]
            assert new[: len(old)] == old
    last = positions[-1]
    obs = game.observe(last, 0)
    obs["messages"].append("mutated")
    assert game.observe(last, 0) != obs


def test_observations_do_not_carry_over_between_episodes():
    game = make_game("textarena/TicTacToe-v0")
    first = _random_walk(game, 5, 5)[-1]
    fresh = game.start(6)
    prompts = [m for m in fresh.state.inbox[0] if m.kind == "PROMPT"]
    assert len(prompts) == 1 and len(fresh.state.inbox[0]) < len(first.state.inbox[0])
    text = game.transcript(fresh.state, 0)
    assert text.count("You are Player 0 in Tic Tac Toe") == 1
    # the same seed after other episodes gives the same opening view
    assert game.observe(game.start(5), 0) == game.observe(make_game("textarena/TicTacToe-v0").start(5), 0)


@settings(max_examples=30, deadline=None)
@given(
    texts=st.lists(st.text(min_size=0, max_size=120), min_size=0, max_size=30),
    limit=st.integers(200, 2000),
)
def test_budget_keeps_the_prompt_and_the_latest_messages(texts, limit):
    msgs = [Message(-1, "PROMPT", "rules " * 10)] + [Message(0, "GAME_MESSAGE", t) for t in texts]
    kept, omitted = budget(msgs, limit)
    assert omitted == len(msgs) - len(kept)
    assert sum(len(m.text) + 12 for m in kept) <= limit
    assert kept[0] == msgs[0]
    assert kept[1:] == msgs[len(msgs) - len(kept) + 1 :]  # a contiguous suffix


def test_length_budget_option_shortens_the_transcript():
    long_game = make_game("textarena/Othello-v0", {"max_observation_chars": 1500})
    full_game = make_game("textarena/Othello-v0")
    end = _random_walk(full_game, 3, 3)[-1]
    assert len(full_game.transcript(end.state, 0)) > 3000
    short = long_game.transcript(end.state, 0)
    assert "earlier messages omitted" in short and len(short) < 1700
    assert short.startswith("[GAME] You are Player 0")
    assert long_game.observe(end, 0)["omitted_messages"] > 0


_LISTED = re.compile(r"(?:Available Moves|Valid moves|Your available actions are):?\s*(.*)", re.IGNORECASE)


@pytest.mark.parametrize(
    "title",
    [
        "TicTacToe-v0",
        "ThreePlayerTicTacToe-v0",
        "WildTicTacToe-v0",
        "KuhnPoker-v0",
        "Othello-v0",
        "Crusade-v0",
        "SimpleTak-v0",
    ],
)
def test_printed_legal_list_equals_the_legal_set(title):
    """Differential: the tokens the title prints to the player are exactly our legal set."""
    game = make_game(f"textarena/{title}")
    checked = 0
    for pos in _random_walk(game, 11, 11):
        if game.is_over(pos):
            continue
        p = game.current_player(pos)
        listed = [m.text for m in pos.state.inbox[p] if _LISTED.search(m.text)]
        if not listed:
            continue
        tokens = re.findall(r"\[[^\[\]]+\]", _LISTED.search(listed[-1]).group(1))
        if title == "Othello-v0":
            tokens = [t.replace(",", ", ").replace(",  ", ", ") for t in tokens]
        norm = lambda xs: sorted(" ".join(x.lower().split()) for x in xs)  # noqa: E731
        assert norm(tokens) == norm(game.legal(pos, p)), (pos.ply, tokens, game.legal(pos, p))
        checked += 1
    assert checked >= 2


def test_every_listed_move_is_accepted_by_textarena():
    """Each exact legal action, stepped on a copy of the raw env, passes TextArena's validation."""
    from arena_games.textarena.adapter import _invalid_reason

    for title in [
        "IndianPoker-v0",
        "Poker-v0",
        "LiarsDice-v0",
        "Chopsticks-v0",
        "Nim-v0",
        "HighSociety-v0",
        "Battleship-v0",
        "UltimateTicTacToe-v0",
        "GermanWhist-v0",
    ]:
        game = make_game(f"textarena/{title}")
        for pos in _random_walk(game, 2, 2, max_steps=12)[:-1]:
            p = game.current_player(pos)
            live = game._live_at(pos.state, take=False)
            for action in game.legal(pos, p)[:40]:
                clone = live.clone()
                clone.rng.call(clone.env.step, action)
                assert _invalid_reason(clone.env, p) is None, (title, pos.ply, action)


def test_tictactoe_known_answer():
    game = make_game("textarena/TicTacToe-v0")
    pos = game.start(0)
    first = game.current_player(pos)
    for cell in ("[0]", "[3]", "[1]", "[4]", "[2]"):
        pos = game.act(pos, game.current_player(pos), cell)
    assert game.is_over(pos)
    expected = [-1.0, -1.0]
    expected[first] = 1.0
    assert list(game.final_returns(pos)) == expected
    assert pos.state.outcome.kind is EndKind.NATURAL


def test_exact_titles_reject_text_outside_the_legal_set():
    game = make_game("textarena/TicTacToe-v0")
    pos = game.start(0)
    p = game.current_player(pos)
    pos = game.act(pos, p, "[4]")
    with pytest.raises(IllegalActionError):
        game.act(pos, game.current_player(pos), "[4]")
    with pytest.raises(IllegalActionError):
        game.act(pos, game.current_player(pos), "I play the middle")


def test_branch_and_restore_equal_fresh_replay():
    game = make_game("textarena/LiarsDice-v0", num_players=3)
    line = _random_walk(game, 9, 9)
    mid = line[len(line) // 2]
    p = game.current_player(mid)
    legal = game.legal(mid, p)
    branch_a = game.act(mid, p, legal[0])
    branch_b = game.act(mid, p, legal[-1])  # the live env was advanced by branch_a: this replays
    again_a = game.act(mid, p, legal[0])
    assert again_a.state == branch_a.state and branch_a.state != branch_b.state
    restored = game.position_from_json(json.loads(json.dumps(game.position_to_json(mid))))
    assert restored.state == mid.state
    fresh = make_game("textarena/LiarsDice-v0", num_players=3)
    assert fresh.act(restored, p, legal[-1]).state == branch_b.state


def test_free_text_invalid_moves_go_through_our_policy_with_textarenas_reason():
    game = make_game("textarena/PublicGoodsGame-v0")
    match = Match(game, 4, policy=IllegalActionPolicy(mode="retry", max_retries=1))
    for _ in range(9):  # three chat rounds: any text is admissible
        p = match.to_act()
        assert match.submit(p, "{hello there, friends}").accepted
    p = match.to_act()
    assert "[20]" in match.legal_actions(p)
    sub = match.submit(p, "[99]")
    assert not sub.accepted and sub.verdict.value == "retry"
    reason = game.rejection_reason(match.position.state, "[99]")
    assert reason and "Invalid contribution 99" in reason
    assert not match.submit(p, "[42]").accepted  # second failure: forfeit under our policy
    assert match.end.reason.value == "forfeit" and match.end.offender == p
    events = [e for e in match.record.events if e.type == "policy"]
    assert len(events) == 2  # each carries what TextArena said was wrong
    assert "reason: TextArena: Invalid contribution 99" in events[0].detail and "42" in events[1].detail
    assert match.end.detail == events[1].detail
    # free text outside the vocabulary is recorded without an index
    assert game.action_id("{hello there, friends}") == NO_INDEX


FREE_TEXT = [t for t, spec in TITLES.items() if spec.free_text]


class RandomTextPlayer:
    """Free text: sometimes a candidate, sometimes a made-up remark (its own generator)."""

    name = "random_text"

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def act(self, decision):
        if self.rng.random() < 0.3:
            return self.rng.choice(["just thinking out loud", "[maybe]", "I choose the best option"])
        return self.rng.choice(decision.legal_actions)


@pytest.mark.parametrize("title", FREE_TEXT)
def test_random_text_players_on_free_text_titles(title):
    """Text TextArena refuses becomes policy events; accepted text is played; the game ends,
    and the same seed gives the same episode."""
    from arena_core.runner import play_episode

    def run():
        game = make_game(f"textarena/{title}")
        players = [RandomTextPlayer(i) for i in range(game.num_players)]
        return play_episode(game, players, 3, policy=IllegalActionPolicy(mode="retry", max_retries=5))

    rec = run()
    assert rec.end is not None and rec.end.reason.value in ("natural", "forfeit", "turn_cap")
    assert (rec.end.returns is None) == rec.end.truncated
    from arena_core.replay import replay

    replay(rec, make_game(f"textarena/{title}"))  # free text outside the vocabulary replays from its string
    again = run()
    assert [(s.player, s.action, s.action_id) for s in again.steps] == [
        (s.player, s.action, s.action_id) for s in rec.steps
    ]
    assert [e.detail for e in again.events if e.type == "policy"] == [
        e.detail for e in rec.events if e.type == "policy"
    ]


def test_livelock_after_elimination_ends_as_player_error():
    """Through the adapter TextArena never sees an invalid move, so PublicGoodsGame's
    elimination livelock cannot start; the guard is checked on a raw env driven into it."""
    game = make_game("textarena/PublicGoodsGame-v0")
    ta = _ta()
    rng = PrivateRandom(1)
    env = rng.call(ta.make, "PublicGoodsGame-v0-raw", **dict(TITLES["PublicGoodsGame-v0"].env_kwargs))
    rng.call(env.reset, num_players=3, seed=1)
    for _ in range(9):  # three chat rounds of three players
        rng.call(env.step, "{hi}")
    for _ in range(5):  # repeated invalid moves: player 0 is eliminated...
        if 0 in env.state.elimination_order:
            break
        rng.call(env.step, "[99]")
    assert 0 in env.state.elimination_order and env.state.current_player_id == 0  # ...and asked again
    live = _LiveEnv(env, rng)
    state = game._after_step(live, 1, ("x",) * 11, (0,) * 11)
    assert isinstance(state, TextArenaState) and state.outcome.kind is EndKind.PLAYER_ERROR
    assert state.outcome.offender == 0 and state.to_move == ()
    # and through the adapter the same text is refused before TextArena sees it
    pos = game.start(1)
    for _ in range(9):
        pos = game.act(pos, game.current_player(pos), "{hi}")
    assert not game.is_legal(pos.state, game.current_player(pos), "[99]")


def test_text_view_reads_bracket_tokens():
    game = make_game("textarena/TicTacToe-v0")
    pos = game.start(0)
    p = game.current_player(pos)
    view = game.text_view()
    prompt = view.prompt(game, pos, p)
    assert "Legal actions:" in prompt.user and "[4]" in prompt.legal
    parsed = view.parse(game, pos, p, "The centre is strongest, so I play [4].")
    assert parsed.action == "[4]" and parsed.legal and not parsed.default_used
    assert view.parse(game, pos, p, "no idea").default_used


@pytest.mark.parametrize("title,n", [("LiarsDice-v0", 3), ("PigDice-v0", 2), ("Poker-v0", 3)])
def test_same_game_as_raw_textarena_in_both_isolation_modes(title, n):
    """Differential: the adapter's episode equals raw TextArena reset with the derived seed and
    fed the same actions (titles that draw from `random` during play), in both modes."""
    swap = make_game(f"textarena/{title}", num_players=n)
    keep = make_game(f"textarena/{title}", {"random_isolation": "save_restore"}, num_players=n)
    end = _random_walk(swap, 21, 21, max_steps=60)[-1]
    pos = keep.start(21)
    for text in end.state.actions:
        pos = keep.act(pos, keep.current_player(pos), text)
    assert pos.state == end.state
    random.seed(0)
    before = random.getstate()
    ta = _ta()
    env = ta.make(f"{title}-raw", **dict(TITLES[title].env_kwargs))
    env.reset(num_players=n, seed=end.state.ta_seed)
    for text in end.state.actions:
        env.step(text)
    raw = [[m for _, m, _ in env.state.observations[p]] for p in range(n)]
    assert raw == [[m.text for m in box] for box in end.state.inbox]
    assert random.getstate() != before  # raw TextArena does reseed the global generator


@pytest.mark.parametrize(
    "title,first,second",
    [
        ("IteratedRockPaperScissors-v0", "[rock]", "[paper]"),
        ("GameOfPureStrategy-v0", "[A]", "[K]"),
        ("HighSociety-v0", "[1]", "[11]"),
    ],
)
def test_moves_collected_one_after_the_other_stay_hidden(title, first, second):
    """TextArena collects these simultaneous moves sequentially; the second mover must not
    learn the first mover's choice before the reveal."""
    game = make_game(f"textarena/{title}")
    pos = game.start(3)
    p = game.current_player(pos)
    a, b = game.act(pos, p, first), game.act(pos, p, second)
    other = game.current_player(a)
    assert other == game.current_player(b) != p
    assert game.observe(a, other) == game.observe(b, other)
    assert game.legal(a, other) == game.legal(b, other)


def test_a_game_pickles_without_its_live_envs():
    """Process pools send games to workers: the live-env cache is dropped and rebuilt by replay."""
    import pickle

    game = make_game("textarena/LiarsDice-v0", num_players=3)
    mid = _random_walk(game, 4, 4, max_steps=10)[-1]
    clone = pickle.loads(pickle.dumps(game))
    p = game.current_player(mid)
    action = game.legal(mid, p)[0]
    assert clone.act(mid, p, action).state == game.act(mid, p, action).state


@settings(max_examples=10, deadline=None)
@given(
    title=st.sampled_from(["TicTacToe-v0", "KuhnPoker-v0", "LiarsDice-v0", "Othello-v0", "Poker-v0"]),
    seed=st.integers(0, 2**20),
    choice=st.integers(0, 2**20),
)
def test_a_legal_set_asked_for_late_equals_the_one_asked_for_at_the_time(title, seed, choice):
    """Titles with a check build the legal set on demand; asked for after the live env has moved
    on (or on a fresh game instance), it is rebuilt by replay and is the same set."""
    game = make_game(f"textarena/{title}")
    rng = random.Random(choice)
    pos = game.start(seed)
    line, asked = [pos], []
    while not game.is_over(pos) and len(line) < 40:
        p = game.current_player(pos)
        legal = game.legal(pos, p)
        asked.append(legal)
        pos = game.act(pos, p, rng.choice(legal))
        line.append(pos)
    silent = make_game(f"textarena/{title}")  # played without ever asking for a legal set
    pos = silent.start(seed)
    replayed = [pos]
    for before, after in zip(line, line[1:]):
        pos = silent.act(pos, game.current_player(before), after.state.actions[-1])
        replayed.append(pos)
    for a, b, legal in zip(line, replayed, asked):
        assert a.state == b.state
        assert silent.legal(b, silent.current_player(b)) == legal


def test_states_are_data_equal_hashable_and_pickle_without_live_references():
    import copy
    import pickle

    game = make_game("textarena/KuhnPoker-v0")
    line = _random_walk(game, 3, 3)
    for pos in line:
        clone = pickle.loads(pickle.dumps(pos.state))
        assert clone == pos.state and hash(clone) == hash(pos.state) and clone.inbox == pos.state.inbox
        assert copy.deepcopy(pos.state) == pos.state
        assert game.observe(pos, 0) == game.observe(type(pos)(clone, (), pos.ply), 0)
    plain = TextArenaState(
        line[-1].state.ta_seed,
        line[-1].state.actions,
        line[-1].state.actors,
        (),
        line[-1].state.outcome,
        line[-1].state.inbox,
    )
    assert plain == line[-1].state and plain != line[-2].state
    assert "inbox" not in repr(plain) and len({pos.state for pos in line}) == len(line)


_STREAM_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("seed"), st.integers(0, 2**40)),
        st.tuples(st.sampled_from(["random", "gauss", "randbytes", "getstate"]), st.just(0)),
        st.tuples(st.just("getrandbits"), st.integers(1, 70)),
        st.tuples(st.just("randrange"), st.integers(1, 10**6)),
        st.tuples(st.just("shuffle"), st.integers(0, 12)),
        st.tuples(st.just("setstate"), st.integers(0, 2**31)),
    ),
    max_size=12,
)


def _run_stream(gen: random.Random, ops) -> list:
    out = []
    for op, arg in ops:
        if op == "seed":
            gen.seed(arg)
        elif op == "setstate":
            gen.setstate(random.Random(arg).getstate())
        elif op == "shuffle":
            deck = list(range(arg))
            gen.shuffle(deck)
            out.append(deck)
        elif op in ("random", "gauss", "randbytes", "getstate"):
            out.append(
                {
                    "random": gen.random,
                    "gauss": lambda: gen.gauss(0, 1),
                    "randbytes": lambda: gen.randbytes(5),
                    "getstate": gen.getstate,
                }[op]()
            )
        else:
            out.append(getattr(gen, op)(arg))
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 2), ops=_STREAM_OPS)
def test_the_private_generator_seeds_lazily_and_equals_randoms_stream(seed, ops):
    """The private generator applies an int seed only when the stream is first read; whatever
    the reads, reseeds and state restores, it draws exactly what ``random.Random`` draws."""
    from arena_games.textarena.adapter import _ModuleLikeRandom

    ours, theirs = _ModuleLikeRandom(seed), random.Random(seed)
    assert _run_stream(ours, ops) == _run_stream(theirs, ops)
    assert ours.getstate() == theirs.getstate() and type(ours) is _ModuleLikeRandom


def test_a_title_that_never_draws_never_sets_up_its_generator():
    """TicTacToe seeds ``random`` in reset and never draws: its private generator keeps the
    seed pending for the whole game (no Mersenne Twister set-up, our seed's or TextArena's)."""
    from arena_games.textarena.adapter import _PendingSeed

    game = make_game("textarena/TicTacToe-v0")
    line = _random_walk(game, 5, 5)
    live = game._live_at(line[-2].state, take=False)  # a fresh env that replays all but the last move
    live.rng.call(live.env.step, line[-1].state.actions[-1])
    assert live.env.state.done
    assert type(live.rng.gen) is _PendingSeed and live.rng.gen._pending == line[0].state.ta_seed


class _DrawsBeforeSeeding:
    """A third-party TextArena title whose reset draws from ``random`` before it seeds (the
    seed reaches TextArena's state only after the deal)."""

    def __init__(self):
        self.ta = _ta()

    def reset(self, num_players, seed=None):
        self.secret = random.randint(1, 10**6)  # drawn before TwoPlayerState seeds the stream
        self.state = self.ta.TwoPlayerState(num_players=num_players, seed=seed)
        self.state.reset(
            game_state={"secret": self.secret},
            player_prompt_function=lambda player_id, game_state: f"secret {game_state['secret']}",
        )

    def step(self, action):
        self.state.set_outcome(reward={0: 1, 1: -1}, reason="went first")
        return self.state.step()

    def close(self):
        return self.state.rewards, self.state.game_info


def test_a_title_that_draws_before_seeding_gets_a_seeded_private_generator():
    """A title that deals before TextArena seeds the stream draws from our seed (the private
    generator starts from it), so one seed still gives one deal."""
    from arena_games.textarena.adapter import LegalMethod, TitleSpec, make_title_class

    registry = _ta().envs.registration
    if "ArenaTestDrawsFirst-v0-raw" not in registry.ENV_REGISTRY:
        registry.register(id="ArenaTestDrawsFirst-v0-raw", entry_point=_DrawsBeforeSeeding)
    spec = TitleSpec("ArenaTestDrawsFirst-v0", (2, 2), LegalMethod.PRINTED, ("[go]",), lambda env, p: ("[go]",), 4)
    cls = make_title_class("ArenaTestDrawsFirst_v0", spec)
    before = random.getstate()
    games = [cls(), cls()]
    secrets = [[g.observe(g.start(seed), 0)["messages"][0].text for seed in range(12)] for g in games]
    assert random.getstate() == before
    assert secrets[0] == secrets[1] and len(set(secrets[0])) == 12  # one seed, one deal; seeds differ


class _ResetFails(_DrawsBeforeSeeding):
    def reset(self, num_players, seed=None):
        raise ValueError(f"no deal for seed {seed}")


def test_a_failing_reset_reports_its_own_error_with_the_real_seed():
    from arena_games.textarena.adapter import LegalMethod, TitleSpec, make_title_class

    registry = _ta().envs.registration
    if "ArenaTestResetFails-v0-raw" not in registry.ENV_REGISTRY:
        registry.register(id="ArenaTestResetFails-v0-raw", entry_point=_ResetFails)
    cls = make_title_class(
        "ArenaTestResetFails_v0",
        TitleSpec("ArenaTestResetFails-v0", (2, 2), LegalMethod.PRINTED, ("[go]",), lambda env, p: ("[go]",), 4),
    )
    game = cls()
    with pytest.raises(ValueError, match=r"no deal for seed \d+"):
        game.start(3)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("[4]", "TextArena: cell 4 is already occupied."),
        ("the middle please", "TextArena: The submitted move does not follow the correct format."),
        ("I take [0]", "TextArena would accept this text, but it is not one of the title's canonical legal actions"),
    ],
)
def test_an_exact_titles_policy_event_carries_textarenas_reason(text, reason):
    """TextArena never sees an illegal move in play; on the rejection path the text is stepped on
    a copy so the record says what the title would have objected to, and play goes on unchanged."""
    game = make_game("textarena/TicTacToe-v0")
    match = Match(game, 0, policy=IllegalActionPolicy(mode="retry", max_retries=2))
    match.submit(match.to_act(), "[4]")
    p = match.to_act()
    before = match.position
    assert not match.submit(p, text).accepted
    (event,) = [e for e in match.record.events if e.type == "policy"]
    assert event.detail.endswith("; reason: " + reason) and event.attempted == repr(text)
    fresh = make_game("textarena/TicTacToe-v0")
    assert match.position is before and game.observe(before, p) == fresh.observe(
        fresh.act(fresh.start(0), 1 - p, "[4]"), p
    )
    assert match.submit(p, "[0]").accepted
