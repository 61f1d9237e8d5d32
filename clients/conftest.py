"""The client checks (``make check-clients``, scripts/check_clients.sh) run niced beside CI's other
steps on 2 shared cores: torch gets one thread (two threads under load ran PPO 5-10x slower)."""

import torch

torch.set_num_threads(1)
