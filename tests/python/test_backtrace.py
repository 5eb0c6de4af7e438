"""Native backtraces of errors: taken as frame addresses up to the FFI
boundary, resolved when read, each address symbolized once per process.

An error raised by native code costs microseconds however often it is
raised (Python code uses exceptions as control flow): these tests check
that raising symbolizes nothing beyond what the cache already holds, that
the text stops at the boundary and honours TVM_TRACEBACK_LIMIT, and that
the frames show in Python tracebacks on every path an error takes.
"""

import os
import subprocess
import sys
import textwrap
import threading
import traceback

import pytest

import tether
import tether.testing  # noqa: F401  (registers the testing.* globals)

raise_error = tether.get_global_func("testing.test_raise_error")
apply = tether.get_global_func("testing.apply")
symbolized_count = tether.get_global_func("tether.backtrace.SymbolizedCount")
resolve = tether.get_global_func("tether.backtrace.Resolve")


def _raised(kind="ValueError", message="boom"):
    with pytest.raises(Exception) as info:
        raise_error(kind, message)
    return info.value


def test_an_error_raised_again_and_again_symbolizes_nothing_new():
    first = _raised()
    assert "TestRaiseError" in first.__tvm_ffi_error__.backtrace
    before = symbolized_count()
    for _ in range(200):
        _raised()
    assert symbolized_count() == before


def test_the_backtrace_stops_at_the_ffi_boundary():
    text = _raised().__tvm_ffi_error__.backtrace
    lines = text.splitlines()
    # Most recent call first: the raising frame, then its callers inside
    # the testing library; nothing of the interpreter or of the extension
    # that called across the boundary.
    assert lines[0].strip().startswith('File "') and lines[0].endswith("in TestRaiseError")
    assert "<unresolved>" not in text
    assert not any(w in text for w in ("_PyEval", "PyObject_", "native_call", "NativeCall")), text
    assert len(lines) < 16, text


def test_python_tracebacks_show_the_native_frames_after_the_call_site():
    err = _raised()
    entries = traceback.extract_tb(err.__traceback__)
    names = [e.name for e in entries]
    assert names[0] == "_raised"
    assert "TestRaiseError" in names
    # The raising frame is the innermost one.
    assert names[-1] == "TestRaiseError", names


def test_a_python_error_through_native_code_keeps_its_frames():
    def inner():
        raise_error("KeyError", "inside")

    def callback():
        inner()

    with pytest.raises(KeyError) as info:
        apply(callback)
    names = [e.name for e in traceback.extract_tb(info.value.__traceback__)]
    # Python frames in order, the native ones of the inner raise last,
    # each once.
    assert names.index("callback") < names.index("inner") < names.index("TestRaiseError")
    assert names.count("TestRaiseError") == 1


def test_nested_reraise_with_context_keeps_both_errors():
    try:
        try:
            raise_error("ValueError", "first")
        except ValueError as first:
            raise RuntimeError("second") from first
    except RuntimeError as e:
        second = e
    cause = second.__cause__
    assert isinstance(cause, ValueError) and "TestRaiseError" in cause.__tvm_ffi_error__.backtrace
    text = "".join(traceback.format_exception(type(second), second, second.__traceback__))
    assert "TestRaiseError" in text and "first" in text and "second" in text


def test_errors_raised_on_many_threads_resolve_on_any_thread():
    errors, failures = [], []

    def work():
        try:
            for _ in range(50):
                try:
                    raise_error("ValueError", "threaded")
                except ValueError as e:
                    errors.append(e.__tvm_ffi_error__)
        except BaseException as e:  # pragma: no cover - reported below
            failures.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert len(errors) == 400
    # Read again here, on another thread than the one that raised.
    assert all(e.backtrace.splitlines()[0].endswith("in TestRaiseError") for e in errors)


def test_resolve_passes_text_without_placeholders_unchanged():
    text = '  File "a.py", line 3, in f\n'
    assert resolve(text) == text
    with pytest.raises(TypeError):
        resolve(5)


def _run(code, **env):
    full = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_traceback_limit_is_honoured():
    code = """
        import tether, tether.testing
        try:
            tether.get_global_func("testing.test_raise_error")("ValueError", "x")
        except ValueError as e:
            print(len(e.__tvm_ffi_error__.backtrace.splitlines()))
    """
    unlimited = int(_run(code))
    assert unlimited >= 2
    # The raising frame, named by its caller, is always there.
    assert int(_run(code, TVM_TRACEBACK_LIMIT="0")) == 1
    assert int(_run(code, TVM_TRACEBACK_LIMIT="1")) <= 2


def test_core_errors_carry_a_backtrace_only_when_asked():
    code = """
        import tether
        try:
            tether.get_global_func("ffi.ArrayGetItem")(tether.Array([1]), 10)
        except IndexError as e:
            print(e.__tvm_ffi_error__.backtrace)
    """
    assert _run(code).strip() == ""
    asked = _run(code, TETHER_BACKTRACE="1")
    assert "ArrayGetItem" in asked or "containers" in asked, asked
    assert "<unresolved>" not in asked


def test_an_error_through_native_and_python_code_records_the_whole_path():
    # A native error caught in Python code called back by native code, then
    # re-raised through another native call: the error object reads every
    # leg, most recent call first, each frame once.
    fapply = tether.convert(lambda f, *args: f(*args))
    seen = []

    def reraise():
        try:
            fapply(raise_error, "ValueError", "deep")
        except ValueError as e:
            seen.append(e.__tvm_ffi_error__)
            raise e

    with pytest.raises(ValueError) as info:
        apply(reraise)
    err = info.value.__tvm_ffi_error__
    assert err.same_as(seen[0])
    text = err.backtrace
    assert text.count("TestRaiseError") == 1 and text.count("<lambda>") == 1 and text.count("TestApply") == 1, text
    assert text.index("TestRaiseError") < text.index("<lambda>") < text.index("reraise") < text.index("TestApply")
    assert "<unresolved>" not in text
