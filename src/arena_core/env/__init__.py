"""Environment adapters: PettingZoo AEC and parallel, Gymnasium single-agent."""

from .aec import ArenaAECEnv, aec_env
from .gym import ArenaGymEnv
from .parallel import ArenaParallelEnv, parallel_env

__all__ = ["ArenaAECEnv", "ArenaGymEnv", "ArenaParallelEnv", "aec_env", "parallel_env"]
