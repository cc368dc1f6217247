"""Stored results checked against the result model's types as they are loaded: a run.json or points.jsonl that was
edited, truncated or written by something else is refused with one line naming the file and the field
(StoredResultsError, exit 8) instead of failing later, deep inside a command.

Two steps, both cheap next to reading the JSON: `items` builds each element of a stored list with its place in
the document named when it fails (a missing key, a list where an object belongs ...), and `check` walks the built
Run or PointResult and compares every field of the model's dataclasses with its annotation (a number where a
number belongs, text where text belongs ...). Latency bins are converted to integers while they are built, so the
walk leaves them alone.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ssdlab.errors import StoredResultsError

T = TypeVar("T")
_NUMBER = (int, float)
_SKIP = frozenset({"bins"})  # built as integers already (model._latency)


class ShapeError(StoredResultsError, ValueError):
    """A stored value of the wrong shape: `field` is its place in the document (points[3].measurement ...). A
    StoredResultsError (exit 8); the store names the file in front of it."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"malformed: {field}: {problem}" if field else f"malformed: {problem}")
        self.field = field
        self.problem = problem

    def under(self, outer: str) -> ShapeError:
        """The same error with its field placed inside `outer`."""
        return ShapeError(_join(outer, self.field), self.problem)


def _join(outer: str, inner: str) -> str:
    if not inner:
        return outer
    return f"{outer}{inner}" if inner.startswith("[") else f"{outer}.{inner}" if outer else inner


def describe(exc: BaseException) -> tuple[str, str]:
    """(field, problem) of an error raised while a stored object was built."""
    if isinstance(exc, ShapeError):
        return exc.field, exc.problem
    if isinstance(exc, KeyError):
        return str(exc.args[0]) if exc.args else "", "missing"
    return "", f"not the expected kind of value ({type(exc).__name__}: {exc})"


def malformed(path: Path, field: str, problem: str) -> StoredResultsError:
    """The one line for a stored file that does not have the model's shape (exit 8)."""
    return StoredResultsError(f"{path}: {field or 'the document'}: {problem}: the file was changed or damaged after "
                              "ssdlab wrote it; restore it from a copy, or run the test again")


def items(values: Any, field: str, build: Callable[[Any], T]) -> tuple[T, ...]:
    """Each element of the stored list `values` (the document's `field`; or an iterator over its elements,
    read once: run.json's points as they are read) built with `build`; a failure names the element
    (field[3].key)."""
    if values is None:
        return ()
    if not isinstance(values, list | tuple | Iterator):
        raise ShapeError(field, f"expected a list, found {_kind(values)}")
    out = []
    for i, v in enumerate(values):
        try:
            out.append(build(v))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            inner, problem = describe(exc)
            raise ShapeError(_join(f"{field}[{i}]", inner), problem) from exc
    return tuple(out)


