"""Positions as values: one line of text for a whole game state, or for one seat's view.

docs/positions.md is the reference, with examples.  In the style of chess's FEN::

    red7/1 2p+scoring rules:4 round:1 rule:R canvas:- deck:G3,Y2*,R1 0:V5,O2/G1/-/0 1:Y3/R7,B6/-/0 to:0

A game in the middle of a turn is written as the position the turn began in plus the
steps taken so far (``steps:p:R3,c:G6``): everything the engine keeps about a turn in
progress (the action owed, whether the Canvas changed, the cards drawn) follows from
replaying them, so the notation holds no turn internals and cannot contradict itself.

:func:`game_position` writes a game, :func:`read_position` reads one back (a
:class:`PositionError` says what is wrong, never an ``IndexError``), and
:func:`view_position` writes what one seat (or a spectator) may see: the cards hidden
from it as ``?`` (``?5``: five of them).  A view cannot be read back as a game.
"""

from __future__ import annotations

import re

from .cards import ALL_CARDS, Card, CardError, Color, cards_of_mask, color_mask_of
from .deal import make_seed
from .facts import Outcome
from .game import BATCH_RULES_VERSIONS, Game, IllegalStep
from .rules import match_winners
from .steps import END, FOLD, STEPS, Step, StepError
from .variant import Variant, VariantError

__all__ = ["NOTATION", "PositionError", "game_position", "read_position", "view_position"]

NOTATION = "red7/1"  # the first word of every position: the notation and its version
EVERYONE = -2  # view_position's viewer for the whole game (nothing hidden)
SPECTATOR = -1  # view_position's viewer who holds no seat
MAX_HAND = 7  # a hand never holds more at the start of a turn: a turn's draws never outnumber its plays
_REASONS = ("rounds", "target", "deck")


class PositionError(ValueError):
    """A position text that is not a possible game state; the message says what is wrong."""


# ---------------------------------------------------------------------- writing


def game_position(game: Game) -> str:
    """The whole state of ``game`` in one line (see the module docstring)."""
    return view_position(game, EVERYONE)


def view_position(game: Game, viewer: int | None) -> str:
    """What seat ``viewer`` (None: a spectator) may see of ``game``, in one line.

    Cards hidden from the viewer are ``?``: other hands, face-down palettes of seats
    that are out, and deck cards nobody showed it.  A deck card the viewer drew this
    turn is shown (it is on the deck only in the position the turn began in).
    """
    who = SPECTATOR if viewer is None else viewer
    if who != EVERYONE and not -1 <= who < game.variant.players:
        raise ValueError(f"no seat {viewer} in a {game.variant.players}-player game")
    everything = who == EVERYONE
    start = game.copy(record=False)
    drawn: set[int] = set()
    if start.turn_steps and start.turn >= 0:
        if who == start.turn:  # the mover saw every card it drew
            drawn = {int(c) for c in start.drawn_this_turn()}
        start._take_back(start.turn)
    n = game.variant.players
    words = [NOTATION, _variant_text(game.variant), f"rules:{game.batch_rules}", f"round:{game.round}"]
    words.append(f"rule:{Color(start.rule).letter}")
    words.append("canvas:" + _cards([ALL_CARDS[c] for c in start.canvas]))
    deck = []
    for c in reversed(start.deck):
        if start.known >> c & 1:
            deck.append(f"{ALL_CARDS[c]}*")
        elif everything or c in drawn:
            deck.append(str(ALL_CARDS[c]))
        else:
            deck.append("?")
    words.append("deck:" + (_runs(deck) or "-"))
    for s in range(n):
        hand = _set(start.hands[s]) if everything or s == who else _count(start.hands[s])
        palette = _set(start.pal[s]) if everything or start.alive[s] else _count(start.pal[s])
        parts = [hand, palette, _set(start.scores[s]), str(start.round_wins[s])]
        if not start.alive[s]:
            parts.append("out")
        words.append(f"{s}:" + "/".join(parts))
    words.append(f"to:{game.turn}" if game.outcome is None and game.turn >= 0 else "to:-")
    if game.turn_steps:
        words.append("steps:" + ",".join(str(STEPS[c]) for c in game.turn_steps))
    if game.outcome is not None:
        words.append(f"over:{game.outcome.reason}")
    return " ".join(words)


def _variant_text(v: Variant) -> str:
    parts = [f"{v.players}p", *v.flags]
    if v.rounds != 1:
        parts.append(f"rounds={v.rounds}")
    if v.target is not None:
        parts.append(f"target={v.target}")
    return "+".join(parts)


def _cards(cards: list[Card] | tuple[Card, ...]) -> str:
    return ",".join(str(c) for c in cards) or "-"


