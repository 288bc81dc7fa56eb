"""REST listeners and the URL a worker advertises (Kafka's ``RestServer.createConnector`` and
``advertisedUrl``): ``listeners=http://host:port,https://host:port``, ``rest.advertised.*``, and
KIP-208's ``admin.listeners`` (where the admin endpoints, ``/admin/loggers``, are served)."""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from engine.errors import ConfigError

LISTENERS = "listeners"
ADVERTISED_LISTENER = "rest.advertised.listener"
ADVERTISED_HOST = "rest.advertised.host.name"
ADVERTISED_PORT = "rest.advertised.port"
HTTP, HTTPS = "http", "https"
# keys under it configure the HTTPS listeners and the forwarding client, instead of the plain ssl.* keys
HTTPS_PREFIX = "listeners.https."
ADMIN_LISTENERS = "admin.listeners"
# the admin listeners' TLS keys, all or nothing over the plain ssl.* keys (Connect's ADMIN_LISTENERS_HTTPS_CONFIGS_PREFIX)
ADMIN_HTTPS_PREFIX = "admin.listeners.https."

# Connect's LISTENER_PATTERN; an empty host binds every interface, [::1] an IPv6 address
_PATTERN = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True, slots=True)
class Listener:
    protocol: str  # http | https
    host: str  # "" = every interface
    port: int  # 0 = any free port

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.protocol}://{host}:{self.port if port is None else port}"


def _invalid(key: str, message: str) -> ConfigError:
    return ConfigError(message, errors={key: [message]})


def parse_listeners(value: str, key: str = LISTENERS) -> list[Listener]:
    """The ``listeners`` list, with Connect's messages for a malformed entry."""
    entries = [e.strip() for e in value.split(",")]
    if not any(entries):
        raise _invalid(
            key,
            "Invalid value for listeners, at least one URL is expected, "
            "ex: http://localhost:8080,https://localhost:8443.",
        )
    listeners = []
    for entry in entries:
        if not entry:
            raise _invalid(key, f"Empty URL found when parsing {key} list.")
        match = _PATTERN.match(entry)
        if match is None:
            raise _invalid(key, f"Listener doesn't have the right format (protocol://hostname:port): {entry}")
        protocol = match[1].lower()
        if protocol not in (HTTP, HTTPS):
            raise _invalid(key, f'Listener protocol must be either "{HTTP}" or "{HTTPS}": {entry}')
        port = int(match[3])
        if not 0 <= port <= 65535:
            raise _invalid(key, f"Listener port out of range (0-65535): {entry}")
        listeners.append(Listener(protocol, match[2], port))
    return listeners


def parse_admin_listeners(raw: Mapping[str, str]) -> list[Listener] | None:
    """KIP-208 ``admin.listeners``: None when unset (the admin endpoints stay on ``listeners``), an empty
    list when empty or blank (no admin endpoints at all), else the listeners that alone serve them."""
    value = raw.get(ADMIN_LISTENERS)
    if value is None:
        return None
    if not value.strip():
        return []
    return parse_listeners(value, ADMIN_LISTENERS)


def advertised_protocol(raw: Mapping[str, str]) -> str:
    """Connect's ``determineAdvertisedProtocol``: ``rest.advertised.listener``, else http when any
    listener is http, else https."""
    chosen = (raw.get(ADVERTISED_LISTENER) or "").strip().lower()
    if chosen:
        if chosen not in (HTTP, HTTPS):
            raise _invalid(
                ADVERTISED_LISTENER,
                f"Invalid value {chosen} for configuration {ADVERTISED_LISTENER}: "
                f'must be "{HTTP}" or "{HTTPS}"',
            )
        return chosen
    listeners = raw.get(LISTENERS, "").lower()
    return HTTP if f"{HTTP}://" in listeners or f"{HTTPS}://" not in listeners else HTTPS


def advertised_url(raw: Mapping[str, str]) -> str:
    """The URL other workers reach this one at, as Connect's ``RestServer.advertisedUrl`` builds it:
    the advertised protocol's first listener, with ``rest.advertised.host.name`` and
    ``rest.advertised.port`` overriding its host and port (port 0 stays 0: the URL is known before
    the listeners bind)."""
    listeners = parse_listeners(raw.get(LISTENERS, ""))
    protocol = advertised_protocol(raw)
    listener = next((x for x in listeners if x.protocol == protocol), listeners[0])
    host = (raw.get(ADVERTISED_HOST) or "").strip() or listener.host or socket.gethostname()
    port_text = (raw.get(ADVERTISED_PORT) or "").strip()
    if port_text:
        try:
            port = int(port_text)
        except ValueError:
            raise _invalid(
                ADVERTISED_PORT,
                f"Invalid value {port_text} for configuration {ADVERTISED_PORT}: Not a number of type INT",
            ) from None
    else:
        port = listener.port
    return Listener(protocol, host, port).url()
