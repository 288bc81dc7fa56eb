"""What the Connect metrics cost the data path: the counter work per batch against a batch's time.

The loops count once per batch (``TaskCounters``), never per record; this times exactly what a
source and a sink loop add for one 1,000-record batch and sets it against the time the engine spends
on such a batch at a given throughput (the in-process bytes figure of ``bench/data_plane.py``).
A difference this small cannot be seen in an end-to-end run on a shared machine (the runs vary by
more than 10 %), so it is measured directly.

    python bench/metrics_cost.py [--records-per-s N] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import append_to
from engine.observability.connect_metrics import TaskCounters

BATCH = 1000


def counter_seconds_per_batch() -> float:
    source, sink = TaskCounters("source"), TaskCounters("sink")

    def one_batch() -> None:  # as source_loop and sink_loop do per batch
        source.source_record_poll += BATCH
        source.batch(BATCH)
        source.source_record_write += BATCH
        sink.sink_record_read += BATCH
        sink.sink_record_send += BATCH
        sink.batch(BATCH)

    n = 200_000
    return min(timeit.repeat(one_batch, number=n, repeat=5)) / n


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--records-per-s", type=float, default=237_277, help="engine throughput to compare with"
    )
    parser.add_argument("--append", metavar="FILE")
    args = parser.parse_args()
    counters = counter_seconds_per_batch()
    batch = BATCH / args.records_per_s
    text = (
        f"\n## Metrics cost on the data path (`python bench/metrics_cost.py`)\n\n"
        f"Counter work per {BATCH:,}-record batch (source + sink): {counters * 1e6:.3f} us; engine time per batch "
        f"at {args.records_per_s:,.0f} records/s: {batch * 1e6:,.0f} us; share {counters / batch * 100:.4f} % "
        f"(target: within 3 %).\n"
    )
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