def mapping(value: Any, field: str) -> Mapping[str, Any]:
    """A stored object (JSON object) or None: anything else is refused naming `field`."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ShapeError(field, f"expected an object, found {_kind(value)}")
    return value


def check(obj: Any, field: str = "") -> None:
    """Walk a built Run/PointResult (or any dataclass of the model) and raise ShapeError at the first field whose
    value does not have its annotated kind."""
    try:
        _compile(type(obj))(obj)
    except ShapeError as exc:
        raise exc.under(field) from None


Checker = Callable[[Any], None]  # raises ShapeError with the field relative to the value it was given
_CHECKERS: dict[Any, Checker] = {}


def _ok(value: Any) -> None:
    return None


def _compile(hint: Any) -> Checker:
    """A checker for values of annotation `hint`, built once per annotation (paths are only built on failure)."""
    found = _CHECKERS.get(hint)
    if found is None:
        found = _CHECKERS[hint] = _build(hint)
    return found


def _build(hint: Any) -> Checker:
    if hint is Any or hint is object:
        return _ok
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(args)
    if origin is typing.Literal:
        return _literal
    if origin in (tuple, list, Sequence, typing.Sequence) or hint in (tuple, list):
        return _sequence(args[0] if args else Any)
    if origin in (dict, Mapping, typing.Mapping) or hint is dict:
        return _mapping(args[1] if len(args) == 2 else Any)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint)
    if isinstance(hint, type):
        return _plain(hint)
    return _ok


def _union(args: tuple[Any, ...]) -> Checker:
    none_ok = type(None) in args
    subs = [_compile(a) for a in args if a is not type(None)]

    def check_union(value: Any) -> None:
        if value is None and none_ok:
            return
        first: ShapeError | None = None
        for sub in subs:
            try:
                sub(value)
                return
            except ShapeError as exc:
                first = first or exc
        raise first if first is not None and len(subs) == 1 else ShapeError("", f"unexpected {_kind(value)}")

    return check_union


def _literal(value: Any) -> None:
    if type(value) is not str:  # (the model's literals are words: statuses, kinds)
        raise ShapeError("", f"expected text, found {_kind(value)}")


def _sequence(element: Any) -> Checker:
    numbers = element in _NUMBER
    sub = _compile(element)

    def check_sequence(value: Any) -> None:
        view = getattr(value, "shape_view", None)  # a sequence read from another file when iterated
        if view is not None:  # (model.StoredParts): what it holds in memory; the file is checked as it is read
            value = view()
        if not isinstance(value, list | tuple):
            raise ShapeError("", f"expected a list, found {_kind(value)}")
        if numbers and all(type(v) in _NUMBER for v in value):  # series: thousands of numbers
            return
        for i, v in enumerate(value):
            try:
                sub(v)
            except ShapeError as exc:
                raise exc.under(f"[{i}]") from None

    return check_sequence


def _mapping(element: Any) -> Checker:
    numbers = element in _NUMBER
    sub = _compile(element)

    def check_mapping(value: Any) -> None:
        if not isinstance(value, Mapping):
            raise ShapeError("", f"expected an object, found {_kind(value)}")
        if sub is _ok or (numbers and all(type(v) in _NUMBER for v in value.values())):
            return
        for k, v in value.items():
            try:
                sub(v)
            except ShapeError as exc:
                raise exc.under(str(k)) from None

    return check_mapping


def _dataclass(cls: type) -> Checker:
    fields: list[tuple[str, Checker]] = []  # filled on first use: the model's dataclasses refer to each other

    def check_dataclass(obj: Any) -> None:
        if not isinstance(obj, cls):
            raise ShapeError("", f"expected an object, found {_kind(obj)}")
        if not fields:
            fields.extend((name, _compile(hint)) for name, hint in _hints(cls) if name not in _SKIP)
        for name, sub in fields:
            try:
                sub(getattr(obj, name))
            except ShapeError as exc:
                raise exc.under(name) from None

    return check_dataclass


def _plain(kind: type) -> Checker:
    if issubclass(kind, Mapping):  # typed records (tags, events, extra): objects of any keys
        test: Callable[[Any], bool] = lambda v: isinstance(v, Mapping)  # noqa: E731
    elif kind is float:
        test = lambda v: type(v) in _NUMBER  # noqa: E731
    elif kind in (int, bool, str):
        test = lambda v: type(v) is kind  # noqa: E731
    else:
        test = lambda v: isinstance(v, kind)  # noqa: E731
    expected = _expected(kind)

    def check_plain(value: Any) -> None:
        if not test(value):
            raise ShapeError("", f"expected {expected}, found {_kind(value)}")

    return check_plain


def _hints(cls: type) -> tuple[tuple[str, Any], ...]:
    """The stored fields of a model dataclass with their resolved annotations (descriptors such as
    Measurement.extra are records: checked as objects)."""
    resolved = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        hint = resolved.get(f.name, Any)
        origin = typing.get_origin(hint)
        if origin is not None and not _known_origin(origin):
            hint = Mapping  # a record field descriptor (RecordField[...]): an object of any keys
        out.append((f.name, hint))
    return tuple(out)


def _known_origin(origin: Any) -> bool:
    return origin in (typing.Union, types.UnionType, typing.Literal, tuple, list, dict, Sequence, Mapping,
                      typing.Sequence, typing.Mapping)


def _expected(kind: type) -> str:
    return {float: "a number", int: "a whole number", bool: "true or false", str: "text"}.get(kind, kind.__name__)


def kind_of(value: Any) -> str:
    """What a stored value is, for a message ("the text 'x'", "a list" ...)."""
    return _kind(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 30 else value[:27] + "..."
        return f"the text {shown!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, Iterable):
        return "a list"
    return type(value).__name__
