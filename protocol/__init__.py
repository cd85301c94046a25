"""The wire format and bot processes."""
