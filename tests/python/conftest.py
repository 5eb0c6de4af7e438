"""Shared FFI types for the Python suites (registered once per process)."""

import pytest

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class


@py_class("tests.Inner")
class Inner(dc.Object):
    v: int = 0


@py_class("tests.Holder")
class Holder(dc.Object):
    x: Inner
    anything: object = None


@py_class("tests.Base")
class Base(dc.Object):
    a: int = 0


@py_class("tests.Mid")
class Mid(Base):
    b: int = 0


@py_class("tests.Leaf")
class Leaf(Mid):
    c: int = 0


@py_class("tests.BaseHolder")
class BaseHolder(dc.Object):
    item: Base


@pytest.fixture
def holder():
    return Holder(Inner(7))
