"""The verifiers glue, where verifiers 0.4 is installed (its own environment: verifiers cannot
join Arena's development install, docs/ecosystem.md). What runs here: verifiers' own loader finds
the taskset and env by the id, the taskset yields seeded tasks whose prompt is the model seat's
first decision (none with model opponents), and the env declares the two chat roles. Rollouts
through verifiers' harness: test_eval_e2e.py."""

import pytest

vf = pytest.importorskip("verifiers.v1")
from arena_verifiers import ArenaEnv, ArenaTaskset, ArenaTasksetConfig  # noqa: E402
from arena_verifiers.seat import ModelSeatGame  # noqa: E402
from verifiers.v1.utils.loaders import environment_class, taskset_class  # noqa: E402


def test_verifiers_loader_finds_the_bridge_by_its_id():
    assert taskset_class("arena-verifiers") is ArenaTaskset
    assert environment_class("arena-verifiers") is ArenaEnv


def test_the_taskset_yields_seeded_tasks_rotating_the_seat():
    ts = ArenaTaskset(ArenaTasksetConfig(id="arena-verifiers", game="kuhn_poker", opponents=["random"]))
    tasks = [t for _, t in zip(range(4), ts.load())]
    infos = [t.data.info for t in tasks]
    assert [i["seed"] for i in infos] == [0, 1, 2, 3] and [i["seat"] for i in infos] == [0, 1, 0, 1]
    for t in tasks:
        from arena_verifiers.taskset import _seat_task

        system, user = ModelSeatGame(_seat_task(t.data.info)).messages()
        assert t.data.prompt == user["content"] and t.data.system_prompt == system["content"]


def test_model_opponents_give_prompt_less_tasks_and_two_chat_roles():
    """With "model" opponents the first position depends on the other model: the tasks carry no
    prompt (the env opens each seat's conversation); megagem with 3 players rotates 3 seats."""
    from arena_verifiers import ArenaEnvConfig

    cfg = ArenaTasksetConfig(id="arena-verifiers", game="megagem", num_players=3, opponents=["model", "random"])
    tasks = [t for _, t in zip(range(3), ArenaTaskset(cfg).load())]
    assert [t.data.info["seat"] for t in tasks] == [0, 1, 2]
    assert all(t.data.prompt is None and t.data.system_prompt is None for t in tasks)
    roles = {name: f.default for name, f in ArenaEnvConfig.model_fields.items() if name in ("player", "opponent")}
    assert sorted(roles) == ["opponent", "player"]
    assert all(r.harness.id == "null" and r.runtime.type == "subprocess" and r.model is None for r in roles.values())
    assert ArenaEnvConfig.model_fields["train_opponent"].default is True
