/* tma-grouped-gemm-example: a small mixture-of-experts layer with tma_grouped_gemm, checked against the CPU.
 *
 * What it shows: a grouped GEMM whose problem lives in device memory. Four experts get 37, 0, 130 and 5 tokens;
 * C_g = A_g * B_g^T for each, every group with its own allocations, and the pointers and row counts M_g in device
 * arrays, as a router on the GPU would write them (an empty group may have NULL pointers). The plan encodes three
 * template maps once; each run builds every group's maps on the device, checks them against libtma's rules, and runs
 * the GEMM; tma_grouped_gemm_check reports any group the device refused. Each C_g is then compared with a CPU
 * product (small multiples of 1/8: exact sums, so only the bf16 rounding of C separates them). There is no CPU model
 * of this kernel: without a Hopper GPU the sample says so and exits 0. How it works: docs/guide/grouped_gemm.md; the
 * benchmark: samples/bench/grouped_gemm/ (tma-grouped-gemm).
 *
 * Build and run:  cmake -B build && cmake --build build -j && ./build/samples/tma-grouped-gemm-example
 * Exit status: 0 when every element is within bf16 rounding of the CPU product (or there is no GPU), 1 otherwise. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/cuda_check.h"
#include "../common/hopper.h"
#include "../common/host.h"

enum { G = 4, N = 64, K = 40 };
static const int32_t rows[G] = {37, 0, 130, 5}; /* M_g: the tokens routed to each expert */

int main(void) {
    if (!sample_have_hopper(NULL))
        return 0;
    uint16_t *a[G], *b[G];            /* host copies, for the check */
    void *da[G], *db[G], *dc[G];      /* one allocation per group and operand */
    for (int g = 0; g < G; g++) {
        a[g] = host_alloc((size_t)rows[g] * K * 2), b[g] = host_alloc((size_t)N * K * 2);
        for (int i = 0; i < rows[g] * K; i++)
            a[g][i] = bf16_from_float(sample_value(i, 10 + g));
        for (int i = 0; i < N * K; i++)
            b[g][i] = bf16_from_float(sample_value(i, 20 + g));
        da[g] = dc[g] = NULL;
        if (rows[g] > 0) {
            CUDA_CHECK(cudaMalloc(&da[g], (size_t)rows[g] * K * 2));
            CUDA_CHECK(cudaMalloc(&dc[g], (size_t)rows[g] * N * 2));
            CUDA_CHECK(cudaMemset(dc[g], 0xFF, (size_t)rows[g] * N * 2)); /* NaN: an unwritten element fails */
            CUDA_CHECK(cudaMemcpy(da[g], a[g], (size_t)rows[g] * K * 2, cudaMemcpyHostToDevice));
        }
        CUDA_CHECK(cudaMalloc(&db[g], (size_t)N * K * 2));
        CUDA_CHECK(cudaMemcpy(db[g], b[g], (size_t)N * K * 2, cudaMemcpyHostToDevice));
    }
    /* The problem as the kernel reads it: arrays of pointers and row counts in device memory. */
    void **pa, **pb, **pc;
    int32_t *pm;
    CUDA_CHECK(cudaMalloc((void **)&pa, sizeof da));
    CUDA_CHECK(cudaMalloc((void **)&pb, sizeof db));
    CUDA_CHECK(cudaMalloc((void **)&pc, sizeof dc));
    CUDA_CHECK(cudaMalloc((void **)&pm, sizeof rows));
    CUDA_CHECK(cudaMemcpy(pa, da, sizeof da, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(pb, db, sizeof db, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(pc, dc, sizeof dc, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(pm, rows, sizeof rows, cudaMemcpyHostToDevice));

    tma_grouped_gemm_plan plan; /* the three template maps, checked and encoded once; the workspace */
    tma_diag diag;
    if (tma_grouped_gemm_plan_make(&plan, G, N, K, (const void *const *)pa, (const void *const *)pb,
                                   (void *const *)pc, pm, &diag) != TMA_OK) {
        fprintf(stderr, "plan: %s\n", diag.message);
        return 1;
    }
    printf("plan: %d groups, %d blocks, %zu bytes of workspace, %zu bytes of shared memory a block\n", plan.groups,
           plan.grid_blocks ? plan.grid_blocks : plan.sms, plan.workspace_bytes, plan.smem);
    /* A run builds the groups' maps on the device, then multiplies; check waits and reports a refused group. */
    if (tma_grouped_gemm_run(&plan, NULL, &diag) != TMA_OK || tma_grouped_gemm_check(&plan, NULL, &diag) != TMA_OK) {
        fprintf(stderr, "grouped GEMM: %s\n", diag.message); /* e.g. "group 2: the map of A_g: ..." */
        return 1;
    }

    int bad = 0, total = 0;
    for (int g = 0; g < G; g++) {
        uint16_t *c = host_alloc((size_t)rows[g] * N * 2);
        if (rows[g] > 0)
            CUDA_CHECK(cudaMemcpy(c, dc[g], (size_t)rows[g] * N * 2, cudaMemcpyDeviceToHost));
        for (int i = 0; i < rows[g]; i++)
            for (int j = 0; j < N; j++, total++) {
                double ref = 0;
                for (int k = 0; k < K; k++)
                    ref += bf16_to_double(a[g][i * K + k]) * bf16_to_double(b[g][j * K + k]);
                bad += !(fabs(bf16_to_double(c[i * N + j]) - ref) <= fabs(ref) / 256);
            }
        free(c);
    }
    printf("%d experts, M_g = {%d, %d, %d, %d}, N = %d, K = %d: %d of %d elements outside bf16 rounding\n", G,
           rows[0], rows[1], rows[2], rows[3], N, K, bad, total);
    tma_grouped_gemm_plan_free(&plan, NULL);
    return bad != 0;
}
