"""Setup of a round and Randomness (RULES.md, *Setup of a round*, *Randomness*)."""

from __future__ import annotations

import hashlib
import struct

import pytest

import red7es.deal
from red7es import Color, Game, RoundDealt, RoundWon, Variant, VariantError, commitment, deck_order, make_seed
from red7es.deal import SeedError

from .helpers import facts_of, position

SEEDS = [f"setup-{i}" for i in range(40)]


def dealt(game: Game) -> RoundDealt:
    fact = game.log[0]
    assert isinstance(fact, RoundDealt)
    return fact


# ---------------------------------------------------------------- the deal


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", SEEDS[:10])
def test_each_player_gets_7_card_hand_and_1_palette_card_rest_is_the_deck(players, seed):
    game = Game.new(players, seed=seed)
    for seat in range(players):
        assert len(game.hand(seat)) == 7
        assert len(game.palette(seat)) == 1
    assert len(game.deck) == 49 - 8 * players
    everything = [c for s in range(players) for c in game.hand(s) + game.palette(s)] + list(game.deck_cards)
    assert sorted(everything) == list(range(49))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_canvas_starts_with_the_red_starter_card_not_a_deck_card(players):
    game = Game.new(players, seed="starter")
    assert game.canvas_rule is Color.RED
    assert game.canvas_cards == ()


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", SEEDS)
def test_first_player_is_the_seat_after_the_highest_palette_card(players, seed):
    game = Game.new(players, seed=seed)
    starters = [game.palette(s)[0] for s in range(players)]
    highest = starters.index(max(starters))
    assert game.turn == (highest + 1) % players
    assert dealt(game).first == game.turn


def strength(card) -> tuple[int, int]:
    """RULES.md, *Cards*: the higher number beats; on equal numbers the stronger colour (R first)."""
    text = str(card)
    return int(text[1]), -"ROYGBIV".index(text[0])


def seat_after_highest(palettes) -> int:
    highest = max(range(len(palettes)), key=lambda seat: strength(palettes[seat]))
    return (highest + 1) % len(palettes)


def second_deal(game: Game) -> RoundDealt:
    """Fold until round 1 is over; the RoundDealt fact of round 2."""
    while game.round == 1:
        game.apply("fold")
    deals = facts_of(game.log, RoundDealt)
    assert [d.round for d in deals] == [1, 2]
    return deals[1]


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", SEEDS[:10])
def test_later_rounds_start_with_the_seat_after_the_highest_palette_card(players, seed):
    """RULES.md, Setup 3 holds for every round, not only the first: the round winner does not start."""
    game = Game.new(players, seed=seed, rounds=2)
    deal = second_deal(game)
    assert deal.first == seat_after_highest(deal.palettes)
    assert game.turn == deal.first


@pytest.mark.parametrize(
    ("players", "seed", "starters", "first", "winner"),
    [
        (2, "r2-a", ["I1", "B5"], 0, 0),  # the round winner starts only because B5 is seat 1's
        (2, "r2-d", ["B5", "Y5"], 0, 0),  # equal numbers: Y5 is the stronger colour
        (3, "r2-b", ["O1", "O6", "G1"], 2, 2),
        (4, "r2-b", ["O1", "O6", "G1", "I2"], 2, 3),  # not the round winner, nor the seat after it
        (4, "r2-d", ["B5", "Y5", "G1", "O5"], 0, 2),  # the seat after the last seat is seat 0
    ],
)
def test_round_two_first_player_examples(players, seed, starters, first, winner):
    game = Game.new(players, seed=seed, rounds=2)
    deal = second_deal(game)
    assert [str(c) for c in deal.palettes] == starters
    assert facts_of(game.log, RoundWon)[0].seat == winner
    assert (deal.first, game.turn) == (first, first)


