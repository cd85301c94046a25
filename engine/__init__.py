"""The rules of every game meldref referees: pure, no I/O."""
