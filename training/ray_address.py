"""Moved to `spades_env.ray_address` (shared by `spades train` and `spades tournament`,
below both); this name stays importable."""

from spades_env.ray_address import CONNECT_TIMEOUT, check_address

__all__ = ["CONNECT_TIMEOUT", "check_address"]
