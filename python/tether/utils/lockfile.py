"""Advisory, cross-process file locks.

:class:`FileLock` serialises cooperating processes around a lock file (a
JIT build directory, a shared cache entry, a GPU).  The lock is advisory:
only processes that take it are excluded.  It is taken with ``flock`` on
POSIX systems and ``msvcrt.locking`` on Windows, and it is released when
the holder releases it, leaves its ``with`` block, or exits.

One instance holds the lock at most once; the same process may still take
the lock again through a second instance (``flock`` locks belong to open
file descriptions), which is the caller's business to avoid.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Literal, Optional

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

__all__ = ["FileLock"]


def _open_lock_file(path: str) -> int:
    if sys.platform == "win32":
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_BINARY)
    return os.open(path, os.O_WRONLY | os.O_CREAT)


def _try_lock(fd: int) -> None:
    """Take the lock on ``fd`` without waiting; OSError when it is held."""
    if sys.platform == "win32":
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)


class FileLock:
    """An exclusive advisory lock on the file at ``lock_file_path``.

    ``with FileLock(path): ...`` waits for the lock, runs the block and
    releases it.  :meth:`acquire` tries once and says whether it got the
    lock; :meth:`blocking_acquire` polls until it does, or until an optional
    timeout passes (``TimeoutError``).  The lock file is created when
    missing and left in place afterwards.
    """

    def __init__(self, lock_file_path: str) -> None:
        """Describe a lock on ``lock_file_path``; nothing is opened yet."""
        self.lock_file_path = lock_file_path
        self._file_descriptor: Optional[int] = None

    def __enter__(self) -> FileLock:
        """Wait (without a time limit) for the lock and return this lock."""
        self.blocking_acquire()
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> Literal[False]:
        """Release the lock; an exception raised in the block propagates."""
        self.release()
        return False

    def acquire(self) -> bool:
        """Try once to take the lock.

        Returns ``True`` when this instance now holds it, ``False`` when
        another holder has it, when the lock file cannot be opened, or when
        this instance already holds it.  Any other failure is raised as
        ``RuntimeError``.
        """
        if self._file_descriptor is not None:
            return False
        fd: Optional[int] = None
        try:
            fd = _open_lock_file(self.lock_file_path)
            _try_lock(fd)
        except OSError:
            if fd is not None:
                os.close(fd)
            return False
        except Exception as err:
            if fd is not None:
                os.close(fd)
            raise RuntimeError(f"An unexpected error occurred: {err}")
        self._file_descriptor = fd
        return True

    def blocking_acquire(self, timeout: Optional[float] = None, poll_interval: float = 0.1) -> bool:
        """Poll every ``poll_interval`` seconds until the lock is taken.

        ``timeout`` bounds the wait in seconds (``None``: no bound); when it
        passes without the lock, ``TimeoutError`` is raised.  Returns
        ``True`` once the lock is held.  ``RuntimeError`` when this instance
        already holds the lock (waiting for it would never end).
        """
        if self._file_descriptor is not None:
            raise RuntimeError("Lock is already held by this instance.")
        started = time.time()
        while not self.acquire():
            if timeout is not None and time.time() - started > timeout:
                raise TimeoutError(
                    f"Failed to acquire lock on '{self.lock_file_path}' after {timeout} seconds."
                )
            time.sleep(poll_interval)
        return True

    def release(self) -> None:
        """Give the lock up and close the lock file; no-op when not held."""
        fd = self._file_descriptor
        if fd is None:
            return
        try:
            _unlock(fd)
        finally:
            os.close(fd)
            self._file_descriptor = None
