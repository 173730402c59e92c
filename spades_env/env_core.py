"""Moved to `spades_env.env_common` (what the three environments share; `core/` is the
compiled core); this name stays importable."""

from spades_env.env_common import *  # noqa: F403
