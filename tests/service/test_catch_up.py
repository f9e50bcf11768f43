"""Two workers taking a game's turns in turn: the one whose warm table fell behind
catches up by folding only the events it missed (issues #17, #23: rebuilding the
whole game from its log on every other turn made a person's answer 2.5 times slower
with two workers than with one), and the game is exactly what a rebuild makes."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from red7es.service.client import GameService
from red7es.service.folding import Folder
from red7es.service.store import GameStore
from red7es.service.table import Table
from red7es.variant import Variant

from .helpers import bot, check_game, decoded_log, fold, offline_service, person


def _choose(legal: list[str]) -> str:
    """The first legal turn that does not fold (folding ends a 2-player round at once)."""
    return legal[0] if legal[0] != "fold" or len(legal) == 1 else legal[-1]


def _play(svc: GameService, folders: list[Folder], seed: str, seats: int = 2) -> str:
    """A game of ann against bots, her turns folded by each folder in turn; its id."""
    created = svc.create(
        Variant(seats, rounds=2),
        [person("ann"), *(bot(f"bot{i}") for i in range(1, seats))],
        seed=seed,
        join=["ann"],
        wait=None,
    )
    game, token = created.game_id, created.tokens["ann"]
    fold(folders[0], game)
    turn = 1
    while (view := svc.view(game, 0))["status"] != "over":
        assert view["to_move"] == 0 and view["legal"], view
        svc.submit(game, "ann", token, _choose(view["legal"]))
        fold(folders[turn % len(folders)], game)
        turn += 1
    return game


def _rebuilt_views(store: GameStore, game: str) -> dict[str, bytes | None]:
    table = Table.rebuild([r.event for r in decoded_log(store, game)], store.seed(game))
    version = len(store.log(game))
    return dict(zip(table.view_keys(), [store.redis.get(k) for k in table.view_keys()], strict=True)) | {
        "rebuilt": b"".join(table.packed_views(version).values())
    }


@pytest.mark.parametrize(("seed", "seats"), [("catch-up-1", 2), ("catch-up-2", 2), ("catch-up-3", 3)])
def test_two_folders_in_turn_catch_up_without_reading_the_log_and_make_the_rebuilt_game(
    fake_redis: redis.Redis, seed: str, seats: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = offline_service(fake_redis)
    folders = [Folder(svc.store), Folder(svc.store)]
    whole_reads: list[str] = []
    real_log = GameStore.log

    def counted(store: GameStore, game_id: str, *args: Any) -> list[bytes]:
        whole_reads.append(game_id)
        return real_log(store, game_id, *args)

    monkeypatch.setattr(GameStore, "log", counted)
    game = _play(svc, folders, seed, seats)
    assert whole_reads == [game]  # the second folder's first turn: no warm table yet; then never again
    monkeypatch.setattr(GameStore, "log", real_log)
    check_game(svc.store, game)
    views = _rebuilt_views(svc.store, game)
    assert b"".join(v or b"" for k, v in views.items() if k != "rebuilt") == views["rebuilt"]


def _one_behind(fake_redis: redis.Redis) -> tuple[GameService, Folder, str, str]:
    """A game two folders have folded, the second left one turn of ann's behind: the
    service, that folder, the game and ann's token (ann to move again)."""
    svc = offline_service(fake_redis)
    folders = [Folder(svc.store), Folder(svc.store)]
    created = svc.create(
        Variant(2, rounds=3), [person("ann"), bot("bob")], seed="catch-up-views", join=["ann"], wait=None
    )
    game, token = created.game_id, created.tokens["ann"]
    fold(folders[0], game)
    fold(folders[1], game)  # both warm
    svc.submit(game, "ann", token, _choose(svc.view(game, 0)["legal"]))
    fold(folders[0], game)  # folders[1] is now behind
    view = svc.view(game, 0)
    assert view["status"] == "playing" and view["to_move"] == 0  # (this seed's game goes on)
    return svc, folders[1], game, token


def test_a_table_whose_views_differ_from_the_stored_ones_is_rebuilt_from_the_log(
    fake_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stored views are the check on a catch-up: a table that would make other views
    # (a view written by hand here) is dropped and the game rebuilt from its whole log.
    svc, behind, game, token = _one_behind(fake_redis)
    public = behind.tables[game].view_keys()[0]
    fake_redis.set(public, fake_redis.get(public) + b"\x00")  # (msgpack ignores nothing: bytes differ)
    whole_reads: list[str] = []
    real_log = GameStore.log
    monkeypatch.setattr(GameStore, "log", lambda s, g, *a: whole_reads.append(g) or real_log(s, g, *a))
    svc.submit(game, "ann", token, _choose(svc.view(game, 0)["legal"]))
    fold(behind, game)
    assert whole_reads == [game]
    check_game(svc.store, game)


def test_a_behind_table_whose_stored_view_cannot_be_read_is_rebuilt_not_failed(fake_redis: redis.Redis) -> None:
    # A seat's view written by hand as a hash failed the catch-up's read (WRONGTYPE) and
    # with it the fold, where a rebuild (which writes the views over) plays on.
    svc, behind, game, token = _one_behind(fake_redis)
    legal = svc.view(game, 0)["legal"]
    key = behind.tables[game].view_keys()[1]
    fake_redis.delete(key)
    fake_redis.hset(key, "x", "y")
    svc.submit(game, "ann", token, _choose(legal))
    fold(behind, game)  # rebuilt from the log, the view written over
    assert fake_redis.type(key) == b"string"
    check_game(svc.store, game)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.text("abcdef0123456789", min_size=4, max_size=8),
    players=st.integers(2, 4),
    rules=st.sampled_from([{}, {"draw": True}, {"actions": True}, {"scoring": True, "draw": True, "actions": True}]),
)
def test_any_game_two_folders_play_in_turn_is_the_game_its_log_rebuilds(
    fake_redis: redis.Redis, seed: str, players: int, rules: dict[str, bool]
) -> None:
    # Property: whatever the variant and the deal, the views the catching-up folders wrote
    # at the end are the rebuilt game's, and the stored game holds (check_game).
    fake_redis.flushall()
    svc = offline_service(fake_redis)
    folders = [Folder(svc.store), Folder(svc.store)]
    variant = Variant(players, rounds=2, **rules) if not rules.get("scoring") else Variant(players, **rules)
    created = svc.create(
        variant,
        [person("ann"), *(bot(f"bot{i}", "random") for i in range(1, players))],
        seed=seed,
        join=["ann"],
        wait=None,
    )
    game, token = created.game_id, created.tokens["ann"]
    fold(folders[0], game)
    for turn in range(1, 400):
        view = svc.view(game, 0)
        if view["status"] == "over":
            break
        svc.submit(game, "ann", token, _choose(view["legal"]))
        fold(folders[turn % 2], game)
    check_game(svc.store, game)
    views = _rebuilt_views(svc.store, game)
    assert b"".join(v or b"" for k, v in views.items() if k != "rebuilt") == views["rebuilt"]
