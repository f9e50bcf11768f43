"""Tournaments of Red7: round robin and Swiss, run on the worker pool, resumable, auditable.

A tournament is its own event stream in Redis (``red7:t:{T}:events``); its games are
ordinary hosted games with fixed ids (``t-<T>-r<round>-<table>``) and seeds derived
from the tournament seed.  Modules, one job each:

* :mod:`.events`, :mod:`.codec`, :mod:`.store`, :mod:`.state` — the stream: what is
  written, how it is encoded, where it lives, how it folds;
* :mod:`.pairing` — who plays whom, in which seats;
* :mod:`.points`, :mod:`.rating`, :mod:`.standings` — points, OpenSkill, tie-breaks;
* :mod:`.lifecycle`, :mod:`.runner` — creating and running a tournament;
* :mod:`.audit`, :mod:`.report` — proving it and showing it.

The rules are in docs/tournaments.md.
"""

from __future__ import annotations

from .events import FORMATS, ROUND_ROBIN, SWISS, GameFinished, RoundPaired, Seating, TournamentCreated
from .ids import NoSuchTournament, TournamentError, game_id
from .lifecycle import create_tournament, load
from .runner import RunReport, TournamentRunner
from .standings import Standing, standings
from .state import TournamentCorrupt, TournamentState

__all__ = [
    "FORMATS",
    "ROUND_ROBIN",
    "SWISS",
    "GameFinished",
    "NoSuchTournament",
    "RoundPaired",
    "RunReport",
    "Seating",
    "Standing",
    "TournamentCorrupt",
    "TournamentCreated",
    "TournamentError",
    "TournamentRunner",
    "TournamentState",
    "create_tournament",
    "game_id",
    "load",
    "standings",
]
