"""One reader of Redis per gateway process, fanning game changes out to every subscriber.

A subscriber (an open stream, or a submit waiting for the referee's answer) never
reads Redis blocking: it registers with the :class:`Hub` for a game and waits on its
own bounded queue.  The hub holds one connection doing ``XREAD BLOCK`` over the changes
streams of every game that has a subscriber, re-issued (``CLIENT UNBLOCK``) when a game
is added, and puts each new change (its id and fields, as the ``XREAD`` returned them) on
the queues of that game's subscribers.  A stream's notices only wake it: it then reads
what it has not sent yet with a plain ``XRANGE`` from the last change id it sent, with
its view in the same transaction, so a stream can never miss a change or tell one
twice, whatever the timing of its registration.  A submit waiting for its answer reads
nothing: it subscribed before its command was stored, so the change holding the answer
comes after its registration and is among its notices (:meth:`Subscriber.notices`).

The hub never waits on a subscriber.  One whose queue is full (it has not taken the
last :data:`QUEUE_SIZE` notices: its client reads too slowly) is dropped and its
``on_overflow`` called, which ends its HTTP response: it can resume from its last
change id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, NamedTuple, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from red7es.service.connection import backoff
from red7es.service.records import stream_order
from red7es.service.store import Keys, text

__all__ = ["Hub", "Notice", "Subscriber", "QUEUE_SIZE", "is_after"]

log = logging.getLogger(__name__)
T = TypeVar("T")

QUEUE_SIZE = 64  # change notices a subscriber may leave untaken before it is dropped
CONNECTIONS = 50  # pooled connections for the short reads (streams' catch-up reads, nonces, subscribes)
POOL_WAIT = 20.0  # seconds a short read waits for a pooled connection before it fails
BLOCK_MS = 1000  # longest XREAD BLOCK: a game added meanwhile is read at the latest then


class Notice(NamedTuple):
    """One new entry of a subscribed stream, as the hub's ``XREAD`` read it."""

    id: str
    fields: dict[bytes, bytes]


_GONE = Notice("gone", {})  # the queue item that ends a subscriber's wait: it was dropped


def is_after(change_id: str, mark: str) -> bool:
    """True when stream id ``change_id`` comes after ``mark``."""
    return stream_order(change_id) > stream_order(mark)


