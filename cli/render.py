"""How games look in a terminal: cards in their colours, the rule in words, who leads.

Everything here renders the documented view and event shapes (docs/events.md), so
what a player sees is built from what their seat may see, nothing else.  Seat names,
and any text another client chose (a refused turn's text and reason), are printed
through :func:`~red7es.service.names.shown`, which escapes what a terminal would act on.  Colour is
rich's business: it turns itself off when output is not a terminal or ``NO_COLOR``
is set, leaving plain text.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from red7es.cards import Card, Color
from red7es.service.names import shown
from red7es.variant import Variant

__all__ = [
    "CARD_STYLES",
    "SAID_BY_FINAL_VIEW",
    "card_text",
    "cards_text",
    "describe_event",
    "describe_events",
    "forfeit_words",
    "render_view",
    "rule_line",
    "view_parts",
]

CARD_STYLES = {
    "R": "bold red",
    "O": "bold dark_orange",
    "Y": "bold yellow",
    "G": "bold green",
    "B": "bold blue",
    "I": "bold slate_blue1",
    "V": "bold magenta",
}


def card_text(card: str, highlight: bool = False) -> Text:
    style = CARD_STYLES.get(card[:1].upper(), "")
    if highlight:
        style += " reverse"
    return Text(card, style=style)


def cards_text(cards: Iterable[str], highlight: Iterable[str] = ()) -> Text:
    marked = set(highlight)
    text = Text()
    for i, card in enumerate(cards):
        if i:
            text.append(" ")
        text.append_text(card_text(card, card in marked))
    return text


def rule_line(rule: str) -> Text:
    color = Color.parse(rule)
    text = Text()
    text.append(color.title, style=CARD_STYLES[color.letter])
    text.append(f" — {color.rule_text}")
    return text


def _seat_label(seat: dict[str, Any], you: int | None) -> Text:
    label = Text(shown(seat["name"]))
    if seat["kind"] == "bot":
        label.append(f" [{shown(str(seat['bot']))}]", style="dim")
    elif not seat.get("joined"):
        label.append(" (open)", style="dim")
    if you is not None and seat["seat"] == you:
        label.append(" (you)", style="bold")
    return label


def _leader_text(view: dict[str, Any]) -> Text:
    leader = view.get("leader")
    rule = Color.parse(view["rule"])
    if leader is None:
        return Text(f"Nobody leads under {rule.title}: no palette has a qualifying card.")
    name = shown(view["seats"][leader]["name"])
    qualifying = view.get("qualifying", [])
    text = Text(f"{name} leads under {rule.title} with ")
    text.append_text(cards_text(qualifying))
    text.append(f" ({_why(rule, qualifying)}).")
    return text


def _why(rule: Color, cards: Sequence[str]) -> str:
    n = len(cards)
    parsed = [Card.parse(c) for c in cards]
    top = str(max(parsed)) if parsed else "-"
    if rule == Color.RED:
        return f"highest card {top}"
    if rule == Color.ORANGE:
        return f"{n} card{'s' if n != 1 else ''} of number {parsed[0].number if parsed else '-'}"
    if rule == Color.YELLOW:
        return f"{n} {parsed[0].color.title if parsed else ''} card{'s' if n != 1 else ''}"
    if rule == Color.GREEN:
        return f"{n} even card{'s' if n != 1 else ''}, highest {top}"
    if rule == Color.BLUE:
        return f"{n} colour{'s' if n != 1 else ''}, highest {top}"
    if rule == Color.INDIGO:
        return f"a run of {n}, up to {top}"
    return f"{n} card{'s' if n != 1 else ''} below 4, highest {top}"


# The events a finished game's view says in full (outcome_line and the seed, below):
# a client that narrates events and then shows that view leaves them out.
SAID_BY_FINAL_VIEW = frozenset({"GameOver", "SeedRevealed"})


def render_view(console: Console, view: dict[str, Any], *, you: int | None = None) -> None:
    """Print a game view: header, rule, table of seats, hand, whose turn."""
    for part in view_parts(view, you=you):
        console.print(part)


# A long game's Canvas keeps every discard: only the newest are shown, so the rule line
# stays one line in an 80-column terminal (the top card is the rule; older ones are history).
CANVAS_SHOWN = 6


def view_parts(view: dict[str, Any], *, you: int | None = None) -> list[RenderableType]:
    """A game view as renderables, one per line (the seats' table is one per seat): what
    :func:`render_view` prints, and what ``watch`` redraws in place on a terminal."""
    variant = view["variant"]
    flags = "+".join(f for f in ("scoring", "draw", "actions") if variant.get(f)) or "basic"
    header = Text(f"Game {view['game']}", style="bold")
    header.append(f" · {variant['players']} players, {flags}")
    if variant.get("scoring"):
        target = variant.get("target") or {2: 40, 3: 35, 4: 30}[variant["players"]]
        header.append(f", target {target}")
    elif variant.get("rounds", 1) > 1:
        header.append(f", first to {variant['rounds']} rounds")
    time_control = _time_control(variant)
    if time_control:
        header.append(f", {time_control}")
    if "round" in view:
        header.append(f" · round {view['round']}")
    parts: list[RenderableType] = [header]
    if "rule" not in view:
        return [*parts, Text("Waiting for a worker to deal the game.")]
    rule = Text("Rule: ")
    rule.append_text(rule_line(view["rule"]))
    canvas = view.get("canvas") or []
    rule.append("   Canvas: ")
    if len(canvas) > CANVAS_SHOWN:
        rule.append(f"({len(canvas)}) … ", style="dim")
        canvas = canvas[-CANVAS_SHOWN:]
    rule.append_text(cards_text(canvas) if canvas else Text("the Red starter card"))
    parts.append(rule)
    deck = Text(f"Deck: {view['deck_size']} card{'s' if view['deck_size'] != 1 else ''}")
    for depth, card in view.get("deck_known", []):
        deck.append(f"   {'top' if depth == 0 else _ordinal(depth + 1) + ' from top'}: ")
        deck.append_text(card_text(card))
    parts.append(deck)
    parts.append(_seats_table(view, you))
    parts.append(_leader_text(view))
    if "hand" in view:
        hand = Text("Your hand: ")
        hand.append_text(cards_text(view["hand"]) if view["hand"] else Text("(empty)", style="dim"))
        parts.append(hand)
    outcome = view.get("outcome")
    if outcome:
        parts.append(Text(outcome_line(view), style="bold"))
        if view.get("seed"):
            parts.append(Text(f"Seed revealed: {view['seed']}"))
        return parts
    to_move = view.get("to_move")
    if to_move is not None:
        name = shown(view["seats"][to_move]["name"])
        line = Text("Your turn." if to_move == you else f"{name} to move.", style="bold")
        steps = view.get("turn_steps") or []
        if steps:
            line.append(f" This turn so far: {' '.join(steps)}.")
        if view.get("pending"):
            line.append(f" Owed: {view['pending']}.")
        parts.append(line)
        clock = view.get("clock")
        if clock:
            parts.append(deadline_text(view, you))
    return parts


def _time_control(variant: dict[str, Any]) -> str:
    """``clock 5m+5s``, ``30s a turn`` or ``""``, as :meth:`~red7es.variant.Variant.describe_time` says it."""
    if not variant.get("clock") and not variant.get("turn_time"):
        return ""
    try:
        return Variant.from_dict(variant).describe_time()
    except (TypeError, ValueError):
        return ""


def clock_text(ms: int) -> str:
    """Time left as a clock shows it: ``4:05``, ``1:02:03``, ``2d 03h``; tenths under 10 s (``7.3s``)."""
    ms = max(0, ms)
    if ms < 10_000:
        return f"{ms / 1000:.1f}s"
    seconds = ms // 1000
    if seconds >= 86_400:
        return f"{seconds // 86_400}d {seconds % 86_400 // 3600:02d}h"
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def deadline_text(view: dict[str, Any], you: int | None = None, now_ms: int | None = None) -> Text:
    """When the seat to move's time is up: the referee's deadline (Redis's clock, UTC), and
    how long that is from now by this machine's clock (shown only; the referee never reads it)."""
    clock = view["clock"]
    now = int(time.time() * 1000) if now_ms is None else now_ms
    at = datetime.datetime.fromtimestamp(clock["deadline"] / 1000, tz=datetime.timezone.utc)
    whose = "Your" if clock["seat"] == you else f"{shown(view['seats'][clock['seat']]['name'])}'s"
    left = clock["deadline"] - now
    text = Text(f"{whose} time is up at {at:%H:%M:%S} UTC ({clock_text(left)} left).")
    if left <= 10_000:
        text.stylize("bold red")
    return text


def _seats_table(view: dict[str, Any], you: int | None) -> Table:
    """One row per seat: who moves, name, hand size, palette (the leader's qualifying cards marked), score."""
    variant = view["variant"]
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("", width=1)
    table.add_column("player")
    table.add_column("hand", justify="right")
    table.add_column("palette")
    scoring = bool(variant.get("scoring"))
    table.add_column("score" if scoring else "rounds won", justify="right")
    clocked = bool(variant.get("clock"))
    if clocked:
        table.add_column("clock", justify="right")
    leader = view.get("leader")
    qualifying = view.get("qualifying", [])
    for seat in view["seats"]:
        marker = "▶" if view.get("to_move") == seat["seat"] else ""
        if seat.get("palette") is None:
            palette = Text("out of the round", style="dim")
        else:
            palette = cards_text(seat["palette"], qualifying if seat["seat"] == leader else ())
            if seat["seat"] == leader:
                palette.append("  ← leads", style="bold")
        if seat.get("forfeited") or seat["seat"] in ((view.get("outcome") or {}).get("forfeited") or ()):
            palette = Text("out of the game", style="dim")
        total = seat.get("score", 0) if scoring else seat.get("round_wins", 0)
        row: list[Text | str] = [marker, _seat_label(seat, you), str(seat.get("hand_size", "")), palette, str(total)]
        if clocked:
            row.append(_time_left(view, seat))
        table.add_row(*row)
    return table


def _time_left(view: dict[str, Any], seat: dict[str, Any]) -> str:
    """A seat's game clock: the seat to move's running down to its deadline (by this machine's clock)."""
    clock = view.get("clock")
    if seat.get("forfeited") or seat.get("time_left") is None:
        return "-"
    if clock and clock["seat"] == seat["seat"]:
        return clock_text(clock["deadline"] - int(time.time() * 1000))
    return clock_text(int(seat["time_left"]))


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# How a game that ended with no winner ended, by its GameOver's reason (RULES.md, Aborting).
NO_WINNER = {
    "aborted": "aborted before anyone moved, no winner",
    "adjudicated": "adjudicated by the operator, no winner",
    "no-show": "nobody came by the join deadline, no winner",
}


def no_winner_text(reason: object) -> str:
    """What ``show``, ``watch`` and ``games`` say of a game over with no winner."""
    return NO_WINNER.get(str(reason), f"no winner ({shown(str(reason))})")


def outcome_line(view: dict[str, Any]) -> str:
    outcome = view["outcome"]
    why = f": {shown(str(outcome['adjudication']))}" if outcome.get("adjudication") is not None else ""
    if not outcome["winners"]:
        return f"Game over: {no_winner_text(outcome.get('reason'))}{why}."
    names = [shown(view["seats"][s]["name"]) for s in outcome["winners"]]
    scoring = view["variant"].get("scoring")
    if len(names) > 1:
        head = f"Game over: shared win between {' and '.join(names)}"
    else:
        head = f"Game over: {names[0]} wins"
    if outcome.get("reason") == "adjudicated":
        return f"{head} by the operator's adjudication, not by play{why}."
    if scoring:
        scores = ", ".join(f"{shown(s['name'])} {outcome['scores'][s['seat']]}" for s in view["seats"])
        return f"{head} ({scores} points)."
    reason = outcome.get("reason")
    if reason in _FORFEITED:
        return f"{head}{' on time' if reason == 'time' else ''}: {_last_forfeit(view, reason)}"
    won = outcome["round_wins"][outcome["winners"][0]]
    return f"{head} ({won} round{'' if won == 1 else 's'} won)."


# How the last seat out of a game won by forfeit went (GameOver's reason; RULES.md, Time,
# Resigning and Withdrawal).
_FORFEITED = {
    "time": "ran out of time",
    "resigned": "resigned",
    "withdrawn": "was withdrawn by the operator",
    "no-show": "never took their seat",
}


def _last_forfeit(view: dict[str, Any], reason: str) -> str:
    """Why a game won by forfeit ended: the last seat out (``ann resigned.``, ``ann ran out
    of time.``) and any out before it; a view without ``forfeited`` says it of every other player."""
    out = [shown(view["seats"][s]["name"]) for s in view["outcome"].get("forfeited") or []]
    went = _FORFEITED[reason]
    if not out:
        return f"every other player {went}."
    last = f"{out[-1]} {went}"
    if len(out) == 1:
        return f"{last}."
    before = out[:-1]
    return f"{last} ({' and '.join(before)} {'was' if len(before) == 1 else 'were'} already out of the game)."


# Rejections that are no seat's own doing: a command nobody could read, and a copy of an
# answered turn put on the stream again (which the seat it names may never have sent).
_REJECTED_SUBJECTS = {"corrupt": "a corrupt command", "repeat": "a repeated command"}


def _name(names: Sequence[str], seat: Any) -> str:
    if isinstance(seat, int) and 0 <= seat < len(names):
        return shown(names[seat])
    return f"seat {seat}"


def describe_event(event: dict[str, Any], names: Sequence[str]) -> Text | None:
    """One line of commentary for a public event, or None for events said elsewhere."""
    kind = event.get("type")
    who = _name(names, event.get("seat"))
    if kind == "GameCreated":
        seats = ", ".join(
            shown(s["name"]) + (f" ({shown(str(s['bot']))} bot)" if s["kind"] == "bot" else "")
            for s in event.get("seats", [])
        )
        return Text(f"Game created for {seats}.")
    if kind == "SeatJoined":
        return Text(f"{shown(event['name'])} took a seat.")
    if kind == "RoundDealt":
        text = Text(f"Round {event['round']} dealt; palettes ")
        text.append_text(cards_text(event["palettes"]))
        text.append(f"; {_name(names, event['first'])} starts.")
        return text
    if kind == "StepApplied":
        return _describe_step(who, event["step"])
    if kind == "CardDrawn":
        text = Text(f"{who} draws ")
        text.append_text(card_text(event["card"]) if "card" in event else Text("a card"))
        text.append(" (action of a 3)." if event.get("cause") == "3" else ".")
        return text
    if kind == "TurnTakenBack":
        text = Text(f"{who} takes back their turn ({shown(' '.join(map(str, event.get('steps', []))))}): ")
        text.append("every card goes back where it was, cards drawn back on top of the deck.")
        return text
    if kind == "PlayerOut":
        why = "folded" if event["reason"] == "fold" else "no cards left at the start of the turn"
        return Text(f"{who} is out of the round ({why}).")
    if kind == "TimedOut":
        return Text(f"{who}'s turn timed out.", style="bold")
    if kind == "Forfeited":
        return Text(forfeit_words(who, event.get("reason")), style="bold")
    if kind == "RoundWon":
        rule = Color.parse(event["rule"])
        text = Text(f"{who} wins round {event['round']} under {rule.title}")
        if event.get("cards"):
            points = sum(Card.parse(c).number for c in event["cards"])
            text.append(", scoring ")
            text.append_text(cards_text(event["cards"]))
            text.append(f" ({points} points)")
        text.append(".")
        return text
    if kind == "Withdrawn":
        return Text(f"The operator withdrew {who}: {shown(str(event['reason']))}", style="bold")
    if kind == "Adjudicated":
        won = " and ".join(_name(names, s) for s in event["winners"]) or "no winner"
        return Text(f"The operator adjudicated the game ({won}): {shown(str(event['reason']))}", style="bold")
    if kind == "GameOver":
        if not event["winners"]:
            return Text(f"Game over: {no_winner_text(event.get('reason'))}.", style="bold")
        winners = " and ".join(_name(names, s) for s in event["winners"])
        return Text(f"Game over: {winners} {'win' if len(event['winners']) > 1 else 'wins'}.", style="bold")
    if kind == "SeedRevealed":
        return Text(f"Seed revealed: {event['seed']}", style="dim")
    if kind == "CommandRejected":
        kind_of = str(event.get("kind"))
        subject = _REJECTED_SUBJECTS.get(kind_of, f"{who}'s {kind_of}")
        text = Text(f"Rejected {subject}")
        if event.get("text"):
            text.append(f" '{shown(str(event['text']))}'")
        if event.get("reason"):
            text.append(f": {shown(str(event['reason']))}", style="bold")
        return text
    return None


def _describe_step(who: str, step: str) -> Text | None:
    kind, _, card = step.partition(":")
    text = Text(f"{who} ")
    if kind == "p":
        text.append("plays ")
        text.append_text(card_text(card))
        text.append(" to their palette.")
    elif kind == "c":
        color = Card.parse(card).color
        text.append("discards ")
        text.append_text(card_text(card))
        text.append(": the rule is now ")
        text.append_text(rule_line(color.name))
        text.append(".")
    elif kind == "draw":
        return None  # the CardDrawn event says it
    elif kind == "7c":
        color = Card.parse(card).color
        text.append("moves ")
        text.append_text(card_text(card))
        text.append(" from their palette to the Canvas (action of a 7): the rule is now ")
        text.append_text(rule_line(color.name))
        text.append(".")
    elif kind == "7d":
        text.append("puts ")
        text.append_text(card_text(card))
        text.append(" from their palette on top of the deck (action of a 7).")
    elif kind == "1":
        text.append("takes ")
        text.append_text(card_text(card))
        text.append(" from another palette to the top of the deck (action of a 1).")
    elif kind == "fold":
        text.append("folds.")
    else:
        return None  # end: the next event shows who moves
    return text


def forfeit_words(who: str, reason: Any) -> str:
    """A seat out of the game for good, and why: ``ann resigned.``, ``ann forfeited (time).``"""
    if reason == "resigned":
        return f"{who} resigned."
    if reason == "withdrawn":
        return f"{who} is out of the game (withdrawn)."
    if reason == "no-show":
        return f"{who} is out of the game (seat not taken by the join deadline)."
    return f"{who} forfeited ({reason or 'time'})."


def _timeout_outcome(events: Sequence[dict[str, Any]], at: int) -> int | None:
    """The index of what the time-out at ``at`` did to its seat (its ``fold`` step with a turn
    time, its ``Forfeited`` with a game clock: docs/events.md), or None if it is not among ``events``."""
    seat = events[at].get("seat")
    for i in range(at + 1, len(events)):
        event = events[i]
        if event.get("seat") != seat:
            continue
        if event.get("type") == "Forfeited" or (event.get("type") == "StepApplied" and event.get("step") == "fold"):
            return i
        if event.get("type") in ("TimedOut", "CommandApplied", "ClockStarted"):
            return None
    return None


def describe_events(events: Iterable[dict[str, Any]], names: Sequence[str]) -> list[Text]:
    """The lines for a run of public events (a change, a command's answer): each event's
    :func:`describe_event`, except that a time-out and what it did are one line — ``ann's
    turn timed out: folded.`` (turn time), or the forfeit's ``ann forfeited (time).`` (game clock)."""
    events = list(events)
    said_by_timeout: set[int] = set()
    out = []
    for i, event in enumerate(events):
        if i in said_by_timeout:
            continue
        line = describe_event(event, names)
        if event.get("type") == "TimedOut":
            then = _timeout_outcome(events, i)
            if then is not None and events[then].get("type") == "Forfeited":
                continue  # the forfeit's own line says it: "ann forfeited (time)."
            if then is not None:
                said_by_timeout.add(then)
                line = Text(f"{_name(names, event.get('seat'))}'s turn timed out: folded.", style="bold")
        if line is not None:
            out.append(line)
    return out
