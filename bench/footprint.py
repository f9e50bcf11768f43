"""Footprint benchmark: the Redis memory one finished game keeps, by key, per kind of game.

Plays all-bot games to the end with a worker folding them in this process (the same
``WorkerContext`` a ``red7 worker`` runs), on a private Redis, then sums ``MEMORY USAGE``
(``SAMPLES 0``: every element counted) of every key of each game at three moments:
``finished`` (at game over), ``compacted`` (the compaction a worker runs when it is due,
with the log kept as a stream, as before logs were sealed) and ``sealed`` (the compaction
as it is now: the log sealed into one value, red7es.service.sealing).  Bots decide from a
fixed seed per game, so two checkouts measured alike play the very same games.

With ``--archived`` it then runs ``red7 archive``'s step on every game (record files in a
temporary directory) and measures what an archived game still costs in Redis: its entry
in ``red7:games`` and its stub in ``red7:archived``, measured on 100,000 copies of a real
stub (each under its own 8-hex-digit id, as ``red7 new`` makes them), so that Redis keeps
both as it would for a large index (a skiplist and a hash table, not listpacks).

Usage:  python bench/footprint.py [--games 20] [--json] [--archived]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import redis

from red7es import Variant
from red7es.service.client import GameService
from red7es.service.compaction import compact_finished
from red7es.service.events import BOT, SeatSpec
from red7es.service.redis_server import RedisServer, free_port, redis_binary

STAGES = ("finished", "compacted", "sealed")  # at game over; compacted, log kept a stream; compacted and sealed
KINDS: dict[str, tuple[Variant, str]] = {
    "2p one round": (Variant(2, rounds=1), "greedy"),
    "2p first to 5": (Variant(2, rounds=5), "greedy"),
    "4p advanced": (Variant(4, scoring=True, draw=True, actions=True), "greedy"),
}


def play(service: GameService, variant: Variant, bot: str, seed: str) -> str:
    """One all-bot game played to its end in this process; its id."""
    from red7es.workers.context import WorkerContext

    seats = [SeatSpec(f"bot{s}", BOT, bot) for s in range(variant.players)]
    created = service.create(variant, seats, seed=seed, wait=None)
    context = WorkerContext(service.redis)
    for _ in range(10_000):
        if service.store.meta(created.game_id).get("status") == "over":
            break
        context.advance(created.game_id)
    else:
        raise RuntimeError(f"game {created.game_id} did not finish")
    context.sweep()  # what a live worker does next: nothing for a game it finished itself
    return created.game_id


def footprint(conn: redis.Redis, game_id: str) -> dict[str, int]:
    """Bytes per key of one game (MEMORY USAGE, every element sampled)."""
    sizes: dict[str, int] = {}
    for key in conn.scan_iter(match=f"red7:{{{game_id}}}:*", count=1000):
        name = key.decode().split("}:", 1)[1]
        name = "view:<seat>" if name.startswith("view:") and name != "view:public" else name
        sizes[name] = sizes.get(name, 0) + int(conn.memory_usage(key, samples=0) or 0)
    return sizes


def archived_cost(conn: redis.Redis, directory: Path, copies: int = 100_000) -> dict[str, float]:
    """Bytes per archived game left in Redis (index entry and stub), at scale."""
    import secrets

    from red7es.service.archive import ARCHIVED, archive_game
    from red7es.service.store import INDEX

    ids = [g.decode() for g in conn.zrange(INDEX, 0, -1)]
    for gid in ids:
        archive_game(conn, gid, directory)
    left = sorted(k.decode() for k in conn.scan_iter(match="red7:{*"))
    if left:
        raise RuntimeError(f"archived games left keys: {left[:5]}")
    stubs = conn.hgetall(ARCHIVED)
    sample_id, sample = next(iter(stubs.items()))
    pipe = conn.pipeline(transaction=False)
    for _ in range(copies):
        new = secrets.token_hex(4)
        pipe.hset("scale:archived", new, sample.replace(sample_id, new.encode()))
        pipe.zadd("scale:games", {new: 1796000000000})
        if len(pipe) >= 2000:
            pipe.execute()
    pipe.execute()
    n = conn.hlen("scale:archived")
    stub = int(conn.memory_usage("scale:archived", samples=0) or 0) / n
    index = int(conn.memory_usage("scale:games", samples=0) or 0) / conn.zcard("scale:games")
    files = [p.stat().st_size for p in directory.iterdir()]
    return {
        "total": stub + index,
        "stub": stub,
        "index entry": index,
        "stub bytes": len(sample),
        "record file min": min(files),
        "record file mean": sum(files) / len(files),
        "record file max": max(files),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games of each kind")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--archived", action="store_true", help="also measure an archived game's stub")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
        try:
            conn = redis.Redis.from_url(server.url)
            service = GameService(conn, wake=lambda _game: None)
            for kind, (variant, bot) in KINDS.items():
                stages: dict[str, dict[str, list[int]]] = {stage: {} for stage in STAGES}
                for i in range(args.games):
                    gid = play(service, variant, bot, f"footprint-{kind}-{i}")
                    for stage in STAGES:
                        if stage == "compacted":
                            compact_finished(conn, gid, seal=False)  # what a worker did before sealing
                        elif stage == "sealed":
                            compact_finished(conn, gid)  # what a worker does when the compaction is due
                        for name, size in footprint(conn, gid).items():
                            stages[stage].setdefault(name, []).append(size)
                for stage, by_key in stages.items():
                    row: dict[str, float] = {"total": sum(sum(v) for v in by_key.values()) / args.games}
                    row.update({name: sum(v) / args.games for name, v in sorted(by_key.items())})
                    results[f"{kind}, {stage}"] = row
            if args.archived:
                results["archived"] = archived_cost(conn, Path(tmp) / "archive")
        finally:
            server.stop()
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for kind, row in results.items():
        parts = ", ".join(f"{k} {v:,.0f}" for k, v in row.items() if k != "total")
        print(f"{kind}: {row['total']:,.0f} B per finished game ({parts})")


if __name__ == "__main__":
    main()
