"""Bases for small value classes written out by hand instead of generated as dataclasses.

Generating a dataclass's methods (``exec`` of their source) costs 0.3-1 ms of start-up per
class; the classes on the path of every command (a table identifier, catalog options, a
file status, ``Rows``) derive from these instead and keep the dataclass behaviour: equality
over ``FIELDS`` within one class, the dataclass repr, unhashable when mutable, hash over the
fields and ``FrozenInstanceError`` when frozen, pickling and copying of the instance dict
(``tests/core/test_value_classes_behaviour.py``). Each class writes its own ``__init__``
(frozen ones set their fields with ``object.__setattr__``) and names its fields in ``FIELDS``
and ``__match_args__``.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from reprlib import recursive_repr
from typing import Any, ClassVar


class _Factory:
    """The default of a field with a ``default_factory`` in the constructor's signature: an
    omitted argument gets a fresh value (an explicit ``None`` stays ``None``)."""

    def __repr__(self) -> str:
        return "<factory>"


FACTORY: Any = _Factory()


class Value:
    """A mutable value: as ``@dataclass`` (eq, repr, no hash)."""

    FIELDS: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, n) for n in self.FIELDS])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    @recursive_repr()
    def __repr__(self) -> str:
        return f"{self.__class__.__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS) + ")"


class FrozenValue(Value):
    """An immutable value: as ``@dataclass(frozen=True)``."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


set_field = object.__setattr__  # how a frozen value's __init__ sets a field


__all__ = ["FACTORY", "FrozenValue", "Value", "set_field"]
