"""``listeners`` parsing and the advertised URL, as Connect's ``RestServer`` derives them."""

from __future__ import annotations

import socket

import pytest

from engine.config.listeners import Listener, advertised_url, parse_listeners
from engine.config.worker import WorkerConfig
from engine.errors import ConfigError


def test_listeners_parse_as_connect_reads_them() -> None:
    assert parse_listeners("HTTP://myhost:8083, https://[::1]:8443,https://:0") == [
        Listener("http", "myhost", 8083),
        Listener("https", "::1", 8443),
        Listener("https", "", 0),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ftp://host:21", 'Listener protocol must be either "http" or "https": ftp://host:21'),
        ("http://host", "Listener doesn't have the right format (protocol://hostname:port): http://host"),
        ("http://host:1,", "Empty URL found when parsing listeners list."),
        (
            " ",
            "Invalid value for listeners, at least one URL is expected, ex: http://localhost:8080,https://localhost:8443.",
        ),
        ("http://host:70000", "Listener port out of range (0-65535): http://host:70000"),
    ],
)
def test_malformed_listeners_name_the_key(value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_listeners(value)
    assert (str(caught.value), set(caught.value.errors)) == (message, {"listeners"})


def test_the_advertised_url() -> None:
    both = {"listeners": "https://10.0.0.1:8443,http://10.0.0.1:8083"}
    assert advertised_url(both) == "http://10.0.0.1:8083"  # any http listener: http is advertised
    assert advertised_url({**both, "rest.advertised.listener": "HTTPS"}) == "https://10.0.0.1:8443"
    assert advertised_url({"listeners": "https://10.0.0.1:8443"}) == "https://10.0.0.1:8443"
    assert (
        advertised_url(
            {
                **both,
                "rest.advertised.listener": "https",
                "rest.advertised.host.name": "w1.example",
                "rest.advertised.port": "443",
            }
        )
        == "https://w1.example:443"
    )
    assert advertised_url({"listeners": "http://:8083"}) == f"http://{socket.gethostname()}:8083"
    with pytest.raises(ConfigError, match=r"rest\.advertised\.listener"):
        advertised_url({**both, "rest.advertised.listener": "ftp"})
    with pytest.raises(ConfigError, match=r"rest\.advertised\.port"):
        advertised_url({**both, "rest.advertised.port": "eighty"})


def test_the_worker_id_is_the_advertised_host_and_port() -> None:
    worker = WorkerConfig.parse({"listeners": "https://127.0.0.1:8443", "rest.advertised.host.name": "w1"})
    assert (worker.worker_id, worker.advertised_url) == ("w1:8443", "https://w1:8443")
