"""``python -m red7es.cli`` runs the ``red7`` command."""

from red7es.cli.main import main

main()
