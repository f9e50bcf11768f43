"""The tampering suite: every corruption fails the audit at the right event, for the right reason.

Each case changes one thing in a genuine record of a finished game (three players:
two people who sign their turns and a bot; scoring, draw and actions, so there are
several deals, scored rounds and rejected commands) and asserts the audit's first
divergence: its check and its event number.  "Careful" forgeries re-encode and
re-chain the log (seq, prev, the store's version and head all consistent), so only
re-execution can catch them; "naive" ones edit stored bytes in place.
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Any

import pytest

from red7es.cards import Card
from red7es.facts import GameOver, RoundDealt, RoundWon, StepApplied
from red7es.service.audit import FAIL, INCOMPLETE, Divergence, audit_record
from red7es.service.codec import CorruptEvent, decode_command, decode_event, decode_log, register_upcaster
from red7es.service.events import (
    BOT,
    PERSON,
    CommandApplied,
    CommandRejected,
    GameCreated,
    SeatJoined,
    SeedRevealed,
    TurnCommand,
)
from red7es.service.records import Record
from red7es.service.replay import Replay
from red7es.steps import Step
from red7es.variant import Variant

from .conftest import ADVANCED, Games
from .tamper import (
    command_index,
    edit_command,
    edit_event,
    events_of,
    find,
    flip_byte,
    raws_of,
    rechain,
    rewrite_envelope,
    with_raws,
)


@pytest.fixture(scope="module")
def record(module_games: Games) -> Record:
    module_games.people("tampered", Variant(3, **ADVANCED), rng=random.Random(7))
    record = module_games.record("tampered")
    assert audit_record(record).passed
    return record


def first(record: Record) -> Divergence:
    report = audit_record(record)
    assert report.result == FAIL, report.line()
    assert report.divergence is not None
    named = re.search(r"\bevent (\d+)", report.divergence.line())
    if named is not None:  # the JSON (to_dict) carries an event the text names, as a number
        assert report.to_dict()["divergence"]["event"] is not None, report.line()
    return report.divergence


def assert_fails(record: Record, check: str, event: int) -> Divergence:
    divergence = first(record)
    assert (divergence.check, divergence.event) == (check, event), divergence.line()
    return divergence


def applied(record: Record, by: str, start: int = 0) -> int:
    """Position of a CommandApplied by a person or a bot, answering a multi-step turn."""
    events = events_of(record)
    for i, e in enumerate(events):
        if i >= start and isinstance(e, CommandApplied) and e.by == by and e.turn != "fold":
            return i
    raise LookupError(by)


# ---------------------------------------------------------------------------- deals and steps


def test_a_card_changed_in_a_deal(record: Record) -> None:
    d = find(record, lambda e: isinstance(e, RoundDealt), start=find(record, lambda e: isinstance(e, RoundWon)))

    def swap_first_hand_card_with_deck(e: RoundDealt) -> RoundDealt:
        hands = list(e.hands)
        hand, deck = list(hands[0]), list(e.deck)
        hand[0], deck[0] = deck[0], hand[0]
        hands[0] = tuple(sorted(hand))
        return dataclasses.replace(e, hands=tuple(hands), deck=tuple(deck))

    divergence = assert_fails(edit_event(record, d, swap_first_hand_card_with_deck), "deal", d)
    assert "seed" in divergence.reason and "hands[0]" in divergence.expected


def test_the_first_deal_changed(record: Record) -> None:
    d = find(record, lambda e: isinstance(e, RoundDealt))
    changed = edit_event(record, d, lambda e: dataclasses.replace(e, first=(e.first + 1) % 3))
    assert_fails(changed, "deal", d)


def test_a_step_swapped_for_an_illegal_one(record: Record) -> None:
    s = find(record, lambda e: isinstance(e, StepApplied) and e.step.kind == 0, start=20)
    table = Replay(events_of(record)).table(s - 1)
    mover = events_of(record)[s].seat
    other = next(c for seat in range(3) if seat != mover for c in table.game.hand(seat))
    illegal = edit_event(record, s, lambda e: dataclasses.replace(e, step=Step.parse(f"p:{other}")))
    divergence = assert_fails(illegal, "illegal-step", s)
    assert f"{other} is not in your hand" in divergence.reason


def test_a_step_swapped_for_another_legal_one_is_still_named(record: Record) -> None:
    s = find(record, lambda e: isinstance(e, StepApplied) and e.step.kind == 0, start=20)
    table = Replay(events_of(record)).table(s - 1)
    actual = events_of(record)[s].step
    other = next(st for st in table.game.legal_steps() if st.kind == actual.kind and st != actual)
    changed = edit_event(record, s, lambda e: dataclasses.replace(e, step=other))
    # legal, so only re-execution of the command tells: "another step than the command makes"
    assert_fails(changed, "step", s)


def test_an_illegal_turn_applied(record: Record) -> None:
    """A rightly rejected command (out of turn) recorded as applied instead."""
    r = find(record, lambda e: isinstance(e, CommandRejected) and "turn (it is" in e.reason)
    rejected = events_of(record)[r]
    assert isinstance(rejected, CommandRejected)
    forged = edit_event(record, r, lambda e: CommandApplied(e.id, e.seat, e.text, PERSON))
    divergence = assert_fails(forged, "illegal-turn", r)
    assert divergence.command == command_index(record, rejected.id)


def test_a_legal_turn_recorded_as_rejected(record: Record) -> None:
    a = applied(record, PERSON)
    events = events_of(record)
    answer = events[a]
    assert isinstance(answer, CommandApplied)
    end = next(i for i in range(a + 1, len(events)) if isinstance(events[i], CommandApplied | CommandRejected))
    forged = events[:a] + [CommandRejected(answer.id, answer.seat, "turn", answer.turn, "no reason")] + events[end:]
    assert_fails(rechain(record, forged), "wrongly-rejected", a)


def test_a_rejection_reason_changed(record: Record) -> None:
    r = find(record, lambda e: isinstance(e, CommandRejected) and e.reason == "only workers play for bots")
    forged = edit_event(record, r, lambda e: dataclasses.replace(e, reason="the game is over"))
    assert_fails(forged, "rejection", r)


# ---------------------------------------------------------------------------- order of events


def test_two_events_swapped_careful(record: Record) -> None:
    a = applied(record, BOT, start=30)
    events = events_of(record)
    events[a], events[a + 1] = events[a + 1], events[a]
    assert_fails(rechain(record, events), "reordered", a)


def test_two_events_swapped_naive(record: Record) -> None:
    a = applied(record, BOT, start=30)
    raws = raws_of(record)
    raws[a], raws[a + 1] = raws[a + 1], raws[a]
    assert_fails(with_raws(record, raws), "seq", a)


def test_one_event_deleted_careful(record: Record) -> None:
    a = applied(record, BOT, start=30)
    events = events_of(record)
    del events[a + 1]
    assert_fails(rechain(record, events), "missing-event", a + 1)


def test_one_event_deleted_naive(record: Record) -> None:
    a = applied(record, BOT, start=30)
    raws = raws_of(record)
    del raws[a + 1]
    assert_fails(with_raws(record, raws), "seq", a + 1)


def test_one_event_duplicated_careful(record: Record) -> None:
    a = applied(record, BOT, start=30)
    events = events_of(record)
    events.insert(a + 2, events[a + 1])
    divergence = assert_fails(rechain(record, events), "extra-event", a + 2)
    assert f"copy of event {a + 1}" in divergence.reason


def test_one_event_duplicated_naive(record: Record) -> None:
    a = applied(record, BOT, start=30)
    raws = raws_of(record)
    raws.insert(a + 2, raws[a + 1])
    assert_fails(with_raws(record, raws), "seq", a + 2)


def test_an_event_appended_after_the_end(record: Record) -> None:
    events = events_of(record)
    forged = rechain(record, [*events, events[-3]])
    assert_fails(forged, "extra-event", len(events))


# ---------------------------------------------------------------------------- scores and outcome


def test_a_round_won_by_someone_else(record: Record) -> None:
    w = find(record, lambda e: isinstance(e, RoundWon))
    forged = edit_event(record, w, lambda e: dataclasses.replace(e, seat=(e.seat + 1) % 3))
    assert_fails(forged, "score", w)


def test_scored_cards_edited(record: Record) -> None:
    w = find(record, lambda e: isinstance(e, RoundWon) and bool(e.cards))
    forged = edit_event(record, w, lambda e: dataclasses.replace(e, cards=(*e.cards, Card.parse("R7"))))
    divergence = assert_fails(forged, "score", w)
    assert "cards" in divergence.found


def test_final_scores_edited(record: Record) -> None:
    g = find(record, lambda e: isinstance(e, GameOver))

    def richer(e: GameOver) -> GameOver:
        scores = tuple(s + (5 if i == 0 else 0) for i, s in enumerate(e.outcome.scores))
        return GameOver(dataclasses.replace(e.outcome, scores=scores))

    divergence = assert_fails(edit_event(record, g, richer), "outcome", g)
    assert "scores[0]" in divergence.expected


def test_winners_edited(record: Record) -> None:
    g = find(record, lambda e: isinstance(e, GameOver))

    def other_winner(e: GameOver) -> GameOver:
        winner = (e.outcome.winners[0] + 1) % 3
        return GameOver(dataclasses.replace(e.outcome, winners=(winner,)))

    assert_fails(edit_event(record, g, other_winner), "outcome", g)


# ---------------------------------------------------------------------------- forged moves


def test_a_forged_signature(record: Record) -> None:
    a = applied(record, PERSON)
    answer = events_of(record)[a]
    assert isinstance(answer, CommandApplied)
    k = command_index(record, answer.id)

    def forge(c: TurnCommand) -> TurnCommand:
        sig = c.signature
        return dataclasses.replace(c, signature=("0" if sig[0] != "0" else "1") + sig[1:])

    divergence = assert_fails(edit_command(record, k, forge), "signature", a)
    assert divergence.command == k


def test_a_move_moved_to_another_seat(record: Record) -> None:
    """The command re-addressed to the other person (and the log to match): the signature no longer holds."""
    a = applied(record, PERSON)
    answer = events_of(record)[a]
    assert isinstance(answer, CommandApplied)
    k = command_index(record, answer.id)
    other = 1 - answer.seat
    forged = edit_command(record, k, lambda c: dataclasses.replace(c, seat=other))
    forged = edit_event(forged, a, lambda e: dataclasses.replace(e, seat=other))
    assert_fails(forged, "signature", a)


def test_a_person_move_passed_off_as_a_bot_move(record: Record) -> None:
    a = applied(record, PERSON)
    answer = events_of(record)[a]
    assert isinstance(answer, CommandApplied)
    k = command_index(record, answer.id)
    forged = edit_command(record, k, lambda c: dataclasses.replace(c, by=BOT, signature=""))
    forged = edit_event(forged, a, lambda e: dataclasses.replace(e, by=BOT))
    divergence = assert_fails(forged, "bot-seat", a)
    assert "not a bot" in divergence.reason


def test_a_create_command_under_another_id(record: Record) -> None:
    """Today's worker breaks a game whose Create is not ``create-<game>``; the audit, which
    runs the worker's code, fails a record that claims one was played."""
    forged = edit_command(record, 0, lambda c: dataclasses.replace(c, id="create-someone-else"))
    divergence = assert_fails(forged, "created", 0)
    assert divergence.reason == "its id is 'create-someone-else', not 'create-tampered'"


