"""Which rules are in play: the variant flags of RULES.md, freely combined."""

from __future__ import annotations

from dataclasses import dataclass

from .durations import LONGEST_MS, format_clock, format_duration

__all__ = ["DEFAULT_TARGETS", "Variant", "VariantError"]

# Advanced scoring: the score that ends the game, by number of players.
DEFAULT_TARGETS = {2: 40, 3: 35, 4: 30}


class VariantError(ValueError):
    """Raised for an impossible combination of players and options."""


@dataclass(frozen=True)
class Variant:
    """Variant flags and options for a game of 2 to 4 players.

    ``scoring`` turns on Advanced scoring (play until a target score), ``draw`` the
    optional Advanced draw, ``actions`` the actions of 1, 3, 5 and 7.  Without
    ``scoring`` the match is won by the first player to win ``rounds`` rounds.
    ``target`` overrides the Advanced scoring target (40/35/30 by player count).

    Time controls (RULES.md, Time): ``clock`` is a game clock per seat, ``(base,
    increment)`` in milliseconds; ``turn_time`` a limit on each turn, in milliseconds.
    A game has at most one of them; with neither (the default) nobody is ever timed.
    ``join_time`` (ms, a timed game only) is the join deadline: a person's seat nobody
    has taken that long after the game's creation forfeits (RULES.md, Time, Join deadline).
    """

    players: int = 2
    scoring: bool = False
    draw: bool = False
    actions: bool = False
    rounds: int = 1
    target: int | None = None
    clock: tuple[int, int] | None = None
    turn_time: int | None = None
    join_time: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.players, int) or not 2 <= self.players <= 4:
            raise VariantError(f"Red7 is played by 2 to 4 players, not {self.players!r}")
        if not isinstance(self.rounds, int) or self.rounds < 1:
            raise VariantError(f"rounds must be a positive number, not {self.rounds!r}")
        if self.target is not None and (not isinstance(self.target, int) or self.target < 1):
            raise VariantError(f"target must be a positive number of points, not {self.target!r}")
        if self.target is not None and not self.scoring:
            raise VariantError("a target score needs the scoring variant")
        if self.rounds != 1 and self.scoring:
            raise VariantError("rounds is for the basic game; the scoring variant plays to a target score")
        if self.clock is not None:
            if isinstance(self.clock, list):  # as msgpack reads a pair
                object.__setattr__(self, "clock", tuple(self.clock))
            base, increment = _pair(self.clock)
            if not 0 < base <= LONGEST_MS or not 0 <= increment <= LONGEST_MS:
                raise VariantError(
                    f"a clock is 1 ms to 30 days plus an increment of at most 30 days, not {self.clock!r}"
                )
        if self.turn_time is not None and (type(self.turn_time) is not int or not 0 < self.turn_time <= LONGEST_MS):
            raise VariantError(f"a turn time is 1 ms to 30 days, not {self.turn_time!r}")
        if self.clock is not None and self.turn_time is not None:
            raise VariantError("a game has a clock or a turn time, not both")
        if self.join_time is not None:
            if type(self.join_time) is not int or not 0 < self.join_time <= LONGEST_MS:
                raise VariantError(f"a join deadline is 1 ms to 30 days, not {self.join_time!r}")
            if not self.timed:
                raise VariantError("a join deadline needs a clock or a turn time")

    @property
    def timed(self) -> bool:
        """Whether seats are timed (a clock or a turn time)."""
        return self.clock is not None or self.turn_time is not None

    def describe_time(self) -> str:
        """``clock 5m+5s``, ``30s a turn`` or ``""`` (untimed), and ``, join within 10m``."""
        join = f", join within {format_duration(self.join_time)}" if self.join_time is not None else ""
        if self.clock is not None:
            return f"clock {format_clock(self.clock)}{join}"
        if self.turn_time is not None:
            return f"{format_duration(self.turn_time)} a turn{join}"
        return ""

    @property
    def target_score(self) -> int:
        """The score that ends an Advanced-scoring game."""
        return self.target if self.target is not None else DEFAULT_TARGETS[self.players]

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(name for name in ("scoring", "draw", "actions") if getattr(self, name))

    def describe(self) -> str:
        """Short text such as ``3 players, scoring+draw+actions, target 35``."""
        return f"{self.players} players, {self.describe_rules()}"

    def describe_rules(self) -> str:
        """The rules without the number of players, such as ``scoring+draw+actions, target 35``
        (for a page that says the players already, e.g. a tournament's "3-player tables")."""
        flags = "+".join(self.flags) or "basic"
        extra = (
            f", target {self.target_score}"
            if self.scoring
            else (f", first to {self.rounds} rounds" if self.rounds > 1 else "")
        )
        timed = f", {self.describe_time()}" if self.timed else ""
        return f"{flags}{extra}{timed}"

    def to_dict(self) -> dict[str, object]:
        """The six keys every variant has, and ``clock``/``turn_time``/``join_time`` only when
        set: an untimed game's variant (in GameCreated, Create and the views) is what it always was."""
        data: dict[str, object] = {
            "players": self.players,
            "scoring": self.scoring,
            "draw": self.draw,
            "actions": self.actions,
            "rounds": self.rounds,
            "target": self.target,
        }
        if self.clock is not None:
            data["clock"] = list(self.clock)
        if self.turn_time is not None:
            data["turn_time"] = self.turn_time
        if self.join_time is not None:
            data["join_time"] = self.join_time
        return data

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Variant:
        return cls(**data)  # type: ignore[arg-type]


def _pair(clock: object) -> tuple[int, int]:
    if not isinstance(clock, tuple) or len(clock) != 2 or not all(type(v) is int for v in clock):
        raise VariantError(f"a clock is [base ms, increment ms], not {clock!r}")
    return clock[0], clock[1]
