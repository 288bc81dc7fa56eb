"""Kafka Connect's REST API over the embedded ``Engine`` (aiohttp)."""