@pytest.mark.parametrize("players", [3, 4])
def test_advanced_scoring_next_round_starts_after_the_highest_palette_card_of_the_new_deal(players):
    # Seat 2 wins round 1 and takes I6 (Red); R7 O7 Y7 were scored before.  Round 2 is
    # dealt from the 45 cards left: G6 is the highest palette card, seat 0's, so seat 1
    # starts - not the round winner (2) nor the seat after it.
    game = position(
        hands=[["Y2"], ["Y3"], ["Y4"], ["Y5"]][:players],
        palettes=[["O2"], ["O3"], ["I6", "V1"], ["O4"]][:players],
        scores=[["R7", "O7", "Y7"], *[[] for _ in range(players - 1)]],
        out=[0, 3][: players - 2],
        turn=1,
        scoring=True,
    )
    game.apply("fold")
    won = facts_of(game.log, RoundWon)[0]
    assert (won.seat, [str(c) for c in won.cards]) == (2, ["I6"])
    deal = facts_of(game.log, RoundDealt)[0]
    assert deal.round == 2 and len(deal.deck) == 45 - 8 * players
    assert [str(c) for c in deal.palettes] == ["G6", "B6", "V5", "B2"][:players]
    assert deal.first == seat_after_highest(deal.palettes) == 1
    assert game.turn == 1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deal_goes_in_seat_order_7_hand_cards_then_the_palette_card(players):
    # How the shuffled order is dealt: seat 0 gets order[0:7] and palette order[7],
    # seat 1 order[8:15] and order[15], ...; the rest is the deck, order[8n] on top.
    game = Game.new(players, seed="layout")
    order = deck_order(range(49), game.seed, 1)
    for seat in range(players):
        assert sorted(game.hand(seat)) == sorted(order[8 * seat : 8 * seat + 7])
        assert game.palette(seat) == (order[8 * seat + 7],)
    assert list(game.deck_cards) == order[8 * players :]
    assert list(dealt(game).deck) == order[8 * players :]


def test_round_dealt_fact_records_hands_palettes_deck_and_first_player():
    game = Game.new(3, seed="fact")
    fact = dealt(game)
    assert fact.round == 1
    assert fact.hands == tuple(game.hand(s) for s in range(3))
    assert fact.palettes == tuple(game.palette(s)[0] for s in range(3))
    assert fact.deck == game.deck_cards


@pytest.mark.parametrize("players", [1, 5, 0])
def test_two_to_four_players(players):
    with pytest.raises(VariantError, match="2 to 4 players"):
        Variant(players)


# ---------------------------------------------------------------- determinism


@pytest.mark.parametrize("players", [2, 3, 4])
def test_same_seed_deals_the_same_game(players):
    a = Game.new(players, seed="same")
    b = Game.new(players, seed="same")
    assert a.log == b.log
    assert a._save() == b._save()


def test_different_seeds_deal_different_games():
    deals = {tuple(deck_order(range(49), make_seed(s), 1)) for s in SEEDS}
    assert len(deals) == len(SEEDS)


def test_different_rounds_give_different_orders():
    seed = make_seed("rounds")
    orders = {tuple(deck_order(range(49), seed, r)) for r in range(1, 21)}
    assert len(orders) == 20


def test_deck_order_is_a_permutation_of_the_cards_still_in_the_game():
    cards = [c for c in range(49) if c % 3]
    order = deck_order(cards, b"subset", 4)
    assert sorted(order) == cards
    assert order != cards


def test_deck_order_does_not_depend_on_the_order_cards_are_given_in():
    assert deck_order(range(49), b"x", 1) == deck_order(list(range(48, -1, -1)), b"x", 1)


# ---------------------------------------------------------------- seeds and commitment


def test_commitment_is_sha256_of_the_seed_in_hex():
    seed = make_seed("commit")
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()
    assert Game.new(2, seed=seed).commitment == hashlib.sha256(seed).hexdigest()


def test_make_seed_64_hex_digits_are_those_32_bytes():
    text = "00ff" * 16
    assert make_seed(text) == bytes.fromhex(text)
    assert make_seed(text.upper()) == bytes.fromhex(text)
    assert make_seed(f"  {text}\n") == bytes.fromhex(text)


def test_make_seed_other_text_is_hashed_so_a_word_gives_the_same_games_everywhere():
    assert make_seed("demo") == hashlib.sha256(b"demo").digest()
    not_hex = "z" * 64
    assert make_seed(not_hex) == hashlib.sha256(not_hex.encode()).digest()
    assert make_seed("ab" * 31) == hashlib.sha256(("ab" * 31).encode()).digest()  # 62 hex digits: hashed


