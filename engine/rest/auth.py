"""Optional HTTP basic authentication for the REST API, with hashed credentials from a file.

Enabled by the worker property ``rest.basic.auth.credentials.file``. The file holds one
``user:hash`` per line (blank lines and lines starting with ``#`` are ignored), where::

    hash = pbkdf2_sha256$<iterations>$<salt, base64>$<derived key, base64>

made with ``hashlib.pbkdf2_hmac("sha256", password, salt, iterations)``. Print such a line with
``python -m engine.rest.auth hash [USER] [--iterations N]`` (USER defaults to ``admin``): the
password is read from stdin when it is not a terminal, else prompted for twice with getpass.

As Connect's ``BasicAuthSecurityRestExtension`` does, every resource is protected, ``/health``
and ``/metrics`` included (Prometheus scrapes with ``basic_auth``), except the internal
endpoints workers call on each other (``POST /connectors/{c}/tasks``, ``PUT /connectors/{c}/fence``:
their requests are signed instead, KIP-507). A missing or wrong credential answers 401 with
``JaasBasicAuthFilter``'s plain-text body ``User cannot access the resource.``, plus (our addition)
``WWW-Authenticate: Basic`` so browsers and curl know to ask. Hashes are
compared in constant time, and an unknown user costs as much as a wrong password. PBKDF2 runs
in a worker thread so the event loop never stalls; a user's last accepted password is kept as a
keyed digest so later requests skip the derivation. The file is read once, at start.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import getpass
import hashlib
import hmac
import os
import re
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from engine.errors import ConfigError

__all__ = ["CREDENTIALS_FILE_KEY", "BasicAuth", "PasswordHash", "hash_password", "load_credentials", "main"]

CREDENTIALS_FILE_KEY = "rest.basic.auth.credentials.file"
REALM = "connect-engine"
SCHEME = "pbkdf2_sha256"
DEFAULT_ITERATIONS = 600_000  # OWASP's 2023 figure for PBKDF2-HMAC-SHA256
UNAUTHORIZED = "User cannot access the resource."
# JaasBasicAuthFilter's INTERNAL_REQUEST_MATCHERS: skipped, their requests are signed
_INTERNAL = (("POST", re.compile(r"/?connectors/([^/]+)/tasks/?")), ("PUT", re.compile(r"/?connectors/[^/]+/fence/?")))


def _internal(request: web.Request) -> bool:
    return any(request.method == method and path.fullmatch(request.path) for method, path in _INTERNAL)


CHALLENGE = {"WWW-Authenticate": f'Basic realm="{REALM}"'}


@dataclass(frozen=True, slots=True)
class PasswordHash:
    iterations: int
    salt: bytes
    key: bytes

    @classmethod
    def parse(cls, encoded: str) -> PasswordHash:
        scheme, _, rest = encoded.partition("$")
        parts = rest.split("$")
        if scheme != SCHEME or len(parts) != 3:
            raise ValueError(f"expected {SCHEME}$<iterations>$<salt b64>$<hash b64>")
        try:
            iterations = int(parts[0])
            salt = base64.b64decode(parts[1], validate=True)
            key = base64.b64decode(parts[2], validate=True)
        except (ValueError, binascii.Error):
            raise ValueError("iterations must be a number, salt and hash base64") from None
        if iterations < 1 or not key:
            raise ValueError("iterations must be at least 1 and the hash not empty")
        return cls(iterations, salt, key)

    def matches(self, password: str) -> bool:
        derived = hashlib.pbkdf2_hmac("sha256", password.encode(), self.salt, self.iterations, len(self.key))
        return hmac.compare_digest(derived, self.key)

    def encode(self) -> str:
        return f"{SCHEME}${self.iterations}${base64.b64encode(self.salt).decode()}${base64.b64encode(self.key).decode()}"


def hash_password(password: str, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None) -> str:
    """The ``pbkdf2_sha256$...`` string for ``password`` (a fresh 16-byte salt unless given)."""
    salt = secrets.token_bytes(16) if salt is None else salt
    return PasswordHash(iterations, salt, hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)).encode()


def load_credentials(path: str | os.PathLike[str]) -> dict[str, PasswordHash]:
    """User -> hash from the credentials file; a malformed file stops the worker from starting."""
    def invalid(reason: str) -> ConfigError:
        message = f"Invalid credentials file {path}: {reason}"
        return ConfigError(message, errors={CREDENTIALS_FILE_KEY: [message]})

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise invalid(exc.strerror or str(exc)) from None
    users: dict[str, PasswordHash] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, encoded = line.partition(":")
        if not sep or not user:
            raise invalid(f"line {number}: expected user:hash")
        try:
            users[user] = PasswordHash.parse(encoded.strip())
        except ValueError as exc:
            raise invalid(f"line {number}: {exc}") from None
    if not users:
        raise invalid("no credentials")
    return users


def _credentials(header: str | None) -> tuple[str, str] | None:
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


class BasicAuth:
    """Checks ``Authorization`` headers against the loaded credentials."""

    def __init__(self, users: dict[str, PasswordHash]) -> None:
        self._users = users
        # an unknown user is checked against this, at the cost of a real user's hash
        some = next(iter(users.values()))
        self._decoy = PasswordHash(some.iterations, secrets.token_bytes(16), secrets.token_bytes(32))
        self._digest_key = secrets.token_bytes(32)
        self._accepted: dict[str, bytes] = {}

    async def allows(self, header: str | None) -> bool:
        given = _credentials(header)
        if given is None:
            return False
        user, password = given
        digest = hmac.digest(self._digest_key, password.encode(), "sha256")
        accepted = self._accepted.get(user)
        if accepted is not None and hmac.compare_digest(accepted, digest):
            return True
        stored = self._users.get(user)
        matched = await asyncio.to_thread((stored or self._decoy).matches, password)
        if matched and stored is not None:
            self._accepted[user] = digest
            return True
        return False

    def middleware(self) -> Any:
        @web.middleware
        async def basic_auth(request: web.Request, handler: Any) -> web.StreamResponse:
            internal = _internal(request)  # workers sign these instead (KIP-507)
            if not internal and not await self.allows(request.headers.get("Authorization")):
                return web.Response(status=401, text=UNAUTHORIZED, content_type="text/plain", headers=CHALLENGE)
            response: web.StreamResponse = await handler(request)
            return response

        return basic_auth


def _read_password() -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    password = getpass.getpass("Password: ")
    if getpass.getpass("Repeat password: ") != password:
        raise SystemExit("passwords do not match")
    return password


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.rest.auth",
                                     description="Credentials-file lines for rest.basic.auth.credentials.file")
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("hash", help="print 'user:hash' for a password read from stdin or prompted for")
    make.add_argument("user", nargs="?", default="admin")
    make.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    args = parser.parse_args(argv)
    if ":" in args.user or not args.user:
        parser.error("the user name must be non-empty and contain no ':'")
    if args.iterations < 1:
        parser.error("--iterations must be at least 1")
    password = _read_password()
    if not password:
        parser.error("empty password")
    sys.stdout.write(f"{args.user}:{hash_password(password, args.iterations)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
