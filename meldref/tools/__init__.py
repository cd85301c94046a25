"""Tools around the referee: the conformance check of a bot program (`botcheck`), a person
playing a seat in the terminal (`human`), a referee that plays one seat over its own
stdin/stdout (`hostseat`: ``python -m meldref.tools.hostseat``), and playing on from a recorded
point of a replay (`resume`)."""