def test_make_seed_bytes_are_used_as_given():
    assert make_seed(b"\x00\x01") == b"\x00\x01"


def test_make_seed_none_is_32_random_bytes_from_the_os():
    a, b = make_seed(None), make_seed()
    assert len(a) == len(b) == 32
    assert a != b
    assert len(Game.new(2).seed) == 32


@pytest.mark.parametrize("bad", [b"", "", "   ", 42])
def test_make_seed_rejects_empty_or_non_text_seeds(bad):
    with pytest.raises(SeedError):
        make_seed(bad)


# ---------------------------------------------------------------- the documented shuffle

GOLDEN_RED7ES_ROUND_1 = [
    20, 6, 16, 2, 1, 4, 22, 27, 35, 28, 15, 9, 41, 11, 8, 30, 17, 45, 18, 47, 19, 34, 14, 25, 39,
    43, 42, 48, 37, 44, 21, 7, 0, 38, 36, 33, 24, 5, 13, 46, 3, 26, 10, 32, 12, 31, 40, 23, 29,
]  # fmt: skip


def test_golden_deck_order_never_changes():
    """deck_order is a version-independent contract: this exact output is pinned."""
    assert deck_order(range(49), b"red7es", 1) == GOLDEN_RED7ES_ROUND_1


class _Words:
    """The documented byte stream, read 4 bytes at a time (written from the docstring)."""

    def __init__(self, seed: bytes, round_number: int) -> None:
        self.seed, self.round, self.counter, self.buffer = seed, round_number, 0, b""

    def next(self) -> int:
        if len(self.buffer) < 4:
            block = b"red7es/deal/v1" + self.seed + struct.pack(">II", self.round, self.counter)
            self.buffer += hashlib.sha256(block).digest()
            self.counter += 1
        word, self.buffer = self.buffer[:4], self.buffer[4:]
        return struct.unpack(">I", word)[0]

    def below(self, n: int) -> int:
        while True:
            x = self.next()
            if x < 2**32 - 2**32 % n:
                return x % n


def documented_shuffle(cards, seed: bytes, round_number: int) -> list[int]:
    a = sorted(cards)
    words = _Words(seed, round_number)
    for i in range(len(a) - 1, 0, -1):
        j = words.below(i + 1)
        a[i], a[j] = a[j], a[i]
    return a


def test_independent_reimplementation_of_the_documented_shuffle_matches_the_golden_order():
    assert documented_shuffle(range(49), b"red7es", 1) == GOLDEN_RED7ES_ROUND_1


@pytest.mark.parametrize(
    "seed", [b"red7es", b"\x00" * 32, make_seed("audit"), make_seed(None)], ids=["text", "zeros", "derived", "fresh"]
)
@pytest.mark.parametrize("round_number", [1, 2, 7, 1000])
def test_independent_reimplementation_agrees_with_deck_order(seed, round_number):
    assert deck_order(range(49), seed, round_number) == documented_shuffle(range(49), seed, round_number)
    subset = range(0, 49, 2)
    assert deck_order(subset, seed, round_number) == documented_shuffle(subset, seed, round_number)


def test_shuffle_rejects_words_that_would_bias_the_result(monkeypatch):
    # below(49) must reject 2**32 - 1 (>= 2**32 - 2**32 % 49) and read the next word.
    assert 2**32 % 49 != 0
    words = iter([2**32 - 1] + [0] * 100)
    monkeypatch.setattr(red7es.deal, "_stream", lambda seed, round_number: words)
    order = deck_order(range(49), b"any", 1)
    # Every swap i <-> below(i+1) = 0: a[48] is swapped with a[0], then a[47], ...
    expected = list(range(49))
    for i in range(48, 0, -1):
        expected[i], expected[0] = expected[0], expected[i]
    assert order == expected


def test_game_deals_every_round_from_seed_and_round_number():
    game = Game.new(2, seed="rounds", rounds=2)
    game.apply("fold")
    second = game.log[-1]
    assert isinstance(second, RoundDealt) and second.round == 2
    order = deck_order(range(49), game.seed, 2)
    assert list(second.deck) == order[16:]
    assert second.palettes == (order[7], order[15])
