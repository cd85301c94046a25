"""`python -m meldref`: the same command line as `meldref`."""

from .cli import main

main()
