"""Arena trainers, registered through the `arena.trainers` entry point group.

- :mod:`arena_train.grpo` -- GRPO on MLX against a pool or in self-play; the game outcome is the reward.
- :mod:`arena_train.expert_iteration` -- distil an expert player into a language model.
- :mod:`arena_train.pg` -- numpy policy gradient over the numeric observation encoding.
- :mod:`arena_train.rollout` -- lockstep rollouts, rewards, advantages, paired bootstrap.
- :mod:`arena_train.views` -- the game's views (``Game.views()``) for a tokenizer: single-token labels.
- :mod:`arena_train.exact` -- exact evaluation of small games: exploitability, average policy, CFR.
- :mod:`arena_train.manifest` -- run manifest, metrics JSON lines, plots.
- :mod:`arena_train.config` -- validated configs; :mod:`arena_train.cli` -- ``arena train CONFIG``.

Nothing here is imported by ``arena_core``; the MLX parts need the ``train`` extra.
"""
