"""Runners: each user connector or task instance lives in its own supervised asyncio task."""
