"""tether against apache-tvm-ffi, side by side in one process.

    python bench/run.py [--quick] [--out DIR]

Every operation of `workloads.operations` runs on both libraries in one
process, round-robin (one sample of every operation per round, so a noisy
moment of the host spreads over all of them), with the garbage collector
off while timing. A sample is the time of a loop of N iterations divided by
N; the report gives the minimum and median over the rounds, the ratio of
minima tether / peer, and the same operation on plain CPython objects (the
floor). Outputs: a table on stdout, `bench.json` and `bench.png` (ratios
against their targets) in the output folder.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bulk  # noqa: E402
from workloads import Library, _loop, floors, memory_per_object, operations  # noqa: E402

# Ratio targets (tether / peer) by operation prefix; the first match applies.
TARGETS = [
    ("call.numpy", 0.8),
    ("attr_hit.", 0.4),
    ("attr_churn.", 0.8),
    ("create.", 0.5),
    ("call.", 0.8),
    ("callback.", 0.8),
    ("array.obj", 0.2),
    ("array.int", 0.8),
    ("native.make_object", 1.1),
    ("shash.", 0.5),
    ("sequal.", 0.5),
    ("json.", 0.5),
    ("convert.", 0.5),
    ("dlpack.", 0.8),
    ("repr.", 0.8),
    ("echo.", 0.5),
    ("error.", 1.0),
]


def target_of(op: str):
    for prefix, t in TARGETS:
        if op.startswith(prefix):
            return t
    return None


def sample(run, n: int) -> float:
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        run(n)
        return (time.perf_counter_ns() - t0) / n
    finally:
        gc.enable()


def calibrate(run, budget_ns: float) -> int:
    """Iterations per sample so that one sample takes about `budget_ns`."""
    n = 1
    while True:
        t = sample(run, n) * n
        if t >= budget_ns / 4 or n >= 1 << 22:
            return max(1, int(n * budget_ns / max(t, 1)))
        n *= 4


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few rounds of short samples (seconds)")
    ap.add_argument("--out", default="bench-results", help="folder for bench.json and bench.png")
    ap.add_argument("--only", default="", help="comma-separated op prefixes to run (default: all)")
    args = ap.parse_args()
    rounds, budget = (3, 2e5) if args.quick else (25, 5e6)
    mem_count = 10_000 if args.quick else 1_000_000

    tether_lib, peer_lib = Library.tether(), Library.peer()
    build = tempfile.mkdtemp(prefix="tether-bench-")
    native = {lib.name: lib.native_module(build, peer_lib.include_dir) for lib in (tether_lib, peer_lib)}
    ops = {lib.name: operations(lib, native[lib.name]) for lib in (tether_lib, peer_lib)}
    floor_ops = floors()
    hot = list(ops["tether"])
    for lib in (tether_lib, peer_lib):
        ops[lib.name].update(bulk.operations(lib, _loop))
    floor_ops.update(bulk.floors(_loop))
    prefixes = [p for p in args.only.split(",") if p]
    names = [n for n in ops["tether"] if not prefixes or any(n.startswith(p) for p in prefixes)]

    # The per-access operations and the bulk ones are timed as two separate
    # round-robins: a bulk sample (megabytes allocated and freed) leaves the
    # heap and caches cold for whatever runs next, which would tax the
    # sub-microsecond operations of the first group.
    samples = {}
    for group in ([n for n in names if n in hot], [n for n in names if n not in hot]):
        runners = [(name, side, ops[side][name]) for name in group for side in ("tether", "peer")]
        runners += [(name, "floor", floor_ops[name]) for name in group if name in floor_ops]
        iters = {(name, side): calibrate(run, budget) for name, side, run in runners}
        samples.update({(name, side): [] for name, side, _ in runners})
        for _ in range(rounds):
            for name, side, run in runners:
                samples[(name, side)].append(sample(run, iters[(name, side)]))

    rows = []
    for name in names:
        t, p = samples[(name, "tether")], samples[(name, "peer")]
        f = samples.get((name, "floor"))
        row = {
            "op": name,
            "tether_ns": min(t), "tether_median_ns": statistics.median(t),
            "peer_ns": min(p), "peer_median_ns": statistics.median(p),
            "ratio": min(t) / min(p),
            "floor_ns": min(f) if f else None,
            "target": target_of(name),
        }
        row["floor_multiple"] = row["tether_ns"] / row["floor_ns"] if f else None
        rows.append(row)
    for width in (1, 8) if not prefixes else ():
        t, p = memory_per_object("tether", width, mem_count), memory_per_object("peer", width, mem_count)
        if t is not None and p is not None:
            rows.append({"op": f"mem.width{width}", "tether_bytes": t, "peer_bytes": p, "extra_bytes": t - p, "target_extra_bytes": 16})

    print_table(rows)
    os.makedirs(args.out, exist_ok=True)
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores".strip(),
        "python": platform.python_version(),
        "mode": "quick" if args.quick else "full",
        "rounds": rounds,
    }
    with open(os.path.join(args.out, "bench.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    chart(rows, meta, os.path.join(args.out, "bench.png"))
    print(f"\nwrote {args.out}/bench.json and {args.out}/bench.png")
    return 0


def print_table(rows) -> None:
    print(f"{'op':28} {'tether ns':>10} {'peer ns':>10} {'ratio':>7} {'target':>7} {'floor ns':>9} {'x floor':>8}")
    for r in rows:
        if "ratio" in r:
            floor = f"{r['floor_ns']:9.1f}" if r["floor_ns"] else f"{'-':>9}"
            mult = f"{r['floor_multiple']:8.1f}" if r["floor_multiple"] else f"{'-':>8}"
            target = f"{r['target']:7.2f}" if r["target"] else f"{'-':>7}"
            print(f"{r['op']:28} {r['tether_ns']:10.1f} {r['peer_ns']:10.1f} {r['ratio']:7.2f} {target} {floor} {mult}")
        else:
            print(f"{r['op']:28} {r['tether_bytes']:8.1f} B/obj (peer {r['peer_bytes']:.1f}; extra {r['extra_bytes']:+.1f}, target <= +16)")


def chart(rows, meta, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [r for r in rows if "ratio" in r]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(timed) + 1.5))
    y = range(len(timed))
    colors = ["tab:green" if r["target"] and r["ratio"] <= r["target"] else "tab:red" if r["target"] else "tab:gray" for r in timed]
    ax.barh(list(y), [r["ratio"] for r in timed], color=colors)
    for i, r in enumerate(timed):
        if r["target"]:
            ax.plot([r["target"], r["target"]], [i - 0.4, i + 0.4], color="black", linewidth=2)
    ax.axvline(1.0, color="gray", linestyle=":")
    ax.set_yticks(list(y), [r["op"] for r in timed])
    ax.invert_yaxis()
    ax.set_xlabel("time ratio tether / apache-tvm-ffi (lower is better; black tick = target)")
    ax.set_title(f"tether vs apache-tvm-ffi, {meta['date']}, {meta['machine']}, Python {meta['python']} ({meta['mode']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
