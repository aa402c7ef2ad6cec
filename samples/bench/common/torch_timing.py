"""Timing shared by the samples' PyTorch scripts (torch_conv.py, torch_gemm.py): one call alone between two CUDA
events, after warm-up (at least 3 calls and WARMUP_MS of GPU time, as common/bench.h warms up), the median."""
import statistics

import torch

WARMUP_MS = 500.0


def median_call_ms(fn, reps):
    """Median milliseconds of fn(), each call alone between two events, after warm-up."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def one():
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end)

    warm, calls = 0.0, 0
    while calls < 3 or warm < WARMUP_MS:
        warm += one()
        calls += 1
    return statistics.median(one() for _ in range(max(reps, 1)))
