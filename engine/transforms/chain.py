"""The per-task SMT chain built from a connector's config (Connect's ``TransformationChain``,
``TransformationStage`` and ``ConnectorConfig.transformationStages``).

``transforms=a,b`` lists stages in order; ``transforms.<a>.type`` names the class (see
``engine.transforms.resolve``) and every other ``transforms.<a>.*`` key, less ``type``,
``predicate`` and ``negate``, is passed to its ``configure``. ``transforms.<a>.predicate=p`` makes the
stage conditional on the predicate configured from ``predicates.<p>.*``; ``negate=true`` inverts it.
A stage returning None drops the record and ends the chain.

One copy per chain, not one per SMT: the record a shipped SMT made in this ``apply`` goes on to the
next shipped SMT as ``DRAFT.record`` (engine.api.records), which its ``new_record`` changes in place.
The input record is never changed, and a record any other plugin has seen is never a draft.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Generic, TypeVar

import structlog

from engine.api.config_def import ConfigDefError, ConfigType, parse_type
from engine.api.errors import ConfigException
from engine.api.records import DRAFT, ConnectRecord
from engine.api.transforms import Predicate, Transformation
from engine.transforms.resolve import Kind, resolve_class

log = structlog.get_logger(component="transforms")

R = TypeVar("R", bound=ConnectRecord)

TRANSFORMS_CONFIG: Final = "transforms"
PREDICATES_CONFIG: Final = "predicates"
PREDICATE_CONFIG: Final = "predicate"
NEGATE_CONFIG: Final = "negate"
TYPE_CONFIG: Final = "type"


class TransformationStage(Generic[R]):
    """One transformation, optionally guarded by a (possibly negated) predicate."""

    __slots__ = ("alias", "negate", "predicate", "predicate_alias", "shipped", "transformation")

    def __init__(
        self,
        transformation: Transformation[R],
        predicate: Predicate[R] | None = None,
        negate: bool = False,
        *,
        alias: str | None = None,
        predicate_alias: str | None = None,
    ) -> None:
        self.transformation = transformation
        self.predicate = predicate
        self.negate = negate
        self.alias = alias  # ``transforms`` alias and ``predicates`` alias: the tags of their plugin metrics
        self.predicate_alias = predicate_alias
        # both plugins ship here: none keeps a record, each SMT ends with one record.new_record(...)
        self.shipped = _ships_here(transformation) and (predicate is None or _ships_here(predicate))

    @property
    def transform_class(self) -> type:
        """The transformation's class, which error reports name (Connect's ``transformClass``)."""
        return type(self.transformation)

    def apply(self, record: R) -> R | None:
        predicate = self.predicate
        if predicate is None or self.negate ^ bool(predicate.test(record)):
            return self.transformation.apply(record)
        return record

    def close(self) -> None:
        """Close both plugins; a failure is logged, as Connect's ``closeQuietly`` does."""
        for what, plugin in (("transformation", self.transformation), ("predicate", self.predicate)):
            if plugin is None:
                continue
            try:
                plugin.close()
            except Exception as exc:  # plugin code: the other plugins still close
                log.warning(
                    "transforms.close_failed", kind=what, plugin=type(plugin).__qualname__, error=repr(exc)
                )

    def __repr__(self) -> str:
        return (
            f"TransformationStage{{predicate={self.predicate!r}, "
            f"transformation={self.transformation!r}, negate={self.negate}}}"
        )


