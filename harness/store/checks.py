"""JSON values checked for the type a record expects, every error named by its field's path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from harness.names import SIZE_NAME, name_problem


class SchemaError(ValueError):
    """A document not of the schema's shape; ``field`` is the path of the first bad field."""

    def __init__(self, field_path: str, problem: str) -> None:
        super().__init__(f"{field_path}: {problem}" if field_path else problem)
        self.field = field_path
        self.problem = problem


T = TypeVar("T")
Check = Callable[[Any, str], T]


def expected(what: str, value: Any, where: str) -> SchemaError:
    got = "null" if value is None else "object" if isinstance(value, dict) else type(value).__name__
    return SchemaError(where, f"expected {what}, got {got}")


def _of(kind: type | tuple[type, ...], what: str) -> Check[Any]:
    """Values of ``kind`` as they are; true and false are no numbers, as JSON tells them apart."""

    def checked(value: Any, where: str) -> Any:
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise expected(what, value, where)
        return value

    return checked


string: Check[str] = _of(str, "str")
integer: Check[int] = _of(int, "int")
number: Check[float] = _of((int, float), "number")
boolean: Check[bool] = _of(bool, "bool")
json_object: Check[Mapping[str, Any]] = _of(dict, "object")


def narrowed(check: Check[T], ok: Callable[[T], object], problem: str) -> Check[T]:
    """``check``, then ``ok`` of what it read, else ``problem`` (``{value}``: the value)."""

    def checked(value: Any, where: str) -> T:
        found = check(value, where)
        if not ok(found):
            raise SchemaError(where, problem.format(value=value))
        return found

    return checked


def path_name(value: Any, where: str) -> str:
    """A name that may become part of a path (case, release, profile, id, machine)."""
    problem = name_problem(string(value, where))
    if problem:
        raise SchemaError(where, problem)
    return value


def size_map(value: Any, where: str) -> dict[str, int]:
    for key in json_object(value, where):
        problem = name_problem(key, SIZE_NAME)
        if problem:
            raise SchemaError(where, f"size {problem}")
    return map_of(integer)(value, where)


def as_is(value: Any, where: str) -> Any:
    return value


def list_of(check: Check[T]) -> Check[tuple[T, ...]]:
    def checked(value: Any, where: str) -> tuple[T, ...]:
        if not isinstance(value, list):
            raise expected("list", value, where)
        return tuple(check(item, f"{where}[{i}]") for i, item in enumerate(value))

    return checked


def map_of(check: Check[T]) -> Check[dict[str, T]]:
    def checked(value: Any, where: str) -> dict[str, T]:
        return {
            key: check(item, f"{where}.{key}") for key, item in json_object(value, where).items()
        }

    return checked


def window(value: Any, where: str) -> tuple[int, int]:
    pair = list_of(integer)(value, where)
    if len(pair) != 2:
        raise SchemaError(where, f"expected [start, end], got {len(pair)} values")
    return pair[0], pair[1]


class Fields:
    """The fields of one JSON object, read with a check each, errors named by path."""

    def __init__(self, value: Any, where: str) -> None:
        self.data = json_object(value, where)
        self.where = where

    def _path(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def required(self, name: str, check: Check[T]) -> T:
        if name not in self.data:
            raise SchemaError(self._path(name), "missing")
        return check(self.data[name], self._path(name))

    def optional(self, name: str, check: Check[T], default: T) -> T:
        """The field, or ``default`` when it is absent or null."""
        value = self.data.get(name)
        return default if value is None else check(value, self._path(name))
