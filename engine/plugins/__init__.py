"""Finding and loading user classes (Kafka's ``runtime/isolation``): the plugin registry built
from entry points and ``plugin.path``, and the one ``import_class`` every loader uses
(``engine.plugins.classes``)."""
