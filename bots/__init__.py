"""Bots that ship with meldref."""
