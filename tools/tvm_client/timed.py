"""One timed workload of a TVM 0.27 client, in a process of its own:

    python timed.py WORKLOAD

prints one JSON object: the workload's seconds (the best of its repeats,
per operation for the error round trips) and, for `import`, the peak RSS.
bench.py decides which tvm_ffi serves the process and compares the two.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ERROR_REPEATS = 300


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _per_error(call, exc: type) -> float:
    def loop():
        for _ in range(ERROR_REPEATS):
            try:
                call()
            except exc:
                pass
            else:
                raise AssertionError("the call did not raise")

    loop()  # first raise resolves what later ones reuse, on either side
    return _best(loop, 5) / ERROR_REPEATS


def w_import() -> dict:
    t = time.perf_counter()
    import tvm  # noqa: F401

    seconds = time.perf_counter() - t
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": seconds, "peak_rss_mb": peak_kb / 1024}


def w_error_cpp() -> dict:
    import tvm

    get_op = tvm.ir._ffi_api.GetOp
    return {"seconds": _per_error(lambda: get_op("no.such.op"), Exception)}


def w_error_callback() -> dict:
    import tvm  # noqa: F401
    import tvm_ffi

    apply = tvm_ffi.get_global_func("testing.apply")

    def fail():
        raise ValueError("from a callback")

    f = tvm_ffi.convert(fail)
    return {"seconds": _per_error(lambda: apply(f), ValueError)}


def w_tvmscript_roundtrip() -> dict:
    import steps

    return {"seconds": _best(steps.step_script_roundtrip, 5)}


def w_te_matmul() -> dict:
    import steps

    return {"seconds": _best(steps.step_te_matmul, 3)}


def w_relax_build_run() -> dict:
    import steps

    return {"seconds": _best(steps.step_relax_vm, 3)}


WORKLOADS = {
    "import": w_import,
    "error_cpp": w_error_cpp,
    "error_callback": w_error_callback,
    "tvmscript_roundtrip": w_tvmscript_roundtrip,
    "te_matmul": w_te_matmul,
    "relax_build_run": w_relax_build_run,
}

if __name__ == "__main__":
    print(json.dumps(WORKLOADS[sys.argv[1]]()))
