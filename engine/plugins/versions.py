"""Plugin version requirements (KIP-891, Kafka 4.1): ``connector.plugin.version`` and friends.

Connect parses a requirement with Maven's ``VersionRange.createFromVersionSpec`` and makes a bare
version a hard one (``1.0`` -> ``[1.0]``, ``PluginVersionUtils.connectorVersionRequirement``); then
it loads the newest installed version in the range. One Python process imports one version of a
module, so here the range is checked against the version that is installed (what ``version()`` of
the plugin class answers) and a plugin outside it fails with Connect's message for a classpath
plugin; nothing runs a version the config did not ask for.

Versions compare as Maven's ``ComparableVersion`` does for the usual shapes: numbers numerically,
``.``/``-`` separated, trailing zeros ignored, qualifiers ``alpha`` < ``beta`` < ``milestone`` <
``rc`` < ``snapshot`` < release < ``sp``, other qualifiers after those, alphabetically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

LATEST = "latest"
VERSION_KEYS = (
    "connector.plugin.version",
    "key.converter.plugin.version",
    "value.converter.plugin.version",
    "header.converter.plugin.version",
)
PLUGIN_VERSION = "plugin.version"  # under transforms.<alias>. and predicates.<alias>.

_QUALIFIERS = {
    "alpha": 0,
    "a": 0,
    "beta": 1,
    "b": 1,
    "milestone": 2,
    "m": 2,
    "rc": 3,
    "cr": 3,
    "snapshot": 4,
    "": 5,
    "ga": 5,
    "final": 5,
    "release": 5,
    "sp": 6,
}


class InvalidVersionSpecification(ValueError):
    """Maven's ``InvalidVersionSpecificationException``, with its messages."""


class VersionMismatch(ValueError):
    """Connect's ``VersionedPluginLoadingException``: no installed version is in the range."""


def _items(version: str) -> tuple[tuple[int, int | str], ...]:
    parts = [
        p for p in re.split(r"[.\-]|(?<=\d)(?=[a-zA-Z])|(?<=[a-zA-Z])(?=\d)", version.strip().lower()) if p
    ]
    items: list[tuple[int, int | str]] = []
    for part in parts:
        if part.isdigit():
            items.append((1, int(part)))
        else:
            while items and items[-1] == (1, 0):  # Maven normalises 2.0-rc1 to 2-rc1
                items.pop()
            if part in _QUALIFIERS:
                items.append((0, _QUALIFIERS[part]))
            else:
                items.append((0, 100))
                items.append((2, part))
    while items and items[-1] in ((1, 0), (0, 5)):  # 1.0.0 == 1 == 1-final
        items.pop()
    return tuple(items)


@total_ordering
@dataclass(frozen=True)
class ArtifactVersion:
    text: str

    def _key(self) -> tuple[tuple[int, int | str], ...]:
        return _items(self.text)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ArtifactVersion):
            return NotImplemented
        return _compare(self._key(), other._key()) < 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArtifactVersion) and _compare(self._key(), other._key()) == 0

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self.text


def _compare(a: tuple[tuple[int, int | str], ...], b: tuple[tuple[int, int | str], ...]) -> int:
    for i in range(max(len(a), len(b))):
        # a missing item is a release marker: 1.0 > 1.0-rc1 (a qualifier), 1.0 < 1.0.1 (a number)
        x = a[i] if i < len(a) else (0, 5)
        y = b[i] if i < len(b) else (0, 5)
        if x == y:
            continue
        if x[0] != y[0]:
            return -1 if (x[0], 0) < (y[0], 0) else 1
        return -1 if x[1] < y[1] else 1  # type: ignore[operator]
    return 0


@dataclass(frozen=True)
class Restriction:
    lower: ArtifactVersion | None
    lower_inclusive: bool
    upper: ArtifactVersion | None
    upper_inclusive: bool

    def contains(self, version: ArtifactVersion) -> bool:
        if self.lower is not None and (
            version < self.lower or (version == self.lower and not self.lower_inclusive)
        ):
            return False
        return self.upper is None or not (
            self.upper < version or (version == self.upper and not self.upper_inclusive)
        )

    def __str__(self) -> str:  # Maven's Restriction.toString
        return (
            ("[" if self.lower_inclusive else "(")
            + (str(self.lower) if self.lower else "")
            + ","
            + (str(self.upper) if self.upper else "")
            + ("]" if self.upper_inclusive else ")")
        )


