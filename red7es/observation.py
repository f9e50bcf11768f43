"""What one player may see, and games consistent with it.

RULES.md, *Hidden information*: a player sees their own hand; every palette of the
players still in the round; the Canvas; the number of cards in the deck and in each
hand; every score pile; and any card an action put on top of the deck.  Nothing else.
:func:`observe` builds exactly that, and every view (bots, CLI, service) is built
from an :class:`Observation`.

:func:`determinize` deals the unseen cards at random into a full :class:`Game`
consistent with an observation: bots use it to search, and the observation uses it to
list the legal turns (which never depend on the hidden cards).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .cards import ALL_CARDS, FULL_DECK_MASK, Card, Color, cards_of_mask, color_mask_of, mask_of
from .facts import Outcome
from .game import BATCH_RULES, Game, Pending
from .history import PastTurn, round_history
from .steps import STEPS, Step, Turn
from .variant import Variant

__all__ = ["Dealer", "Observation", "SeatView", "determinize", "observe", "seat_world"]


@dataclass(frozen=True)
class SeatView:
    """The public face of one seat."""

    seat: int
    in_round: bool
    hand_size: int
    palette: tuple[Card, ...] | None  # None once the seat is out (face down)
    score_pile: tuple[Card, ...]
    round_wins: int

    @property
    def score(self) -> int:
        return sum(c.number for c in self.score_pile)


@dataclass(frozen=True)
class Observation:
    """Everything ``seat`` may see at one moment of a game."""

    seat: int
    variant: Variant
    round: int
    to_move: int | None
    rule: Color
    canvas: tuple[Card, ...]
    hand: tuple[Card, ...]
    seats: tuple[SeatView, ...]
    deck_size: int
    deck_known: tuple[tuple[int, Card], ...]  # (depth from the top, 0 = top card; card)
    turn_steps: tuple[Step, ...]
    plays_left: int
    acted: bool
    canvas_changed: bool
    pending: int
    seven_card: Card | None
    draw_ok: bool
    outcome: Outcome | None
    history: tuple[PastTurn, ...] = ()  # the round's finished turns (red7es.history)
    batch_rules: int = BATCH_RULES  # the referee's rules the game is played under
    # What taking the turn so far back needs (Game.journal_seen_by): empty at a turn's start.
    turn_journal: tuple[int, ...] = ()

    @property
    def my_turn(self) -> bool:
        return self.to_move == self.seat

    @property
    def leader(self) -> int | None:
        """The seat leading under the Canvas rule (computable from public cards)."""
        from .rules import leader_of_masks

        live = [v for v in self.seats if v.palette is not None]
        nms = [mask_of(v.palette or ()) for v in live]
        i = leader_of_masks(self.rule, nms, [color_mask_of(m) for m in nms])
        return None if i is None else live[i].seat

    @property
    def pending_text(self) -> str | None:
        return None if self.pending == Pending.NONE else Pending.NAMES[self.pending]

    def legal_steps(self) -> list[Step]:
        """The steps this player may take next; empty when it is not their turn."""
        if not self.my_turn:
            return []
        return determinize(self, None).legal_steps()

    def legal_turns(self) -> list[Turn]:
        """The whole turns this player may take; empty when it is not their turn."""
        if not self.my_turn:
            return []
        return determinize(self, None).legal_turns()

    def position(self) -> str:
        """This view in one line of text (docs/positions.md), the cards hidden from this seat as ``?``."""
        return determinize(self, None).view_position(self.seat)

    def check(self, turn: str | Turn) -> str | None:
        """Why ``turn`` would be rejected now, or None if it is legal.

        Steps are tried one by one on a game consistent with this observation. After
        a 3 draws a card nobody has seen, what follows depends on that card, which
        the observation does not know: the rest of the turn is not judged here.
        """
        from .game import IllegalStep

        if not self.my_turn:
            return "it is not your turn"
        game = determinize(self, None)
        parsed = Turn.parse(turn)
        try:
            for step in parsed.steps:
                draws_unseen = game.draws_unseen(int(step))
                game.push(step)
                if draws_unseen:
                    return None
            if not parsed.open and not parsed.is_fold:
                game.push("end")
        except IllegalStep as exc:
            return str(exc)
        return None


def observe(game: Game, seat: int, *, history: bool = True) -> Observation:
    """What ``seat`` sees now; with ``history``, also the round's turns so far.

    The history costs a replay of the round (a fraction of a millisecond): views
    that do not show it leave it out.
    """
    if not 0 <= seat < game.variant.players:
        raise ValueError(f"no seat {seat} in a {game.variant.players}-player game")
    deck = game.deck
    depth = len(deck) - 1
    known = tuple((depth - i, ALL_CARDS[c]) for i, c in enumerate(deck) if game.known >> c & 1)
    seats = tuple(
        SeatView(
            s,
            game.alive[s],
            game.hands[s].bit_count(),
            cards_of_mask(game.pal[s]) if game.alive[s] else None,
            cards_of_mask(game.scores[s]),
            game.round_wins[s],
        )
        for s in range(game.variant.players)
    )
    return Observation(
        seat=seat,
        variant=game.variant,
        round=game.round,
        to_move=None if game.outcome else game.turn,
        rule=Color(game.rule),
        canvas=tuple(ALL_CARDS[c] for c in game.canvas),
        hand=cards_of_mask(game.hands[seat]),
        seats=seats,
        deck_size=len(deck),
        deck_known=tuple(sorted(known)),
        turn_steps=tuple(STEPS[c] for c in game.turn_steps),
        plays_left=game.plays_left,
        acted=game.acted,
        canvas_changed=game.canvas_changed,
        pending=game.pending,
        seven_card=ALL_CARDS[game.seven_card] if game.seven_card < 49 else None,
        draw_ok=game.draw_ok,
        outcome=game.outcome,
        history=round_history(game) if history else (),
        batch_rules=game.batch_rules,
        turn_journal=game.journal_seen_by(seat) if game.turn_steps else (),
    )


def seat_world(game: Game, seat: int) -> Game:
    """``determinize(observe(game, seat, history=False), None)``, without building either.

    The game ``seat`` may reason about: everything it sees, and the cards hidden from it
    (the other hands, the unknown deck places, a face-down palette) filled in the fixed
    order :func:`determinize` uses without a random source.  It holds no card ``seat``
    cannot see where it lies, so a bot deciding on it decides from its observation alone;
    built straight from the game's masks, it costs a fraction of the observation and the
    deal (bots that never read hidden cards, ``random`` and ``greedy``, are asked with
    it: :func:`red7es.bots.base.decide`).  tests/engine/test_seat_world.py checks that it
    is the very game ``determinize`` deals, field by field.
    """
    n = game.variant.players
    if not 0 <= seat < n:
        raise ValueError(f"no seat {seat} in a {n}-player game")
    alive = game.alive
    deck = game.deck
    hand = game.hands[seat]
    seen = hand
    for c in game.canvas:
        seen |= 1 << c
    removed = 0
    for m in game.scores:
        removed |= m
    seen |= removed
    pal = [0] * n
    palc = [0] * n
    for s in range(n):
        if alive[s]:
            pal[s] = game.pal[s]
            palc[s] = game.palc[s]
            seen |= pal[s]
    size = len(deck)
    known = 0
    known_at: dict[int, int] = {}
    if game.known:
        known_mask = game.known
        for i, c in enumerate(deck):
            if known_mask >> c & 1:
                known |= 1 << c
                known_at[size - 1 - i] = c
        seen |= known
    rest = FULL_DECK_MASK & ~seen
    pool = [c for c in _CARD_IDS if rest >> c & 1]  # weakest first, as unseen_cards
    hands = [0] * n
    hands[seat] = hand
    at = 0
    for s in range(n):
        if s != seat:
            take = game.hands[s].bit_count()
            h = 0
            for c in pool[at : at + take]:
                h |= 1 << c
            hands[s] = h
            at += take
    del pool[:at]
    # the deck, top first, takes the unknown places from the end of the pool (Dealer.deal);
    # stored bottom first, so without known cards it is the pool's last ``size`` cards as they lie
    if known_at:
        top_first = [known_at[d] if d in known_at else pool.pop() for d in range(size)]
        top_first.reverse()
        new_deck = top_first
    else:
        cut = len(pool) - size
        new_deck = pool[cut:]
        del pool[cut:]
    if pool:
        out_seat = next((s for s in range(n) if not alive[s]), None)
        if out_seat is None:
            raise ValueError("game is inconsistent: cards unaccounted for")
        pal[out_seat] |= mask_of(pool)
        palc[out_seat] = color_mask_of(pal[out_seat])
    world = Game.__new__(Game)
    world.variant = game.variant
    world.batch_rules = game.batch_rules
    world.seed = bytes(32)
    world.log = None
    world._stack = []
    # every field _restore sets, each a fresh list where the game's is one
    world.round = game.round
    world.hands, world.pal, world.palc, world.alive, world.deck = hands, pal, palc, alive[:], new_deck
    world.known = known
    world.canvas = game.canvas[:]
    world.rule = int(game.rule)
    world.scores = game.scores[:]
    world.round_wins = game.round_wins[:]
    world.removed = removed
    world.turn = game.turn if game.outcome is None else -1
    world.plays_left = game.plays_left
    world.acted = game.acted
    world.canvas_changed = game.canvas_changed
    world.pending = game.pending
    world.seven_card = game.seven_card if game.seven_card < 49 else 63
    world.draw_ok = game.draw_ok
    world.turn_steps = game.turn_steps[:]
    world.journal = list(game.journal_seen_by(seat)) if game.turn_steps else []
    world.outcome = game.outcome
    world.forfeited = game.forfeited[:]  # public: who is out of the game for good
    return world


_CARD_IDS = range(49)


def unseen_cards(obs: Observation) -> list[int]:
    """Cards this player cannot see anywhere, weakest first."""
    seen = mask_of(obs.hand) | mask_of(obs.canvas) | mask_of(c for _, c in obs.deck_known)
    for view in obs.seats:
        seen |= mask_of(view.score_pile)
        if view.palette is not None:
            seen |= mask_of(view.palette)
    rest = FULL_DECK_MASK & ~seen
    return list(cards_of_mask(rest))


def determinize(
    obs: Observation, rng: random.Random | None, weights: Mapping[int, Sequence[float]] | None = None
) -> Game:
    """A full game consistent with ``obs``: unseen cards dealt at random.

    Other players' hands, the unknown deck positions and the face-down cards of
    players who are out are filled from the unseen cards; the seed for later rounds
    is random too.  The result is for searching and checking, never for the record.
    With ``rng=None`` the unseen cards are dealt in a fixed order (cheaper, for
    callers that only look at the player's own options).

    ``weights`` maps a seat to a weight per card (index 0–48, all positive): that
    seat's hand is drawn from the unseen cards with probabilities in proportion
    (weighted sampling without replacement), so a bot can deal the hands its
    reading of the game finds likely (:mod:`red7es.bots.inference`).  With weights,
    the order of the deck, and which leftover cards are an out player's face-down
    palette, are random only where the variant reads them (the deck's order, in a
    variant that draws); elsewhere nothing can tell them apart.

    A search that deals many worlds from one observation keeps a :class:`Dealer`.
    """
    return Dealer(obs, weights).deal(rng)


class Dealer:
    """Deals games consistent with one observation, as many as a search wants.

    Everything that does not depend on the deal (palettes, Canvas, scores, the turn
    so far, the player's own hand, the unseen cards) is worked out once; each
    :meth:`deal` only shuffles the unseen cards into the hidden places.  ``weights``
    are as for :func:`determinize`.
    """

    def __init__(self, obs: Observation, weights: Mapping[int, Sequence[float]] | None = None) -> None:
        self.variant = obs.variant
        self.unseen = unseen_cards(obs)
        self.others = [(v.seat, v.hand_size) for v in obs.seats if v.seat != obs.seat]
        weights = dict(weights or {})
        if weights:
            # A weighted deal leaves the pool in that seat's order, the cards it found likely
            # first: a seat dealt next from it would get those.  So every hidden hand is dealt
            # by weight once any is, the others with equal weights (a random order of their own).
            for seat, _ in self.others:
                weights.setdefault(seat, [1.0] * 49)
        # weighted sampling key of card c is log(u) / w[c] (_weighted_first): keep 1 / w[c]
        self.exponents = {seat: [1.0 / x for x in w] for seat, w in weights.items()}
        self.deck_size = obs.deck_size
        self.known_at = {d: int(card) for d, card in obs.deck_known}  # depth from the top -> card
        self.out_seat = next((v.seat for v in obs.seats if not v.in_round), None)
        # A weighted order is random by itself, so a weighted deal needs no shuffle first.
        # Only a variant that draws (the Advanced draw, a 3's action) ever reads the deck's
        # order, so only then is what is left for the deck shuffled again.
        self.deck_order_read = obs.variant.draw or obs.variant.actions
        self.batch_rules = obs.batch_rules
        game = Game._blank(obs.variant, None, record=False, batch_rules=obs.batch_rules)
        game.round = obs.round
        game.alive = [v.in_round for v in obs.seats]
        game.scores = [mask_of(v.score_pile) for v in obs.seats]
        for m in game.scores:
            game.removed |= m
        game.round_wins = [v.round_wins for v in obs.seats]
        game.hands[obs.seat] = mask_of(obs.hand)
        for view in obs.seats:
            if view.palette is not None:
                game.pal[view.seat] = mask_of(view.palette)
                game.palc[view.seat] = color_mask_of(game.pal[view.seat])
        game.known = mask_of(c for _, c in obs.deck_known)
        game.canvas = [int(c) for c in obs.canvas]
        game.rule = int(obs.rule)
        game.turn = obs.to_move if obs.to_move is not None else -1
        game.plays_left = obs.plays_left
        game.acted = obs.acted
        game.canvas_changed = obs.canvas_changed
        game.pending = obs.pending
        game.seven_card = int(obs.seven_card) if obs.seven_card is not None else 63
        game.draw_ok = obs.draw_ok
        game.turn_steps = [int(s) for s in obs.turn_steps]
        game.journal = list(obs.turn_journal)
        game.outcome = obs.outcome
        self._fixed = game._save()

    def deal(self, rng: random.Random | None) -> Game:
        """One world: see :func:`determinize`."""
        pool = self.unseen[:]
        if rng is not None and not self.exponents:
            rng.shuffle(pool)
        game = Game.__new__(Game)
        game.variant = self.variant
        game.batch_rules = self.batch_rules
        game.seed = rng.getrandbits(256).to_bytes(32, "big") if rng is not None else bytes(32)
        game.log = None
        game._stack = []
        game._restore(self._fixed)
        hands = game.hands
        exponents = self.exponents if rng is not None else {}
        for seat, size in self.others:
            if seat in exponents:
                pool = _weighted_first(pool, exponents[seat], rng)  # type: ignore[arg-type]
            hand = 0
            for card in pool[:size]:
                hand |= 1 << card
            hands[seat] = hand
            del pool[:size]
        if exponents and rng is not None and self.deck_order_read:
            # A weighted order leaves the cards it found unlikely in a hand at the end of
            # the pool, which would put them on top of the deck; the reading says
            # nothing about the deck, so what is left is shuffled again.
            rng.shuffle(pool)
        known_at = self.known_at
        top_first = [known_at[d] if d in known_at else pool.pop() for d in range(self.deck_size)]
        if pool:
            if self.out_seat is None:
                raise ValueError("observation is inconsistent: cards unaccounted for")
            game.pal[self.out_seat] |= mask_of(pool)
            game.palc[self.out_seat] = color_mask_of(game.pal[self.out_seat])
        top_first.reverse()
        game.deck = top_first  # the top of the deck is the end of the list
        return game


def _weighted_first(pool: list[int], exponents: Sequence[float], rng: random.Random) -> list[int]:
    """``pool`` reordered so that every prefix is a weighted sample without replacement.

    Efraimidis & Spirakis (2006): each card gets the key ``u ** (1 / w)`` for a
    uniform ``u`` (``exponents`` holds ``1 / w`` per card), and the largest keys
    come first.  The keys are taken as their logarithms, ``log(u) / w``, which order
    the cards the same way: ``u ** 1e9`` (a card all but ruled out) is 0.0 for nearly
    every ``u``, so such cards would tie and keep the pool's order, but their
    logarithms do not tie, and the order is random without shuffling the pool first.
    """
    rand, log = rng.random, math.log
    return sorted(pool, key=lambda c: log(1.0 - rand()) * exponents[c], reverse=True)
