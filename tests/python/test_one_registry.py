"""Python and a separately built C library share one core: the same global
registry, type registry and allocator registry."""

import pytest

import tether
from tether.testing import tie_state

from conftest import Holder, Inner
from plugins import build_plugin, build_rust_plugin


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    return tether.load_module(build_plugin(tmp_path_factory.mktemp("plugin")))


def test_plugin_globals_are_visible_from_python(plugin):
    f = tether.get_global_func("plugin.make_name")
    assert f() == "made by the C plugin through the registry"


def test_plugin_types_are_in_the_same_type_registry(plugin):
    from tether import _ffi

    assert _ffi.type_key_to_index("plugin.Thing") is not None


def test_plugin_allocates_through_the_python_allocator(plugin):
    # The plugin allocates through TVMFFIGetCustomAllocator(): it gets the
    # allocator the Python module installed, so its objects are tied too.
    thing = tether.get_global_func("plugin.make_thing")(41)
    assert thing.type_key == "plugin.Thing"
    assert tie_state(thing) == ("Active", True)
    assert tether.testing.echo(thing) is thing
    assert plugin.keep_and_return(thing) is thing
    i = id(tether.Array([thing])[0])
    assert i == id(thing)


def test_field_without_getter_reads_as_attribute_error(plugin):
    # The plugin registers plugin.Thing's "hidden" field with no getter.
    thing = tether.get_global_func("plugin.make_thing")(5)
    with pytest.raises(AttributeError, match="hidden has no getter"):
        thing.hidden
    assert not hasattr(thing, "hidden")
    with pytest.raises(AttributeError, match="read-only"):
        thing.hidden = 1


@pytest.mark.parametrize("alignment", [8, 16, 64, 256, 4096])
def test_over_aligned_objects_tie_and_revive(plugin, alignment):
    import gc

    things = tether.List([tether.get_global_func("plugin.make_thing")(i, alignment) for i in range(4)])
    ids = [id(things[i]) for i in range(4)]
    for i in range(4):
        assert things[i].__chandle__() % alignment == 0
    gc.collect()
    assert [id(things[i]) for i in range(4)] == ids
    del things
    gc.collect()


def test_plugin_module_functions_return_canonical_wrappers(plugin):
    h = Holder(Inner(3))
    assert plugin.keep_and_return(h) is h
    assert tie_state(h) == ("Active", True)
    arr = plugin.keep_and_return([h])
    assert tie_state(arr)[0] == "Active"


def test_module_reports_missing_functions(plugin):
    with pytest.raises(AttributeError, match="no function 'nope'"):
        plugin.nope
    with pytest.raises(FileNotFoundError):
        tether.load_module("/no/such/library.so")


@pytest.fixture(scope="module")
def rust_plugin(tmp_path_factory):
    return tether.load_module(build_rust_plugin(tmp_path_factory))


def test_rust_library_shares_the_registries(rust_plugin, plugin):
    import gc

    counter = rust_plugin.make_counter(5)
    # Its type landed in the same type registry Python reads.
    assert counter.type_key == "rust_plugin.Counter"
    # It was allocated through the Python allocator: tied and revivable.
    assert tie_state(counter) == ("Active", True)
    assert rust_plugin.counter_value(counter) == 5
    assert tether.testing.echo(counter) is counter
    # The C plugin's globals are visible to the Rust plugin's objects' users.
    assert plugin.keep_and_return(counter) is counter
    items = tether.List([counter])
    i = id(counter)
    del counter
    gc.collect()
    assert id(items[0]) == i
    with pytest.raises(TypeError, match="expects one rust_plugin.Counter"):
        rust_plugin.counter_value(1)
