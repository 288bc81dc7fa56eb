"""The single writer of observed state: config-log records in, one actor per connector, lifecycle
state machines driven only from here, the deletion contract run on entering DESTROYED."""
