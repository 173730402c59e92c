"""The table as a picture: the ``rgb_array`` and ``human`` render modes of the envs.

``table_image(state)`` draws one game of a `State` as an (H, W, 3) uint8 image with
Pillow: every seat's hand around the table (face down where the observer cannot see
it), its bid and tricks won, the cards of the trick in the middle, the dealer, the
phase, the trump, the scores and bags, and the result of the hand that just ended.
``Window`` shows such images in a pygame window (``render_mode="human"``), and
``TableRender`` gives the single-game envs (``gym_env``, ``spades_v0``) their render modes.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import logger
from PIL import Image, ImageDraw, ImageFont

from spades_env.cards import (
    BIG_JOKER,
    CARD_RANK,
    CARD_SUIT,
    LITTLE_JOKER,
    NUM_RANKS,
    RANK_CHARS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    mask_to_cards,
)
from spades_env.engine import seat_name
from spades_env.render import render_record, render_state, trump_text
from spades_env.state import DONE, PHASE_NAMES, State, one_index

if TYPE_CHECKING:
    from spades_env.single import SingleGame

WIDTH, HEIGHT = 960, 720
CARD_W, CARD_H = 46, 66
HAND_WIDTH = 270  # the most a hand's row of cards spans
FELT = (21, 92, 48)
FELT_EDGE = (14, 64, 33)
INK = (20, 20, 20)
RED = (200, 20, 30)
JOKER = (110, 40, 150)
TEXT = (240, 240, 230)
HIGHLIGHT = (255, 214, 64)
BACK = (150, 30, 40)
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@cache
def _font(size: int, bold: bool = False) -> Font:
    """DejaVu Sans (it has the suit symbols), as matplotlib ships it; else Pillow's own."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is not None and spec.origin is not None:
        name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
        path = Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf" / name
        if path.exists():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


def _card_text(card: int) -> tuple[str, str, tuple[int, int, int]]:
    """(rank, suit symbol, colour) of a card; jokers are "LJ" / "BJ" with a star."""
    if card in (LITTLE_JOKER, BIG_JOKER):
        return ("LJ" if card == LITTLE_JOKER else "BJ"), "★", JOKER
    suit = card // NUM_RANKS
    colour = RED if SUIT_NAMES[suit] in ("hearts", "diamonds") else INK
    return RANK_CHARS[card % NUM_RANKS], SUIT_SYMBOLS[suit], colour  # T: cards.py's notation


@cache
def _card_image(card: int | None) -> Image.Image:
    """A card's face (or, for `None`, its back) as an RGBA image, drawn once."""
    image = Image.new("RGBA", (CARD_W + 1, CARD_H + 1), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    box = (0, 0, CARD_W, CARD_H)
    if card is None:
        draw.rounded_rectangle(box, 5, fill=BACK, outline=TEXT, width=2)
        draw.rounded_rectangle((5, 5, CARD_W - 5, CARD_H - 5), 3, outline=TEXT)
        return image
    draw.rounded_rectangle(box, 5, fill=(252, 252, 248), outline=INK, width=1)
    rank, suit, colour = _card_text(card)
    draw.text((4, 2), rank, font=_font(15, bold=True), fill=colour)
    draw.text((4, 19), suit, font=_font(16), fill=colour)
    draw.text((CARD_W - 6, CARD_H - 4), suit, font=_font(22), fill=colour, anchor="rd")
    return image


def _draw_card(image: Image.Image, x: float, y: float, card: int | None) -> None:
    """A card with its top-left corner at (x, y); `None` draws its back."""
    face = _card_image(card)
    image.paste(face, (round(x), round(y)), face)


@cache
def _felt() -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT), FELT_EDGE)
    ImageDraw.Draw(image).ellipse((40, 70, WIDTH - 40, HEIGHT - 20), fill=FELT)
    return image


def _hand_order(mask: int) -> list[int]:
    """Spades (or the first suit) first, high cards first in each suit, as the text render."""
    return sorted(mask_to_cards(mask), key=lambda c: (CARD_SUIT[c], -CARD_RANK[c]))


