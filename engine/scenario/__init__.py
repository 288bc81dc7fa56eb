"""Scenario files: parse, run against a fresh engine, trace, expect, draw; config-topic dump replay."""
