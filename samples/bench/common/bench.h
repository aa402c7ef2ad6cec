/* Timing for the benchmarks: each launch alone between two CUDA events, launches compared in interleaved
 * rounds, the median.
 *
 * Why interleaved (measured on an H200, docs/lab/gemm.md "How the numbers are taken, and why"): under sustained
 * load the SM clock falls with the power limit (1.98 GHz at rest, ~1.5 GHz under bf16 GEMMs) some 50-150 ms after
 * the card starts working, so launches timed in a block right after an idle gap (host-side checks, data
 * generation) ran up to 18% faster than the same launches later. Each round runs every launch once, starting from
 * a different one in turn, after warm-up rounds: all see the same mix of clock and temperature. */
#ifndef SAMPLES_COMMON_BENCH_H
#define SAMPLES_COMMON_BENCH_H

/** Enqueue launch number `which` on the default stream (exits the program on a CUDA error). */
typedef void (*bench_launch)(void *ctx, int which);

/** Warm-up before the timed rounds: at least 3 rounds and this much GPU time. */
#define BENCH_WARMUP_MS 500.f

/** Milliseconds of one launch, timed alone (events around it, then synchronize). */
float bench_once(bench_launch launch, void *ctx, int which);

/** Median milliseconds of each of launches 0..n-1 over `reps` rounds (reps >= 1), after warm-up rounds
 *  (at least 3 and BENCH_WARMUP_MS of GPU time). Every round runs each launch once, round r starting
 *  with launch r % n. TMA_BENCH_GAP_US=N (a diagnostic) leaves the GPU idle N us before each timed launch: on an
 *  H200 2 ms gaps left the permute's ratios to memcpy as they were and made the convolution's 7.4 GFLOP layers 1.5x
 *  slower (cuBLAS 2.6x: the clock falls while idle; docs/lab/permute.md, docs/lab/conv.md). TMA_BENCH_BATCH=N (a
 *  diagnostic) times N launches back to back between the two events, and reports their mean. */
void bench_interleaved(bench_launch launch, void *ctx, int n, int reps, float *median_ms);

#endif /* SAMPLES_COMMON_BENCH_H */
