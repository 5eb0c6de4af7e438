"""Hostile use: threads, interpreter exit, deep and cyclic input, moved-from
wrappers. Scenarios that could take the interpreter down run in a fresh
subprocess so a regression fails one test instead of the whole suite."""

import subprocess
import sys
import textwrap
import threading
import time

import pytest

import tether
from thread_failures import run_threads, running_threads


def run_python(source: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# ---- interpreter exit while daemon threads are inside FFI calls -------------

EXIT_WITH_DAEMONS = """
    import threading, time
    import tether

    def slow(*args):
        time.sleep(0.001)          # gives the GIL away inside the callback
        return args[0] if args else None

    apply_n = tether.get_global_func("testing.apply_n")
    echo = tether.get_global_func("testing.echo")
    keep = tether.List()           # Python objects held natively, released on any thread

    def callbacks():
        while True:
            apply_n(slow, 50, 1)   # native code calling back into Python

    def calls():
        while True:
            echo(keep)
            keep.append(object())
            if len(keep) > 100:
                keep.clear()

    for target in (callbacks, callbacks, callbacks, calls, calls):
        threading.Thread(target=target, daemon=True).start()
    junk = [[i] for i in range(300_000)]   # makes finalization take a while
    time.sleep(0.2)
    print("main done")
"""


def test_interpreter_exit_with_daemon_threads_in_callbacks_and_calls():
    for _ in range(8):
        r = run_python(EXIT_WITH_DAEMONS)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "main done" in r.stdout
        assert "FATAL" not in r.stderr


# ---- containers under concurrent mutation ------------------------------------

def test_list_reads_while_other_threads_mutate():
    lst = tether.List(list(range(50)))
    arr = tether.Array([tether.Array([i]) for i in range(20)])
    stop = threading.Event()

    def mutate():
        while not stop.is_set():
            try:
                lst.append(tether.Array([1]))
                lst.insert(0, 3)
                lst.pop()
                lst.pop(0)
                if len(lst) > 100:
                    lst.clear()
                lst.extend(range(20))
            except IndexError:
                pass  # another mutator emptied the list between two calls

    def read():
        seen = 0
        while not stop.is_set():
            try:
                for _ in lst:
                    seen += 1
                if len(lst):
                    lst[0]
            except RuntimeError as e:
                assert "changed size during iteration" in str(e)
            except IndexError:
                pass
            assert len(list(arr)) == 20 and arr[3][0] == 3
        return seen

    with running_threads([mutate] * 2 + [read] * 2, stop=stop) as results:
        time.sleep(2)
    assert all(n > 0 for n in results[2:])  # both readers read, and no thread raised


def test_list_iteration_raises_when_mutated_by_the_loop():
    lst = tether.List([1, 2, 3])
    with pytest.raises(RuntimeError, match="changed size during iteration"):
        for x in lst:
            lst.append(x)


# ---- deep and cyclic input -------------------------------------------------------

def test_self_referential_list_and_dict_raise_value_error_naming_the_cycle():
    a = []
    a.append(a)
    with pytest.raises(ValueError, match=r"self-referential list: it contains itself \(list -> list\)"):
        tether.convert(a)
    d = {}
    d["x"] = [d]
    with pytest.raises(ValueError, match=r"self-referential dict: it contains itself \(dict -> list -> dict\)"):
        tether.convert(d)
    with pytest.raises(ValueError, match="contains itself"):
        tether.get_global_func("testing.echo")([1, a])


def test_shared_but_acyclic_values_convert():
    s = [1, 2]
    out = tether.convert([s, s, (s, {"a": s})])
    assert list(out[0]) == [1, 2] and list(out[2][1]["a"]) == [1, 2]


def test_100000_level_nested_list_converts_on_a_small_thread_stack():
    result = []
    keep = []

    def convert_deep():
        x = []
        for _ in range(100_000):
            x = [x]
        r = tether.convert(x)
        depth = 0
        while len(r):
            r = r[0]
            depth += 1
        result.append(depth)
        # The nested Python list dies on the main thread: CPython 3.13
        # deallocates it recursively down to its C recursion limit, which is
        # a count of frames, not bytes, and the larger frames of a
        # ThreadSanitizer build overflow this small stack inside CPython.
        keep.append(x)

    old = threading.stack_size(1 << 20)
    try:
        run_threads([convert_deep])
    finally:
        threading.stack_size(old)
    assert result == [100_000]


# ---- moved-from and uninitialised wrappers ------------------------------------------

def test_error_fields_on_a_moved_from_error_raise():
    err = tether.convert(ValueError("boom"))
    assert (err.kind, err.message) == ("ValueError", "boom")
    tether.get_global_func("testing.echo")(err._move())
    with pytest.raises(ValueError, match="moved from"):
        err.kind
    with pytest.raises(ValueError, match="moved from"):
        err.message


@pytest.mark.parametrize("make", ["moved", "uninitialised"])
def test_every_wrapper_api_on_a_handle_less_wrapper_raises(make):
    from conftest import Inner

    if make == "moved":
        lst = tether.List([1])
        tether.get_global_func("testing.echo")(lst._move())
        inner = Inner(3)
        tether.get_global_func("testing.echo")(inner._move())
        fn = tether.convert(lambda: 1)
        tether.get_global_func("testing.echo")(fn._move())
    else:
        lst = tether.List.__base__.__base__.__new__(tether.List)
        inner = tether.Object.__new__(Inner)
        fn = tether.Object.__new__(tether.Function)
    assert lst.__chandle__() == 0 and not lst.same_as(lst)
    for action in (
        lambda: len(lst),
        lambda: lst[0],
        lambda: list(lst),
        lambda: lst.append(1),
        lambda: lst.type_key,
        lambda: lst._move(),
        lambda: inner.v,
        lambda: setattr(inner, "v", 1),
        lambda: fn(),
        lambda: tether.get_global_func("testing.echo")(inner),
    ):
        with pytest.raises(ValueError, match="no handle"):
            action()
    assert "moved" in repr(lst) or "null" in repr(lst)


# ---- messages ------------------------------------------------------------------

def test_huge_int_for_a_float_field_names_the_problem():
    from tether.dataclasses import py_class
    import tether.dataclasses as dc

    @py_class("tests.hostile.FloatBox")
    class FloatBox(dc.Object):
        x: float = 0.0

    # Ints beyond int64 are taken as floats (as tvm_ffi does); past the
    # float range the error names the field and the size.
    assert FloatBox(2**70).x == float(2**70)
    with pytest.raises(TypeError, match=r"FloatBox.__ffi_init__\(\) field 'x':\n  expected float, got an int too large"):
        FloatBox(10**400)
    box = FloatBox(1.0)
    with pytest.raises(TypeError, match=r"expected float, got an int too large to convert to float"):
        box.x = 10**400
    assert box.x == 1.0


def test_map_from_bad_pairs_says_what_is_wrong():
    with pytest.raises(ValueError, match="too many values to unpack"):
        tether.Map([(1, 2, 3)])
    with pytest.raises(ValueError, match="not enough values to unpack"):
        tether.Map([(1,)])


def test_overriding_or_removing_builtin_globals_does_not_change_tether():
    r = run_python("""
        import tether
        tether.register_global_func("ffi.Array", lambda *a: "hijacked", override=True)
        assert tether.get_global_func("ffi.Array")() == "hijacked"   # the user's override is visible
        assert list(tether.convert([1, 2])) == [1, 2]               # tether's own conversion is not
        assert list(tether.Array([3])) == [3]
        assert tether.get_global_func("ffi.FunctionRemoveGlobal")("ffi.Map")
        assert tether.get_global_func("ffi.Map", allow_missing=True) is None
        assert dict(tether.convert({1: 2}).items()) == {1: 2}
        assert tether.Map({"a": 1})["a"] == 1
        print("ok")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.parametrize("make", [tether.Array, tether.List], ids=["Array", "List"])
def test_a_list_changed_by_an_items_conversion_converts_as_it_was(make):
    # An item's __tvm_ffi_value__ hook empties and refills the list being
    # converted: the container holds the items the list had when the
    # conversion began (a snapshot, as apache-tvm-ffi converts it).
    lst = []

    class Hook:
        def __tvm_ffi_value__(self):
            lst[:] = ["replaced"] * 5
            return 7

    lst.extend([1, Hook(), 3, "x"])
    out = make(lst)
    assert list(out) == [1, 7, 3, "x"]
    assert lst == ["replaced"] * 5