def test_a_command_stream_truncated(record: Record) -> None:
    cut = dataclasses.replace(record, commands=record.commands[:-3])
    last_kept = decode_command(cut.commands[-1].raw)[0]
    divergence = first(cut)
    assert divergence.check == "missing-command"
    answers = [i for i, e in enumerate(events_of(record)) if isinstance(e, CommandApplied | CommandRejected)]
    kept = next(i for i in answers if events_of(record)[i].id == last_kept.id)
    assert divergence.event == next(i for i in answers if i > kept)


# ---------------------------------------------------------------------------- the seed


def test_the_seed_changed(record: Record) -> None:
    sr = find(record, lambda e: isinstance(e, SeedRevealed))
    other = "ab" * 32
    forged = dataclasses.replace(edit_event(record, sr, lambda e: SeedRevealed(other)), seed=other)
    divergence = assert_fails(forged, "commitment", sr)
    assert "committed" in divergence.reason


def test_the_seed_and_its_commitment_changed(record: Record) -> None:
    """A forger who also rewrites the commitment cannot reproduce the deals."""
    from red7es.deal import commitment

    other = "ab" * 32
    digest = commitment(bytes.fromhex(other))
    sr = find(record, lambda e: isinstance(e, SeedRevealed))
    forged = edit_event(record, sr, lambda e: SeedRevealed(other))
    forged = edit_event(forged, 0, lambda e: dataclasses.replace(e, commitment=digest))
    forged = edit_command(forged, 0, lambda c: dataclasses.replace(c, commitment=digest))
    forged = dataclasses.replace(forged, seed=other, commitment=digest)
    dealt = find(record, lambda e: isinstance(e, RoundDealt))
    assert_fails(forged, "deal", dealt)


