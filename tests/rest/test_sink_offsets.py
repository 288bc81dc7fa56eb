"""KIP-875 sink offsets over REST on in-process topics, against a worker process."""

from __future__ import annotations

from pathlib import Path

from tests.rest.sink_offsets_walk import walk_sink_offsets


async def test_sink_offsets_are_listed_rewound_and_reset_on_in_process_topics(tmp_path: Path) -> None:
    await walk_sink_offsets(tmp_path)
