#!/usr/bin/env python3
"""PyTorch's x.permute(...).contiguous() on tma-permute's cases, against PyTorch's copy of the same bytes.

What it times: for every case of tma-permute's two tables (it reads them from `tma-permute --list`: the same
shapes, permute dims and dtypes, so the two cannot drift apart), x.permute(*dims).contiguous() of a contiguous x
against y.copy_(x) into a preallocated y of the same bytes (PyTorch's device-to-device copy). Each result is first
compared bitwise with the permuted view (x holds random bits). Large cases: each call alone between two CUDA events,
every variant once a round in interleaved rounds (each round starting with the other variant), after warm-up rounds
(at least 3 and 500 ms of GPU time), the median; GB/s counts bytes read plus bytes written (2 x elements x element
size), "% copy" is the copy's time over the permute's, as in tma-permute's table. Small cases (< 1 MiB): 200 calls
back to back between two events, microseconds a call, median of the rounds.

Not part of the build and not run by CI (no PyTorch there). Needs a CUDA GPU, PyTorch and a built tma-permute (any
machine: --list uses no GPU):
    cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j
    python3 samples/bench/permute/torch_permute.py [--bin build/samples/tma-permute] [--only LIST] [--small]
                                                   [--reps N]
--only LIST selects cases as tma-permute's --only does ("name dtype" containing LIST or one of its comma-separated
strings); --small runs only the small table. Run tma-permute on the same machine for libtma's side; compare ratios to
each one's copy, not times across processes.
"""
import argparse
import os
import statistics
import subprocess
import sys

import torch

DTYPES = {"u8": torch.uint8, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64}
BITS = {"u8": torch.uint8, "bf16": torch.int16, "fp32": torch.int32, "fp64": torch.int64}  # for bitwise compares
WARMUP_MS = 500.0
SMALL_CALLS = 200


def read_cases(binary):
    """tma-permute --list: table, name, dtype, PyTorch shape (outermost first), permute dims, one case a line."""
    out = subprocess.run([binary, "--list"], check=True, capture_output=True, text=True).stdout
    cases = []
    for line in out.splitlines():
        table, name, dtype, shape, dims = line.split("\t")
        cases.append((table, name, dtype, tuple(int(v) for v in shape.split(",")),
                      tuple(int(v) for v in dims.split(","))))
    return cases


def selected(name, dtype, only):
    if not only:
        return True
    full = f"{name} {dtype}"
    return only in full or any(item and item in full for item in only.split(","))


def timed(fn, calls, start, end):
    """Milliseconds of one call: `calls` calls back to back between two events."""
    start.record()
    for _ in range(calls):
        y = fn()
    end.record()
    torch.cuda.synchronize()
    del y
    return start.elapsed_time(end) / calls


def interleaved(fns, reps, calls):
    """Median ms a call of each function: warm-up rounds, then `reps` rounds each running every function once,
    round r starting with function r % len(fns)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    warm, rounds = 0.0, 0
    while rounds < 3 or warm < WARMUP_MS:
        for fn in fns:
            warm += timed(fn, calls, start, end) * calls
        rounds += 1
    times = [[] for _ in fns]
    for r in range(reps):
        for j in range(len(fns)):
            i = (j + r) % len(fns)
            times[i].append(timed(fns[i], calls, start, end))
    return [statistics.median(t) for t in times]


def run_case(dtype, shape, dims, reps, calls):
    """(copy ms, permute ms) a call, after checking the permute bitwise."""
    numel = 1
    for s in shape:
        numel *= s
    size = torch.empty((), dtype=DTYPES[dtype]).element_size()
    x = torch.randint(0, 256, (numel * size,), dtype=torch.uint8, device="cuda").view(DTYPES[dtype]).view(shape)
    y = torch.empty_like(x)
    p = x.permute(*dims).contiguous()
    if p.data_ptr() == x.data_ptr():
        sys.exit(f"{shape} permute{dims}: contiguous() returned x itself (nothing to time)")
    if not torch.equal(p.view(BITS[dtype]), x.view(BITS[dtype]).permute(*dims)):
        sys.exit(f"{shape} permute{dims} {dtype}: permute().contiguous() differs from the permuted view")
    del p
    torch.cuda.synchronize()
    copy_ms, perm_ms = interleaved([lambda: y.copy_(x), lambda: x.permute(*dims).contiguous()], reps, calls)
    del x, y
    torch.cuda.empty_cache()
    return copy_ms, perm_ms, 2 * numel * size


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(here, "..", "..", "..", "build", "samples", "tma-permute"),
                    help="the tma-permute binary whose cases to run (default: build/samples/tma-permute)")
    ap.add_argument("--only", help="cases whose 'name dtype' contains this or one of its comma-separated strings")
    ap.add_argument("--small", action="store_true", help="only the small tensors' table")
    ap.add_argument("--reps", type=int, default=20, help="timed rounds (default 20)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this script times PyTorch on the GPU")
    cases = [c for c in read_cases(args.bin) if selected(c[1], c[2], args.only)]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    large, small = [], []
    for table, name, dtype, shape, dims in cases:
        if table == "large" and not args.small:
            copy_ms, perm_ms, nbytes = run_case(dtype, shape, dims, max(args.reps, 1), 1)
            large.append((name, dtype, shape, dims, copy_ms, perm_ms, nbytes))
            print(f"{name:28s} {dtype:4s} verified; permute {100 * copy_ms / perm_ms:.1f}% of copy", flush=True)
        elif table == "small":
            copy_ms, perm_ms, nbytes = run_case(dtype, shape, dims, max(args.reps, 1), SMALL_CALLS)
            small.append((name, dtype, shape, dims, copy_ms, perm_ms, nbytes))
            print(f"{name:28s} {dtype:4s} verified; a call: permute {1000 * perm_ms:.2f} us, copy "
                  f"{1000 * copy_ms:.2f} us", flush=True)
    if large:
        print("\n| case | dtype | PyTorch | copy GB/s | permute ms | permute GB/s | permute % copy |")
        print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
        for name, dtype, shape, dims, copy_ms, perm_ms, nbytes in large:
            print(f"| {name} | {dtype} | x{list(shape)}.permute{dims} | {nbytes / copy_ms / 1e6:.0f} | {perm_ms:.3f} "
                  f"| {nbytes / perm_ms / 1e6:.0f} | {100 * copy_ms / perm_ms:.1f}% |")
        print(f"\n(median of {args.reps} calls a variant, interleaved rounds; GB/s = 2 x elements x size / time; "
              "copy: y.copy_(x), permute: x.permute(...).contiguous())")
    if small:
        print("\n| small case | dtype | PyTorch | bytes | copy us | permute us |")
        print("| --- | --- | --- | ---: | ---: | ---: |")
        for name, dtype, shape, dims, copy_ms, perm_ms, nbytes in small:
            print(f"| {name} | {dtype} | x{list(shape)}.permute{dims} | {nbytes} | {1000 * copy_ms:.2f} "
                  f"| {1000 * perm_ms:.2f} |")
        print(f"\n(a call: {SMALL_CALLS} calls back to back between two CUDA events, median of {args.reps} "
              "interleaved rounds)")


if __name__ == "__main__":
    main()