def test_the_header_seed_disagrees_with_the_log(record: Record) -> None:
    sr = find(record, lambda e: isinstance(e, SeedRevealed))
    assert_fails(dataclasses.replace(record, seed="cd" * 32), "header", sr)


def test_the_seed_withheld(record: Record) -> None:
    sr = find(record, lambda e: isinstance(e, SeedRevealed))
    events = events_of(record)
    forged = dataclasses.replace(rechain(record, events[:sr] + events[sr + 1 :]), seed=None)
    assert_fails(forged, "seed-missing", sr)


# ---------------------------------------------------------------------------- the bytes


def test_the_log_truncated(record: Record) -> None:
    raws = raws_of(record)
    assert_fails(with_raws(record, raws[:-5]), "truncated", len(raws) - 5)


def test_the_log_truncated_and_the_store_rewritten(record: Record) -> None:
    """Cut before the end with the store's bookkeeping matched: it looks unfinished, never PASS."""
    g = find(record, lambda e: isinstance(e, GameOver))
    cut = dataclasses.replace(rechain(record, events_of(record)[: g - 4]), seed=None)
    report = audit_record(cut)
    assert report.result == INCOMPLETE
    assert not report.passed


def test_a_flipped_byte_in_every_position_of_an_event(record: Record) -> None:
    """Whatever byte of event k flips, the audit blames event k (decode, seq or chain)."""
    for k in (0, 1, len(record.events) // 2, len(record.events) - 1):
        for offset in range(len(record.events[k].raw)):
            divergence = first(flip_byte(record, k, offset))
            assert divergence.event == k, (offset, divergence.line())
            assert divergence.check in ("decode", "seq", "hash-chain"), (offset, divergence.line())


def test_a_flipped_byte_in_the_data_names_the_chain(record: Record) -> None:
    """A card number flipped in a stored step still decodes; the broken chain names the event."""
    k = find(record, lambda e: isinstance(e, StepApplied) and e.step.kind == 0, start=40)
    raw = record.events[k].raw
    offset = raw.rindex(b"p:") + 3  # the card's number: '7' ^ 1 == '6', still a card
    assert chr(raw[offset]).isdigit() and chr(raw[offset] ^ 1) in "1234567"
    assert_fails(flip_byte(record, k, offset), "hash-chain", k)


def test_the_head_altered(record: Record) -> None:
    assert_fails(dataclasses.replace(record, head="00" * 32), "hash-chain", len(record.events) - 1)


def test_a_changed_creation_time_in_the_header(record: Record) -> None:
    assert_fails(dataclasses.replace(record, created=record.created + 1), "header", 0)


def test_game_created_changed(record: Record) -> None:
    created = decode_event(record.events[0].raw).event
    assert isinstance(created, GameCreated)
    forged = edit_event(record, 0, lambda e: dataclasses.replace(e, created=e.created + 1))
    forged = dataclasses.replace(forged, created=created.created + 1)
    assert_fails(forged, "created", 0)


# ---------------------------------------------------------------------------- envelopes


def _as_version_0(obj: dict[str, Any]) -> None:
    obj["version"] = 0
    obj["data"] = {"v0": obj["data"]}  # an imagined older shape of the same data


def test_an_event_at_an_older_version_passes_only_through_its_upcaster(
    record: Record, upcasters: dict[tuple[str, int], Any]
) -> None:
    """Old records stay auditable: the audit reads an old event through the codec's upcasters."""
    k = find(record, lambda e: isinstance(e, StepApplied), start=20)
    old = rewrite_envelope(record, k, _as_version_0)
    divergence = assert_fails(old, "decode", k)
    assert "no upcaster" in divergence.reason, divergence.line()
    register_upcaster("StepApplied", 0, lambda d: d["v0"])
    assert audit_record(old).passed, audit_record(old).line()


@pytest.mark.parametrize("field", ["seq", "at"])
def test_a_boolean_in_the_envelope_is_a_malformed_envelope(record: Record, field: str) -> None:
    """msgpack's true is not a number: the codec refuses the envelope, and the audit says so."""
    k = find(record, lambda e: isinstance(e, StepApplied), start=20)

    def forge(obj: dict[str, Any]) -> None:
        obj[field] = True
        obj["data"] = {}

    divergence = assert_fails(rewrite_envelope(record, k, forge), "decode", k)
    assert f"event {k} has a malformed envelope" in divergence.reason, divergence.line()


def test_an_event_holding_bytes_where_a_number_goes_is_shown(record: Record) -> None:
    """A StepApplied whose seat is msgpack bin (re-chained): the audit quoted it with
    json.dumps, which raised TypeError (bytes are not JSON) instead of giving a verdict."""
    k = find(record, lambda e: isinstance(e, StepApplied))

    def forge(obj: dict[str, Any]) -> None:
        obj["data"]["seat"] = b"\x00"

    divergence = first(rewrite_envelope(record, k, forge))
    assert divergence.event == k and "StepApplied seat = \"b'\\\\x00'\"" in divergence.found, divergence.line()


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        (CommandApplied, {"id": None}, "(CommandApplied) is malformed: id must be str, not NoneType"),
        (GameCreated, {"commitment": None}, "(GameCreated) is malformed: commitment must be str, not NoneType"),
        (SeatJoined, {"seat": True}, "(SeatJoined) is malformed: seat must be int, not bool"),
    ],
    ids=["applied-id-null", "commitment-null", "seat-true"],
)
def test_an_event_field_of_the_wrong_type_is_a_corrupt_event(
    record: Record, kind: type, change: dict[str, Any], message: str
) -> None:
    """Re-chained, a CommandApplied with id null made replay's fold raise AttributeError
    (str.startswith on None), a GameCreated with commitment null made the audit's
    explanation raise TypeError: a field of the wrong type is a corrupt event."""
    k = find(record, lambda e: isinstance(e, kind))
    forged = rewrite_envelope(record, k, lambda obj: obj["data"].update(change))
    with pytest.raises(CorruptEvent, match=re.escape(f"event {k} {message}")):
        decode_log(e.raw for e in forged.events)
    divergence = first(forged)
    if kind is not GameCreated:  # (an event 0 that does not decode fails check created, "found nothing")
        assert (divergence.check, divergence.event) == ("decode", k) and message in divergence.reason
