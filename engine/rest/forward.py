"""Forwarding a leader-only request from a follower to the leader (Connect's ``RestClient``).

The ``forward`` query parameter counts hops as Connect's does: absent on the client's request,
``true`` on the first forward, ``false`` on a second; a request that would need a third hop
answers 409 instead of bouncing between workers mid-rebalance.
"""

from __future__ import annotations

from aiohttp import web
from yarl import URL

from engine.distributed.request_signing import SIGNATURE_ALGORITHM_HEADER, SIGNATURE_HEADER
from engine.errors import NotLeader
from engine.rest.errors import error_response
from engine.rest.keys import REST_CLIENT

CONFLICT = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
# an internal request's signature goes on with its (unchanged) body: the leader checks it again
_PASSED_HEADERS = ("Authorization", "Content-Type", "Accept", SIGNATURE_HEADER, SIGNATURE_ALGORITHM_HEADER)


async def forward(request: web.Request, exc: NotLeader, timeout: float) -> web.StreamResponse:
    """Send the request on to ``exc.leader_url`` and answer with what the leader answered."""
    if exc.leader_url is None:
        return error_response(409, str(exc))
    hop = request.query.get("forward")
    if hop is not None and hop.strip().lower() == "false":
        return error_response(409, CONFLICT)
    query = [(k, v) for k, v in request.query.items() if k != "forward"]
    query.append(("forward", "false" if hop is not None else "true"))
    # the raw path: a connector name with an encoded '/' or space reaches the leader as it came
    raw_path = request.raw_path.split("?", 1)[0]
    url = URL(exc.leader_url.rstrip("/") + raw_path, encoded=True).with_query(query)
    headers = {h: request.headers[h] for h in _PASSED_HEADERS if h in request.headers}
    body = await request.read()  # cached by aiohttp when the handler read it already
    status, answer, content_type = await request.app[REST_CLIENT].send(
        request.method, str(url), body=body, headers=headers, timeout=timeout
    )
    response = web.Response(status=status, body=answer if status != 204 else None)
    if answer and status != 204:
        response.content_type = content_type or "application/json"
    return response
