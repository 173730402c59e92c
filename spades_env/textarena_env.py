"""Spades for TextArena: ``import spades_env.textarena_env`` registers ``Spades-v0``.

TextArena (the ``textarena`` extra) runs text games for language-model evaluation and
training; frameworks that train models on its games can then use Spades:

    import textarena as ta
    import spades_env.textarena_env  # registers Spades-v0 (and Spades-v0-raw)

    env = ta.make("Spades-v0", preset="standard")   # any preset of RULES.md §6
    env.reset(num_players=4, seed=0)
    done = False
    while not done:
        player_id, observation = env.get_observation()
        done, info = env.step(action=my_model(observation))
    rewards, game_info = env.close()

Player ``k`` is seat ``k`` (North, East, South, West, ...). At each turn the player to
act receives its view of the table (`spades_env.text.seat_text`: what that seat knows
and nothing more, its legal actions last) and answers with one action in brackets
(``[bid 4]``, ``[nil]``, ``[play Q♥]``, ``[trump hearts]``), read by
`spades_env.text.parse_answer` (an answer it cannot read with certainty is "not
understood", never a guess). An illegal or unreadable answer is refused with the reason
(the RULES.md rule) and the player answers again; a second refusal in a row ends the
game, lost by that player's team. ``reset(seed=None)`` deals a new game each time (its
seed in ``env.seed``); each player's ``turn_count`` in ``game_info`` counts its valid
moves. ``episode="hand"`` (default) plays one hand,
``"game"`` a whole game; the team with more points (hand score, or final score) wins:
rewards +1 / -1 per player (0 each on a tie), the points in ``game_info``.

Registered only where ``textarena`` is installed (importing this module without it
raises ImportError naming the extra).
"""

from __future__ import annotations

import random
from typing import Any

try:
    import textarena as ta
    from textarena.envs.registration import ENV_REGISTRY, register_with_versions
    from textarena.wrappers import (
        ActionFormattingWrapper,
        GameMessagesAndCurrentBoardObservationWrapper,
        LLMObservationWrapper,
    )
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        "spades_env.textarena_env needs TextArena: pip install -e '.[textarena]'"
    ) from exc

from spades_env.engine import seat_name
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.text import AnswerError, parse_answer, rules_text, seat_text

ENV_ID = "Spades-v0"


class SpadesTextArenaEnv(ta.Env):
    """Spades as a TextArena game; see the module doc."""

    def __init__(self, preset: str = "standard", episode: str = "hand", **options: Any) -> None:
        self.rules = Rules.preset(preset, **options)
        if episode not in ("hand", "game"):
            raise ValueError(f"episode must be 'hand' or 'game'; got {episode!r}")
        self.episode = episode
        self.game: SingleGame | None = None

    def reset(self, num_players: int, seed: int | None = None) -> None:
        """A new game: the deals of `seed`, or of a fresh random seed (kept in
        ``self.seed``) when it is None, so that every reset deals anew."""
        p = self.rules.num_players
        if num_players != p:
            raise ValueError(f"{self.rules.name} is played by {p} players; got {num_players}")
        self.seed = random.SystemRandom().getrandbits(63) if seed is None else int(seed)
        self.game = SingleGame(self.rules, seed=self.seed)
        self.points = [0] * self.rules.num_teams
        self.state = ta.TeamMultiPlayerState(num_players=p, seed=seed, error_allowance=1)
        self.state.reset(
            game_state={},
            player_prompt_function=self._prompt,
            role_mapping={k: seat_name(k) for k in range(p)},
        )
        self.state.manually_set_current_player_id(self.game.to_act)
        self._show_view()

    def _prompt(self, player_id: int, game_state: dict[str, Any]) -> str:
        return (
            f"You are {seat_name(player_id)} in a game of Spades. "
            + rules_text(self.rules)
            + "\nAt your turn you see the table as your seat knows it, your legal actions "
            "last. Answer with one action in square brackets, e.g. [bid 4], [nil], "
            "[play Q♥]."
        )

    def _show_view(self) -> None:
        game = self._game()
        self.state.add_observation(
            to_id=game.to_act,
            message=seat_text(game.state, 0, game.to_act),
            observation_type=ta.ObservationType.GAME_BOARD,
        )

    def _game(self) -> SingleGame:
        if self.game is None:
            raise RuntimeError("call reset() first")
        return self.game

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        game = self._game()
        player = self.state.current_player_id
        self.state.add_observation(
            from_id=player,
            to_id=player,
            message=action,
            observation_type=ta.ObservationType.PLAYER_ACTION,
        )
        try:
            chosen = parse_answer(action, game.state)
        except AnswerError as exc:
            if self.state.set_invalid_move(reason=str(exc)):
                losers = self.rules.team_of(player)
                winners = [
                    k for k in range(self.rules.num_players) if self.rules.team_of(k) != losers
                ]
                self.state.set_winners(winners, f"{seat_name(player)} answered illegally twice")
            return self.state.step()
        self.state.game_info[player]["turn_count"] += 1  # a valid move is a turn
        result = game.step(chosen, last_hand=self.episode == "hand").finished
        if result is not None:
            hand = (result.points - result.penalty)[0].tolist()
            self.points = [a + b for a, b in zip(self.points, hand, strict=True)]
            over = self.episode == "hand" or bool(result.game_over[0])
            if over:
                self._finish(result.scores[0].tolist() if self.episode == "game" else hand)
        if not self.state.done:
            self.state.manually_set_current_player_id(game.to_act)
            self._show_view()
        return self.state.step()

    def _finish(self, score: list[int]) -> None:
        best = max(score)
        top = [t for t, s in enumerate(score) if s == best]
        for k in range(self.rules.num_players):
            self.state.game_info[k]["points"] = score[self.rules.team_of(k)]
        if len(top) > 1:
            self.state.set_draw(f"tied at {best} points")
            return
        winners = [k for k in range(self.rules.num_players) if self.rules.team_of(k) == top[0]]
        names = ", ".join(seat_name(k) for k in winners)
        self.state.set_winners(winners, f"{names} scored the most points ({best})")


if ENV_ID not in ENV_REGISTRY:
    register_with_versions(
        id=ENV_ID,
        entry_point=SpadesTextArenaEnv,
        wrappers={
            "default": [LLMObservationWrapper, ActionFormattingWrapper],
            "-train": [GameMessagesAndCurrentBoardObservationWrapper, ActionFormattingWrapper],
        },
    )
