"""Entrants with keys of their own (``tournament create --reserve NAME=KEY``): seated with
their key in every game of theirs at creation, never joining; checked by the runner and
by the tournament audit; recorded in the first event only when there are any."""

from __future__ import annotations

import json
import re

import fakeredis
import msgpack
import pytest
from click.testing import CliRunner

from red7es.cli.main import cli
from red7es.service.codec import decode_command
from red7es.service.events import CreateCommand
from red7es.service.tokens import new_token, public_key
from red7es.tournament import TournamentError, TournamentRunner, create_tournament, load
from red7es.tournament.audit import audit_tournament
from red7es.tournament.codec import decode, encode
from red7es.tournament.events import TournamentCreated
from red7es.tournament.ids import game_seed
from red7es.tournament.store import TournamentKeys
from red7es.variant import Variant

from .conftest import Inline, bots, people
from .test_runner import join_as

ANN, BOB = new_token(), new_token()


def _create_command(env: Inline, game: str) -> CreateCommand:
    first = env.service.store.first_commands([game])[0]
    assert first is not None
    command = decode_command(first)[0]
    assert isinstance(command, CreateCommand)
    return command


def play_with_tokens(env: Inline, game: str, tokens: dict[str, str]) -> None:
    """Play the people's seats of a game with their tokens (no joins), each choosing its first
    legal turn, folding in-process, to the end."""
    env.drive(game)
    seats = {name: env.service.seat_of(game, name) for name in tokens}
    for _ in range(2000):
        if env.service.view(game)["status"] == "over":
            return
        for name, seat in seats.items():
            view = env.service.view(game, seat)
            if view.get("legal"):
                env.service.submit(game, name, tokens[name], view["legal"][0])
        env.drive(game)
    raise AssertionError(f"{game} never finished")


def test_entrants_with_keys_are_seated_with_them_in_every_game_and_play_without_joining(inline: Inline) -> None:
    keys = {"ann": public_key(ANN), "bob": public_key(BOB)}
    entrants = [*people("ann", "bob", "cat"), *bots(1)]
    create_tournament(inline.connection, "keyed", entrants, Variant(2), "round-robin", seed="k", keys=keys)
    report = TournamentRunner(inline.service, "keyed", driver=inline.drive).run()
    assert not report.finished
    state = load(inline.connection, "keyed")
    for _r, t in state.paired_games:
        names = [state.spec.entrants[e].name for e in t.seats]
        command = _create_command(inline, t.game)
        assert command.joins == tuple((s, keys[n]) for s, n in enumerate(names) if n in keys)
        inline.drive(t.game)
        view = inline.service.view(t.game)  # ann's and bob's seats are theirs already: no join
        assert all(s["joined"] for s in view["seats"] if s["name"] in keys)
    for _r, t in state.paired_games:
        names = [state.spec.entrants[e].name for e in t.seats]
        tokens = {n: token for n, token in (("ann", ANN), ("bob", BOB)) if n in names}
        if "cat" in names:  # no key of hers: she joins, as every entrant did before keys
            tokens["cat"] = join_as(inline, t.game, "cat")[1]
        play_with_tokens(inline, t.game, tokens)
    report = TournamentRunner(inline.service, "keyed", driver=inline.drive).run()
    assert report.finished
    assert audit_tournament(inline.service, "keyed").ok


def test_a_game_not_seated_with_the_registered_key_is_refused_by_the_runner_and_fails_the_audit(
    inline: Inline,
) -> None:
    """The game of ann's under the tournament's id and seed, but with someone else's key on
    her seat (the operator seating another player): the runner will not follow it, and the
    tournament audit fails it."""
    entrants = [*people("ann"), *bots(1)]
    keys = {"ann": public_key(ANN)}
    create_tournament(inline.connection, "swap", entrants, Variant(2), "round-robin", seed="w", keys=keys)
    runner = TournamentRunner(inline.service, "swap", driver=inline.drive)
    runner.run(wait=False)  # pairs round 1 and creates its game, ann seated with her key
    state = load(inline.connection, "swap")
    [(_r, t)] = state.paired_games
    seats = [state.spec.entrants[e] for e in t.seats]
    for key in inline.connection.scan_iter(f"red7:{{{t.game}}}:*"):
        inline.connection.delete(key)  # the game replaced by one seating bob's key instead
    inline.service.create(
        Variant(2), seats, seed=game_seed(runner.seed, t.game), keys={"ann": public_key(BOB)}, game_id=t.game,
        wait=None,
    )  # fmt: skip
    with pytest.raises(TournamentError, match=f"{t.game} exists but is not this tournament's game"):
        TournamentRunner(inline.service, "swap", driver=inline.drive).run(wait=False)
    play_with_tokens(inline, t.game, {"ann": BOB})
    audit = audit_tournament(inline.service, "swap")
    assert not audit.ok
    seat = [s.name for s in seats].index("ann")
    assert f"game {t.game} seated seat {seat} with key {public_key(BOB)[:16]}… at creation" in audit.line()
    assert f"registered seat {seat} with key {public_key(ANN)[:16]}…" in audit.line()