def _seat_centre(seat: int, players: int) -> tuple[float, float]:
    """Seats clockwise from the top: North, East, South, West with four players."""
    angle = -math.pi / 2 + 2 * math.pi * seat / players
    return WIDTH / 2 + 0.33 * WIDTH * math.cos(angle), HEIGHT / 2 + 0.36 * HEIGHT * math.sin(angle)


def _bid_text(state: State, g: int, seat: int) -> str:
    bid = int(state.bids[g, seat])
    if bid < 0:
        return "no bid"
    if bid == 0:
        return "blind nil" if state.blind[g, seat] else "nil"
    return f"bid {bid}"


def _draw_seat(image: Image.Image, state: State, g: int, seat: int, face_up: bool) -> None:
    rules = state.rules
    cx, cy = _seat_centre(seat, rules.num_players)
    cards = _hand_order(int(state.hands[g, seat]) & ~int(state.played[g]))
    n = max(len(cards), 1)
    step = min(CARD_W + 4, (HAND_WIDTH - CARD_W) / max(n - 1, 1))
    left = cx - ((n - 1) * step + CARD_W) / 2
    top = cy - CARD_H / 2 + 10
    for k, card in enumerate(cards):
        _draw_card(image, left + k * step, top, card if face_up else None)
    to_act = int(state.to_act[g]) == seat and int(state.phase[g]) != DONE
    dealer = " (dealer)" if int(state.dealer[g]) == seat else ""
    label = f"{'▶ ' if to_act else ''}{seat_name(seat)}{dealer}"
    info = f"{_bid_text(state, g, seat)} · tricks {int(state.tricks_won[g, seat])}"
    colour = HIGHLIGHT if to_act else TEXT
    draw = ImageDraw.Draw(image)
    draw.text((cx, top - 6), info, font=_font(15), fill=TEXT, anchor="md")
    draw.text((cx, top - 26), label, font=_font(17, bold=True), fill=colour, anchor="md")


def _draw_trick(image: Image.Image, state: State, g: int) -> None:
    players = state.rules.num_players
    for seat in range(players):
        card = int(state.trick[g, seat])
        if card < 0:
            continue
        sx, sy = _seat_centre(seat, players)
        x = WIDTH / 2 + 0.3 * (sx - WIDTH / 2) - CARD_W / 2
        y = HEIGHT / 2 + 0.3 * (sy - HEIGHT / 2) - CARD_H / 2
        _draw_card(image, x, y, card)


def _draw_panel(
    draw: ImageDraw.ImageDraw, state: State, g: int, last: Mapping[str, Any] | None
) -> None:
    """Hand, phase, trump, scores and bags top left; the hand just ended top right."""
    rules = state.rules
    lines = [
        f"hand {int(state.hand_no[g]) + 1} · {PHASE_NAMES[int(state.phase[g])]}",
        trump_text(state, g),
    ]
    for team in range(rules.num_teams):
        seats = "/".join(
            seat_name(s)[0] for s in range(rules.num_players) if s % rules.num_teams == team
        )
        lines.append(
            f"team {team} ({seats}): {int(state.scores[g, team])} pts, "
            f"{int(state.bags[g, team])} bags"
        )
    if rules.draw:  # RULES.md §6 two_player: the stock left to draw from
        left = int((state.stock[g] >= 0).sum()) - int(state.stock_pos[g])
        lines.append(f"stock: {max(left, 0)} cards")
    for k, line in enumerate(lines):
        draw.text((14, 12 + 21 * k), line, font=_font(16), fill=TEXT)
    if last is not None:
        points = [p - q for p, q in zip(last["points"], last["penalty"], strict=True)]
        shown = ", ".join(f"team {t} {p:+d}" for t, p in enumerate(points))
        right = (WIDTH - 14, 12)
        draw.text(
            right, f"hand {last['hand_no'] + 1} ended", font=_font(16), fill=TEXT, anchor="ra"
        )
        draw.text((right[0], 33), shown, font=_font(16), fill=HIGHLIGHT, anchor="ra")


