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
