#!/usr/bin/env python3
"""PyTorch's torch.mm on tma-gemm's timed shapes, for comparison with libtma's tma_gemm.

What it times: every timed shape of tma-gemm's table (read from `tma-gemm --list`, so the two cannot drift apart) as a
PyTorch user computes it: C = torch.mm(A, B.t()) with A (M x K) and B (N x K) bf16 on the GPU, C bf16 (the fp32-C rows
are skipped: torch.mm returns bf16 for bf16 inputs). Each result is first compared with an fp32 product of the same
inputs (relative Frobenius error <= 1e-2). Each call alone between two CUDA events, after warm-up (at least 3 calls and
500 ms), the median of --reps calls; TFLOP/s = 2 M N K / time, as tma-gemm counts them.

Not part of the build and not run by CI (no PyTorch there). Needs a CUDA GPU, PyTorch and a built tma-gemm (--list uses
no GPU):
    cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j
    python3 samples/bench/gemm/torch_gemm.py [--bin build/samples/tma-gemm] [--reps N]
Run tma-gemm on the same machine for libtma's column (its cuBLAS column is what torch.mm calls); compare TFLOP/s.
"""
import argparse
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from torch_timing import median_call_ms  # noqa: E402


def read_shapes(binary):
    out = subprocess.run([binary, "--list"], check=True, capture_output=True, text=True).stdout
    return [(int(m), int(n), int(k), t) for m, n, k, t in (line.split("\t") for line in out.splitlines())]


def run_shape(m, n, k, reps):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    c = torch.mm(a, b.t())
    ref = torch.mm(a.float(), b.float().t())
    err = ((c.float() - ref).norm() / ref.norm()).item()
    if not err <= 1e-2:
        sys.exit(f"{m}x{n}x{k}: torch.mm differs from the fp32 product (relative error {err})")
    ms = median_call_ms(lambda: torch.mm(a, b.t()), reps)
    return ms


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(here, "..", "..", "..", "build", "samples", "tma-gemm"))
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this script times PyTorch on the GPU")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()} (torch.mm, bf16, median of {args.reps} calls "
          f"after warm-up)")
    print(f"{'M x N x K, C':20s} {'torch us':>9s} {'torch TF/s':>10s}")
    for m, n, k, t in read_shapes(args.bin):
        if t != "bf16":
            continue
        ms = run_shape(m, n, k, max(args.reps, 1))
        print(f"{f'{m}x{n}x{k} bf16':20s} {ms * 1e3:9.1f} {2.0 * m * n * k / (ms * 1e-3) / 1e12:10.1f}")


if __name__ == "__main__":
    main()
