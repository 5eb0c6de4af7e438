"""Running a test's threads so that none can fail unseen.

A thread that dies of an exception only prints it (and pytest merely
warns), so a test that starts threads must collect what each one raised.
`run_threads` starts one thread per callable, waits for all of them, and
fails with every thread's exception — BaseException included, so a thread
ended by SystemExit or KeyboardInterrupt counts too — and with the names of
threads still running at the deadline (a hang fails instead of blocking the
suite). `running_threads` does the same around a with-body that runs on
the calling thread meanwhile (and sets a stop event when it ends)."""

import contextlib
import threading
import time
import traceback


class ThreadFailures(AssertionError):
    """Some threads raised or did not finish; `failures` pairs each failed
    thread's name with its exception (None for a thread still running)."""

    def __init__(self, failures):
        self.failures = failures
        lines = []
        for name, exc in failures:
            if exc is None:
                lines.append(f"{name}: still running at the deadline")
            else:
                detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
                lines.append(f"{name}: {type(exc).__name__}: {exc}\n{detail}")
        super().__init__(f"{len(failures)} thread(s) failed:\n" + "\n".join(lines))


@contextlib.contextmanager
def running_threads(targets, stop=None, timeout=300.0, name="test-thread"):
    """Run each callable of `targets` on its own thread while the with-body
    runs on the calling thread. On leaving the body — normally or by an
    exception — `stop` (a threading.Event, if given) is set, every thread is
    waited for up to `timeout` seconds, and ThreadFailures is raised if any
    thread raised or is still running. The yielded list holds the threads'
    return values once they are done."""
    targets = list(targets)
    results = [None] * len(targets)
    failures = []
    lock = threading.Lock()

    def body(i, fn):
        try:
            results[i] = fn()
        except BaseException as e:  # every way a thread can die is a failure
            with lock:
                failures.append((f"{name}-{i}", e))

    threads = [threading.Thread(target=body, args=(i, fn), name=f"{name}-{i}", daemon=True)
               for i, fn in enumerate(targets)]
    for t in threads:
        t.start()
    try:
        yield results
    finally:
        if stop is not None:
            stop.set()
        deadline = time.monotonic() + timeout
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        failures.extend((t.name, None) for t in threads if t.is_alive())
    if failures:
        raise ThreadFailures(failures)


def run_threads(targets, timeout=300.0, name="test-thread"):
    """Run each callable of `targets` on its own thread and wait for all;
    raise ThreadFailures if any raised or is still running after `timeout`
    seconds. Returns the threads' return values in order."""
    with running_threads(targets, timeout=timeout, name=name) as results:
        pass
    return results
