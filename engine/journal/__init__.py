"""The append-only JSON-lines file every file store shares (status, offsets, the config log, in-process
topics), and when it is compacted."""
