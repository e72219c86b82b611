"""The event vocabulary: which types exist, their current versions, and upcasters.

Stored events are never rewritten. When a payload's shape changes, its type's
``VERSION`` goes up and an upcaster turning the previous version's JSON into the new
one is registered; reads apply the chain, so every reader sees the current shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from helix.errors import InvalidEventError, InvalidPayloadError, UnknownEventTypeError

from ._envelope import NewEvent
from ._payload import Payload

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns one version's payload JSON into the next version's."""


class _EnvelopeBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    seq: int = Field(ge=0)
    v: int = Field(ge=1)
    ts: str
    turn: int | None = Field(default=None, ge=0)
    actor: str = Field(pattern=r"^(agent|system|user:\S+)$")


class EventRegistry:
    """A set of event types with their versions and upcasters."""

    def __init__(self, payloads: Iterable[type[Payload]] = ()) -> None:
        self._types: dict[str, type[Payload]] = {}
        self._versions: dict[str, int] = {}
        self._upcasters: dict[tuple[str, int], Upcaster] = {}
        self._envelope: TypeAdapter[Any] | None = None
        for payload in payloads:
            self.register(payload)

    def register(self, payload: type[Payload]) -> None:
        """Add an event type; its name must be new."""
        if payload.TYPE in self._types:
            raise ValueError(f"event type {payload.TYPE!r} is already registered")
        self._types[payload.TYPE] = payload
        self._versions[payload.TYPE] = payload.VERSION
        self._envelope = None

    def register_upcaster(self, event_type: str, from_version: int, upcaster: Upcaster) -> None:
        """Register how to turn ``event_type`` at ``from_version`` into ``from_version + 1``."""
        self.model(event_type)
        self._upcasters[(event_type, from_version)] = upcaster

    @property
    def versions(self) -> Mapping[str, int]:
        """The current version of every registered type, by name."""
        return self._versions

    @property
    def types(self) -> Mapping[str, type[Payload]]:
        """Every registered type, by name."""
        return self._types

    def model(self, event_type: str) -> type[Payload]:
        """Return the payload model of ``event_type``."""
        try:
            return self._types[event_type]
        except KeyError:
            raise UnknownEventTypeError(event_type) from None

    def version(self, event_type: str) -> int:
        """Return the current version of ``event_type``."""
        return self.model(event_type).VERSION

    def check(self, payload: Payload) -> None:
        """Refuse a payload whose type is not in this vocabulary."""
        if self._types.get(payload.TYPE) is not type(payload):
            raise UnknownEventTypeError(payload.TYPE)

    def parse(self, event_type: str, data: object) -> Payload:
        """Validate JSON ``data`` as the current version of ``event_type``."""
        model = self.model(event_type)
        try:
            return model.model_validate(data)
        except ValidationError as error:
            raise InvalidPayloadError(f"{event_type}: {_describe(error)}") from None

    def new_event(
        self,
        event_type: str,
        data: object,
        *,
        actor: str = "system",
        turn: int | None = None,
    ) -> NewEvent:
        """Build a ``NewEvent`` from untyped input, refusing unknown types and bad data."""
        return NewEvent(self.parse(event_type, data), actor=actor, turn=turn)

    def upcast(
        self, event_type: str, version: int, data: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """Bring stored ``data`` at ``version`` up to the type's current version.

        Unknown types and versions newer than ours pass through unchanged, so an older
        Helix can still show a log written by a newer one.
        """
        model = self._types.get(event_type)
        if model is None:
            return version, data
        while version < model.VERSION:
            upcaster = self._upcasters.get((event_type, version))
            if upcaster is None:
                raise InvalidEventError(
                    f"{event_type}: no upcaster from version {version} to {version + 1}"
                )
            data = upcaster(data)
            version += 1
        return version, data

    def parse_envelope(self, obj: object) -> tuple[dict[str, Any], Payload]:
        """Validate a whole event object (e.g. one exported line); return it and its payload.

        An older version of its type is upcast first (the object returned is the current
        version); a version newer than this registry knows is refused: it cannot be checked.
        """
        if not isinstance(obj, dict):
            raise InvalidEventError("an event must be a JSON object")
        event_type = obj.get("type")
        if not isinstance(event_type, str):
            raise InvalidEventError("an event needs a string 'type'")
        obj = self._upcast_envelope(event_type, obj)
        try:
            envelope = self.envelope_adapter().validate_python(obj)
        except ValidationError as error:
            raise InvalidPayloadError(f"{event_type}: {_describe(error)}") from None
        return obj, envelope.data

    def _upcast_envelope(self, event_type: str, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj`` at its type's current version (an older one is upcast, a newer refused)."""
        current = self.version(event_type)
        version, data = obj.get("v"), obj.get("data")
        if type(version) is not int or version == current or not isinstance(data, dict):
            return obj  # validation says what is wrong, if anything
        if version > current:
            raise InvalidEventError(
                f"{event_type}: version {version} is newer than this Helix reads ({current})"
            )
        if version < 1:
            return obj
        try:
            version, data = self.upcast(event_type, version, dict(data))
        except InvalidEventError:
            raise
        except Exception as error:  # an upcaster meeting data it cannot read
            raise InvalidPayloadError(
                f"{event_type}: version {version} cannot be read: {error}"
            ) from None
        return {**obj, "v": version, "data": data}

    def envelope_adapter(self) -> TypeAdapter[Any]:
        """Return a validator for whole events: one closed union discriminated by ``type``."""
        if self._envelope is None:
            variants = [
                create_model(
                    _class_name(name),
                    __base__=_EnvelopeBase,
                    __doc__=(model.__doc__ or name).strip().splitlines()[0],
                    type=(Literal[name], ...),  # type: ignore[arg-type]
                    data=(model, ...),
                )
                for name, model in sorted(self._types.items())
            ]
            union: Any = variants[0] if len(variants) == 1 else _union(variants)
            self._envelope = TypeAdapter(union)
        return self._envelope

    def json_schema(self) -> dict[str, Any]:
        """Return the JSON Schema of every event this registry knows."""
        schema = self.envelope_adapter().json_schema()
        schema["title"] = "HelixEvent"
        return schema


def _union(variants: Sequence[type[BaseModel]]) -> Any:
    from typing import Annotated, Union

    return Annotated[Union[tuple(variants)], Field(discriminator="type")]  # noqa: UP007


def _class_name(event_type: str) -> str:
    return "".join(part.capitalize() for part in event_type.replace("_", ".").split(".")) + "Event"


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:5]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)
