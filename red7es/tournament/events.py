"""The events of a tournament: what was decided, in the order it was decided.

A tournament is nothing but its own event stream (``red7:t:{T}:events``): every
standing, rating and report is folded from these events plus the games' own logs.
They are plain frozen dataclasses; :mod:`red7es.tournament.codec` turns them into bytes.

Entrants are referred to by their index in ``TournamentCreated.entrants`` and seats by
their position in a table, so a rename can never make two events disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..facts import Outcome
from ..game import ABORTED, ADJUDICATED, NO_SHOW
from ..service.events import SeatSpec
from ..variant import Variant

__all__ = [
    "FORFEITS_PLACED",
    "TOURNAMENT_RULES",
    "VOID_WORDS",
    "ROUND_ROBIN",
    "SWISS",
    "FORMATS",
    "TournamentCreated",
    "Seating",
    "RoundPaired",
    "GameFinished",
    "TournamentFinished",
    "EntrantWithdrew",
    "TournamentEvent",
]

# A tournament's rules version (TournamentCreated.rules): 1, every tournament created
# before forfeits were placed; 2, a game's forfeited seats are recorded with its result
# and finish below every seat still in it (docs/tournaments.md, Points); 3, with the
# reason each went out.  Old
# tournaments keep being run and audited under the rules they were created with.
TOURNAMENT_RULES = 3
FORFEITS_PLACED = 2
# Rules 3: a result names why each forfeited seat went out (GameFinished.forfeit_reasons).
FORFEIT_REASONS = 3

# How a game with no result ended, as standings, show and the report say it (GameFinished.void).
VOID_WORDS = {
    ABORTED: "aborted before anyone moved",
    ADJUDICATED: "adjudicated with no winner",
    NO_SHOW: "nobody came by the join deadline",
}

ROUND_ROBIN = "round-robin"
SWISS = "swiss"
FORMATS = (ROUND_ROBIN, SWISS)


@dataclass(frozen=True)
class TournamentCreated:
    """Event 0: who plays, under which rules, in which format, and the seed's commitment.

    The seed itself stays secret (it derives every game's seed) until
    :class:`TournamentFinished` reveals it; ``commitment`` is its SHA-256, public from
    the start, and also keys the draw of lots used by pairing (so anyone can re-derive
    the pairings without the seed).
    """

    tournament: str
    name: str
    entrants: tuple[SeatSpec, ...]
    variant: Variant  # variant.players is the table size
    format: str
    rounds: int
    commitment: str
    created: int  # milliseconds since the epoch
    # (entrant name, Ed25519 public key) of the people entrants registered with a key of
    # their own: the runner seats each in every game of theirs with it at creation, so
    # the seat is theirs alone, with no join (playable over the gateway). Sorted by name.
    keys: tuple[tuple[str, str], ...] = ()
    rules: int = 1  # TOURNAMENT_RULES when it was created (1: written with no "rules" field)

    @property
    def places_forfeits(self) -> bool:
        """Whether its results record forfeited seats, which finish last (rules 2 on)."""
        return self.rules >= FORFEITS_PLACED

    @property
    def names_forfeit_reasons(self) -> bool:
        """Whether its results record why each forfeited seat went out (rules 3 on)."""
        return self.rules >= FORFEIT_REASONS

    @property
    def table_size(self) -> int:
        return self.variant.players

    def key_of(self, name: str) -> str | None:
        """The public key entrant ``name`` registered, or None."""
        return dict(self.keys).get(name)


@dataclass(frozen=True)
class Seating:
    """One table of a round: its game id and the entrants (by index) in seat order."""

    table: int  # 1-based within the round
    game: str
    seats: tuple[int, ...]


@dataclass(frozen=True)
class RoundPaired:
    """A round's tables and byes, written before any of its games is created."""

    round: int  # 1-based
    tables: tuple[Seating, ...]
    byes: tuple[int, ...]


@dataclass(frozen=True)
class GameFinished:
    """A game of the tournament ended: its outcome (by seat) and where its log stood.

    ``version`` and ``head`` pin the result to the game's hash-chained log: event
    ``version - 1`` of that log hashes to ``head``, so the audit can prove which log the
    result was read from.
    """

    round: int
    game: str
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    round_wins: tuple[int, ...]
    reason: str
    version: int
    head: str  # hex SHA-256
    # Seats out of the game (RULES.md, Time and Resigning), the first out first: they
    # finish below every seat still in it.  Recorded under tournament rules 2 on only.
    forfeited: tuple[int, ...] = ()
    # Why each of ``forfeited`` went out, in the same order (Forfeited's reasons: "time",
    # "resigned", "withdrawn", "no-show").  Recorded under tournament rules 3 on only.
    forfeit_reasons: tuple[str, ...] = ()

    @property
    def aborted(self) -> bool:
        """Whether the game was aborted before anyone moved (RULES.md, Aborting)."""
        return self.reason == ABORTED

    @property
    def void(self) -> bool:
        """A game with no result: aborted, adjudicated with no winner, or nobody came by its
        join deadline (RULES.md, Aborting, Adjudication and Time).  Every seat scores it as a loss and it is not rated
        (docs/tournaments.md, Aborted and adjudicated games)."""
        return not self.winners and self.reason in (ABORTED, ADJUDICATED, NO_SHOW)

    @classmethod
    def of(
        cls,
        spec: TournamentCreated,
        round_number: int,
        game: str,
        outcome: Outcome,
        version: int,
        head: str,
        reasons: Sequence[str] = (),
    ) -> GameFinished:
        """The result of ``game`` as its log's GameOver states it, pinned at ``version``/``head``;
        with its forfeited seats when the tournament's rules (``spec``) place them, and why
        each went out (``reasons``, in the order of ``outcome.forfeited``) when they name it.

        Given the spec rather than a flag, so that the runner recording a result and the
        audit re-deriving it from the log cannot read the rules differently."""
        forfeited = outcome.forfeited if spec.places_forfeits else ()
        why = tuple(reasons) if spec.names_forfeit_reasons and forfeited else ()
        return cls(
            round_number,
            game,
            outcome.winners,
            outcome.scores,
            outcome.round_wins,
            outcome.reason,
            version,
            head,
            forfeited,
            why,
        )


@dataclass(frozen=True)
class EntrantWithdrew:
    """The organiser withdrew an entrant (``red7 tournament withdraw``; docs/tournaments.md,
    Withdrawing), for ``reason``.

    From then on Swiss pairs the entrant no more (no table, no bye); every game of theirs
    not recorded yet, paired before or (round robin) after, has their seat withdrawn by the
    operator (RULES.md, Withdrawal), so it forfeits and the others play on.  Results already
    recorded stand.
    """

    entrant: int
    reason: str


@dataclass(frozen=True)
class TournamentFinished:
    """Every round was played and recorded; the seed is revealed for the audit."""

    seed: str  # hex; SHA-256 of it equals TournamentCreated.commitment


TournamentEvent = TournamentCreated | RoundPaired | GameFinished | EntrantWithdrew | TournamentFinished
