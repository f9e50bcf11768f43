"""Hand-made positions, so that every engine test reads like a scenario from RULES.md.

    game = position(
        hands=[["R7", "B3"], ["G2"]],
        palettes=[["O4"], ["Y6"]],
        rule="green",
        deck=["V1", "I2"],  # top card first
    )

builds a :class:`~red7es.game.Game` with exactly those cards (cards not named anywhere
are simply out of play), seat ``turn`` to move at the start of its turn, and an empty
fact log so a test only sees the facts its own steps caused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from red7es import Card, Color, Game, Step, Turn, Variant
from red7es.cards import cards_of_mask, color_mask_of, mask_of, parse_cards
from red7es.facts import CardDrawn, RoundDealt, StepApplied
from red7es.game import BATCH_RULES
from red7es.position import NOTATION, _variant_text

CardsText = str | Iterable[str | Card]


def cards(text: CardsText) -> tuple[Card, ...]:
    """``cards("R7 B3")`` or ``cards(["R7", "B3"])``."""
    return parse_cards(text)


def names(cs: Iterable[Card]) -> list[str]:
    """Cards as notation, strongest first: ``["R7", "B3"]``."""
    return [str(c) for c in sorted(cs, reverse=True)]


def position(
    hands: Sequence[CardsText],
    palettes: Sequence[CardsText],
    *,
    rule: Color | str = "red",
    deck: CardsText = (),
    canvas: CardsText = (),
    turn: int = 0,
    out: Iterable[int] = (),
    known: CardsText = (),
    scores: Sequence[CardsText] | None = None,
    round_wins: Sequence[int] | None = None,
    variant: Variant | None = None,
    batch_rules: int = BATCH_RULES,
    **flags: object,
) -> Game:
    """A game in the given position, seat ``turn`` about to start its turn.

    ``deck`` is listed top card first; ``known`` are deck cards an action put face up;
    ``out`` are seats already out of the round; ``scores`` are the score piles
    (Advanced scoring), whose cards have left the game.  ``variant`` defaults to
    ``Variant(players=len(hands), **flags)``; ``batch_rules`` is the referee's version.
    """
    if variant is None:
        variant = Variant(len(hands), **flags)  # type: ignore[arg-type]
    n = variant.players
    assert len(hands) == len(palettes) == n, "one hand and one palette per seat"
    hand_cards = [cards(h) for h in hands]
    palette_cards = [cards(p) for p in palettes]
    deck_cards = cards(deck)
    canvas_cards = cards(canvas)
    score_cards = [cards(s) for s in scores] if scores is not None else [() for _ in range(n)]
    placed = [
        *(c for h in hand_cards for c in h),
        *(c for p in palette_cards for c in p),
        *deck_cards,
        *canvas_cards,
        *(c for s in score_cards for c in s),
    ]
    twice = [str(c) for c, k in Counter(placed).items() if k > 1]
    assert not twice, f"cards placed twice: {twice}"
    assert set(cards(known)) <= set(deck_cards), "known cards must be in the deck"

    out_seats = set(out)
    rule_color = Color.parse(rule)
    top = canvas_cards[-1].color if canvas_cards else Color.RED
    if rule_color == top and all(palette_cards[s] for s in range(n) if s not in out_seats):
        # the notation holds the position: a failing test can print game.position()
        seats = [
            f"{s}:{_list(hand_cards[s])}/{_list(palette_cards[s])}/{_list(score_cards[s])}/"
            f"{round_wins[s] if round_wins is not None else 0}{'/out' if s in out_seats else ''}"
            for s in range(n)
        ]
        known_cards = set(cards(known))
        deck_text = ",".join(f"{c}*" if c in known_cards else str(c) for c in deck_cards) or "-"
        text = " ".join(
            [
                NOTATION,
                _variant_text(variant),
                f"rules:{batch_rules} round:1 rule:{rule_color.letter}",
                f"canvas:{_list(canvas_cards)} deck:{deck_text}",
                *seats,
                f"to:{turn}",
            ]
        )
        return Game.from_position(text, seed="helpers.position")
    # A rule no Canvas card set (a scenario that starts under Green), or an empty palette
    # (never in a real game): the notation refuses such positions, so the fields are set
    # directly.
    game = Game.new(variant, seed="helpers.position", batch_rules=batch_rules)
    game.hands = [mask_of(h) for h in hand_cards]
    game.pal = [mask_of(p) for p in palette_cards]
    game.palc = [color_mask_of(m) for m in game.pal]
    game.deck = [int(c) for c in reversed(deck_cards)]  # the top of the deck is the last element
    game.known = mask_of(cards(known))
    game.canvas = [int(c) for c in canvas_cards]
    game.rule = int(rule_color)
    game.alive = [seat not in out_seats for seat in range(n)]
    game.scores = [mask_of(s) for s in score_cards]
    game.removed = mask_of(c for s in score_cards for c in s)
    game.round_wins = list(round_wins) if round_wins is not None else [0] * n
    game._start_turn(turn)
    game.log = []
    game._stack = []
    return game


def _list(cs: Sequence[Card]) -> str:
    return ",".join(str(c) for c in cs) or "-"


def census(game: Game) -> Counter[int]:
    """How many times each card appears in hands, palettes, deck, Canvas and score piles."""
    count: Counter[int] = Counter()
    for seat in range(game.players):
        count.update(cards_of_mask(game.hands[seat]))
        count.update(cards_of_mask(game.pal[seat]))
        count.update(cards_of_mask(game.scores[seat]))
    count.update(game.deck)
    count.update(game.canvas)
    return Counter({int(c): k for c, k in count.items()})


def steps_text(steps: Iterable[Step]) -> list[str]:
    return [str(s) for s in steps]


def turns_text(turns: Iterable[Turn]) -> set[str]:
    return {str(t) for t in turns}


def facts_of(facts: Iterable[object], kind: type) -> list[object]:
    return [f for f in facts if isinstance(f, kind)]


def texts(cs: Iterable[object]) -> list[str]:
    """Cards or steps as notation, in the given order (e.g. the deck, top first)."""
    return [str(c) for c in cs]


def drawn(facts: Iterable[object]) -> list[tuple[int, str, str]]:
    """The CardDrawn facts as (seat, card, cause)."""
    return [(f.seat, str(f.card), f.cause) for f in facts if type(f).__name__ == "CardDrawn"]


def public_cards(game: Game) -> set[int]:
    """Every card the facts of the current round showed everyone (empty without a log).

    The palette cards dealt face up, every card a step named, and every drawn card
    that an action had put face up on the deck.
    """
    log = game.log or []
    starts = [i for i, f in enumerate(log) if isinstance(f, RoundDealt)]
    if not starts:
        return set()
    deal = log[starts[-1]]
    assert isinstance(deal, RoundDealt)
    seen = {int(c) for c in deal.palettes}
    for fact in log[starts[-1] :]:
        if isinstance(fact, StepApplied) and fact.step.card is not None:
            seen.add(int(fact.step.card))
        elif isinstance(fact, CardDrawn) and fact.public:
            seen.add(int(fact.card))
    return seen
