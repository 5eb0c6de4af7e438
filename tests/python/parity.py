"""Running one script against tvm_ffi and against tether, for the parity
suites: the script imports the runtime named by ``sys.argv[1]`` (``tether``
or ``tvm_ffi``) as ``tvm_ffi``, records ``[name, outcome, text]`` entries
through the ``run`` function this module puts before it, and the suites
compare the two records entry by entry. Each runtime runs in a fresh
interpreter, so the two never share a process."""

import json
import os
import subprocess
import sys

PRELUDE = r'''
import json, sys
if sys.argv[1] == "tether":
    import tether as tvm_ffi
else:
    import tvm_ffi
RECORD = []

def run(name, fn):
    """Record what fn() returns (as text) or raises (kind and message)."""
    try:
        RECORD.append([name, "ok", show(fn())])
    except Exception as e:
        RECORD.append([name, type(e).__name__, str(e)])

def show(v):
    if type(v) in (list, tuple):
        return [show(x) for x in v]
    if type(v) is dict:
        return {str(k): show(x) for k, x in v.items()}
    if isinstance(v, (bool, int, float, str, bytes)) or v is None:
        return repr(v)
    return repr(v)
'''

EPILOGUE = "\nprint(json.dumps(RECORD))\n"


def run_script(script: str, runtime: str, *args: str, env=None) -> list:
    """The record ``script`` produces against ``runtime``."""
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run([sys.executable, "-c", PRELUDE + script + EPILOGUE, runtime, *args],
                          capture_output=True, text=True, timeout=600, env=full_env)
    assert proc.returncode == 0, f"{runtime} failed:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_same_records(script: str, *args: str, env=None) -> list:
    """Run ``script`` against both runtimes and require identical records."""
    ours, theirs = run_script(script, "tether", *args, env=env), run_script(script, "tvm_ffi", *args, env=env)
    assert [o[0] for o in ours] == [t[0] for t in theirs]
    mismatches = [(o, t) for o, t in zip(ours, theirs) if o != t]
    assert not mismatches, "\n".join(f"tether  {o}\ntvm_ffi {t}" for o, t in mismatches)
    return ours