def _set(mask: int) -> str:
    """A set of cards, strongest first."""
    return _cards(sorted(cards_of_mask(mask), reverse=True))


def _count(mask: int) -> str:
    n = mask.bit_count()
    return f"?{n}" if n else "-"


def _runs(items: list[str]) -> str:
    """Runs of hidden cards as one ``?N``."""
    out: list[str] = []
    for item in items:
        if item == "?" and out and out[-1].startswith("?"):
            out[-1] = f"?{int(out[-1][1:] or 1) + 1}"
        else:
            out.append(item)
    return ",".join("?1" if x == "?" else x for x in out)


# ---------------------------------------------------------------------- reading


def read_position(text: str, seed: bytes | str | None = None) -> Game:
    """The game ``text`` describes; raises :class:`PositionError` saying what is wrong.

    ``seed`` deals the rounds after this one (random if not given); the game's fact
    log starts empty.  Cards named nowhere are out of play, as in a hand-made puzzle.
    """
    if not isinstance(text, str):
        raise PositionError(f"a position is text, not {type(text).__name__}")
    if "?" in text:
        raise PositionError("this is a view (? marks hidden cards): only a whole position can be loaded as a game")
    words = text.split()
    if not words or words[0] != NOTATION:
        raise PositionError(f"a position starts with {NOTATION!r}, not {words[0] if words else 'nothing'!r}")
    if len(words) < 2:
        raise PositionError("the variant (e.g. 2p+scoring) is missing after red7/1")
    variant = _read_variant(words[1])
    fields: dict[str, str] = {}
    for word in words[2:]:
        name, colon, value = word.partition(":")
        if not colon:
            raise PositionError(f"{word!r} is not a field (name:value)")
        if name in fields:
            raise PositionError(f"field {name!r} is given twice")
        fields[name] = value
    n = variant.players
    known_names = {"rules", "round", "rule", "canvas", "deck", "to", "steps", "over", *map(str, range(n))}
    for name in fields:
        if name not in known_names:
            if name.isascii() and name.isdigit():
                raise PositionError(f"seat {name} is out of range: a {n}-player game has seats 0 to {n - 1}")
            raise PositionError(f"unknown field {name!r}")
    for name in ("round", "rule", "canvas", "deck", "to", *map(str, range(n))):
        if name not in fields:
            what = f"seat {name}" if name.isdigit() else f"field {name!r}"
            raise PositionError(f"{what} is missing")
    rules = _number(fields.get("rules", str(BATCH_RULES_VERSIONS[-1])), "rules")
    if rules not in BATCH_RULES_VERSIONS:
        raise PositionError(f"rules:{rules} is not a version of the referee's rules {BATCH_RULES_VERSIONS}")
    game = Game._blank(variant, make_seed(seed), record=True, batch_rules=rules)
    _Placer(game).place(fields)
    _set_turn(game, fields)
    game._stack = []
    return game


def _read_variant(word: str) -> Variant:
    parts = word.split("+")
    m = re.fullmatch(r"(\d)p", parts[0])
    if m is None:
        raise PositionError(f"the variant starts with the number of players (2p, 3p or 4p), not {parts[0]!r}")
    options: dict[str, object] = {"players": int(m.group(1))}
    for part in parts[1:]:
        name, eq, value = part.partition("=")
        if name in ("scoring", "draw", "actions") and not eq:
            options[name] = True
        elif name in ("rounds", "target") and eq:
            options[name] = _number(value, name)
        else:
            raise PositionError(f"unknown variant option {part!r} (scoring, draw, actions, rounds=N, target=N)")
    try:
        return Variant(**options)  # type: ignore[arg-type]
    except VariantError as exc:
        raise PositionError(str(exc)) from None


def _number(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()):  # "²".isdigit() too, which int() refuses
        raise PositionError(f"{what} must be a number, not {text!r}")
    return int(text)


