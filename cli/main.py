"""``red7``: host, join, play, watch, replay and audit games of Red7 from a terminal.

Every command that talks to Redis takes ``--url`` (default ``$REDIS_URL``; without it,
the embedded Redis in the user's data directory, started on first use) or ``--url-file``.  Commands that
show something take ``--json``.  Exit codes: 0 success, 1 rejected or failed (one line on stderr, never a
traceback), 2 usage error, 130 interrupted by Ctrl-C (``red7 help exit-codes``).
"""

from __future__ import annotations

import sys

import click

from .options import Red7Group, closed_pipe_ends_quietly

__all__ = ["cli", "main"]


@click.group(cls=Red7Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="red7es", prog_name="red7")
def cli() -> None:
    """Host, play, watch, replay and audit games of Red7.

    \b
    Play against two bots right away (no Redis to install):
        red7 play --bots greedy,greedy
    Host a game and let a second terminal join it:
        red7 new -p alice -p bob --bot greedy     # prints the game id, seats alice
        red7 join GAME bob                        # in the second terminal
        red7 play --game GAME --as bob
    Follow, replay, prove:
        red7 watch GAME
        red7 replay GAME --at 40 --as alice
        red7 audit GAME

    \b
    Every command that talks to Redis takes --url (or $REDIS_URL); without
    it red7es runs its own embedded Redis in your data directory. A player's
    commands also take a gateway's URL, --url https://HOST:PORT, and then
    reach no Redis at all (red7 help gateway). Every
    local user sees a command's arguments (ps): give a URL with a password
    in $REDIS_URL or --url-file FILE, a seat token in $RED7_TOKEN or
    --token-file FILE.
    The manual: red7 help (topics), red7 help TOPIC, e.g. red7 help exit-codes.
    Exit codes: 0 ok, 1 rejected or failed, 2 usage, 130 interrupted (Ctrl-C;
    watch, serve and worker, which run until stopped, exit 0). A mistake in
    what you typed, caught before anything is sent (an unknown bot, a bad
    --id, notation that is no turn), is a usage error; what the referee or
    the service refuses is 1.
    Shell completion: red7 completion bash|zsh|fish.
    """


def _register() -> None:
    from . import (
        commands_adjudicate,
        commands_archive,
        commands_game,
        commands_gateway,
        commands_help,
        commands_play,
        commands_records,
        commands_service,
        commands_tournament,
    )

    modules = (
        commands_game,
        commands_play,
        commands_service,
        commands_records,
        commands_archive,
        commands_adjudicate,
        commands_tournament,
        commands_gateway,
        commands_help,
    )
    for module in modules:
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    """Run ``red7``; output into a pipe that closes early (``| head -1``) ends it quietly with exit 0.

    The commands flush as they write, but whatever is still buffered (``csv`` output)
    is flushed here, where a closed pipe can still be caught, rather than by the
    interpreter at exit, which would print "Exception ignored" and exit 120.
    """
    with closed_pipe_ends_quietly():
        try:
            cli(prog_name="red7")
        finally:
            if sys.stdout is not None:  # None when started with stdout closed
                sys.stdout.flush()


if __name__ == "__main__":
    main()
