"""Spades rules, the batched engine and its environments."""

from spades_env.cards import NUM_ACTIONS, action_to_str, str_to_action
from spades_env.engine import IllegalActionError, StepInfo, legal_action_mask, step
from spades_env.rules import Rules, RulesError
from spades_env.state import State, init

__all__ = [
    "NUM_ACTIONS",
    "IllegalActionError",
    "Rules",
    "RulesError",
    "State",
    "StepInfo",
    "action_to_str",
    "init",
    "legal_action_mask",
    "step",
    "str_to_action",
]

# Environment registration: Gymnasium's single-seat env with its native vector
# env, and the PettingZoo AEC/parallel env. Entry points are strings, so nothing heavy
# is imported until an env is made.
import gymnasium as _gymnasium
import pettingzoo as _pettingzoo

if "spades_env/Spades-v0" not in _gymnasium.registry:
    _gymnasium.register(
        id="spades_env/Spades-v0",
        entry_point="spades_env.gym_env:SpadesEnv",
        vector_entry_point="spades_env.vector_env:SpadesVectorEnv",
    )
if hasattr(_pettingzoo, "register"):  # PettingZoo's registry exists from 1.27 on
    _pettingzoo.register("aec", "spades_env/spades_v0", entry_point="spades_env.spades_v0:env")
    _pettingzoo.register(
        "parallel", "spades_env/spades_v0", entry_point="spades_env.spades_v0:parallel_env"
    )
