"""Sweeping the side table after each garbage collection.

Objects allocated without tether's allocation header (C++ built against
upstream's headers, plain ``malloc``) are tied through a side table keyed
by handle. The extension drops the entries of objects that died whenever
the table doubles; this hook also drops them after every collection of
the older generations (and so after every ``gc.collect()``), so a chain of
such objects is released soon after Python lets go of it. Youngest-
generation collections run every few hundred allocations; a sweep visits
every entry, so after those it would cost more than it frees.
"""

from __future__ import annotations

import gc

from .. import _ffi

__all__: list = []


def _sweep_side_table(phase: str, info: dict) -> None:
    if phase == "stop" and info.get("generation", 2) >= 1:
        _ffi.sweep_side_table()


if _sweep_side_table not in gc.callbacks:
    gc.callbacks.append(_sweep_side_table)
