"""depsync/records.py: the @dataclass subset depsync uses, held to what dataclasses does."""

from __future__ import annotations

import dataclasses

import pytest

from depsync.records import FrozenInstanceError, field, fields, record, replace


@record
class Pin:
    name: str
    rev: str = ""
    notes: list[str] = field(default_factory=list, compare=False)
    secret: str = field(default="", repr=False)


@dataclasses.dataclass(frozen=True)
class PinDataclass:
    name: str
    rev: str = ""
    notes: list[str] = dataclasses.field(default_factory=list, compare=False)
    secret: str = dataclasses.field(default="", repr=False)


def test_a_record_behaves_as_the_frozen_dataclass() -> None:
    ours, theirs = Pin("a", "v1"), PinDataclass("a", "v1")
    assert repr(ours) == repr(theirs).replace("PinDataclass", "Pin")
    assert ours == Pin("a", "v1", ["other notes"])  # compare=False
    assert ours != Pin("a", "v2") and ours != ("a", "v1")
    assert hash(ours) == hash(Pin("a", "v1"))
    assert Pin("a").notes is not Pin("a").notes  # a factory per instance
    assert [f.name for f in fields(Pin)] == [f.name for f in dataclasses.fields(PinDataclass)]
    assert Pin.__match_args__ == PinDataclass.__match_args__


def test_frozen_fields_cannot_be_assigned_or_deleted() -> None:
    pin = Pin("a")
    with pytest.raises(FrozenInstanceError):
        pin.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del pin.rev  # type: ignore[misc]


def test_replace_changes_fields_and_rejects_unknown_ones() -> None:
    pin = Pin("a", "v1", ["n"])
    assert replace(pin, rev="v2") == Pin("a", "v2") and replace(pin, rev="v2").notes == ["n"]
    with pytest.raises(TypeError, match="no field 'nope'"):
        replace(pin, nope=1)


def test_order_and_mutable_records() -> None:
    @record(order=True)
    class Version:
        major: int
        minor: int = 0

    assert sorted([Version(2), Version(1, 5), Version(1)]) == [Version(1), Version(1, 5), Version(2)]

    @record(frozen=False)
    class Counter:
        count: int = 0
        seen: set[str] = field(default_factory=set)

    counter = Counter()
    counter.count += 1
    assert counter == Counter(1) and Counter.__hash__ is None  # mutable and compared by value: unhashable


def test_methods_the_class_defines_are_kept() -> None:
    @record
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

    assert repr(Named("x")) == "<x>"


def test_definition_errors_are_the_dataclass_ones() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Bad:
            items: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="non-default field"):

        @record
        class Order:
            a: int = 0
            b: int  # type: ignore[misc]


def test_init_is_compiled_at_the_first_instance_and_then_is_the_class_own() -> None:
    @record
    class Late:
        a: int
        b: str = "x"

    placeholder = Late.__dict__["__init__"]
    assert Late(1) == Late(a=1, b="x")
    assert Late.__dict__["__init__"] is not placeholder
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        Late()  # type: ignore[call-arg]
