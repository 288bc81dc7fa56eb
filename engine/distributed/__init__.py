"""The worker's mode, standalone or a cluster member (``mode.py``, ``cluster_mode.py``), and the cluster:
group membership through the broker, the leader's plan, forwarded requests."""
