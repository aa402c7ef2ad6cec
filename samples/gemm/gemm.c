/* tma-gemm-example: C = A * B^T with tma_gemm: a plan, what it chose, a run, a check against the CPU.
 *
 * What it shows: the plan-once, run-often shape of libtma's kernels. A 300 x 200 x 136 product in bf16 (sizes that
 * are not multiples of the 128 x 256 tile: the edges come from TMA's zero fill and clipped stores) is planned with
 * tma_gemm_plan_make, which checks the arguments, encodes the maps of A, B and C and chooses the clusters and the
 * epilogue; the plan is printed, run with tma_gemm_run and the result compared with a CPU product. The data are small
 * multiples of 1/8, so the fp32 sums are exact and only C's rounding to bf16 separates the two. The GEMM has no CPU
 * model: without a Hopper GPU the sample says so and exits 0. How it works: docs/guide/gemm.md; the benchmark against
 * cuBLAS: samples/bench/gemm/ (tma-gemm).
 *
 * Build and run:  cmake -B build && cmake --build build -j && ./build/samples/tma-gemm-example
 * Exit status: 0 when every element is within bf16 rounding of the CPU product (or there is no GPU), 1 otherwise. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/cuda_check.h"
#include "../common/hopper.h"
#include "../common/host.h"

enum { M = 300, N = 200, K = 136 };

int main(void) {
    if (!sample_have_hopper(NULL))
        return 0;
    static uint16_t a[M * K], b[N * K], c[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = bf16_from_float(sample_value(i, 1));
    for (int i = 0; i < N * K; i++)
        b[i] = bf16_from_float(sample_value(i, 2));
    void *da, *db, *dc;
    CUDA_CHECK(cudaMalloc(&da, sizeof a));
    CUDA_CHECK(cudaMalloc(&db, sizeof b));
    CUDA_CHECK(cudaMalloc(&dc, sizeof c));
    CUDA_CHECK(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dc, 0xFF, sizeof c)); /* NaN: an element never written cannot pass */

    /* Plan once: arguments checked, maps encoded, kernel attributes set. */
    tma_gemm_plan plan;
    tma_diag diag;
    if (tma_gemm_plan_make(&plan, da, db, dc, TMA_GEMM_OUT_BF16, M, N, K, &diag) != TMA_OK) {
        fprintf(stderr, "plan: %s\n", diag.message);
        return 1;
    }
    printf("plan: %d blocks (%d SMs), clusters of %d, %s epilogue, %zu bytes of shared memory a block\n",
           tma_gemm_grid(&plan), plan.sms, plan.cluster,
           plan.epilogue == TMA_GEMM_EPILOGUE_TMA_STORE ? "TMA-store" : "direct", plan.smem);

    /* Run (asynchronous on the default stream), then wait and copy C back. */
    if (tma_gemm_run(&plan, NULL, &diag) != TMA_OK) {
        fprintf(stderr, "run: %s\n", diag.message);
        return 1;
    }
    CUDA_CHECK(cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost));
    if (tma_gemm_plan_free(&plan, &diag) != TMA_OK) { /* packed copies of A and B, where the plan has them */
        fprintf(stderr, "free: %s\n", diag.message);
        return 1;
    }

    /* Check: every element of C against the exact product, within bf16's rounding (half a unit in the last place). */
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int k = 0; k < K; k++)
                ref += bf16_to_double(a[i * K + k]) * bf16_to_double(b[j * K + k]);
            bad += !(fabs(bf16_to_double(c[i * N + j]) - ref) <= fabs(ref) / 256);
        }
    printf("C = A * B^T, %d x %d x %d bf16: %d of %d elements outside bf16 rounding of the CPU product\n", M, N, K,
           bad, M * N);
    CUDA_CHECK(cudaFree(da));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dc));
    return bad != 0;
}
