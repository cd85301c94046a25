"""Tools around the referee: the conformance check of a bot program (`botcheck`) and a person
playing a seat in the terminal (`human`)."""
