"""``c_class`` installs the hooks a native type registered in its
type-attribute columns as class attributes (the core's Functions), and
keeps what the class body defines itself."""

import tether
import tether.testing as tt
from tether import core

HOOKS = ("__ffi_hash__", "__ffi_eq__", "__ffi_compare__", "__ffi_repr__")


def _registered(cls):
    index = cls.__tvm_ffi_type_info__.type_index
    return {name for name in HOOKS if core._lookup_type_attr(index, name) is not None}


def test_registered_hooks_become_callable_class_attributes():
    for cls in (tt.TestCustomHash, tt.TestCustomCompare, tt.TestEqWithoutHash):
        names = _registered(cls)
        assert names, cls
        for name in names:
            value = cls.__dict__[name]
            assert isinstance(value, tether.Function)
            assert value.same_as(core._lookup_type_attr(cls.__tvm_ffi_type_info__.type_index, name))
        for name in set(HOOKS) - names:
            assert name not in cls.__dict__


def test_the_installed_hook_is_the_native_one():
    a, b = tt.TestCustomHash(1, "x"), tt.TestCustomHash(1, "y")
    # The native hash hook hashes the key only: both agree through it.
    h = type(a).__dict__["__ffi_hash__"]
    nested = tether.convert(lambda v: hash(v) & 0xFFFF)  # the hook's fn_hash for nested values
    assert h(a, nested) == h(b, nested)
    assert h(a, nested) != h(tt.TestCustomHash(2, "x"), nested)


def test_a_hook_the_class_body_defines_is_kept():
    from tether.dataclasses.c_class import _install_type_attr_hooks

    def own_eq(self, other):
        return "own"

    class Mine:
        __ffi_eq__ = own_eq

    _install_type_attr_hooks(Mine, tt.TestCustomCompare.__tvm_ffi_type_info__.type_index)
    assert Mine.__dict__["__ffi_eq__"] is own_eq
    assert isinstance(Mine.__dict__["__ffi_hash__"], tether.Function)
