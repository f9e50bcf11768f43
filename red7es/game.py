"""The game state: deals, turns as steps, elimination, rounds and the outcome.

:class:`Game` is the one mutable type of the engine, in the style of python-chess's
``Board``: ``legal_steps()``, ``legal_turns()``, ``apply()`` for a whole turn (all or
nothing, ``end`` implied), ``push()``/``pop()`` for single steps, ``observation(seat)``
for what one player may see, and ``log`` with every fact since the game began.

State is kept as bitmasks (see :mod:`red7es.cards`) so the rules kernel can compare
palettes without building objects; the public accessors return :class:`Card` tuples.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .cards import ALL_CARDS, Card, Color, cards_of_mask, color_bit
from .cards import bits as _bits
from .deal import commitment, deck_order, make_seed
from .facts import (
    CardDrawn,
    Fact,
    Forfeited,
    GameOver,
    Outcome,
    PlayerOut,
    RoundDealt,
    RoundWon,
    StepApplied,
    TurnTakenBack,
)
from .rules import KEY_FUNCTIONS, all_keys, match_winners, qualifying_mask, rival_keys
from .steps import DRAW, END, FOLD, NO_CARD, STEPS, Step, Turn
from .variant import Variant

if TYPE_CHECKING:
    from .observation import Observation

__all__ = ["BATCH_RULES", "BATCH_RULES_VERSIONS", "Game", "GameOverError", "IllegalStep", "Pending"]

# The version of the rules for a turn sent as one batch of steps (Game.apply).  A game
# is refereed under the version it was created with, so a record keeps re-executing
# the way it was played when these rules tighten:
#   1  the steps are applied one after another, as far as they are legal;
#   2  as 1, but no step may follow one that draws a card nobody has seen, and an open
#      turn must be the start of a legal turn (from commit 4c24a14, 3 December 2026);
#   3  as 2, but steps may follow such a draw (RULES.md lets a batch go on): they are
#      judged as if the drawn card were not yet in the hand (from 3 December 2026);
#   4  as 3, and a ``fold`` takes back the steps of the turn it ends (RULES.md, You must
#      lead): every card goes back where it was when the turn began, and the player
#      leaves the round from there (from 4 December 2026).  Under 1 to 3 they stood;
#   5  as 4, and a seat's command ``resign`` or ``abort`` is that command (RULES.md,
#      Resigning, Aborting); under 1 to 4 it is read as a turn, which it is not, and
#      refused, as it was when those games were played (from 4 December 2026);
#   6  as 5, and a person's turn is signed over the game's seed commitment too
#      (red7es/turn/v2, red7es.service.tokens): a turn signed for one game cannot be
#      replayed into another made later under the same id (from 5 December 2026).
#   7  as 6, and a seat's key (a join's, or one given at creation) that anyone can sign
#      for, an Ed25519 point of small order or one not written canonically, is refused
#      (red7es.service.tokens.is_weak_key; from 6 December 2026).
# Unlike 1 to 3, version 4 changes what a turn *does*, not only which batches are
# accepted, so a Game carries its version (``Game.batch_rules``) and every replay of
# its steps (a record, the round's history, a bot's search) must use the same.
BATCH_RULES = 7
BATCH_RULES_VERSIONS = (1, 2, 3, 4, 5, 6, 7)
COMMITTED_TURNS = 6  # the first batch rules under which a turn's signature names the commitment
STRONG_KEYS = 7  # the first batch rules under which a seat key anyone can sign for is refused
SEAT_WORDS = 5  # the first batch rules under which resign and abort are commands, not turns
RESIGNED = "resigned"  # a Forfeited's reason when the seat resigned (and GameOver's, if it ended the game)
ABORTED = "aborted"  # GameOver's reason for a game aborted before anyone moved: no winners
ADJUDICATED = "adjudicated"  # GameOver's reason for a game an operator ended (RULES.md, Adjudication)
NO_SHOW = "no-show"  # a Forfeited's and GameOver's reason: a seat nobody took by the join deadline
WITHDRAWN = "withdrawn"  # a Forfeited's (and GameOver's) reason: the operator withdrew the seat (RULES.md, Withdrawal)
FOLD_TAKES_BACK = 4  # the first batch rules under which a fold takes its turn back

# Entries of Game.journal that are not cards: a 3 played on an empty deck (it drew
# nothing), and, in a game dealt from an observation, a card some other player drew
# unseen (taking it back returns one of the mover's cards: the viewer cannot tell which).
NOTHING_DRAWN = NO_CARD
HIDDEN_DRAW = 62

# Step kinds as plain ints for the hot path.
_P, _C, _DRAW, _7C, _7D, _ONE, _END, _FOLD = range(8)

# A mandatory action still owed this turn.
NONE, PLAY5, SEVEN, ONE = 0, 1, 2, 3

# What Game._do records to undo one step: the mover's hand, the palettes (both
# layouts), deck length and top card, known, Canvas length, rule, canvas_changed,
# draw_ok, acted, pending, plays_left, seven_card.


class Pending:
    """Names of the mandatory actions a turn can be waiting for."""

    NONE = NONE
    PLAY5 = PLAY5
    SEVEN = SEVEN
    ONE = ONE
    NAMES = (
        "none",
        "play (action of a 5)",
        "move a palette card (action of a 7)",
        "take a palette card (action of a 1)",
    )


class IllegalStep(ValueError):
    """A step or turn that the rules do not allow; the message says exactly why."""


class GameOverError(IllegalStep):
    """A step submitted after the game has ended."""


def _check_batch_rules(batch_rules: int) -> None:
    if batch_rules not in BATCH_RULES_VERSIONS:
        raise ValueError(f"batch rules are one of versions {BATCH_RULES_VERSIONS}, not {batch_rules!r}")


def _number(card: int) -> int:
    return card // 7 + 1


def _color(card: int) -> int:
    return 6 - card % 7


class Game:
    """A game of Red7 for 2 to 4 seats (0-based), dealt from a seed.

    >>> g = Game.new(players=3, scoring=True, draw=True, actions=True, seed="demo")
    >>> len(g.legal_turns()) > 0
    True
    """

    __slots__ = (
        "_stack",
        "acted",
        "alive",
        "batch_rules",
        "canvas",
        "canvas_changed",
        "deck",
        "draw_ok",
        "forfeited",
        "hands",
        "journal",
        "known",
        "log",
        "outcome",
        "pal",
        "palc",
        "pending",
        "plays_left",
        "removed",
        "round",
        "round_wins",
        "rule",
        "scores",
        "seed",
        "seven_card",
        "turn",
        "turn_steps",
        "variant",
    )

    variant: Variant
    seed: bytes | None
    round: int
    hands: list[int]
    pal: list[int]
    palc: list[int]
    alive: list[bool]
    forfeited: list[int]  # seats out of the game for good, in the order they went out
    deck: list[int]
    known: int
    canvas: list[int]
    rule: int
    scores: list[int]
    round_wins: list[int]
    removed: int
    turn: int
    plays_left: int
    acted: bool
    canvas_changed: bool
    pending: int
    seven_card: int
    draw_ok: bool
    turn_steps: list[int]
    journal: list[int]
    batch_rules: int
    outcome: Outcome | None
    log: list[Fact] | None
    _stack: list[tuple[object, ...]]

    # ------------------------------------------------------------------ creation

    @classmethod
    def new(
        cls,
        players: int | Variant = 2,
        *,
        seed: bytes | str | None = None,
        scoring: bool = False,
        draw: bool = False,
        actions: bool = False,
        rounds: int = 1,
        target: int | None = None,
        record: bool = True,
        batch_rules: int = BATCH_RULES,
    ) -> Game:
        """Deal round 1 of a new game.  ``players`` may be a whole :class:`Variant`.

        ``record=False`` keeps no fact log (faster, for simulations).  ``batch_rules``:
        the version of the referee's rules the game is played under (:data:`BATCH_RULES`).
        """
        if isinstance(players, Variant):
            variant = players
        else:
            variant = Variant(players, scoring, draw, actions, rounds, target)
        game = cls._blank(variant, make_seed(seed), record=record, batch_rules=batch_rules)
        game._deal(1)
        return game

    @classmethod
    def from_record(cls, variant: Variant, batch_rules: int = BATCH_RULES) -> Game:
        """A game waiting for its first RoundDealt: for replaying facts without the seed."""
        game = cls._blank(variant, None, record=True, batch_rules=batch_rules)
        game._deal(1)
        return game

    @classmethod
    def _blank(cls, variant: Variant, seed: bytes | None, *, record: bool, batch_rules: int = BATCH_RULES) -> Game:
        """A game before its first deal, every field set: where every new Game starts.

        :meth:`new` and :meth:`from_record` deal into it; :func:`~red7es.observation.determinize`
        overwrites the round, scores and turn with a world consistent with an observation.
        (:meth:`copy` restores a snapshot instead, so it builds its own.)
        """
        _check_batch_rules(batch_rules)
        game = cls.__new__(cls)
        n = variant.players
        game.variant = variant
        game.batch_rules = batch_rules
        game.seed = seed
        game.round = 0
        game.scores = [0] * n
        game.round_wins = [0] * n
        game.removed = 0
        game.outcome = None
        game.log = [] if record else None
        game._stack = []
        game.hands, game.pal, game.palc, game.deck, game.canvas = [0] * n, [0] * n, [0] * n, [], []
        game.alive = [True] * n
        game.forfeited = []
        game.known, game.rule = 0, Color.RED
        game._start_turn(-1)
        return game

    @property
    def players(self) -> int:
        return self.variant.players

    @property
    def commitment(self) -> str:
        """SHA-256 of the seed, hex: what a service publishes before the seed is revealed."""
        if self.seed is None:
            raise ValueError("this game was rebuilt from a record without its seed")
        return commitment(self.seed)

    def copy(self, *, record: bool | None = None) -> Game:
        """An independent copy (the fact log is copied too unless ``record=False``)."""
        other = Game.__new__(Game)
        other.variant = self.variant
        other.batch_rules = self.batch_rules
        other.seed = self.seed
        other.log = None
        other._restore(self._save())
        keep = self.log is not None if record is None else record
        other.log = (list(self.log) if self.log is not None else []) if keep else None
        other._stack = []
        return other

    # ------------------------------------------------------------------ snapshots

    def _save(self) -> tuple[object, ...]:
        return (
            self.round,
            self.hands[:],
            self.pal[:],
            self.palc[:],
            self.alive[:],
            self.deck[:],
            self.known,
            self.canvas[:],
            self.rule,
            self.scores[:],
            self.round_wins[:],
            self.removed,
            self.turn,
            self.plays_left,
            self.acted,
            self.canvas_changed,
            self.pending,
            self.seven_card,
            self.draw_ok,
            self.turn_steps[:],
            self.journal[:],
            self.outcome,
            self.forfeited[:],
            len(self.log) if self.log is not None else 0,
        )

    def _restore(self, snap: tuple[object, ...]) -> None:
        (
            self.round,
            hands,
            pal,
            palc,
            alive,
            deck,
            self.known,
            canvas,
            self.rule,
            scores,
            round_wins,
            self.removed,
            self.turn,
            self.plays_left,
            self.acted,
            self.canvas_changed,
            self.pending,
            self.seven_card,
            self.draw_ok,
            turn_steps,
            journal,
            self.outcome,
            forfeited,
            log_len,
        ) = snap  # type: ignore[assignment]
        self.forfeited = forfeited[:]  # type: ignore[index]
        self.hands = hands[:]  # type: ignore[index]
        self.pal = pal[:]  # type: ignore[index]
        self.palc = palc[:]  # type: ignore[index]
        self.alive = alive[:]  # type: ignore[index]
        self.deck = deck[:]  # type: ignore[index]
        self.canvas = canvas[:]  # type: ignore[index]
        self.scores = scores[:]  # type: ignore[index]
        self.round_wins = round_wins[:]  # type: ignore[index]
        self.turn_steps = turn_steps[:]  # type: ignore[index]
        self.journal = journal[:]  # type: ignore[index]
        if self.log is not None:
            del self.log[log_len:]  # type: ignore[misc,arg-type]

    # ------------------------------------------------------------------ dealing

    def _deal(self, round_number: int) -> None:
        """Deal a round from the seed: seat by seat, 7 hand cards then 1 palette card."""
        n = self.variant.players
        self.round = round_number
        if self.seed is None:
            # Replaying a record without its seed: the next RoundDealt fact deals.
            self.turn = -1
            return
        cards = [c for c in range(49) if not self.removed >> c & 1]
        order = deck_order(cards, self.seed, round_number)
        self._set_round(
            round_number,
            [order[8 * s : 8 * s + 7] for s in range(n)],
            [order[8 * s + 7] for s in range(n)],
            order[8 * n :],
        )

    def load_deal(self, deal: RoundDealt) -> None:
        """Set up a round exactly as a recorded RoundDealt says (replay without the seed)."""
        self._set_round(
            deal.round, [list(h) for h in deal.hands], [int(c) for c in deal.palettes], [int(c) for c in deal.deck]
        )

    def _set_round(self, round_number: int, hands: list[list[int]], starters: list[int], deck: list[int]) -> None:
        n = self.variant.players
        self.round = round_number
        self.hands = [0] * n
        self.pal = [0] * n
        self.palc = [0] * n
        for seat in range(n):
            for c in hands[seat]:
                self.hands[seat] |= 1 << c
            self.pal[seat] = 1 << starters[seat]
            self.palc[seat] = color_bit(starters[seat])
        self.deck = deck[::-1]  # top of the deck is the end of the list
        self.known = 0
        self.canvas = []
        self.rule = Color.RED
        self.alive = [s not in self.forfeited for s in range(n)]
        first = (starters.index(max(starters)) + 1) % n
        while not self.alive[first]:  # a seat out of the game never starts a round
            first = (first + 1) % n
        if self.log is not None:
            self.log.append(
                RoundDealt(
                    round_number,
                    tuple(tuple(ALL_CARDS[c] for c in sorted(hands[s])) for s in range(n)),
                    tuple(ALL_CARDS[c] for c in starters),
                    tuple(ALL_CARDS[c] for c in deck),
                    first,
                )
            )
        self._start_turn(first)

    def _start_turn(self, seat: int) -> None:
        self.turn = seat
        self.plays_left = 1
        self.acted = False
        self.canvas_changed = False
        self.pending = NONE
        self.seven_card = NO_CARD
        self.draw_ok = False
        self.turn_steps = []
        self.journal = []

    # ------------------------------------------------------------------ queries

    @property
    def over(self) -> bool:
        return self.outcome is not None

    @property
    def canvas_rule(self) -> Color:
        return Color(self.rule)

    def hand(self, seat: int) -> tuple[Card, ...]:
        return cards_of_mask(self.hands[seat])

    def palette(self, seat: int) -> tuple[Card, ...]:
        return cards_of_mask(self.pal[seat])

    def score(self, seat: int) -> int:
        """Points in a seat's score pile (Advanced scoring)."""
        return sum(_number(c) for c in cards_of_mask(self.scores[seat]))

    def score_pile(self, seat: int) -> tuple[Card, ...]:
        return cards_of_mask(self.scores[seat])

    @property
    def deck_cards(self) -> tuple[Card, ...]:
        """The draw deck, top card first (hidden information)."""
        return tuple(ALL_CARDS[c] for c in reversed(self.deck))

    @property
    def canvas_cards(self) -> tuple[Card, ...]:
        """Cards discarded to the Canvas this round, the top (the rule) last."""
        return tuple(ALL_CARDS[c] for c in self.canvas)

    @property
    def in_round(self) -> tuple[int, ...]:
        """Seats still in the current round."""
        return tuple(s for s in range(self.variant.players) if self.alive[s])

    @property
    def current_turn_steps(self) -> tuple[Step, ...]:
        return tuple(STEPS[c] for c in self.turn_steps)

    def leader(self) -> int | None:
        """The seat leading now under the Canvas rule, or None."""
        key = KEY_FUNCTIONS[self.rule]
        best, who = 0, None
        for s in range(self.variant.players):
            if self.alive[s]:
                k = key(self.pal[s], self.palc[s])
                if k > best:
                    best, who = k, s
        return who

    def _leads(self, seat: int) -> bool:
        key = KEY_FUNCTIONS[self.rule]
        mine = key(self.pal[seat], self.palc[seat])
        if not mine:
            return False
        pal, palc, alive = self.pal, self.palc, self.alive
        for s in range(len(pal)):
            if s != seat and alive[s] and key(pal[s], palc[s]) > mine:
                return False
        return True

    def _owner(self, card: int) -> int | None:
        bit = 1 << card
        for s, m in enumerate(self.pal):
            if m & bit:
                return s
        return None

    # ------------------------------------------------------------------ applying

    def apply(self, turn: str | Turn | Step | Iterable[str | Step], *, batch_rules: int | None = None) -> list[Fact]:
        """Apply a whole turn, all or nothing; returns the facts it caused.

        ``end`` is implied after the last step unless the turn ends with ``fold`` or
        is open (``"p:G3 ..."``).  Raises :class:`IllegalStep` saying why, and then
        the game is exactly as before.

        ``batch_rules`` judges this one turn under another version than the game's
        own (:attr:`batch_rules`, see :data:`BATCH_RULES`), a ``fold`` included: from 4
        it takes back the turn's steps.

        A refused batch must not tell the player what a card they have not seen is
        (``batch_rules`` 3 and on; 1 and 2 re-execute older records):

        * a 3 may draw a card nobody has seen in the middle of a batch (RULES.md: the
          batch goes on).  The steps after it are judged as if that card were not yet
          in the hand, so whether they are refused, and why, does not depend on it
          (a step that names it is refused as naming a card not in the hand).  Once
          the batch is accepted, the card is the player's like any other.  Batch rules
          2 refused any step after such a draw instead.
        * an open turn must be the start of some legal turn, so keeping a turn open
          never leaves a player whose only way on is to fold.
        """
        if batch_rules is None or batch_rules == self.batch_rules:
            return self._apply(turn, self.batch_rules)
        _check_batch_rules(batch_rules)
        own, self.batch_rules = self.batch_rules, batch_rules
        try:
            return self._apply(turn, batch_rules)
        finally:
            self.batch_rules = own

    def _apply(self, turn: str | Turn | Step | Iterable[str | Step], batch_rules: int) -> list[Fact]:
        """:meth:`apply` under ``batch_rules`` (the game's own for the whole turn)."""
        strict = batch_rules >= 2
        t = Turn.parse(turn)
        if not t.steps and t.open:
            return []
        codes = [int(step) for step in t.steps]
        legal = self.legal_turn_codes() if t.open and strict else None
        seat = self.turn
        snap = self._save()
        start = len(self.log) if self.log is not None else 0
        unseen = 0  # cards drawn unseen in this batch: out of the hand until it is judged
        try:
            for i, code in enumerate(codes):
                draws_unseen = strict and i + 1 < len(codes) and self.draws_unseen(code)
                if draws_unseen and batch_rules == 2:
                    done = " ".join(str(s) for s in t.steps[: i + 1])
                    raise IllegalStep(
                        f"{STEPS[code]} draws a card nobody has seen: stop the turn there ({done} ...) "
                        "and choose the rest once you see it"
                    )
                if unseen and code == FOLD:
                    self.hands[seat] |= unseen  # folding ends the turn (and may end the round) with them
                    unseen = 0
                drawn = self.deck[-1] if draws_unseen else None
                self._step(code, True)
                if drawn is not None:
                    unseen |= 1 << drawn
                    self.hands[seat] &= ~unseen
            if legal is not None:
                if unseen:  # past the draw: a way on from here that needs no unseen card
                    way_on = any(c != (FOLD,) for c, _ in self.legal_turn_codes())
                else:
                    way_on = any(tuple(c[: len(codes)]) == tuple(codes) for c, _ in legal)
                if not way_on:
                    raise IllegalStep(f"after {' '.join(str(s) for s in t.steps)} you could not end the turn leading")
            self.hands[seat] |= unseen
            if not t.open and not t.is_fold:
                self._step(END, True)
        except IllegalStep:
            self._restore(snap)
            raise
        return self.log[start:] if self.log is not None else []

    def push(self, step: str | Step) -> list[Fact]:
        """Apply one step (no implied end); :meth:`pop` takes it back."""
        code = int(Step.parse(step))
        snap = self._save()
        start = len(self.log) if self.log is not None else 0
        try:
            self._step(code, True)
        except IllegalStep:
            self._restore(snap)
            raise
        self._stack.append(snap)
        return self.log[start:] if self.log is not None else []

    def pop(self) -> None:
        """Undo the last :meth:`push`."""
        if not self._stack:
            raise IndexError("no step to take back")
        self._restore(self._stack.pop())

    def play_turn(self, codes: Sequence[int], open_turn: bool = False) -> None:
        """Apply a turn known to be legal (e.g. from :meth:`legal_turn_codes`), fast.

        ``codes`` are step codes without the trailing ``end``.  No snapshot is taken:
        an illegal turn raises and leaves the game half-changed, so only use codes
        produced by the engine itself.
        """
        step = self._step
        for code in codes:
            step(code, False)
        if not open_turn and (not codes or codes[-1] != FOLD):
            step(END, False)

    def apply_fact(self, fact: Fact) -> None:
        """Fold one recorded fact into the game (replaying a log without the seed).

        RoundDealt sets up the round and StepApplied replays the step, checked
        against the rules; the other facts are consequences the engine derives
        itself (and adds to ``log``), so they are skipped here.
        """
        if isinstance(fact, RoundDealt):
            self.load_deal(fact)
        elif isinstance(fact, StepApplied):
            if fact.seat != self.turn:
                raise IllegalStep(f"step {fact.step} by seat {fact.seat}, but seat {self.turn} is to move")
            self._step(int(fact.step), True)
        elif isinstance(fact, Forfeited):  # decided by the referee, not derived from a step
            self.forfeit(fact.seat, fact.reason)

    def forfeit(self, seat: int, reason: str) -> list[Fact]:
        """Put ``seat`` out of the game for good (RULES.md, Time); returns the facts.

        A turn the seat had begun is taken back first, as a fold takes it back (batch
        rules 4). The seat leaves the round, is dealt no more turns and can no longer
        win; the others play on. When one seat is left in the game it wins at once
        (``GameOver`` with ``reason``: ``"time"``, ``"resigned"`` or ``"withdrawn"``).  Otherwise, if it was
        the seat to move,
        the turn passes on as after a fold (which may end the round).
        """
        if self.outcome is not None:
            raise GameOverError("the game is over")
        n = self.variant.players
        if not 0 <= seat < n or seat in self.forfeited:
            raise IllegalStep(f"seat {seat} cannot forfeit: it is not in the game")
        log = self.log
        start = len(log) if log is not None else 0
        if seat == self.turn and self.turn_steps and self.batch_rules >= FOLD_TAKES_BACK:
            if log is not None:
                log.append(TurnTakenBack(seat, tuple(STEPS[c] for c in self.turn_steps)))
            self._take_back(seat)
        was_alive = self.alive[seat]
        self.forfeited.append(seat)
        self.alive[seat] = False
        if log is not None:
            log.append(Forfeited(seat, reason))
        left = [s for s in range(n) if s not in self.forfeited]
        if len(left) == 1:
            totals = tuple(self.score(s) for s in range(n))
            self._end(Outcome((left[0],), totals, tuple(self.round_wins), reason, tuple(self.forfeited)))
        elif seat == self.turn:
            self._advance()
        elif was_alive and self.alive.count(True) == 1:
            self._win_round(self.alive.index(True))
        return log[start:] if log is not None else []

    def resign(self, seat: int) -> list[Fact]:
        """``seat`` gives up the whole game (RULES.md, Resigning): a forfeit with reason
        ``"resigned"``, at any time the seat is still in the game, its turn or not."""
        return self.forfeit(seat, RESIGNED)

    @property
    def untouched(self) -> bool:
        """Whether nobody has moved in this game yet (RULES.md, Aborting).

        True while its recorded facts are round 1's deal and nothing else: no step
        (a play, a discard, a fold, the first step of an open turn, a turn-time
        time-out's fold) and no forfeit (a resign, a game-clock time-out).  A game
        kept without its fact log (``record=False``) or rebuilt from a position text
        cannot tell, and is never untouched.
        """
        log = self.log
        return (
            self.outcome is None
            and log is not None
            and len(log) == 1
            and isinstance(log[0], RoundDealt)
            and log[0].round == 1
        )

    def abort(self) -> list[Fact]:
        """End a game nobody has moved in yet with no winner (RULES.md, Aborting).

        ``GameOver`` with reason ``"aborted"``, no winners, every score and round win 0.
        Raises :class:`IllegalStep` once anyone has moved (:attr:`untouched`), and
        :class:`GameOverError` for a finished game.
        """
        if self.outcome is not None:
            raise GameOverError("the game is over")
        if not self.untouched:
            raise IllegalStep("a turn has been played: only a game nobody has moved in can be aborted")
        n = self.variant.players
        start = len(self.log) if self.log is not None else 0
        self._end(Outcome((), tuple(self.score(s) for s in range(n)), tuple(self.round_wins), ABORTED))
        return self.log[start:] if self.log is not None else []

    def void(self, reason: str) -> list[Fact]:
        """End the game now with no winner (RULES.md, Time, Join deadline: nobody came):
        ``GameOver`` with ``reason``, the scores and round wins as they stand, the seats out
        of the game as they are."""
        if self.outcome is not None:
            raise GameOverError("the game is over")
        n = self.variant.players
        start = len(self.log) if self.log is not None else 0
        totals = tuple(self.score(s) for s in range(n))
        self._end(Outcome((), totals, tuple(self.round_wins), reason, tuple(self.forfeited)))
        return self.log[start:] if self.log is not None else []

    def adjudicate(self, winners: Iterable[int]) -> list[Fact]:
        """End the game now with ``winners`` as an operator decided (RULES.md, Adjudication).

        ``GameOver`` with reason ``"adjudicated"``: the given winners (none, for a game
        adjudicated with no winner), the scores and round wins as they stand, and the
        seats out of the game as they are.  A seat out of the game cannot win, as in play.
        Raises :class:`GameOverError` for a finished game and :class:`IllegalStep` for a
        winner that is no seat, named twice, or out of the game.
        """
        if self.outcome is not None:
            raise GameOverError("the game is over")
        n = self.variant.players
        chosen = tuple(winners)
        for seat in chosen:
            if not 0 <= seat < n:
                raise IllegalStep(f"there is no seat {seat}")
            if seat in self.forfeited:
                raise IllegalStep(f"seat {seat} is out of the game: it cannot win")
        if len(set(chosen)) != len(chosen):
            raise IllegalStep("a winner is named twice")
        start = len(self.log) if self.log is not None else 0
        totals = tuple(self.score(s) for s in range(n))
        self._end(Outcome(tuple(sorted(chosen)), totals, tuple(self.round_wins), ADJUDICATED, tuple(self.forfeited)))
        return self.log[start:] if self.log is not None else []

    def _step(self, code: int, check: bool) -> None:
        if self.outcome is not None:
            raise GameOverError("the game is over")
        kind = code >> 6
        card = code & 63
        seat = self.turn
        actions = self.variant.actions
        log = self.log
        if kind == _FOLD:
            if log is not None:
                log.append(StepApplied(seat, STEPS[code]))
            if self.turn_steps and self.batch_rules >= FOLD_TAKES_BACK:
                if log is not None:
                    log.append(TurnTakenBack(seat, tuple(STEPS[c] for c in self.turn_steps)))
                self._take_back(seat)
            self.turn_steps.append(code)
            self._knock_out(seat, "fold")
            self._advance()
            return
        pending = self.pending
        if check:
            self._check(kind, card, seat, pending)
        self.turn_steps.append(code)
        if log is not None:
            log.append(StepApplied(seat, STEPS[code]))
        bit = 1 << card if card != NO_CARD else 0
        if kind == _P:
            self.hands[seat] ^= bit
            self.pal[seat] |= bit
            self.palc[seat] |= color_bit(card)
            self.acted = True
            if pending == PLAY5:
                self.pending = NONE
            else:
                self.plays_left -= 1
            if actions and card // 7 % 2 == 0:  # numbers 1, 3, 5, 7
                self._trigger(seat, card)
        elif kind == _C:
            self.hands[seat] ^= bit
            self._to_canvas(seat, card)
            self.acted = True
        elif kind == _END:
            self._advance()
        elif kind == _7C:
            self.pal[seat] ^= bit
            self.palc[seat] ^= color_bit(card)
            self.pending = NONE
            self._to_canvas(seat, card)
        elif kind in (_7D, _ONE):
            owner = seat if kind == _7D else self._owner(card)
            assert owner is not None
            if kind == _ONE:
                self.journal.append(owner)
            self.pal[owner] ^= bit
            self.palc[owner] ^= color_bit(card)
            self.deck.append(card)
            self.known |= bit
            self.pending = NONE
        elif kind == _DRAW:
            self.draw_ok = False
            self._draw(seat, "draw")

    def _take_back(self, seat: int) -> None:
        """Undo the steps of ``seat``'s turn so far (batch rules 4: a fold takes them back).

        The steps are undone last first, so the deck, a stack, gets back exactly the
        cards drawn from it (in the order drawn) and loses those put on it; the journal
        says what the steps alone do not: each card drawn (and whether everyone knew
        it) and the owner of each card a 1 took.  Only ``seat``'s hand, the palettes,
        the deck and the Canvas change during a turn, and the rule is always the colour
        of the Canvas's top card (Red before any discard).
        """
        journal, hands, pal, palc = self.journal, self.hands, self.pal, self.palc
        actions = self.variant.actions
        for code in reversed(self.turn_steps):
            kind, card = code >> 6, code & 63
            bit = 1 << card
            if kind == _DRAW:
                self._undraw(seat, journal.pop())
            elif kind == _P:
                if actions and card // 7 == 2:  # a 3: its draw came after it
                    self._undraw(seat, journal.pop())
                hands[seat] |= bit
                pal[seat] &= ~bit
                palc[seat] &= ~color_bit(card)
            elif kind in (_C, _7C):
                self.canvas.pop()
                if kind == _C:
                    hands[seat] |= bit
                else:
                    pal[seat] |= bit
                    palc[seat] |= color_bit(card)
            elif kind in (_7D, _ONE):
                owner = seat if kind == _7D else journal.pop()
                self.deck.pop()
                self.known &= ~bit  # a card off the deck is known to nobody in particular
                pal[owner] |= bit
                palc[owner] |= color_bit(card)
        self.rule = _color(self.canvas[-1]) if self.canvas else Color.RED

    def journal_seen_by(self, seat: int) -> tuple[int, ...]:
        """:attr:`journal` as ``seat`` knows it: another player's unseen draws hidden.

        The mover knows every card it drew; the others only those everyone saw go onto
        the deck.  A game dealt from ``seat``'s observation takes the turn back with it.
        """
        if seat == self.turn:
            return tuple(self.journal)
        out = list(self.journal)
        for i in self._draw_entries():
            if out[i] != NOTHING_DRAWN and not out[i] >> 6:
                out[i] = HIDDEN_DRAW
        return tuple(out)

    def _draw_entries(self) -> list[int]:
        """Where in :attr:`journal` the turn's draws are (the other entries are a 1's owners)."""
        out, i = [], 0
        actions = self.variant.actions
        for code in self.turn_steps:
            kind, card = code >> 6, code & 63
            drew = kind == _DRAW or (kind == _P and actions and card // 7 == 2)
            if drew:
                out.append(i)
            i += drew or kind == _ONE
        return out

    def drawn_this_turn(self) -> list[Card]:
        """The cards the player to move drew this turn, in order (hidden from the others)."""
        entries = (self.journal[i] & 63 for i in self._draw_entries())
        return [ALL_CARDS[c] for c in entries if c < 49]

    def _undraw(self, seat: int, entry: int) -> None:
        """Put a card drawn this turn back on top of the deck (a journal entry, see :meth:`_take_back`)."""
        if entry == NOTHING_DRAWN:
            return
        card = entry & 63
        if card == HIDDEN_DRAW:
            hand = self.hands[seat]
            card = (hand & -hand).bit_length() - 1
        self.hands[seat] &= ~(1 << card)
        self.deck.append(card)
        if entry >> 6:
            self.known |= 1 << card

    def _to_canvas(self, seat: int, card: int) -> None:
        self.canvas.append(card)
        self.rule = _color(card)
        self.canvas_changed = True
        self.draw_ok = self.variant.draw and _number(card) > self.pal[seat].bit_count()

    def _draw(self, seat: int, cause: str) -> None:
        card = self.deck.pop()
        bit = 1 << card
        self.journal.append(card | 64 if self.known & bit else card)
        self.hands[seat] |= bit
        if self.log is not None:
            self.log.append(CardDrawn(seat, ALL_CARDS[card], cause, bool(self.known & bit)))
        self.known &= ~bit

    def _trigger(self, seat: int, card: int) -> None:
        """Start the action of an odd card just played to ``seat``'s palette."""
        number = _number(card)
        if number == 3:
            if self.deck:
                self._draw(seat, "3")
            else:
                self.journal.append(NOTHING_DRAWN)
        elif number == 7:
            if self.pal[seat] & ~(1 << card):
                self.pending = SEVEN
                self.seven_card = card
        elif number == 1:
            if self._one_targets(seat):
                self.pending = ONE
        elif number == 5:
            if self.hands[seat] and any(self._playable(seat, c) for c in _bits(self.hands[seat])):
                self.pending = PLAY5

    def _one_targets(self, seat: int, size: int | None = None) -> int:
        """Mask of the cards a 1 may take: palettes at least as large as the player's.

        ``size``: the player's palette size, if not the one in the game (move search).
        """
        if size is None:
            size = self.pal[seat].bit_count()
        targets = 0
        for s, m in enumerate(self.pal):
            if s != seat and self.alive[s] and m.bit_count() >= size:
                targets |= m
        return targets

    def _playable(self, seat: int, card: int, own: tuple[int, int, int] | None = None) -> bool:
        """Whether ``card`` may be played to the palette now (only a 1 can be barred).

        ``own``: the player's (palette, colour-major palette, hand) if not the game's
        (the move search asks about plays it has not applied).
        """
        if not self.variant.actions or card // 7 != 0:
            return True
        return self._one_keeps_lead_possible(seat, card, own)

    def _one_keeps_lead_possible(self, seat: int, card: int, own: tuple[int, int, int] | None = None) -> bool:
        """RULES.md: a 1 may be played only if some continuation still ends leading.

        After a 1 no further palette play is possible, so the continuation is: the
        1's mandatory take (if any target exists), then an optional discard, then end.
        The player's palette is the same whichever card the 1 takes, and taking a
        card never raises a palette's key under any rule (a subset's qualifying
        cards are never more, nor higher: tested in test_movegen_equivalence).  So
        if the player leads now under a rule it could end under, every take keeps
        that lead: yes at once, which is the common answer.  Otherwise each possible
        take is tried, re-evaluating only the palette it changes.  A rule can only
        help if it is the Canvas rule or the colour of a hand card left to discard.
        """
        pal, palc = self.pal, self.palc
        nm, cm, hand = (pal[seat], palc[seat], self.hands[seat]) if own is None else own
        nm |= 1 << card
        cm |= color_bit(card)
        rules = {self.rule}
        for c in _bits(hand & ~(1 << card)):
            rules.add(_color(c))
        opponents = [s for s in range(len(pal)) if s != seat and self.alive[s]]
        for r in rules:  # one rule at a time: the answer is usually found at the first
            key = KEY_FUNCTIONS[r]
            k = key(nm, cm)
            if k and all(key(pal[s], palc[s]) < k for s in opponents):
                return True
        size = nm.bit_count()
        targets = [s for s in opponents if pal[s].bit_count() >= size]
        mine = all_keys(nm, cm)
        # Without a target nothing is taken, and the player leads under none of the rules.
        keys = {s: all_keys(pal[s], palc[s]) for s in opponents}
        for t in targets:
            # rules under which the player qualifies and every opponent but t is below it
            live = [r for r in rules if mine[r] and all(keys[s][r] < mine[r] for s in opponents if s != t)]
            m, mc = pal[t], palc[t]
            while live and m:
                low = m & -m
                m ^= low
                after = all_keys(pal[t] ^ low, mc ^ color_bit(low.bit_length() - 1))
                for r in live:
                    if after[r] < mine[r]:
                        return True
        return False

    def _check(self, kind: int, card: int, seat: int, pending: int) -> None:
        """Raise IllegalStep unless the step (not fold) is legal now."""
        hands = self.hands[seat]
        name = str(ALL_CARDS[card]) if card != NO_CARD else ""
        if pending == PLAY5 and kind != _P:
            raise IllegalStep("the 5's action comes first: play another card from your hand to your palette")
        if pending == SEVEN and kind not in (_7C, _7D):
            raise IllegalStep(
                f"the {ALL_CARDS[self.seven_card]}'s action comes first: move another card of your palette "
                "to the Canvas (7c:) or to the deck (7d:)"
            )
        if pending == ONE and kind != _ONE:
            raise IllegalStep("the 1's action comes first: move a card from another player's palette to the deck (1:)")
        if kind == _P:
            if not hands >> card & 1:
                raise IllegalStep(f"{name} is not in your hand")
            if self.canvas_changed:
                raise IllegalStep("you cannot play to your palette after changing the Canvas")
            if pending != PLAY5 and self.plays_left <= 0:
                raise IllegalStep("you have already played a card to your palette this turn")
            if not self._playable(seat, card):
                raise IllegalStep(f"you may not play {name}: no way to finish this turn leading after its action")
        elif kind == _C:
            if not hands >> card & 1:
                raise IllegalStep(f"{name} is not in your hand")
            if self.canvas_changed:
                raise IllegalStep("you have already changed the Canvas this turn")
        elif kind == _END:
            if not self.acted:
                raise IllegalStep("you must play or discard a card before ending your turn (or fold)")
            if not self._leads(seat):
                raise IllegalStep(f"you would not lead under {Color(self.rule).title}")
        elif kind in (_7C, _7D):
            if pending != SEVEN:
                raise IllegalStep(f"{STEPS[kind * 64 + card]} is only possible as the action of a 7 you just played")
            if not self.pal[seat] >> card & 1:
                raise IllegalStep(f"{name} is not in your palette")
            if card == self.seven_card:
                raise IllegalStep(f"the {name} must move another card, not itself")
        elif kind == _ONE:
            if pending != ONE:
                raise IllegalStep(f"1:{name} is only possible as the action of a 1 you just played")
            owner = self._owner(card)
            if owner is None or owner == seat or not self.alive[owner]:
                raise IllegalStep(f"{name} is not in another player's palette")
            if not self._one_targets(seat) >> card & 1:
                raise IllegalStep(f"{name} is in a palette with fewer cards than yours")
        elif kind == _DRAW:
            if not self.variant.draw:
                raise IllegalStep("draw is only allowed in the Advanced draw variant")
            if not self.draw_ok:
                raise IllegalStep(
                    "you may draw only once, after discarding to the Canvas a card numbered higher "
                    "than the number of cards in your palette"
                )
            if not self.deck:
                raise IllegalStep("the draw deck is empty")
        else:  # pragma: no cover - codes come from Step
            raise IllegalStep(f"unknown step code {kind * 64 + card}")

    def _knock_out(self, seat: int, reason: str) -> None:
        self.alive[seat] = False
        if self.log is not None:
            self.log.append(PlayerOut(seat, reason))

    def _advance(self) -> None:
        """Pass the turn on: skip players who are out, knock out empty hands, end the round."""
        n = self.variant.players
        seat = self.turn
        alive = self.alive
        while True:
            remaining = alive.count(True)
            if remaining == 1:
                self._win_round(alive.index(True))
                return
            seat = (seat + 1) % n
            while not alive[seat]:
                seat = (seat + 1) % n
            if not self.hands[seat]:
                self._knock_out(seat, "empty-hand")
                continue
            self._start_turn(seat)
            return

    def _win_round(self, seat: int) -> None:
        variant = self.variant
        taken = qualifying_mask(self.rule, self.pal[seat]) if variant.scoring else 0
        # Fix: the scored cards leave the winner's palette (RULES.md, Advanced game: the
        # winner *takes* them and they leave the game).  Without this, after the last
        # round they stayed in the palette as well as in the score pile (held twice).
        self.pal[seat] &= ~taken
        for card in cards_of_mask(taken):
            self.palc[seat] ^= color_bit(card)
        self.scores[seat] |= taken
        self.removed |= taken
        self.round_wins[seat] += 1
        if self.log is not None:
            self.log.append(RoundWon(self.round, seat, Color(self.rule), cards_of_mask(taken)))
        totals = [self.score(s) for s in range(variant.players)]
        reason = None
        if not variant.scoring:
            if self.round_wins[seat] >= variant.rounds:
                reason = "rounds"
        elif max(totals) >= variant.target_score:
            reason = "target"
        elif 49 - self.removed.bit_count() < 8 * variant.players:
            reason = "deck"
        if reason is None:
            self._deal(self.round + 1)
            return
        if variant.scoring:
            # a seat out of the game cannot win (RULES.md, Time): it competes with nothing
            contenders = [-1 if s in self.forfeited else t for s, t in enumerate(totals)]
            wins = [-1 if s in self.forfeited else w for s, w in enumerate(self.round_wins)]
            winners = match_winners(contenders, wins)
        else:
            winners = (seat,)
        self._end(Outcome(winners, tuple(totals), tuple(self.round_wins), reason, tuple(self.forfeited)))

    def _end(self, outcome: Outcome) -> None:
        """The game is over with ``outcome``."""
        self.outcome = outcome
        self.turn = -1
        self.turn_steps = []
        self.journal = []
        self.pending = NONE
        if self.log is not None:
            self.log.append(GameOver(self.outcome))

    # ------------------------------------------------------------------ move generation

    def draws_unseen(self, code: int) -> bool:
        """Whether step ``code``, taken now, makes a 3 draw a card nobody has seen.

        After it the rest of the turn depends on that card, so a turn ends *open*
        there: whoever does not know the card cannot plan past it.
        """
        deck = self.deck
        return (
            self.variant.actions
            and code >> 6 == _P
            and (code & 63) // 7 == 2
            and bool(deck)
            and not self.known >> deck[-1] & 1
        )

    def legal_steps(self) -> list[Step]:
        """Every step the player to move may take next (``fold`` is always one)."""
        if self.outcome is not None:
            return []
        return [STEPS[c] for c in self._legal_step_codes()]

    def _legal_step_codes(self) -> list[int]:
        seat = self.turn
        pending = self.pending
        out: list[int] = []
        if pending == SEVEN:
            for c in _bits(self.pal[seat] & ~(1 << self.seven_card)):
                out.append(_7C * 64 + c)
                out.append(_7D * 64 + c)
        elif pending == ONE:
            out.extend(_ONE * 64 + c for c in _bits(self._one_targets(seat)))
        elif pending == PLAY5:
            out.extend(_P * 64 + c for c in _bits(self.hands[seat]) if self._playable(seat, c))
        else:
            hand = self.hands[seat]
            if not self.canvas_changed:
                if self.plays_left > 0:
                    out.extend(_P * 64 + c for c in _bits(hand) if self._playable(seat, c))
                out.extend(_C * 64 + c for c in _bits(hand))
            if self.draw_ok and self.deck:
                out.append(DRAW)
            if self.acted and self._leads(seat):
                out.append(END)
        out.append(FOLD)
        return out

    def legal_turns(self) -> list[Turn]:
        """Every legal way to finish the current turn, as :class:`Turn` batches.

        Each turn ends leading (``end`` implied), or is ``fold``.  Where a 3 makes
        the player draw a card nobody has seen, the turn stops there and is open
        (``p:G3 ...``): what follows depends on the card drawn.
        """
        return [Turn(tuple(STEPS[c] for c in codes), is_open) for codes, is_open in self.legal_turn_codes()]

    def legal_turn_codes(self) -> list[tuple[tuple[int, ...], bool]]:
        """:meth:`legal_turns` as (step codes, open) pairs, for fast simulations."""
        if self.outcome is not None:
            return []
        out: list[tuple[tuple[int, ...], bool]] = []
        if not self.turn_steps and (not self.variant.actions):
            self._fast_turns(out)
        else:
            self._search_turns((), out)
        out.append(((FOLD,), False))
        return out

    def _fast_turns(self, out: list[tuple[tuple[int, ...], bool]]) -> None:
        """Turns at the start of a turn without actions: play, discard, or both.

        Listed in the same order as the step-by-step search (plays by card, each
        followed by its discards, the draw before the plain discard, then the play
        alone; then the discards alone), since bots break ties by that order.
        """
        seat = self.turn
        rule = self.rule
        best = self._opponent_best(seat)
        draw = self.variant.draw and bool(self.deck)
        cards = _bits(self.hands[seat])
        my_nm, my_cm = self.pal[seat], self.palc[seat]
        prefix: tuple[int, ...]
        for x in [*cards, -1]:
            if x < 0:
                nm, cm, prefix = my_nm, my_cm, ()
            else:
                nm, cm, prefix = my_nm | 1 << x, my_cm | color_bit(x), (_P * 64 + x,)
            keys = all_keys(nm, cm)
            size = nm.bit_count()
            for y in cards:
                if y == x:
                    continue
                r = 6 - y % 7
                if keys[r] > best[r]:
                    turn = prefix + (_C * 64 + y,)
                    if draw and y // 7 + 1 > size:
                        out.append((turn + (DRAW,), False))
                    out.append((turn, False))
            if x >= 0 and keys[rule] > best[rule]:
                out.append((prefix, False))

    def _search_turns(self, prefix: tuple[int, ...], out: list[tuple[tuple[int, ...], bool]]) -> None:
        """Every way to finish the turn from here (used with actions or mid-turn).

        Gives exactly the turns of :meth:`_search_turns_reference`, in the same order
        (bots break ties by that order), but much faster.  The reference applies
        every step and snapshots the whole game for each; yet nearly all of its nodes
        are the *tail* of a turn, where only a discard, a draw and ``end`` are left,
        and a tail depends on nothing but a few masks.  So tails are enumerated in
        closed form (:meth:`_tail_turns`) -- after a play without an action, after a
        3's draw of a known card, after a 7's or a 1's action, and for a turn that
        only discards -- and plays in closed form too (:meth:`_play_turns`), so the
        search never changes the game.  States play never reaches (the draw open
        while the Canvas is unchanged, or palette plays left after the next one)
        are left to the reference search.  The opponents' best keys are computed
        once per search, and again for each card a 1 may take.
        """
        seat = self.turn
        pending = self.pending
        changed = self.canvas_changed
        draw_ok = self.draw_ok
        # After this node's play (or owed action) a palette play would still be left.
        plays_follow = self.plays_left > (1 if pending == NONE else 0)
        if not changed and (draw_ok or plays_follow):
            # Only a change of the Canvas opens the draw, and a turn has one palette
            # play: play never gets here, and the closed forms below assume it.
            self._search_turns_reference(prefix, out)
            return
        opp = self._opponent_best(seat)
        nm, cm, hand = self.pal[seat], self.palc[seat], self.hands[seat]
        rule, acted, has_deck = self.rule, self.acted, bool(self.deck)
        if pending == NONE and (changed or self.plays_left <= 0):
            # the palette play is over (or the Canvas changed): only the tail is left
            self._tail_turns(prefix, out, nm, cm, hand, rule, changed, draw_ok, acted, has_deck, opp)
            return
        if pending == SEVEN:
            self._seven_turns(prefix, out, nm, cm, hand, self.seven_card, rule, changed, draw_ok, acted, has_deck, opp)
            return
        if pending == ONE:
            targets = self._one_targets(seat)
            self._one_turns(prefix, out, nm, cm, hand, rule, changed, draw_ok, acted, targets)
            return
        # The palette play: the 5's follow-up play (PLAY5), or the turn's play (NONE).
        self._play_turns(prefix, out, nm, cm, hand, rule, changed, draw_ok, has_deck, opp)
        if pending == NONE:
            # no play: the discards (the Canvas is unchanged here), then end
            self._tail_turns(prefix, out, nm, cm, hand, rule, False, False, acted, has_deck, opp)

    def _play_turns(
        self,
        prefix: tuple[int, ...],
        out: list[tuple[tuple[int, ...], bool]],
        nm: int,
        cm: int,
        hand: int,
        rule: int,
        changed: bool,
        draw_ok: bool,
        has_deck: bool,
        opp: tuple[int, ...],
    ) -> None:
        """Each legal play to the palette from ``hand``, then the rest of the turn.

        The game is as before these plays but for the player's palette (``nm``,
        ``cm``) and ``hand``: only cards moved from hand to palette, by a 5 and the
        play it allows, which is all that :meth:`_playable` needs to know.  After
        each play no further play is allowed (unless it is a 5), so what follows is
        the play's action, if any, then the tail.  Cards in card order, as the
        reference search.
        """
        seat = self.turn
        actions = self.variant.actions
        deck = self.deck
        for x in _bits(hand):
            if actions and x < 7 and not self._one_keeps_lead_possible(seat, x, (nm, cm, hand)):
                continue  # a 1 after which the player cannot end leading
            number = x // 7 + 1
            seq = (*prefix, _P * 64 + x)
            nm2, cm2, hand2 = nm | 1 << x, cm | color_bit(x), hand ^ 1 << x
            if not actions or number % 2 == 0 or (number == 3 and not has_deck) or (number == 7 and not nm):
                # no action (or nothing for it to act on): the play only moves x to the palette
                self._tail_turns(seq, out, nm2, cm2, hand2, rule, changed, draw_ok, True, has_deck, opp)
            elif number == 3:
                top = deck[-1]
                if not self.known >> top & 1:
                    out.append((seq, True))  # the 3 draws a card nobody has seen: the turn stays open
                else:  # the 3 draws a card put on the deck face up: the player may use it
                    self._tail_turns(
                        seq, out, nm2, cm2, hand2 | 1 << top, rule, changed, draw_ok, True, len(deck) > 1, opp
                    )
            elif number == 7:
                self._seven_turns(seq, out, nm2, cm2, hand2, x, rule, changed, draw_ok, True, has_deck, opp)
            elif number == 1:
                targets = self._one_targets(seat, nm2.bit_count())
                if targets:
                    self._one_turns(seq, out, nm2, cm2, hand2, rule, changed, draw_ok, True, targets)
                else:  # nobody to take from: no action
                    self._tail_turns(seq, out, nm2, cm2, hand2, rule, changed, draw_ok, True, has_deck, opp)
            elif any(self._playable(seat, c, (nm2, cm2, hand2)) for c in _bits(hand2)):
                # a 5: another play follows (the 5 has not touched the deck)
                self._play_turns(seq, out, nm2, cm2, hand2, rule, changed, draw_ok, has_deck, opp)
            else:  # a 5 with nothing playable left in hand: no action
                self._tail_turns(seq, out, nm2, cm2, hand2, rule, changed, draw_ok, True, has_deck, opp)

    def _one_turns(
        self,
        prefix: tuple[int, ...],
        out: list[tuple[tuple[int, ...], bool]],
        nm: int,
        cm: int,
        hand: int,
        rule: int,
        changed: bool,
        draw_ok: bool,
        acted: bool,
        targets: int,
    ) -> None:
        """The turns after a 1 (already in the palette ``nm``) acts: ``1:`` each target card.

        The card leaves an opponent's palette for the deck (which then has a card),
        so the opponents' best keys are those without it; then only the tail is left.
        """
        for c in _bits(targets):
            taken = self._opponent_best(self.turn, c)
            self._tail_turns((*prefix, _ONE * 64 + c), out, nm, cm, hand, rule, changed, draw_ok, acted, True, taken)

    def _seven_turns(
        self,
        prefix: tuple[int, ...],
        out: list[tuple[tuple[int, ...], bool]],
        nm: int,
        cm: int,
        hand: int,
        seven: int,
        rule: int,
        changed: bool,
        draw_ok: bool,
        acted: bool,
        has_deck: bool,
        opp: tuple[int, ...],
    ) -> None:
        """The turns after a 7 (card ``seven``, already in the palette ``nm``) acts.

        For each other palette card, in card order as the reference search: ``7c:``
        (the card becomes the rule and the Canvas has changed, so the draw is open
        as after a discard), then ``7d:`` (the card goes onto the deck, which then
        has a card; a discard may still follow).
        """
        draw = self.variant.draw
        for c in _bits(nm & ~(1 << seven)):
            rest, restc = nm ^ 1 << c, cm ^ color_bit(c)
            self._tail_turns(
                (*prefix, _7C * 64 + c),
                out,
                rest,
                restc,
                hand,
                6 - c % 7,
                True,
                draw and c // 7 + 1 > rest.bit_count(),
                acted,
                has_deck,
                opp,
            )
            self._tail_turns((*prefix, _7D * 64 + c), out, rest, restc, hand, rule, changed, draw_ok, acted, True, opp)

    def _tail_turns(
        self,
        prefix: tuple[int, ...],
        out: list[tuple[tuple[int, ...], bool]],
        nm: int,
        cm: int,
        hand: int,
        rule: int,
        changed: bool,
        draw_ok: bool,
        acted: bool,
        has_deck: bool,
        opp: tuple[int, ...],
    ) -> None:
        """The rest of a turn with no play or action left: [discard [draw]] end.

        The state is given as the player's palette masks and hand, the rule, whether
        the Canvas changed, whether the draw is open, whether the player acted and
        whether the deck has a card.  Order as in the reference search: each discard
        after which the player leads (its draw first, when the discard opens one),
        then ``end`` if the player leads now.  Leading is :meth:`_leads`: a nonzero
        key at least as high as each opponent's best (``opp``).  A draw changes only
        the hand, never who leads, and nothing but ``end`` may follow it.
        """
        if changed:  # only the rule in force matters
            k = KEY_FUNCTIONS[rule](nm, cm)
            if acted and k and k >= opp[rule]:
                if draw_ok and has_deck:
                    out.append(((*prefix, DRAW), False))
                out.append((prefix, False))
            return
        keys = all_keys(nm, cm)
        draw = self.variant.draw and has_deck
        size = nm.bit_count()
        while hand:
            low = hand & -hand
            y = low.bit_length() - 1
            hand ^= low
            r = 6 - y % 7
            k = keys[r]
            if k and k >= opp[r]:
                turn = (*prefix, _C * 64 + y)
                if draw and y // 7 + 1 > size:
                    out.append(((*turn, DRAW), False))
                out.append((turn, False))
        k = keys[rule]
        if acted and k and k >= opp[rule]:
            out.append((prefix, False))

    def _opponent_best(self, seat: int, taken: int = NO_CARD) -> tuple[int, ...]:
        """:func:`~red7es.rules.rival_keys` of ``seat``.

        ``taken``: as if that card had left its owner's palette (a 1's action).
        """
        pal = self.pal if taken == NO_CARD else [nm & ~(1 << taken) for nm in self.pal]
        return rival_keys(pal, self.alive, seat)

    def _search_turns_reference(self, prefix: tuple[int, ...], out: list[tuple[tuple[int, ...], bool]]) -> None:
        """The straightforward depth-first search over steps that :meth:`_search_turns` replaces.

        Applies every legal step with a snapshot of the whole game.  Kept as the
        definition of what the fast search must give (tests compare them), and for
        states outside the fast search's assumptions.
        """
        codes = self._legal_step_codes()
        for code in codes:
            if code == FOLD:
                continue
            if code == END:
                out.append((prefix, False))
                continue
            snap = self._save()
            log = self.log
            self.log = None
            opens = self.draws_unseen(code)
            try:
                self._step(code, False)
                seq = prefix + (code,)
                if opens:
                    out.append((seq, True))
                else:
                    self._search_turns_reference(seq, out)
            finally:
                self.log = log
                self._restore(snap)

    # ------------------------------------------------------------------ views

    def observation(self, seat: int, *, history: bool = True) -> Observation:
        """What ``seat`` may see now, and nothing else (RULES.md, Hidden information).

        ``history`` adds the round's turns so far (:mod:`red7es.history`), which every
        player saw played; views that do not show them can skip the replay it costs.
        """
        from .observation import observe

        return observe(self, seat, history=history)

    # ------------------------------------------------------------------ positions

    def position(self) -> str:
        """The whole state in one line of text (docs/positions.md); :meth:`from_position` reads it."""
        from .position import game_position

        return game_position(self)

    def view_position(self, seat: int | None) -> str:
        """What ``seat`` (None: a spectator) may see, in the same notation, hidden cards as ``?``."""
        from .position import view_position

        return view_position(self, seat)

    @classmethod
    def from_position(cls, text: str, seed: bytes | str | None = None) -> Game:
        """The game a position text describes (:class:`~red7es.position.PositionError` if none).

        ``seed`` deals the rounds after this one (random if not given).
        """
        from .position import read_position

        return read_position(text, seed)

    def __str__(self) -> str:
        state = "over" if self.outcome else f"seat {self.turn} to move"
        return f"<Game {self.variant.describe()}, round {self.round}, {state}>"

    def __repr__(self) -> str:
        """``Game.from_position('red7/1 ...')``, as python-chess's ``Board('<fen>')``: a failing
        test's assertion shows the whole position in one line, ready to load again."""
        return f"Game.from_position({self.position()!r})"


def replay(variant: Variant, seed: bytes | str, turns: Iterable[str | Turn], batch_rules: int = BATCH_RULES) -> Game:
    """A game rebuilt from its seed and the turns played, in order (under ``batch_rules``)."""
    game = Game.new(variant, seed=seed, batch_rules=batch_rules)
    for turn in turns:
        game.apply(turn)
    return game


__all__ += ["replay"]
