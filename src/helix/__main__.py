"""``python -m helix`` runs the command line."""

from helix.cli import main

main()
