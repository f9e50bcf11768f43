"""The commentary a spectator reads for a fold that takes back its turn (batch rules 4)."""

from __future__ import annotations

from red7es import Game
from red7es.cli.render import describe_events
from red7es.service.table import public_event


def test_a_spectator_reads_that_the_folded_turn_was_taken_back() -> None:
    game = Game.new(3, seed="narration")
    seat, card = game.turn, game.hand(game.turn)[0]
    names = ["ann", "bob", "cy"]
    facts = game.apply(f"c:{card} fold")
    public = [e for e in (public_event(f, 3) for f in facts) if e is not None]
    assert {"type": "TurnTakenBack", "seat": seat, "steps": [f"c:{card}"]} in public
    lines = [t.plain for t in describe_events(public, names)]
    who = names[seat]
    assert lines[1:4] == [
        f"{who} folds.",
        f"{who} takes back their turn (c:{card}): every card goes back where it was, "
        "cards drawn back on top of the deck.",
        f"{who} is out of the round (folded).",
    ]
    assert game.canvas_cards == () and card in game.hand(seat)
