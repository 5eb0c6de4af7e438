"""Shared FFI types for the Python suites (registered once per process)."""

import pytest

import typing

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class


@py_class("tests.Inner")
class Inner(dc.Object):
    v: int = 0


@py_class("tests.Holder")
class Holder(dc.Object):
    x: Inner
    anything: typing.Any = None


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


@pytest.fixture
def wrap_inner_with():
    """Use a given class as the Python wrapper of tests.Inner for one test."""

    def use(cls):
        tether.register_object("tests.Inner")(cls)
        return cls

    yield use
    tether.register_object("tests.Inner")(Inner)


def pytest_collection_modifyitems(config, items):
    """Tests that compare with or load apache-tvm-ffi (the peer) need it
    installed. It publishes no wheel for some interpreters (free-threaded
    CPython among them); there those tests are skipped, saying why."""
    import importlib.util
    import inspect

    if importlib.util.find_spec("tvm_ffi") is not None:
        return
    reason = "apache-tvm-ffi (the peer) is not installed: it has no wheel for this interpreter"
    for item in items:
        try:
            source = inspect.getsource(item.module)
        except (OSError, TypeError):
            continue
        fn = getattr(item, "function", None)
        try:
            body = inspect.getsource(fn) if fn is not None else ""
        except (OSError, TypeError):
            body = ""
        if "tvm_ffi" in body or ("tvm_ffi" in source and "upstream_include_dir" in source and "tvm_ffi" in body):
            item.add_marker(pytest.mark.skip(reason=reason))
