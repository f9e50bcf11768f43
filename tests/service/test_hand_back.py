"""The append that ends a fold hands the game back (issue #23): it releases the worker's
lease, clears the nudge and takes the game off the work index in the same script, where
release_look.lua took a round trip of its own after every fold."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from red7es.service.client import GameService
from red7es.service.folding import Folder, HandBack
from red7es.service.store import GameStore, Keys
from red7es.service.work_index import WORK
from red7es.variant import Variant
from red7es.workers import context as context_module
from red7es.workers.context import WorkerContext

from .helpers import all_bot_game, bot, offline_service, person


def _person_game(svc: GameService, game_id: str) -> str:
    """A person against greedy, created and folded up to the person's first turn; her token."""
    created = svc.create(
        Variant(2), [person("me"), bot("b")], seed=f"hb-{game_id}", game_id=game_id, join=["me"], wait=None
    )
    WorkerContext(svc.store.redis, owner="setup").advance(game_id)
    return created.tokens["me"]


def _turn(svc: GameService, game_id: str) -> str | None:
    """The person's first legal turn (a fold only when it is the only one), None when the game is over."""
    view = svc.view(game_id, 0)
    if view["status"] == "over":
        return None
    assert view["to_move"] == 0, view
    legal = view["legal"]
    return str(legal[0] if legal[0] != "fold" or len(legal) == 1 else legal[-1])


def _on_index(connection: redis.Redis, game_id: str) -> bool:
    return connection.zscore(WORK, game_id) is not None


def test_a_fold_with_nothing_left_is_handed_back_by_its_last_append(
    any_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's turn and the bot's reply: after the fold the lease and the nudge are gone
    and the game is off the work index (a cluster's index, in another slot, by the worker
    after the append), and release_look.lua was never run."""
    svc = offline_service(any_redis)
    token = _person_game(svc, "hb1")
    ctx = WorkerContext(any_redis, owner="me")

    def not_called(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("released again after the append handed the game back")

    monkeypatch.setattr(ctx.store, "release_and_look", not_called)
    for _ in range(3):
        turn = _turn(svc, "hb1")
        if turn is None:
            break
        svc.submit("hb1", "me", token, turn)
        assert _on_index(any_redis, "hb1") and any_redis.exists(Keys("hb1").nudge)
        result = ctx.advance("hb1")
        assert result["commands"] == 1
        assert any_redis.exists(Keys("hb1").lease, Keys("hb1").nudge) == 0
        assert not _on_index(any_redis, "hb1")


def test_a_lease_that_is_not_the_workers_is_left_where_it_is(fake_redis: Any) -> None:
    """As release_look.lua: the nudge is cleared, another's lease stays (it is the append's
    compare-and-append that keeps two workers from both writing, not the lease)."""
    svc = offline_service(fake_redis)
    token = _person_game(svc, "hb2")
    turn = _turn(svc, "hb2")
    assert turn is not None
    svc.submit("hb2", "me", token, turn)
    GameStore(fake_redis).acquire_lease("hb2", "another", 10_000)
    hand_back = HandBack("me")
    progress = Folder(svc.store).advance("hb2", hand_back=hand_back)
    assert progress.commands == 1 and hand_back.done
    assert fake_redis.get(Keys("hb2").lease) == b"another" and not fake_redis.exists(Keys("hb2").nudge)


def test_a_game_left_with_a_bot_to_move_is_not_handed_back(fake_redis: Any) -> None:
    """A fold stopped with work left (a bot's decision left to a slow-bot worker) keeps the
    game: the append of the person's answer hands nothing back, the lease stays the
    worker's, and the worker hands the game on as before."""
    svc = offline_service(fake_redis)
    folder = Folder(svc.store)
    for n in range(20):  # a deal where the person moves first
        game_id = f"hb3-{n}"
        created = svc.create(
            Variant(2),
            [person("me"), bot("slow", "ismcts:time=2")],
            seed=f"hb-slow-{n}",
            game_id=game_id,
            join=["me"],
            wait=None,
        )
        folder.advance(game_id, quick=True)
        if svc.view(game_id, 0).get("to_move") == 0:
            break
    turn = _turn(svc, game_id)
    assert turn is not None
    svc.submit(game_id, "me", created.tokens["me"], turn)
    GameStore(fake_redis).acquire_lease(game_id, "me", 10_000)
    hand_back = HandBack("me")
    progress = folder.advance(game_id, quick=True, hand_back=hand_back)
    assert progress.commands == 1 and progress.slow
    assert not hand_back.done
    assert fake_redis.get(Keys(game_id).lease) == b"me" and fake_redis.exists(Keys(game_id).nudge)


def test_the_keepalive_never_takes_back_a_lease_the_append_handed_back(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keep-alive thread takes back a lease that lapsed (a Redis stall); it must not take
    back one the append has just released, or the game would stay closed to other workers
    until the lease ran out. With the keep-alive firing every half millisecond, no fold of
    a whole game leaves a lease behind."""
    monkeypatch.setattr(context_module, "KEEPALIVE_SECONDS", 0.0005)
    svc = offline_service(real_redis)
    token = _person_game(svc, "hb4")
    ctx = WorkerContext(real_redis, owner="me")
    ctx.beat = lambda: None  # (the heartbeat's round trip would only slow the thread down)
    folds = 0
    while (turn := _turn(svc, "hb4")) is not None:
        svc.submit("hb4", "me", token, turn)
        ctx.advance("hb4")
        folds += 1
        assert real_redis.get(Keys("hb4").lease) is None, f"a lease was left after fold {folds}"
    assert folds >= 3


def test_the_append_that_ends_the_game_hands_nothing_back(fake_redis: Any) -> None:
    """The worker finishing a game keeps its lease and work index entry until it has
    forgotten the seed and scheduled the compaction (killed first, the sweep finds the
    game on the index): the game-over append hands nothing back, the release after does."""
    svc = offline_service(fake_redis)
    all_bot_game(svc, "hb5", players=2)
    GameStore(fake_redis).acquire_lease("hb5", "me", 10_000)
    hand_back = HandBack("me")
    progress = Folder(svc.store).advance("hb5", hand_back=hand_back)
    assert svc.store.meta("hb5")["status"] == "over" and progress.bot_moves > 0
    assert not hand_back.done
    assert fake_redis.get(Keys("hb5").lease) == b"me"
    all_bot_game(svc, "hb6", players=2)
    WorkerContext(fake_redis, owner="me").advance("hb6")
    assert svc.store.meta("hb6")["status"] == "over" and fake_redis.get(Keys("hb6").lease) is None
    assert not _on_index(fake_redis, "hb6") and not fake_redis.exists(Keys("hb6").secret)