class TransformationChain(Generic[R]):
    """The stages of one task, applied in order to every record."""

    __slots__ = ("_stages",)

    def __init__(self, stages: Sequence[TransformationStage[R]] = ()) -> None:
        self._stages: tuple[TransformationStage[R], ...] = tuple(stages)

    @classmethod
    def from_config(cls, props: Mapping[str, str]) -> TransformationChain[Any]:
        """Instantiate and configure every stage ``props`` describes; ``ConfigException`` on bad config.

        Stages built before a failure are closed before the exception propagates.
        """
        stages: list[TransformationStage[Any]] = []
        try:
            predicate_aliases = set(aliases(props, PREDICATES_CONFIG))
            for alias in aliases(props, TRANSFORMS_CONFIG):
                stages.append(_build_stage(props, alias, predicate_aliases))  # noqa: PERF401 - built so far get closed
        except BaseException:
            TransformationChain(stages).close()
            raise
        return TransformationChain(stages)

    @property
    def stages(self) -> tuple[TransformationStage[R], ...]:
        return self._stages

    def __bool__(self) -> bool:
        return bool(self._stages)

    def __len__(self) -> int:
        return len(self._stages)

    def apply(self, record: R) -> R | None:
        """The record after every stage, or None when a stage dropped it."""
        current = record
        draft = False  # ``current`` was made here by a shipped stage and seen by shipped plugins only
        for stage in self._stages:
            if draft and stage.shipped:
                DRAFT.record = current
                try:
                    out = stage.apply(current)
                finally:
                    DRAFT.record = None
            else:
                out = stage.apply(current)
            if out is None:
                return None
            draft = stage.shipped and (draft or out is not current)
            current = out
        return current

    def close(self) -> None:
        for stage in self._stages:
            stage.close()

    def __repr__(self) -> str:
        names = ", ".join(
            f"{c.__module__}.{c.__qualname__}" for c in (s.transform_class for s in self._stages)
        )
        return f"TransformationChain{{{names}}}"


def _ships_here(plugin: object) -> bool:
    """A transformation or predicate of this package (not a subclass made elsewhere)."""
    return type(plugin).__module__.startswith("engine.transforms.")


def aliases(props: Mapping[str, Any], list_config: str) -> list[str]:
    """The aliases ``transforms`` / ``predicates`` lists; duplicates are refused as Connect's validator does."""
    raw = props.get(list_config)
    if raw is None:
        return []
    found = [str(a) for a in parse_type(list_config, raw, ConfigType.LIST)]
    if len(found) > len(set(found)):
        raise ConfigDefError.invalid(list_config, found, "Duplicate alias provided.")
    return found


def with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """``AbstractConfig.originalsWithPrefix``: the keys under ``prefix``, with it stripped."""
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def negate_without_predicate(prefix: str) -> str:
    return (
        f"Config '{prefix}{NEGATE_CONFIG}' was provided but there is no config "
        f"'{prefix}{PREDICATE_CONFIG}' defining a predicate to be negated."
    )


def unknown_predicate(prefix: str, alias: str) -> str:
    return (
        f"Config '{prefix}{PREDICATE_CONFIG}' refers to the predicate '{alias}', which is not listed in "
        f"'{PREDICATES_CONFIG}'."
    )


def _instantiate(props: Mapping[str, Any], prefix: str, kind: Kind) -> Any:
    type_key = prefix + TYPE_CONFIG
    name = props.get(type_key)
    if name is None:
        raise ConfigException(f'Missing required configuration "{type_key}" which has no default value.')
    cls = resolve_class(type_key, str(name), kind)
    try:
        return cls()
    except Exception as exc:
        raise ConfigException(type_key, name, f"Could not instantiate {kind}: {exc!r}") from exc


def _build_stage(
    props: Mapping[str, Any], alias: str, predicate_aliases: set[str]
) -> TransformationStage[Any]:
    prefix = f"{TRANSFORMS_CONFIG}.{alias}."
    configs = with_prefix(props, prefix)
    configs.pop(TYPE_CONFIG, None)
    predicate_alias = configs.pop(PREDICATE_CONFIG, None)
    negate_raw = configs.pop(NEGATE_CONFIG, None)
    if negate_raw is not None and predicate_alias is None:
        raise ConfigException(negate_without_predicate(prefix))
    negate = str(negate_raw).lower() == "true"  # Boolean.parseBoolean, as transformationStages reads it
    if predicate_alias is not None and str(predicate_alias).strip() not in predicate_aliases:
        raise ConfigException(unknown_predicate(prefix, str(predicate_alias)))

    transformation: Transformation[Any] = _instantiate(props, prefix, "transformation")
    try:
        transformation.configure(configs)
        if predicate_alias is None:
            return TransformationStage(transformation, alias=alias)
        predicate_prefix = f"{PREDICATES_CONFIG}.{str(predicate_alias).strip()}."
        predicate: Predicate[Any] = _instantiate(props, predicate_prefix, "predicate")
        try:
            predicate_configs = with_prefix(props, predicate_prefix)
            predicate_configs.pop(TYPE_CONFIG, None)
            predicate.configure(predicate_configs)
        except BaseException:
            predicate.close()
            raise
        return TransformationStage(
            transformation, predicate, negate, alias=alias, predicate_alias=str(predicate_alias).strip()
        )
    except BaseException:
        transformation.close()
        raise