def test_keys_are_checked_when_the_tournament_is_created(inline: Inline) -> None:
    entrants = [*people("ann"), *bots(2)]
    cases = {
        "a key for 'bot0', who is no person entrant": {"bot0": public_key(ANN)},
        "a key for 'zed', who is no person entrant": {"zed": public_key(ANN)},
        "entrant ann's key must be 64 lower-case hex digits (an Ed25519 public key)": {"ann": "AB" * 32},
        "entrant ann's key is refused: anyone can sign for it": {"ann": "ec" + "ff" * 30 + "7f"},
    }
    for problem, keys in cases.items():
        with pytest.raises(TournamentError, match=re.escape(problem)):
            create_tournament(inline.connection, "bad", entrants, Variant(2), "round-robin", keys=keys)
    two = [*people("ann", "bob"), *bots(1)]
    with pytest.raises(TournamentError, match="one key for two entrants"):
        create_tournament(
            inline.connection,
            "bad",
            two,
            Variant(2),
            "round-robin",
            keys={"ann": public_key(ANN), "bob": public_key(ANN)},
        )
    assert not inline.connection.exists(TournamentKeys("bad").events)


def test_a_tournament_without_keys_is_recorded_as_before() -> None:
    """No "keys" field unless some entrant has a key: older tournaments decode, and new
    ones without keys are byte-identical to what earlier versions wrote."""
    plain = TournamentCreated("t", "t", tuple(bots(2)), Variant(2), "round-robin", 1, "00" * 32, 1)
    raw = encode(plain, 0, b"\x00" * 32, 1)
    assert b"keys" not in raw
    assert decode(raw).event == plain
    keyed = TournamentCreated(
        "t", "t", tuple(people("ann")) + tuple(bots(1)), Variant(2), "round-robin", 1, "00" * 32, 1,
        (("ann", public_key(ANN)),),
    )  # fmt: skip
    assert decode(encode(keyed, 0, b"\x00" * 32, 1)).event == keyed
    assert msgpack.unpackb(encode(keyed, 0, b"\x00" * 32, 1), raw=False)["data"]["keys"] == {"ann": public_key(ANN)}


def test_the_cli_registers_keys_and_refuses_bad_ones_as_usage_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    server = fakeredis.FakeServer()
    monkeypatch.setattr("redis.Redis.from_url", lambda *a, **k: fakeredis.FakeRedis(server=server))
    runner = CliRunner()
    key = public_key(ANN)
    bad = [
        (["-p", "ann", "-b", "greedy", "--reserve", "ann"], "--reserve 'ann': give NAME=KEY"),
        (["-p", "ann", "-b", "greedy", "--reserve", f"greedy={key}"], "'greedy' is no person entrant"),
        (["-p", "ann", "-b", "greedy", "--reserve", "ann=12"], "the key must be 64 lower-case hex digits"),
        (["-p", "ann", "-b", "greedy", "--reserve", "ann=" + "00" * 32], "the key is refused: anyone can sign"),
    ]
    for args, problem in bad:
        result = runner.invoke(cli, ["tournament", "create", "cup", *args, "--url", "redis://x/0"])
        assert result.exit_code == 2 and problem in result.output, result.output
    result = runner.invoke(
        cli, ["tournament", "create", "cup", "-p", "ann", "-b", "greedy", "--reserve", f"ann={key}", "--json",
              "--url", "redis://x/0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["keys"] == {"ann": key}
