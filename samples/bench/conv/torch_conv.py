#!/usr/bin/env python3
"""PyTorch's F.conv2d (cuDNN) on tma-conv's table, for comparison with libtma's tma_conv2d.

What it times: every row of tma-conv's table (read from `tma-conv --list`, so the two cannot drift apart) as a PyTorch
user runs it on Hopper: bf16 NCHW-shaped tensors in channels_last memory (NHWC, tma_conv2d's layout), F.conv2d with
the row's stride, padding and dilation, no bias, cuDNN's own algorithm choice (torch.backends.cudnn.benchmark on, so
it picks the fastest it measures). Each result is first compared with an fp32 convolution of the same inputs
(|diff| <= 1e-2 |ref| + 1e-2 on every element). Each call alone between two CUDA events, after warm-up (at least 3
calls and 500 ms), the median of --reps calls; TFLOP/s = 2 (N P Q) K (R S C) / time, as tma-conv counts them.

Not part of the build and not run by CI (no PyTorch there). Needs a CUDA GPU, PyTorch and a built tma-conv (--list uses
no GPU):
    cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j
    python3 samples/bench/conv/torch_conv.py [--bin build/samples/tma-conv] [--only LIST] [--reps N]
--only LIST selects rows as TMA_CONV_ONLY does. Run tma-conv on the same machine (the same --only as TMA_CONV_ONLY)
for libtma's column; compare TFLOP/s.
"""
import argparse
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from torch_timing import median_call_ms  # noqa: E402


def read_rows(binary):
    out = subprocess.run([binary, "--list"], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        name, *v = line.split("\t")
        rows.append((name, tuple(int(x) for x in v)))
    return rows


def selected(name, only):
    return not only or any(item and item in name for item in only.split(","))


def out_size(inp, pad, dil, f, stride):
    return (inp + 2 * pad - dil * (f - 1) - 1) // stride + 1


def run_row(v, reps):
    n, h, w, c, k, r, s, sh, sw, ph, pw, dh, dw = v
    x = torch.randn(n, c, h, w, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    wt = torch.randn(k, c, r, s, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    args = dict(stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw))
    if ph < 0 or pw < 0:
        sys.exit("negative padding: not a PyTorch convolution")
    y = F.conv2d(x, wt, **args)
    ref = F.conv2d(x.float(), wt.float(), **args)
    if not torch.all((y.float() - ref).abs() <= 1e-2 * ref.abs() + 1e-2):
        sys.exit(f"{v}: F.conv2d in bf16 differs from fp32")
    del ref
    ms = median_call_ms(lambda: F.conv2d(x, wt, **args), reps)
    p, q = out_size(h, ph, dh, r, sh), out_size(w, pw, dw, s, sw)
    gflop = 2.0 * n * p * q * k * r * s * c * 1e-9
    return gflop, ms


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(here, "..", "..", "..", "build", "samples", "tma-conv"))
    ap.add_argument("--only", help="rows whose name contains this or one of its comma-separated strings")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: this script times PyTorch on the GPU")
    torch.backends.cudnn.benchmark = True
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()} "
          f"(bf16 channels_last F.conv2d, median of {args.reps} calls after warm-up)")
    print(f"{'layer':32s} {'GFLOP':>7s} {'cuDNN us':>9s} {'cuDNN TF':>9s}")
    for name, v in read_rows(args.bin):
        if selected(name, args.only):
            gflop, ms = run_row(v, max(args.reps, 1))
            print(f"{name:32s} {gflop:7.2f} {ms * 1e3:9.1f} {gflop / ms:9.1f}")


if __name__ == "__main__":
    main()
