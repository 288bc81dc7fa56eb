"""FAKE: the SASL authenticator of a Kafka broker, in front of a plain tansu.

No broker here can hold a user while requiring authentication (tansu 0.6 refuses ``tansu user
create`` once ``--authentication`` is on, and keeps users in memory only; noida-db has no SASL), so
a successful SASL login needs this stand-in. It answers SaslHandshake and SaslAuthenticate as a
Kafka broker does (PLAIN per RFC 4616, SCRAM-SHA-256/512 per RFC 5802, refusals as error 58
SASL_AUTHENTICATION_FAILED with Kafka's messages), closes a connection that sends anything but
ApiVersions before authenticating, and after that relays every byte to tansu unchanged. The client
side is entirely real (aiokafka's own SASL code, with the arguments the engine built).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import os
import struct
from collections.abc import Iterator, Mapping

from tests.integration.loopback_proxy import LoopbackProxy, pipe

_HANDSHAKE, _AUTHENTICATE, _API_VERSIONS = 17, 36, 18
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
_ITERATIONS = 4096


def _string(value: str | None) -> bytes:
    if value is None:
        return struct.pack(">h", -1)
    data = value.encode()
    return struct.pack(">h", len(data)) + data


def _bytes(value: bytes) -> bytes:
    return struct.pack(">i", len(value)) + value


class _Scram:
    """The server side of one SCRAM exchange."""

    def __init__(self, mechanism: str, users: Mapping[str, str]) -> None:
        self.hash = _HASHES[mechanism]
        self.mechanism = mechanism
        self.users = users
        self.user: str | None = None
        self.step = 0

    def _hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self.hash).digest()

    def respond(self, data: bytes) -> tuple[bytes, bool | None]:
        """(answer, None: go on | True: authenticated | False: refused)."""
        text = data.decode()
        if self.step == 0:
            self.step = 1
            self.client_first_bare = text.split(",", 2)[2]
            fields = dict(part.split("=", 1) for part in self.client_first_bare.split(","))
            self.user = fields.get("n")
            self.salt = os.urandom(16)
            self.nonce = fields["r"] + base64.b64encode(os.urandom(18)).decode()
            self.server_first = f"r={self.nonce},s={base64.b64encode(self.salt).decode()},i={_ITERATIONS}"
            return self.server_first.encode(), None
        fields = dict(part.split("=", 1) for part in text.split(","))
        without_proof = text.rsplit(",p=", 1)[0]
        password = self.users.get(self.user or "")
        if password is None or fields.get("r") != self.nonce:
            return b"", False
        salted = hashlib.pbkdf2_hmac(self.hash, password.encode(), self.salt, _ITERATIONS)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash, client_key).digest()
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        signature = self._hmac(stored_key, auth_message)
        proof = base64.b64decode(fields["p"])
        recovered = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if hashlib.new(self.hash, recovered).digest() != stored_key:
            return b"", False
        server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return b"v=" + base64.b64encode(server_signature), True


class SaslFront(LoopbackProxy):
    """Listens on ``port``; authenticates each connection, then relays it to ``backend_port``."""

    name = "SASL front"

    def __init__(self, backend_port: int, port: int, users: Mapping[str, str],
                 mechanisms: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")) -> None:
        super().__init__(backend_port, port)
        self.users = dict(users)
        self.mechanisms = mechanisms
        self.logins: list[tuple[str, str]] = []  # (mechanism, user) of each successful login
        self.refusals: list[tuple[str, str | None]] = []

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        backend = await self._backend(writer)
        if backend is None:
            return
        backend_reader, backend_writer = backend
        relay = asyncio.ensure_future(pipe(backend_reader, writer))
        try:
            await self._serve(reader, writer, backend_writer)
        finally:
            self._writers -= {writer, backend_writer}
            with contextlib.suppress(OSError, RuntimeError):
                backend_writer.close()
                writer.close()
            relay.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     backend: asyncio.StreamWriter) -> None:
        mechanism: str | None = None
        scram: _Scram | None = None
        authenticated = False
        with contextlib.suppress(asyncio.IncompleteReadError, OSError, ConnectionError):
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                frame = await reader.readexactly(size)
                if authenticated:
                    backend.write(struct.pack(">i", size) + frame)
                    await backend.drain()
                    continue
                api_key, version, correlation = struct.unpack(">hhi", frame[:8])
                client_id_length = struct.unpack(">h", frame[8:10])[0]
                body = frame[10 + max(client_id_length, 0):]
                if api_key == _API_VERSIONS:
                    backend.write(struct.pack(">i", size) + frame)
                    await backend.drain()
                elif api_key == _HANDSHAKE:
                    length = struct.unpack(">h", body[:2])[0]
                    mechanism = body[2:2 + length].decode()
                    error = 0 if mechanism in self.mechanisms else 33  # UNSUPPORTED_SASL_MECHANISM
                    scram = _Scram(mechanism, self.users) if mechanism in _HASHES else None
                    answer = struct.pack(">ih", correlation, error) + struct.pack(">i", len(self.mechanisms)) + \
                        b"".join(_string(m) for m in self.mechanisms)
                    await self._send(writer, answer)
                elif api_key == _AUTHENTICATE and mechanism is not None:
                    data = body[4:4 + struct.unpack(">i", body[:4])[0]]
                    answer_bytes, outcome, user = self._authenticate(mechanism, scram, data)
                    if outcome is False:
                        self.refusals.append((mechanism, user))
                        message = (f"Authentication failed during authentication due to invalid credentials with "
                                   f"SASL mechanism {mechanism}")
                        await self._send(writer, self._auth_answer(correlation, version, 58, message, b""))
                        return
                    if outcome is True:
                        authenticated = True
                        self.logins.append((mechanism, str(user)))
                    await self._send(writer, self._auth_answer(correlation, version, 0, None, answer_bytes))
                else:  # a broker that requires authentication drops a client that skips it
                    return

    def _authenticate(self, mechanism: str, scram: _Scram | None, data: bytes) -> tuple[bytes, bool | None, str | None]:
        if mechanism == "PLAIN":
            _, user, password = data.decode().split("\0", 2)
            return b"", self.users.get(user) == password, user
        assert scram is not None
        answer, outcome = scram.respond(data)
        return answer, outcome, scram.user

    @staticmethod
    def _auth_answer(correlation: int, version: int, error: int, message: str | None, data: bytes) -> bytes:
        answer = struct.pack(">ih", correlation, error) + _string(message) + _bytes(data)
        if version >= 1:
            answer += struct.pack(">q", 0)  # session_lifetime_ms: no re-authentication
        return answer

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, payload: bytes) -> None:
        writer.write(struct.pack(">i", len(payload)) + payload)
        await writer.drain()


@contextlib.contextmanager
def fronting(backend_port: int, port: int, users: Mapping[str, str]) -> Iterator[SaslFront]:
    front = SaslFront(backend_port, port, users)
    front.start()
    try:
        yield front
    finally:
        front.stop()
