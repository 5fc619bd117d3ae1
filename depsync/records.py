"""Records: what depsync uses of @dataclass, with at most one compile per class.

On Python 3.11, dataclasses compiles each generated method on its own (six for a frozen
class) and imports inspect; a cold `depsync check` defines ~45 classes before its first rule,
and that was 25 ms of its ~150 ms (bench/bench_check.py). A record gets the same methods, and
only __init__ is compiled, at the class's first instance: __init__ (defaults and default
factories), __repr__ (fields with repr=False left out), __eq__ and __hash__ over the fields
with compare=True, the order methods with order=True, and, frozen (the default),
__setattr__/__delattr__ that raise FrozenInstanceError. A method the class body defines itself
is kept, as dataclasses keeps it. replace() and fields() work on records as dataclasses' do on
dataclasses.

    @record
    class Pin:
        name: str
        rev: str = ""
        notes: list[str] = field(default_factory=list, compare=False)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")
_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "MISSING"})()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record."""


class Field:
    __slots__ = ("name", "default", "default_factory", "repr", "compare")

    def __init__(self, default: Any, default_factory: Any, repr: bool, compare: bool) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING, repr: bool = True, compare: bool = True) -> Any:
    """A field's options, as dataclasses.field takes them (the ones depsync uses)."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("a field cannot have both a default and a default_factory")
    return Field(default, default_factory, repr, compare)


def _is_class_var(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__qualname__", repr(annotation))
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _collect(cls: type) -> list[Field]:
    found: list[Field] = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(value, _MISSING, True, True)
        spec.name = name
        if isinstance(spec.default, (list, dict, set)):
            raise ValueError(f"mutable default {type(spec.default).__name__} for field {name} of {cls.__qualname__}: use default_factory")
        found.append(spec)
    seen_default = False
    for spec in found:
        has_default = spec.default is not _MISSING or spec.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default field {spec.name!r} of {cls.__qualname__} follows a default one")
        seen_default = seen_default or has_default
    return found


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r} of {type(self).__qualname__}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r} of {type(self).__qualname__}")


def _repr(self: Any) -> str:
    shown = ", ".join(f"{s.name}={getattr(self, s.name)!r}" for s in type(self).__record_fields__ if s.repr)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = self.__record_key__
    return key(self) == key(other)


def _hash(self: Any) -> int:
    return hash(self.__record_key__(self))


def _ordering(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = self.__record_key__
        return compare(key(self), key(other))

    return method


_ORDER = {"__lt__": _ordering(operator.lt), "__le__": _ordering(operator.le), "__gt__": _ordering(operator.gt), "__ge__": _ordering(operator.ge)}


def _no_fields(self: Any) -> tuple[()]:
    return ()


def _init(cls: type, specs: list[Field], frozen: bool) -> Callable[..., None]:
    """__init__, the one method compiled per class: it runs for every instance."""
    names: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    params, body = [], []
    for spec in specs:
        n = spec.name
        if spec.default_factory is not _MISSING:
            names[f"_factory_{n}"] = spec.default_factory
            params.append(f"{n}=_MISSING")
            value = f"_factory_{n}() if {n} is _MISSING else {n}"
        elif spec.default is not _MISSING:
            names[f"_default_{n}"] = spec.default
            params.append(f"{n}=_default_{n}")
            value = n
        else:
            params.append(n)
            value = n
        body.append(f" _set(self, {n!r}, {value})" if frozen else f" self.{n} = {value}")
    text = f"def __init__(self{''.join(', ' + p for p in params)}):\n" + "\n".join(body or [" pass"]) + "\n"
    namespace: dict[str, Any] = {}
    exec(compile(text, f"<record {cls.__module__}.{cls.__qualname__}>", "exec"), names, namespace)
    function: Callable[..., None] = namespace["__init__"]
    return function


def _init_on_first_use(cls: type, specs: list[Field], frozen: bool) -> Callable[..., None]:
    """An __init__ that compiles the class's own on its first call and puts it in its place: a
    run defines many more records than it makes (a cold check: 46 defined, about half made),
    and the compile is most of what defining one costs."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        compiled = _init(cls, specs, frozen)
        compiled.__qualname__ = f"{cls.__qualname__}.__init__"
        if cls.__dict__.get("__init__") is __init__:
            cls.__init__ = compiled  # type: ignore[misc]
        compiled(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _build(cls: type[_T], frozen: bool, eq: bool, order: bool) -> type[_T]:
    specs = _collect(cls)
    for spec in specs:  # the class attribute stays the default (as dataclasses leaves it), never a Field
        if spec.name in cls.__dict__:
            if spec.default is _MISSING:
                delattr(cls, spec.name)
            else:
                setattr(cls, spec.name, spec.default)
    compared = [s.name for s in specs if s.compare]
    methods: dict[str, Any] = {"__init__": _init_on_first_use(cls, specs, frozen), "__repr__": _repr}
    if eq:
        methods["__eq__"] = _eq
    if order:
        methods.update(_ORDER)
    if frozen:
        methods["__setattr__"] = _frozen_setattr
        methods["__delattr__"] = _frozen_delattr
    own = cls.__dict__
    for name, function in methods.items():
        if name not in own:  # a method the class defines itself is kept
            setattr(cls, name, function)
    if eq and "__hash__" not in own:
        cls.__hash__ = _hash if frozen else None  # type: ignore[assignment]  # mutable and compared by value: unhashable
    cls.__record_fields__ = tuple(specs)  # type: ignore[attr-defined]
    cls.__record_key__ = staticmethod(operator.attrgetter(*compared) if compared else _no_fields)  # type: ignore[attr-defined]
    cls.__match_args__ = tuple(s.name for s in specs)  # type: ignore[attr-defined]
    return cls


@overload
def record(cls: type[_T], /) -> type[_T]: ...
@overload
def record(*, frozen: bool = True, eq: bool = True, order: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[_T] | None = None, /, *, frozen: bool = True, eq: bool = True, order: bool = False) -> Any:
    """A class decorator: the class's annotated names become its fields (see the module docstring)."""
    if cls is None:
        return lambda c: _build(c, frozen, eq, order)
    return _build(cls, frozen, eq, order)


def fields(obj: Any) -> tuple[Field, ...]:
    """The fields of a record (class or instance), in order."""
    found = getattr(obj, "__record_fields__", None)
    if found is None:
        raise TypeError(f"{obj!r} is not a record")
    return found  # type: ignore[no-any-return]


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of a record with some fields changed."""
    specs = fields(obj)
    unknown = set(changes) - {s.name for s in specs}
    if unknown:
        raise TypeError(f"{type(obj).__qualname__} has no field {sorted(unknown)[0]!r}")
    return type(obj)(**{s.name: changes[s.name] if s.name in changes else getattr(obj, s.name) for s in specs})


def is_record(obj: Any) -> bool:
    return hasattr(obj, "__record_fields__")