def table_image(
    state: State,
    game: int = 0,
    visible: Collection[int] | None = None,
    last_record: Mapping[str, Any] | None = None,
) -> npt.NDArray[np.uint8]:
    """(HEIGHT, WIDTH, 3) uint8 picture of game `game` of `state`.

    `visible`: the seats whose hands are drawn face up (None: every seat).
    `last_record`: the record (`records.hand_records`) of a hand that just ended: its
    score is shown in a corner, since the engine has already dealt the next hand.
    """
    game = one_index(game, state.batch_size, "game")
    image = _felt().copy()
    for seat in range(state.rules.num_players):
        _draw_seat(image, state, game, seat, visible is None or seat in visible)
    _draw_trick(image, state, game)
    _draw_panel(ImageDraw.Draw(image), state, game, last_record)
    return np.asarray(image, dtype=np.uint8)


class Window:
    """A pygame window that shows table images (``render_mode="human"``)."""

    def __init__(self, title: str = "Spades") -> None:
        try:
            import pygame
        except ImportError:
            raise ImportError(
                "render_mode='human' draws in a pygame window: pip install -e '.[render]'"
            ) from None
        self._pygame = pygame
        pygame.display.init()
        pygame.display.set_caption(title)
        self._screen = pygame.display.set_mode((WIDTH, HEIGHT))

    def show(self, frame: npt.NDArray[np.uint8]) -> None:
        pygame = self._pygame
        pygame.event.pump()  # keeps the window responsive
        self._screen.blit(pygame.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pygame.display.flip()

    def close(self) -> None:
        self._pygame.display.quit()


class TableRender:
    """The render modes of an env over one `SingleGame` (`game`, None before `reset`):
    ``ansi`` the record of the hand that just ended and the table as text (render.py),
    as the seats of `_face_up` see it (every hand for the PettingZoo env, a spectator;
    the learner's own for the single-seat Gym env); `render_table` the whole table,
    ``rgb_array`` the table as a picture (`table_image`, the seats of `_face_up` face up),
    ``human`` that picture in a `Window`. `close` closes the window."""

    metadata: ClassVar[dict[str, Any]]
    render_mode: str | None
    game: SingleGame | None
    _last_record: dict[str, Any] | None
    _window: Window | None
    #: the title of the ``human`` window
    window_title: ClassVar[str] = "Spades"

    def _checked_render_mode(self, render_mode: str | None) -> str | None:
        """`render_mode` if it is one of the env's `metadata["render_modes"]` or None."""
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            raise ValueError(
                f"render_mode must be one of {', '.join(modes)} or None; got {render_mode!r}"
            )
        return render_mode

    def _face_up(self) -> Collection[int] | None:
        """The seats whose hands the picture shows face up (None: every seat)."""
        return None

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; use ansi, human or rgb_array")
            return None
        if self.render_mode == "ansi":
            return self._text()
        frame = table_image(
            self._require_game().state, visible=self._face_up(), last_record=self._last_record
        )
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            self._window = Window(self.window_title)
        self._window.show(frame)
        return None

    def _text(self) -> str:
        """The ``ansi`` render: the table as the seats of `_face_up` see it (None: all)."""
        return self._table_text(self._face_up())

    def render_table(self) -> str:
        """The whole table as text, every hand face up, whatever `render_mode` is: a
        spectator's view (never a seat's: a seat's own view is the ``ansi`` render of
        the single-seat env, or `spades_env.text.seat_text`)."""
        return self._table_text(None)

    def _table_text(self, seats: Collection[int] | None) -> str:
        game = self._require_game()
        record = self._last_record
        parts = [] if record is None else [render_record(record, visible=seats)]
        parts.append(render_state(game.state, visible=seats))
        return "\n".join(parts)

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None
        super().close()  # type: ignore[misc]  (the env class after this one)

    def _require_game(self) -> SingleGame:
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game
