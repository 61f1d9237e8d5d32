"""Arena trainers, registered through the `arena.trainers` entry point group.

- :mod:`arena_train.grpo` -- GRPO self-play on MLX; the game outcome is the reward.
- :mod:`arena_train.expert_iteration` -- distil an expert player into a language model.
- :mod:`arena_train.pg` -- numpy policy gradient over the numeric observation encoding.
- :mod:`arena_train.rollout` -- lockstep rollouts, rewards, advantages, paired bootstrap.
- :mod:`arena_train.views` -- compact text views with single-token action menus.
- :mod:`arena_train.manifest` -- run manifest, metrics JSON lines, plots.
- :mod:`arena_train.config` -- validated configs; :mod:`arena_train.cli` -- ``arena train CONFIG``.

Nothing here is imported by ``arena_core``; the MLX parts need the ``train`` extra.
"""
