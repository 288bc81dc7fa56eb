"""Status and offsets stores: memory for embedding, append-only files (compacted) for durability."""
