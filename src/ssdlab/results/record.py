"""Typed records over stored JSON objects: the vocabulary of an open-ended part of run.json (point tags, run events,
a measurement's extra facts) declared once, as typed attributes, over the object exactly as it is stored.

A Record holds its stored object (keys in the order they were recorded, values as JSON has them) and reads it
through `Key` attributes, each typed and with the value it has when absent. It is immutable: `of(...)` builds one
from keyword values (unknown names are refused, so a typo fails where it is made), `replace(...)` gives a copy
with some keys set (new ones last, as a dict update does). Stored data of any version loads as it is: keys a
record type does not declare stay in it, untouched, so writing a record again gives the same document. It is
also a read-only mapping of that document (for code that lists every key, and for tests).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Generic, Self, TypeVar, overload

T = TypeVar("T")


class Declared:
    """A key a record type declares (Key, Nested): its name is the attribute's."""

    __slots__ = ()


class Key(Declared, Generic[T]):
    """A declared key of a record: `round = Key[int | None](None)` reads the stored "round", None when absent."""

    __slots__ = ("default", "name")

    def __init__(self, default: T) -> None:
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Key[T]: ...

    @overload
    def __get__(self, obj: Record, owner: type | None = None) -> T: ...

    def __get__(self, obj: Record | None, owner: type | None = None) -> Key[T] | T:
        if obj is None:
            return self
        return obj._data.get(self.name, self.default)  # type: ignore[no-any-return]


class Record(Mapping[str, Any]):
    """A stored JSON object read through its declared keys (see the module docstring)."""

    __slots__ = ("_data",)
    KEYS: ClassVar[frozenset[str]] = frozenset()  # the declared keys (set for every subclass)
    _data: dict[str, Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.KEYS = frozenset(name for klass in cls.__mro__ for name, v in vars(klass).items()
                             if isinstance(v, Declared))

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        """The record of a stored object (copied; any keys, in their order)."""
        object.__setattr__(self, "_data", dict(data) if data else {})

    @classmethod
    def of(cls, **values: Any) -> Self:
        """A record of these declared keys, in this order."""
        cls._check(values)
        return cls(values)

    def replace(self, **values: Any) -> Self:
        """A copy with these declared keys set (keys it did not have come last)."""
        self._check(values)
        return type(self)({**self._data, **values})

    @classmethod
    def _check(cls, values: Mapping[str, Any]) -> None:
        if not cls.KEYS.issuperset(values):
            raise TypeError(f"{cls.__name__} has no key {', '.join(sorted(set(values) - cls.KEYS))}")

    def to_dict(self) -> dict[str, Any]:
        """The stored object (a copy)."""
        return dict(self._data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: use replace()")

    def __reduce__(self) -> tuple[type[Self], tuple[dict[str, Any]]]:
        return type(self), (self._data,)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


R = TypeVar("R", bound=Record)


class Nested(Declared, Generic[R]):
    """A declared key whose stored value is an object of its own, read as a record of type `kind` (None when
    absent)."""

    __slots__ = ("kind", "name")

    def __init__(self, kind: type[R]) -> None:
        self.kind = kind
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Nested[R]: ...

    @overload
    def __get__(self, obj: Record, owner: type | None = None) -> R | None: ...

    def __get__(self, obj: Record | None, owner: type | None = None) -> Nested[R] | R | None:
        if obj is None:
            return self
        value = obj._data.get(self.name)
        return self.kind(value) if isinstance(value, Mapping) else None


class RecordField(Generic[R]):
    """A dataclass field that holds a record: it takes the record or its stored form (any mapping; None for an
    empty one) and keeps the record, so code that builds the dataclass from plain data needs no conversion."""

    __slots__ = ("kind", "slot")

    def __init__(self, kind: type[R]) -> None:
        self.kind = kind
        self.slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> None: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> R: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> R | None:
        if obj is None:
            return None  # the dataclass field's default: an empty record
        return obj.__dict__[self.slot]  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: Mapping[str, Any] | None) -> None:
        # (an exact type test first: isinstance on a Mapping subclass goes through the ABC machinery)
        keep = type(value) is self.kind or isinstance(value, self.kind)
        obj.__dict__[self.slot] = value if keep else self.kind(value)
