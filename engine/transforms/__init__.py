"""Built-in single message transforms (Kafka's ``org.apache.kafka.connect.transforms``), their
predicates, and the per-connector ``TransformationChain``.

Modules are imported lazily by name (entry points, ``engine.transforms.resolve``), so this package
imports nothing itself: a broken transform must not break the others.
"""
