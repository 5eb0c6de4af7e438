"""Serialising tests that use a machine-wide resource (the GPU).

Test runners that spread tests over worker processes (``pytest -n``) would
otherwise let several tests drive one GPU at once, running it out of memory
or leaving it in a bad state.  :func:`run_with_gpu_lock` runs a callable
while holding an advisory :class:`~tether.utils.FileLock` that every
cooperating worker on the machine shares.

The lock file is ``gpu.lock`` in ``<tempdir>/tvm-ffi-test-locks-<user>``
(per user, so users sharing a host do not fight over permissions; the same
place tvm_ffi's own helper uses, so the two suites serialise with each
other).  ``TETHER_TEST_LOCK_DIR`` (or ``TVM_FFI_TEST_LOCK_DIR``) moves it
elsewhere, for processes of several users that must share one lock.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

from ..utils.lockfile import FileLock

__all__ = ["run_with_gpu_lock"]

_LOCK_DIR_ENV_VARS = ("TETHER_TEST_LOCK_DIR", "TVM_FFI_TEST_LOCK_DIR")
_LOCK_DIR_ENV_VAR = _LOCK_DIR_ENV_VARS[0]
_LOCK_DIR_PREFIX = "tvm-ffi-test-locks"
_LOCK_FILENAME = "gpu.lock"
_R = TypeVar("_R")

# The lock file's path, found on first use (importing this module must not
# create directories).  Two workers finding it at once find the same path.
_GPU_LOCK_PATH: Optional[Path] = None


def _user_tag() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (containers, odd uids)
        getuid = getattr(os, "getuid", None)
        return str(getuid()) if getuid is not None else "unknown"


def _ensure_gpu_lock_path() -> Path:
    """The GPU lock file's path, with its directory created."""
    override = next((os.environ[v] for v in _LOCK_DIR_ENV_VARS if os.environ.get(v)), None)
    if override:
        lock_dir = Path(override).expanduser()
    else:
        lock_dir = Path(tempfile.gettempdir()) / f"{_LOCK_DIR_PREFIX}-{_user_tag()}"
    lock_dir.mkdir(parents=True, exist_ok=True)
    return lock_dir / _LOCK_FILENAME


def run_with_gpu_lock(func: Callable[..., _R], /, *args: Any, **kwargs: Any) -> _R:
    """``func(*args, **kwargs)``, run while holding the machine's GPU lock.

    Put the whole time the test uses the device inside ``func`` (creating
    buffers, launching, synchronising, checking results) and keep work that
    does not touch it (compiling kernels) outside, where it can overlap with
    other workers.  Returns what ``func`` returns.
    """
    global _GPU_LOCK_PATH  # noqa: PLW0603 - found once, then reused
    path = _GPU_LOCK_PATH
    if path is None:
        path = _GPU_LOCK_PATH = _ensure_gpu_lock_path()
    with FileLock(str(path)):
        return func(*args, **kwargs)
