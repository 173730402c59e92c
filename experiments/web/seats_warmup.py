"""Imported once by the fork server of the tables' agents (`experiments.web.seats.PRELOAD`):
plays one decision of the heuristic on a fresh game, so the compiled engine and agent
kernels are loaded before any table's process is forked. Each table's process then shares
them (copy-on-write) and makes its first move in milliseconds instead of half a second."""

from __future__ import annotations

from agents.heuristic.agent import HeuristicAgent
from experiments.table.session import ask_agent
from spades_env.rules import Rules
from spades_env.single import SingleGame


def warm() -> None:
    game = SingleGame(Rules(), seed=0)
    ask_agent(game, HeuristicAgent(seed=0), game.to_act, 0, 0)


warm()
