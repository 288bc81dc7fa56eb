"""Connectors that ship with the engine."""
