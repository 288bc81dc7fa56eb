"""A worker cluster: group membership through the broker, the leader's plan, forwarded requests."""
