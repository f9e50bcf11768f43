"""Exit codes follow one rule across commands (docs/cli.md, *Exit codes*): a mistake in
what was typed, caught before anything is sent, is a usage error (2); a refusal by the
referee or the service, 1. An unknown bot, a bad ``--id`` and garbage turn notation
exited 1, while five players or ``--target`` without ``--scoring`` exited 2.
"""

from __future__ import annotations

import pytest
from support import Red7, fails, one_line_error

from red7es.cards import Card

from .test_commands import create, create_to_move, wait_person

GAME = "{game}"  # stands for a real game's id in the cases below

USAGE_MISTAKES = [
    ("new", "-p", "a", "-b", "nosuch"),
    ("new", "-p", "a", "-b", "ismcts:frob=1"),
    ("new", "-p", "a", "-b", "greedy", "--id", "BAD_ID"),
    ("new", "-p", "a", "-b", "greedy", "--id", "t-kept"),
    ("new", "-p", "a", "-b", "greedy", "--seed", ""),
    ("new", "-p", "a", "-p", "b", "-p", "c", "-p", "d", "-p", "e"),
    ("new", "-p", "a", "-b", "greedy", "--target", "30"),
    ("new", "-p", "a", "-b", "greedy", "--frobnicate"),
    ("play", "--bots", "nosuch"),
    ("play", "--bots", "greedy,greedy,greedy,greedy"),
    ("move", GAME, "x:I2"),
    ("move", GAME, "p:R9"),
    ("move", GAME),
    ("move", GAME, "p:R1", "--fold"),
    ("moves", GAME, "--token", "ab" * 32),
    ("show", GAME, "--public", "--as", "alice"),
    ("games", "--limit", "0"),
    ("watch", GAME, "--timeout", "nan"),
    ("replay", GAME, "--format", "jsonl"),
    ("export", GAME, "-o", "-", "--json"),
    ("audit",),
    ("tournament", "create", "Bad_Id", "-b", "greedy", "-b", "random"),
    ("tournament", "create", "cup2", "-b", "greedy", "-b", "nope"),
    ("tournament", "create", "cup3", "-b", "greedy"),
]


@pytest.mark.parametrize("args", USAGE_MISTAKES, ids=[" ".join(a) for a in USAGE_MISTAKES])
def test_typing_mistakes_exit_2_with_one_error_line_and_send_nothing(alice: Red7, args: tuple[str, ...]) -> None:
    game = create(alice, "-p", "alice", "-b", "greedy")["game"]
    wait_person(alice, game, "alice")  # the bot's move, if it leads, is made before the snapshot
    before = alice.json("games", "--limit", "1000")
    version = alice.json("show", game)["version"]
    err = fails(alice(*(a.replace(GAME, game) for a in args)), 2)
    errors = [line for line in err.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and errors[0].startswith("Error: ") and err.rstrip().endswith(errors[0]), err
    assert alice.json("games", "--limit", "1000") == before, "a usage error creates nothing"
    assert alice.json("show", game)["version"] == version, "a usage error sends nothing"


def test_refusals_exit_1_with_one_line(alice: Red7, bob: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-p", "bob", "-b", "greedy", prefix="refuse")
    not_held = next(str(c) for c in map(Card, range(49)) if str(c) not in view["hand"])
    assert "Error: rejected: " in one_line_error(alice("move", game, f"p:{not_held}"))  # well-formed, illegal
    assert "no game 'nosuch'" in one_line_error(alice("show", "nosuch"))
    assert "no seat 'zed'" in one_line_error(alice("move", game, "fold", "--as", "zed"))
    assert "cannot join" in one_line_error(bob("join", game, "alice"))  # taken: the referee refuses
    assert "a game" in one_line_error(alice("new", "-p", "a", "-b", "greedy", "--id", game))  # exists already
