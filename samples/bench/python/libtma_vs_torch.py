"""libtma's PyTorch operators beside PyTorch's own, on a Hopper GPU: each case verified against PyTorch first, then
timed in interleaved rounds (libtma, PyTorch, libtma, ...: each call alone between two CUDA events after warm-up,
common/torch_timing.py), the median of the rounds' medians printed with the GPU's name.

    PYTHONPATH=build/python python3 samples/bench/python/libtma_vs_torch.py [--rounds 5] [--reps 20]

Needs PyTorch 2.4+ and a build of libtma with nvcc. The cases: permutes PyTorch users write (NCHW -> NHWC, a head
split, the 2-D transpose), a bf16 GEMM, a mixture-of-experts grouped GEMM, a ResNet-50 3x3 convolution. """
import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from torch_timing import median_call_ms  # noqa: E402

import libtma  # noqa: E402
import libtma.torch as tt  # noqa: E402


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def cases():
    """(name, libtma call, PyTorch call, tolerance: None = bitwise)."""
    bf16 = torch.bfloat16
    x = randn(32, 64, 56, 56)
    heads = randn(8, 2048, 32, 128, dtype=bf16)
    matrix = randn(12345, 6789)
    yield "permute NCHW->NHWC 32x64x56x56 f32", lambda: tt.permute(x, (0, 2, 3, 1)), \
        lambda: x.permute(0, 2, 3, 1).contiguous(), None
    yield "permute head split 8x2048x32x128 bf16", lambda: tt.permute(heads, (0, 2, 1, 3)), \
        lambda: heads.permute(0, 2, 1, 3).contiguous(), None
    yield "transpose 12345x6789 f32", lambda: tt.transpose(matrix), lambda: matrix.t().contiguous(), None
    a, b = randn(4096, 4096, dtype=bf16), randn(4096, 4096, dtype=bf16)
    yield "gemm 4096^3 bf16", lambda: tt.gemm(a, b), lambda: torch.mm(a, b.t()), 2e-2
    tokens, experts = randn(16384, 2048, dtype=bf16), randn(8, 1024, 2048, dtype=bf16)
    offs = torch.arange(1, 9, device="cuda", dtype=torch.int32) * 2048
    reference = (lambda: torch._grouped_mm(tokens, experts.transpose(-2, -1), offs=offs)) if hasattr(
        torch, "_grouped_mm") else (lambda: torch.cat([tokens[g * 2048:(g + 1) * 2048] @ experts[g].t()
                                                       for g in range(8)]))
    yield "grouped gemm 8 experts x 2048 tokens, N 1024, K 2048", lambda: tt.grouped_gemm(tokens, experts, offs), \
        reference, 2e-2
    image, filters = randn(32, 56, 56, 64, dtype=bf16), randn(64, 3, 3, 64, dtype=bf16)
    nchw_image = image.permute(0, 3, 1, 2)  # channels_last memory, as cuDNN prefers
    nchw_filters = filters.permute(0, 3, 1, 2)
    yield "conv2d 3x3 32x56x56x64 -> 64 bf16", lambda: tt.conv2d(image, filters, padding=1), \
        lambda: F.conv2d(nchw_image, nchw_filters, padding=1).permute(0, 2, 3, 1), 5e-2


def verify(name, ours, theirs, tolerance):
    got, want = ours().float(), theirs().float()
    torch.cuda.synchronize()
    if tolerance is None:
        same = torch.equal(got, want)
    else:
        same = bool(torch.isfinite(got).all()) and bool(((got - want).abs() <= tolerance * (1 + want.abs())).all())
    if not same:
        sys.exit(f"{name}: libtma's result differs from PyTorch's; not timed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, libtma {libtma.__version__}; "
          f"{args.rounds} interleaved rounds of {args.reps} calls, medians")
    print(f"{'case':56} {'libtma ms':>10} {'PyTorch ms':>11} {'speed-up':>9}")
    for name, ours, theirs, tolerance in cases():
        verify(name, ours, theirs, tolerance)
        times = {"libtma": [], "torch": []}
        for _ in range(args.rounds):
            times["libtma"].append(median_call_ms(ours, args.reps))
            times["torch"].append(median_call_ms(theirs, args.reps))
        libtma_ms, torch_ms = statistics.median(times["libtma"]), statistics.median(times["torch"])
        print(f"{name:56} {libtma_ms:10.4f} {torch_ms:11.4f} {torch_ms / libtma_ms:8.2f}x")


if __name__ == "__main__":
    main()
