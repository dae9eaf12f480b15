"""Time and peak memory of attention for long sequences: dense numpy, chunked numpy, torch SDPA.

Usage: python benchmarks/attention_bench.py [--sizes 1024 2048 ...] [--repeat 3] [--chunk 128]

For n = 1,024 to 16,384 (d = 64, float32, one sequence, one head) it prints, per n, the median time and the
peak memory of:

- dense numpy: ``course.efficient.dense_attention``, the whole (n, n) score matrix, computed in place;
- chunked numpy: ``course.efficient.chunked_attention``, keys ``--chunk`` at a time with an online softmax;
- torch SDPA: ``torch.nn.functional.scaled_dot_product_attention`` on CPU tensors shaped (batch, heads, n, d)
  = (1, 1, n, d), which torch 2.13 runs with its fused flash-attention CPU kernel; the column "2-D" gives it
  the same data as (n, d) tensors, which it runs with its unfused "math" path (the whole (n, n) matrix, and
  slower): a cost of the input's shape worth knowing;

and the ratios chunked/dense (time and memory) and numpy/torch (dense time). Targets, checked at the end:
chunked peak memory at n = 8,192 at most 1/16 of dense; chunked time at most 2x dense; dense numpy within 3x
of torch SDPA.

Peak memory is the growth of the process's resident set during one call: the peak (VmHWM) is reset through
/proc/self/clear_refs before each call (Linux), so it sees numpy's and torch's allocations alike (each
measurement runs in a fresh process with MALLOC_MMAP_THRESHOLD_ fixed, so that glibc returns every large
array to the system when it is freed; timings run in the main process, without that setting). Where that is
not possible it falls back to tracemalloc, which sees numpy's allocations only (torch's are then n/a).

Memory needed: at n = 16,384 one float32 score matrix is 16,384² x 4 bytes = 1 GiB, and dense attention
holds one at a time (1.0 GiB measured at its peak; torch's 2-D math path 2.3 GiB, its fused kernel under
5 MiB); fine on a machine with 24 GB, not on a small laptop (pass smaller --sizes). The whole run takes about
two minutes on one core. Threads: it uses what numpy and torch are given (set OMP_NUM_THREADS=1 and it calls
torch.set_num_threads(1) for a one-core comparison).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from course.efficient import chunked_attention, dense_attention

D = 64


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _can_reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        _status_kib("VmHWM")
    except OSError:
        return False
    return True


RSS = _can_reset_peak()


def peak_bytes(fn: Callable[[], Any], numpy_only: bool) -> float:
    """Peak memory of one call of fn above what was in use before it, in bytes (nan when unmeasurable)."""
    gc.collect()
    if RSS:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # reset the peak resident set to the current one
        before = _status_kib("VmRSS")
        fn()
        return float(_status_kib("VmHWM") - before) * 1024
    if not numpy_only:
        return float("nan")
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return float(peak - before)


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _runs(n: int, chunk: int, seed: int) -> dict[str, tuple[Callable[[], Any], bool]]:
    """The three implementations on the same random (n, D) float32 inputs; True = numpy only."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, D), dtype=np.float32) for _ in range(3))
    qt, kt, vt = (torch.from_numpy(a) for a in (q, k, v))  # (n, D) each
    q4, k4, v4 = (t[None, None] for t in (qt, kt, vt))  # (1, 1, n, D) each
    return {
        "dense": (lambda: dense_attention(q, k, v), True),
        "chunk": (lambda: chunked_attention(q, k, v, chunk), True),
        "torch": (lambda: F.scaled_dot_product_attention(q4, k4, v4), False),
        "torch2d": (lambda: F.scaled_dot_product_attention(qt, kt, vt), False),
    }


def measure_memory(name: str, n: int, chunk: int) -> float:
    """Peak bytes of one call, measured in a fresh process whose glibc returns every large array to the system
    when it is freed (MALLOC_MMAP_THRESHOLD_ fixed): otherwise a block freed earlier is reused unseen by the
    resident set. (That setting slows many small allocations, so timings are taken in this process.)"""
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
    command = [sys.executable, __file__, "--peak-of", name, str(n), str(chunk)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--peak-of":  # the child of measure_memory
        name, n, chunk = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        fn, numpy_only = _runs(n, chunk, seed=0)[name]
        fn()  # warm-up: libraries load their buffers
        print(peak_bytes(fn, numpy_only))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=128)
    args = parser.parse_args()
    if os.environ.get("OMP_NUM_THREADS") == "1":
        torch.set_num_threads(1)
    print(
        f"d = {D}, float32, chunk = {args.chunk}, torch threads = {torch.get_num_threads()}, "
        f"memory = {'resident set peak' if RSS else 'tracemalloc (numpy only)'}"
    )
    header = (
        f"{'n':>6} | {'dense ms':>9} {'chunk ms':>9} {'torch ms':>9} {'2-D ms':>9} | {'dense MiB':>9} "
        f"{'chunk MiB':>9} {'torch MiB':>9} {'2-D MiB':>9} | {'chunk/dense t':>13} {'chunk/dense mem':>15} "
        f"{'numpy/torch t':>13}"
    )
    print(header)
    print("-" * len(header))
    results: dict[int, dict[str, float]] = {}
    for n in args.sizes:
        runs = _runs(n, args.chunk, seed=n)
        row: dict[str, float] = {}
        for name, (fn, _) in runs.items():
            row[f"{name} s"] = median_seconds(fn, args.repeat)
            row[f"{name} B"] = measure_memory(name, n, args.chunk)
        assert np.abs(runs["chunk"][0]() - runs["dense"][0]()).max() <= 1e-4
        results[n] = row
        mib = 2.0**20
        print(
            f"{n:>6} | {1e3 * row['dense s']:>9.1f} {1e3 * row['chunk s']:>9.1f} "
            f"{1e3 * row['torch s']:>9.1f} {1e3 * row['torch2d s']:>9.1f} | "
            f"{row['dense B'] / mib:>9.1f} {row['chunk B'] / mib:>9.1f} {row['torch B'] / mib:>9.1f} "
            f"{row['torch2d B'] / mib:>9.1f} | "
            f"{row['chunk s'] / row['dense s']:>13.2f} {row['chunk B'] / row['dense B']:>15.3f} "
            f"{row['dense s'] / row['torch s']:>13.2f}"
        )
    failures = []
    if 8192 in results:
        r = results[8192]
        ok = r["chunk B"] <= r["dense B"] / 16
        print(f"chunked peak memory at n = 8192 <= 1/16 of dense: {ok} ({r['chunk B'] / r['dense B']:.3f})")
        failures += [] if ok else ["memory"]
    worst_time = max(r["chunk s"] / r["dense s"] for r in results.values())
    print(f"chunked time <= 2x dense at every n: {worst_time <= 2} (worst {worst_time:.2f}x)")
    worst_torch = max(max(r["dense s"] / r["torch s"], r["torch s"] / r["dense s"]) for r in results.values())
    print(f"dense numpy within 3x of torch SDPA at every n: {worst_torch <= 3} (worst {worst_torch:.2f}x)")
    failures += [] if worst_time <= 2 else ["time"]
    failures += [] if worst_torch <= 3 else ["torch"]
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