class Subscriber:
    """One waiter on one stream (a game's changes, or a tournament's events): a bounded
    queue of the stream's new entries, which the hub fills."""

    def __init__(self, game_id: str, size: int = QUEUE_SIZE, key: str | None = None) -> None:
        self.game_id = game_id  # the game (or tournament) the stream is of
        self.key = key if key is not None else Keys(game_id).changes  # the stream the hub reads for it
        self.queue: asyncio.Queue[Notice] = asyncio.Queue(size)
        self.dropped: str | None = None  # why the hub dropped it (one line), once it has
        self.on_overflow: Callable[[], None] | None = None

    def notify(self, notice: Notice) -> bool:
        """Queue a notice; False if the queue is full (the subscriber is too slow)."""
        try:
            self.queue.put_nowait(notice)
        except asyncio.QueueFull:
            return False
        return True

    def drop(self, reason: str, *, overflow: bool = False) -> None:
        """End this subscriber's wait: the next :meth:`wait` raises :class:`Dropped`.  On an
        ``overflow`` its client is not reading: ``on_overflow`` ends its response at once."""
        if self.dropped is not None:
            return
        self.dropped = reason
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(_GONE)  # wakes a waiter; a full queue is not waited on anyway
        if overflow and self.on_overflow is not None:
            self.on_overflow()

    async def wait(self, after: str, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a change after ``after``; whether one came.

        Notices of changes up to ``after`` (already sent) are taken and ignored.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if self.dropped is not None:
                raise Dropped(self.dropped)
            left = deadline - loop.time()
            if left <= 0:
                return False
            try:
                notice = await asyncio.wait_for(self.queue.get(), left)
            except asyncio.TimeoutError:
                return False
            if notice is _GONE:
                continue  # the loop raises Dropped
            if is_after(notice.id, after):
                self._take_rest()
                return True

    async def notices(self, timeout: float) -> list[Notice]:
        """Every notice queued, in stream order, waiting up to ``timeout`` seconds for the
        first ([] if none came); :class:`Dropped` once the hub dropped this subscriber and
        every notice queued before that was taken (an answer among them is not lost).

        Only for a subscriber that needs no entry from before its registration: the hub
        tells it every entry written after :meth:`Hub.subscribe` returned (and maybe a few
        from before, which it can tell by their ids)."""
        if self.queue.empty() and self.dropped is not None:
            raise Dropped(self.dropped)
        try:
            notice = await asyncio.wait_for(self.queue.get(), timeout)
        except asyncio.TimeoutError:
            return []
        taken: list[Notice] = []
        while notice is not _GONE:
            taken.append(notice)
            if self.queue.empty():
                return taken
            notice = self.queue.get_nowait()
        if not taken:
            raise Dropped(self.dropped or "dropped")
        self.queue.put_nowait(_GONE)  # (room: one was just taken) the next call raises
        return taken

    def drain(self) -> None:
        """Take every notice queued (its reader reads all there is anyway): a subscriber
        busy elsewhere for a while keeps room for the notices to come."""
        self._take_rest()

    def _take_rest(self) -> None:
        """Empty the queue: the reader that follows reads every change there is."""
        while not self.queue.empty():
            if self.queue.get_nowait() is _GONE:
                self.queue.put_nowait(_GONE)
                return


class Dropped(RuntimeError):
    """The hub dropped this subscriber (too slow, or the hub lost Redis): one line why."""


class Hub:
    """The process's one blocking reader of games' changes streams."""

    def __init__(
        self, url: str, *, queue_size: int = QUEUE_SIZE, block_ms: int = BLOCK_MS, connections: int = CONNECTIONS
    ) -> None:
        self.url = url
        self.queue_size = queue_size
        self.block_ms = block_ms
        # Short reads, pooled.  A change wakes every stream of its game at once and each
        # reads it: a pool that waits for a free connection, so a burst of hundreds of
        # streams queues for a bounded number of connections instead of failing (redis-py's
        # default pool raises "Too many connections" past 100, which ended those streams).
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=connections, timeout=POOL_WAIT)
        self.redis: aioredis.Redis = aioredis.Redis.from_pool(pool)
        self._subscribers: dict[str, set[Subscriber]] = {}
        self._cursors: dict[str, str] = {}  # game -> last change id the hub has delivered
        self._reads: dict[str, dict[Hashable, asyncio.Task[Any]]] = {}  # game -> shared reads as of its cursor
        self._wanted = asyncio.Event()  # set when a game is added
        self._reader_id: int | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def games(self) -> int:
        return len(self._subscribers)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="red7-gateway-hub")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for subscribers in list(self._subscribers.values()):
            for subscriber in list(subscribers):
                subscriber.drop("the gateway is stopping")
        await self.redis.aclose()

    async def subscribe(self, game_id: str) -> Subscriber:
        """A new subscriber to ``game_id``'s changes: notified of every change written
        after this returns (earlier ones it reads itself)."""
        return await self.subscribe_stream(Keys(game_id).changes, game_id)

    async def subscribe_stream(self, key: str, owner: str) -> Subscriber:
        """A new subscriber to the stream ``key`` (of game or tournament ``owner``): notified
        of every entry written after this returns (earlier ones it reads itself).  The
        hub's one ``XREAD`` covers every stream subscribed to, whatever its kind."""
        subscriber = Subscriber(owner, self.queue_size, key)
        added = False
        if key not in self._subscribers:
            last = await self.redis.xrevrange(key, max="+", min="-", count=1)
            added = key not in self._subscribers  # (another subscribe may have come meanwhile)
            if added:
                self._subscribers[key] = set()
                self._cursors[key] = text(last[0][0]) if last else "0-0"
                self._wanted.set()
        # Registered before the next await: an unsubscribe meanwhile could empty and delete
        # the stream's entry (a KeyError, a 500) and its cursor (no notices ever).
        self._subscribers[key].add(subscriber)
        if added:
            await self._interrupt()
        return subscriber

    async def shared(self, game_id: str, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
        """``read()``, shared by every caller asking for the same ``key`` of a game while
        the hub's cursor for it stays where it is.

        A change wakes every stream of its game at once, and each would read the same
        changes and view: 10 streams, 10 transactions.  A read started after the hub
        delivered change C sees every change up to C, so it serves any subscriber woken
        by C or earlier; the next delivery drops the game's shared reads.  A failed read
        is not kept (the next caller tries again).
        """
        reads = self._reads.setdefault(Keys(game_id).changes, {})
        task = reads.get(key)
        if task is None:
            task = asyncio.ensure_future(read())
            reads[key] = task

            def forget(done: asyncio.Task[Any]) -> None:
                if (done.cancelled() or done.exception() is not None) and reads.get(key) is done:
                    del reads[key]

            task.add_done_callback(forget)
        return await asyncio.shield(task)  # a caller that goes away does not cancel the others' read

    def unsubscribe(self, subscriber: Subscriber) -> None:
        subscribers = self._subscribers.get(subscriber.key)
        if subscribers is None:
            return
        subscribers.discard(subscriber)
        if not subscribers:
            del self._subscribers[subscriber.key]
            del self._cursors[subscriber.key]
            self._reads.pop(subscriber.key, None)

    async def _interrupt(self) -> None:
        """Make the reader re-issue its XREAD with the new set of games now."""
        if self._reader_id is None:
            return
        with contextlib.suppress(Exception):  # at worst the read ends by itself within block_ms
            await self.redis.client_unblock(self._reader_id)

    async def _run(self) -> None:
        delays = backoff()
        while True:
            reader = aioredis.Redis.from_url(
                self.url, single_connection_client=True, socket_timeout=self.block_ms / 1000 + 10
            )
            try:
                self._reader_id = await reader.client_id()
                delays = backoff()
                await self._read(reader)
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                self._reader_id = None
                log.warning("gateway hub: Redis unreachable (%s); retrying", exc)
                self._drop_all("lost the connection to Redis: resume from your last change id")
                await asyncio.sleep(next(delays))
            except ResponseError as exc:
                # One game's changes key holds something else (written by hand): XREAD of
                # all of them fails, so find it and drop its subscribers, not everyone's.
                log.warning("gateway hub: %s", exc)
                with contextlib.suppress(Exception):
                    if await self._drop_unreadable(str(exc)):
                        continue
                self._drop_all(f"the gateway cannot read this game's changes: {exc}")
                await asyncio.sleep(next(delays))
            except Exception as exc:  # the one reader must outlive any surprise: its streams resume
                log.exception("gateway hub: %s", exc)
                self._drop_all("the gateway's reader failed: resume from your last change id")
                await asyncio.sleep(next(delays))
            finally:
                self._reader_id = None
                with contextlib.suppress(Exception):
                    await reader.aclose()

    async def _read(self, reader: aioredis.Redis) -> None:
        while True:
            if not self._subscribers:
                self._wanted.clear()
                await self._wanted.wait()
                continue
            self._wanted.clear()
            streams: dict[Any, Any] = dict(self._cursors)
            reply: Any = await reader.xread(streams, block=self.block_ms, count=100)
            for stream, rows in reply or []:  # RESP2, this connection's protocol: [[stream, entries]]
                for change_id, fields in rows:
                    self._deliver(text(stream), Notice(text(change_id), fields))

    def _deliver(self, key: str, notice: Notice) -> None:
        """Tell every subscriber of the stream; drop the ones too slow to take it (no await:
        a subscriber added later reads this change itself)."""
        if key not in self._cursors:
            return  # its last subscriber left while the read was on its way
        self._cursors[key] = notice.id
        self._reads.pop(key, None)  # reads from before this change cannot serve its subscribers
        for subscriber in list(self._subscribers[key]):
            if not subscriber.notify(notice):
                self.unsubscribe(subscriber)
                subscriber.drop(
                    f"too slow: {self.queue_size} changes not taken; resume from your last id", overflow=True
                )

    async def _drop_unreadable(self, problem: str) -> bool:
        """Drop the subscribers of every stream whose key is not a stream; whether any was."""
        keys = list(self._cursors)
        pipe = self.redis.pipeline(transaction=False)
        for key in keys:
            pipe.type(key)
        kinds = await pipe.execute()
        found = False
        for key, kind in zip(keys, kinds, strict=True):
            if text(kind) not in ("stream", "none"):
                found = True
                owner = next((s.game_id for s in self._subscribers.get(key, ())), key)
                what = f"game {owner}" if key == Keys(owner).changes else f"tournament {owner}"
                reason = f"{what}: {key} is a {text(kind)}, not a stream ({problem})"
                for subscriber in list(self._subscribers.get(key, ())):
                    self.unsubscribe(subscriber)
                    subscriber.drop(reason)
        return found

    def _drop_all(self, reason: str) -> None:
        for subscribers in list(self._subscribers.values()):
            for subscriber in list(subscribers):
                subscriber.drop(reason)
        self._subscribers.clear()
        self._cursors.clear()
        self._reads.clear()