@dataclass(frozen=True)
class VersionRange:
    """Maven's ``VersionRange``: a recommended (soft) version or hard restrictions."""

    recommended: ArtifactVersion | None
    restrictions: tuple[Restriction, ...]

    @classmethod
    def parse(cls, spec: str) -> VersionRange:
        """``VersionRange.createFromVersionSpec``."""
        process = spec
        restrictions: list[Restriction] = []
        upper_bound: ArtifactVersion | None = None
        lower_bound: ArtifactVersion | None = None
        while process.startswith(("[", "(")):
            idx1, idx2 = process.find(")"), process.find("]")
            index = idx2
            if idx2 < 0 or (0 <= idx1 < idx2):
                index = idx1
            if index < 0:
                raise InvalidVersionSpecification(f"Unbounded range: {spec}")
            restriction = _restriction(process[: index + 1])
            if lower_bound is None:
                lower_bound = restriction.lower
            if upper_bound is not None and (restriction.lower is None or restriction.lower < upper_bound):
                raise InvalidVersionSpecification(f"Ranges overlap: {spec}")
            restrictions.append(restriction)
            upper_bound = restriction.upper
            process = process[index + 1 :].strip()
            if process.startswith(","):
                process = process[1:].strip()
        if process:
            if restrictions:
                raise InvalidVersionSpecification(
                    f"Only fully-qualified sets allowed in multiple set scenario: {spec}"
                )
            return cls(ArtifactVersion(process), (Restriction(None, False, None, False),))
        return cls(None, tuple(restrictions))

    @property
    def has_restrictions(self) -> bool:
        return self.recommended is None

    def contains(self, version: str) -> bool:
        artifact = ArtifactVersion(version)
        return any(r.contains(artifact) for r in self.restrictions)

    def __str__(self) -> str:  # Maven's VersionRange.toString
        if self.recommended is not None:
            return str(self.recommended)
        return ",".join(str(r) for r in self.restrictions)


def _restriction(spec: str) -> Restriction:
    lower_inclusive, upper_inclusive = spec.startswith("["), spec.endswith("]")
    process = spec[1:-1].strip()
    if "," not in process:
        if not lower_inclusive or not upper_inclusive:
            raise InvalidVersionSpecification(f"Single version must be surrounded by []: {spec}")
        version = ArtifactVersion(process)
        return Restriction(version, True, version, True)
    lower_text, upper_text = (s.strip() for s in process.split(",", 1))
    if "," in upper_text:
        raise InvalidVersionSpecification(f"Invalid version range {spec}")
    lower = ArtifactVersion(lower_text) if lower_text else None
    upper = ArtifactVersion(upper_text) if upper_text else None
    if upper is not None and lower is not None and upper < lower:
        raise InvalidVersionSpecification(f"Range defies version ordering: {spec}")
    return Restriction(lower, lower_inclusive, upper, upper_inclusive)


def requirement(spec: str | None) -> VersionRange | None:
    """``PluginVersionUtils.connectorVersionRequirement``: None for no requirement or ``latest``; a
    bare version becomes a hard one (``1.0`` -> ``[1.0]``)."""
    if spec is None or spec == LATEST:
        return None
    spec = spec.strip()
    parsed = VersionRange.parse(spec)
    if parsed.has_restrictions:
        return parsed
    return VersionRange.parse(f"[{spec}]")


def require(plugin_name: str, installed: str | None, spec: str | None) -> None:
    """Raise ``VersionMismatch`` (Connect's classpath-plugin message) unless ``installed`` is in ``spec``."""
    wanted = requirement(spec)
    if wanted is None:
        return
    version = installed if installed is not None else "undefined"
    if not wanted.contains(version):
        raise VersionMismatch(
            f"Plugin {plugin_name} has version {version} which does not match the required "
            f"version range {wanted}"
        )