class _Placer:
    """Puts the cards of a position where it says, checking that each is in one place only."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.where: dict[int, str] = {}

    def cards(self, text: str, where: str, *, marks: bool = False) -> list[tuple[int, bool]]:
        """The cards of a comma list (``-`` for none); with ``marks``, each with its ``*``."""
        if text in ("-", ""):
            return []
        out = []
        for item in text.split(","):
            star = marks and item.endswith("*")
            name = item[:-1] if star else item
            try:
                card = int(Card.parse(name))
            except CardError:
                raise PositionError(f"{item!r} in {where} is not a card (R7, b3)") from None
            if card in self.where:
                raise PositionError(f"{ALL_CARDS[card]} is twice in the position: in {self.where[card]} and in {where}")
            self.where[card] = where
            out.append((card, star))
        return out

    def mask(self, text: str, where: str) -> int:
        m = 0
        for card, _ in self.cards(text, where):
            m |= 1 << card
        return m

    def place(self, fields: dict[str, str]) -> None:
        game = self.game
        game.round = _number(fields["round"], "round")
        if game.round < 1:
            raise PositionError("round counts from 1")
        game.canvas = [c for c, _ in self.cards(fields["canvas"], "the Canvas")]
        try:
            rule = int(Color.parse(fields["rule"]))
        except CardError:
            raise PositionError(f"rule:{fields['rule']} is not a colour (R O Y G B I V)") from None
        top = 6 - game.canvas[-1] % 7 if game.canvas else int(Color.RED)
        if rule != top:
            raise PositionError(
                f"rule:{Color(rule).letter} but the Canvas makes the rule {Color(top).title}"
                " (its top card's colour; Red with no card discarded)"
            )
        game.rule = rule
        deck = self.cards(fields["deck"], "the deck", marks=True)
        game.deck = [c for c, _ in reversed(deck)]
        game.known = sum(1 << c for c, star in deck if star)
        for s in range(game.variant.players):
            self.seat(s, fields[str(s)])
        game.removed = 0
        for m in game.scores:
            game.removed |= m

    def seat(self, s: int, text: str) -> None:
        game = self.game
        parts = text.split("/")
        if len(parts) not in (4, 5) or (len(parts) == 5 and parts[4] != "out"):
            raise PositionError(f"seat {s} is hand/palette/score pile/rounds won[/out], not {text!r}")
        game.hands[s] = self.mask(parts[0], f"seat {s}'s hand")
        game.pal[s] = self.mask(parts[1], f"seat {s}'s palette")
        game.palc[s] = color_mask_of(game.pal[s])
        game.scores[s] = self.mask(parts[2], f"seat {s}'s score pile")
        game.round_wins[s] = _number(parts[3], f"seat {s}'s rounds won")
        game.alive[s] = len(parts) == 4
        if game.hands[s].bit_count() > MAX_HAND:
            raise PositionError(
                f"seat {s}'s hand has {game.hands[s].bit_count()} cards: a hand never holds more than "
                f"{MAX_HAND} when a turn begins"
            )
        if game.alive[s] and not game.pal[s]:
            raise PositionError(f"seat {s} is in the round with an empty palette")
        if game.scores[s] and not game.variant.scoring:
            raise PositionError(f"seat {s} has a score pile, but only Advanced scoring (+scoring) scores cards")


def _set_turn(game: Game, fields: dict[str, str]) -> None:
    """Who is to move and the turn so far (replayed step by step), or the outcome."""
    to, over = fields["to"], fields.get("over")
    if over is not None:
        if over not in _REASONS:
            raise PositionError(f"over:{over} is not how a game ends ({', '.join(_REASONS)})")
        if to != "-" or "steps" in fields:
            raise PositionError("a game that is over has nobody to move (to:-) and no turn in progress")
        game.turn, game.turn_steps, game.journal = -1, [], []
        totals = [game.score(s) for s in range(game.players)]
        if game.variant.scoring:
            winners = match_winners(totals, game.round_wins)
        else:
            winners = tuple(s for s in range(game.players) if game.round_wins[s] >= game.variant.rounds)
            if len(winners) != 1:
                raise PositionError(f"over:{over} but {len(winners)} seats have won {game.variant.rounds} rounds")
        game.outcome = Outcome(winners, tuple(totals), tuple(game.round_wins), over)
        return
    if to == "-":
        if "steps" in fields:
            raise PositionError("steps: needs a player to move (to:N)")
        game.turn = -1
        return
    seat = _number(to, "to")
    if seat >= game.players:
        raise PositionError(
            f"to:{seat} is out of range: a {game.players}-player game has seats 0 to {game.players - 1}"
        )
    if not game.alive[seat]:
        raise PositionError(f"to:{seat}, but seat {seat} is out of the round")
    if game.alive.count(True) < 2:
        raise PositionError("a round in progress has at least two players in it")
    if not game.hands[seat]:
        raise PositionError(f"to:{seat}, but seat {seat}'s hand is empty (it would be out of the round)")
    game._start_turn(seat)
    steps = fields.get("steps", "")
    for item in steps.split(",") if steps else []:
        try:
            step = Step.parse(item)
        except StepError as exc:
            raise PositionError(f"steps: {exc}") from None
        if int(step) in (END, FOLD):
            raise PositionError(f"steps: {step} ends the turn; a position's steps are a turn in progress")
        try:
            game.push(step)
        except IllegalStep as exc:
            raise PositionError(f"steps: {step} is illegal here: {exc}") from None
    game.log = []
