"""Status and offsets stores: memory for embedding, append-only files for durability."""
