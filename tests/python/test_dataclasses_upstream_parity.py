"""tether.dataclasses' private helpers and hooks that tvm_ffi code and
tests reach for: named tuples over fields, the enum state record, field
objects attached to native classes, and methods registered as type
methods."""

import itertools

import pytest

import tether
import tether.dataclasses as dc
from tether.core import Object, TypeSchema
from tether.dataclasses.common import _make_namedtuple

_counter = itertools.count()


def _key(name: str) -> str:
    return f"tests.dc_upstream.{name}_{next(_counter)}"


def test_make_namedtuple_converts_like_the_fields():
    @dc.py_class(_key("Rec"))
    class Rec(Object):
        count: int
        scale: float

    record = _make_namedtuple("RecFields", dc.fields(Rec))
    assert record.__bases__ == (tuple,)
    assert record._fields == ("count", "scale")
    value = record(2, 3)
    assert type(value.scale) is float and value == (2, 3.0)
    assert type(record._make([1, 4]).scale) is float
    assert type(value._replace(scale=5).scale) is float
    with pytest.raises(TypeError, match=r"RecFields\.scale:.*expected float"):
        record(1, "x")
    assert not dc.is_dataclass(record)


def test_make_namedtuple_keeps_a_cached_schema_and_the_field():
    f = dc.Field("scale", TypeSchema.from_annotation(float))
    record = _make_namedtuple("Cached", (f,))
    assert record.__annotations__ == {}
    assert type(record(2).scale) is float
    assert f.type is None
