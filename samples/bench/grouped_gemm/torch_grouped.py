#!/usr/bin/env python3
"""PyTorch's torch._grouped_mm on tma-grouped-gemm's table, for comparison with libtma's tma_grouped_gemm.

What it times: every shape of tma-grouped-gemm's table with the same routing of tokens to experts (read from
`tma-grouped-gemm --list` under the same TMA_GROUPED_SEED, so the two cannot drift apart), as a PyTorch user runs a
mixture-of-experts layer on Hopper: the tokens sorted by expert (A, tokens x K, bf16), the experts' weights as one
tensor W (G x N x K, bf16), torch._grouped_mm(A, W.transpose(-2, -1), offs=cumulative M_g) into bf16; and beside it
torch.mm of all tokens by one expert's weights (the dense GEMM of the same work, as the sample's "dense" column).
Each grouped result is first compared with an fp32 product of every expert's rows (relative Frobenius error <= 1e-2
per expert). Each call alone between two CUDA events, after warm-up (at least 3 calls and 500 ms), the median of
--reps calls; TFLOP/s = 2 tokens N K / time, as tma-grouped-gemm counts them.

Not part of the build and not run by CI (no PyTorch there). Needs a Hopper GPU, PyTorch 2.8 or newer
(torch._grouped_mm) and a built tma-grouped-gemm (--list uses no GPU):
    cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j
    TMA_GROUPED_SEED=1 ./build/samples/tma-grouped-gemm
    python3 samples/bench/grouped_gemm/torch_grouped.py --seed 1 [--bin build/samples/tma-grouped-gemm] [--reps N]
Run tma-grouped-gemm on the same machine with the same seed for libtma's column; compare TFLOP/s.
"""
import argparse
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from torch_timing import median_call_ms  # noqa: E402


def read_shapes(binary, seed):
    env = dict(os.environ, TMA_GROUPED_SEED=str(seed))
    out = subprocess.run([binary, "--list"], check=True, capture_output=True, text=True, env=env).stdout
    shapes = []
    for line in out.splitlines():
        g, t, n, k, m = line.split("\t")
        shapes.append((int(g), int(t), int(n), int(k), [int(v) for v in m.split(",")]))
    return shapes


def check(a, w, out, m):
    """Every expert's rows against an fp32 product (relative Frobenius error <= 1e-2)."""
    row = 0
    for g, rows in enumerate(m):
        if rows:
            ref = a[row:row + rows].float() @ w[g].float().t()
            err = ((out[row:row + rows].float() - ref).norm() / ref.norm()).item()
            if not err <= 1e-2:
                sys.exit(f"expert {g}: torch._grouped_mm differs from the fp32 product (relative error {err})")
        row += rows


def run_shape(g, t, n, k, m, reps):
    a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor(m, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    wt = w.transpose(-2, -1)
    grouped = lambda: torch._grouped_mm(a, wt, offs=offs, out_dtype=torch.bfloat16)  # noqa: E731
    check(a, w, grouped(), m)
    ms = median_call_ms(grouped, reps)
    dense_ms = median_call_ms(lambda: torch.mm(a, w[0].t()), reps)
    return ms, dense_ms


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(here, "..", "..", "..", "build", "samples", "tma-grouped-gemm"))
    ap.add_argument("--seed", type=int, required=True, help="tma-grouped-gemm's TMA_GROUPED_SEED")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only", default="", help='one shape, "G tokens N K", as TMA_GROUPED_ONLY')
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this script times PyTorch on the GPU")
    if not hasattr(torch, "_grouped_mm"):
        sys.exit(f"torch {torch.__version__} has no torch._grouped_mm (PyTorch 2.8 or newer)")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()} (torch._grouped_mm and torch.mm, bf16, median "
          f"of {args.reps} calls after warm-up), seed {args.seed}")
    print(f"{'G':>4s} {'tokens':>6s} {'N':>5s} {'K':>5s} {'M_g min-max':>11s} {'grouped us':>10s} "
          f"{'grouped TF/s':>12s} {'dense TF/s':>10s} {'vs dense':>8s}")
    for g, t, n, k, m in read_shapes(args.bin, args.seed):
        if args.only and args.only != f"{g} {t} {n} {k}":
            continue
        ms, dense_ms = run_shape(g, t, n, k, m, max(args.reps, 1))
        flops = 2.0 * t * n * k
        print(f"{g:4d} {t:6d} {n:5d} {k:5d} {f'{min(m)}-{max(m)}':>11s} {ms * 1e3:10.1f} "
              f"{flops / (ms * 1e-3) / 1e12:12.1f} {flops / (dense_ms * 1e-3) / 1e12:10.1f} "
              f"{100.0 * dense_ms / ms:7.1f}%")
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
