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

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .cards import ALL_CARDS, FULL_DECK_MASK, Card, Color, cards_of_mask, color_mask_of, mask_of
from .facts import Outcome
from .game import Game, Pending
from .history import PastTurn, round_history
from .steps import STEPS, Step, StepKind, Turn
from .variant import Variant

__all__ = ["Observation", "SeatView", "determinize", "observe"]


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
                deck = game.deck
                draws_unseen = (
                    game.variant.actions
                    and step.kind == StepKind.PLAY
                    and step.card is not None
                    and step.card.number == 3
                    and bool(deck)
                    and not game.known >> deck[-1] & 1
                )
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
    )


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
    reading of the game finds likely (:mod:`red7es.bots.inference`).
    """
    pool = unseen_cards(obs)
    if rng is not None:
        rng.shuffle(pool)
    seed = rng.getrandbits(256).to_bytes(32, "big") if rng is not None else bytes(32)
    game = Game._blank(obs.variant, seed, record=False)
    game.round = obs.round
    game.alive = [v.in_round for v in obs.seats]
    game.scores = [mask_of(v.score_pile) for v in obs.seats]
    for m in game.scores:
        game.removed |= m
    game.round_wins = [v.round_wins for v in obs.seats]
    for view in obs.seats:
        s = view.seat
        if s == obs.seat:
            game.hands[s] = mask_of(obs.hand)
        else:
            seat_weights = weights.get(s) if weights is not None and rng is not None else None
            if seat_weights is not None:
                pool = _weighted_first(pool, view.hand_size, seat_weights, rng)  # type: ignore[arg-type]
            take, pool = pool[: view.hand_size], pool[view.hand_size :]
            game.hands[s] = mask_of(take)
        if view.palette is not None:
            game.pal[s] = mask_of(view.palette)
            game.palc[s] = color_mask_of(game.pal[s])
    deck: list[int | None] = [None] * obs.deck_size  # index = depth from the top
    for d, card in obs.deck_known:
        deck[d] = card
    for d in range(obs.deck_size):
        if deck[d] is None:
            deck[d] = pool.pop()
    if pool:
        out = [v.seat for v in obs.seats if not v.in_round]
        if not out:
            raise ValueError("observation is inconsistent: cards unaccounted for")
        game.pal[out[0]] |= mask_of(pool)
        game.palc[out[0]] = color_mask_of(game.pal[out[0]])
    game.deck = [int(c) for c in reversed(deck) if c is not None]
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
    game.outcome = obs.outcome
    return game


def _weighted_first(pool: list[int], count: int, weights: Sequence[float], rng: random.Random) -> list[int]:
    """``pool`` reordered so its first ``count`` cards are a weighted sample without replacement.

    Efraimidis & Spirakis (2006): each card gets the key ``u ** (1 / w)`` for a
    uniform ``u``, and the ``count`` largest keys are the sample.
    """
    rand = rng.random
    return sorted(pool, key=lambda c: rand() ** (1.0 / weights[c]), reverse=True)  # stable: ties stay shuffled
