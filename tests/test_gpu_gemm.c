/* The TMA + wgmma GEMM (kernels/gemm.h) on the GPU against a double-precision CPU product:
 *   ragged      - every variant (default; clusters of two sharing B by multicast; 8 stages of 32 K, plan.kdepth); ragged M, N, K (odd N, M and N under one tile, K not a multiple of the 64-element
 *                 stage, more tiles than SMs): relative Frobenius error <= 1e-2, every element finite
 *                 (the output is poisoned with NaN first), fresh random data per shape.
 *   k_zero      - K = 0 gives zeros.
 *   refused     - K not a multiple of 8 and misaligned A are refused with cudaErrorInvalidValue. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "gpu_common.h"

static double bf16d(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Runs one shape; returns the relative Frobenius error (NaN if any output is not finite). */
static double run_shape(int m, int n, int k, uint64_t seed, int cluster) {
    size_t na = (size_t)m * k, nb = (size_t)n * k, nc = (size_t)m * n;
    void *a, *b, *c;
    CUDA_OK(cudaMalloc(&a, na * 2 + 16));
    CUDA_OK(cudaMalloc(&b, nb * 2 + 16));
    CUDA_OK(cudaMalloc(&c, nc * 2 + 16));
    CUDA_OK(tma_gemm_fill_random_bf16(a, na, seed, 0));
    CUDA_OK(tma_gemm_fill_random_bf16(b, nb, seed ^ 0xABCDEFull, 0));
    CUDA_OK(cudaMemset(c, 0xFF, nc * 2)); /* NaN poison */
    tma_gemm_plan plan;
    CUDA_OK(tma_gemm_plan_make(&plan, a, b, c, m, n, k));
    plan.cluster = cluster == 2 ? 2 : 1; /* 3: the deep variant (8 stages of 32 K-elements), no clusters */
    plan.kdepth = cluster == 3;
    CUDA_OK(tma_gemm_run(&plan, 0));
    CUDA_OK(cudaDeviceSynchronize());
    uint16_t *ha = malloc(na * 2 + 2), *hb = malloc(nb * 2 + 2), *hc = malloc(nc * 2 + 2);
    cr_assert(ha && hb && hc);
    CUDA_OK(cudaMemcpy(ha, a, na * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hb, b, nb * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hc, c, nc * 2, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    int finite = 1;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double ref = 0;
            for (int kk = 0; kk < k; kk++)
                ref += bf16d(ha[(size_t)i * k + kk]) * bf16d(hb[(size_t)j * k + kk]);
            double got = bf16d(hc[(size_t)i * n + j]);
            finite &= isfinite(got) != 0;
            num += (got - ref) * (got - ref);
            den += ref * ref;
        }
    free(ha), free(hb), free(hc);
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(b));
    CUDA_OK(cudaFree(c));
    if (!finite)
        return NAN;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

Test(gpu_gemm, ragged) {
    require_sm90();
    uint64_t seed = seed_rng("gpu_gemm");
    const int shapes[][3] = {{1, 1, 8},       {7, 3, 16},      {64, 256, 64},  {128, 256, 64},  {77, 300, 136},
                             {129, 257, 72},  {300, 513, 1000}, {200, 3, 8},   {5, 1031, 64},   {1000, 999, 200},
                             {2500, 1100, 96}, {130, 600, 4104}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int cl = 1; cl <= 3; cl++) { /* 1: default, 2: clusters of two, 3: deep stages */
            double err = run_shape(shapes[s][0], shapes[s][1], shapes[s][2], seed + s * 0x9E3779B9ull + (uint64_t)cl, cl);
            cr_log_info("%d x %d x %d cluster %d: relative Frobenius error %.3e", shapes[s][0], shapes[s][1],
                        shapes[s][2], cl, err);
            cr_assert(err <= 1e-2,
                      "%d x %d x %d cluster %d: relative Frobenius error %g (NaN: an element unwritten or not finite)",
                      shapes[s][0], shapes[s][1], shapes[s][2], cl, err);
        }
}

Test(gpu_gemm, k_zero) {
    require_sm90();
    void *c;
    CUDA_OK(cudaMalloc(&c, 100 * 70 * 2));
    CUDA_OK(cudaMemset(c, 0xFF, 100 * 70 * 2));
    void *dummy;
    CUDA_OK(cudaMalloc(&dummy, 256));
    CUDA_OK(tma_gemm_bf16(dummy, dummy, c, 100, 70, 0));
    uint16_t h[100 * 70];
    CUDA_OK(cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 100 * 70; i++)
        cr_assert_eq(h[i], 0, "element %d = 0x%04x", i, h[i]);
    CUDA_OK(cudaFree(c));
    CUDA_OK(cudaFree(dummy));
}

Test(gpu_gemm, refused) {
    require_sm90();
    void *p;
    CUDA_OK(cudaMalloc(&p, 1 << 20));
    tma_gemm_plan plan;
    cr_assert_eq(tma_gemm_plan_make(&plan, p, p, p, 64, 64, 12), cudaErrorInvalidValue);
    cr_assert_eq(tma_gemm_plan_make(&plan, (char *)p + 8, p, p, 64, 64, 64), cudaErrorInvalidValue);
    cr_assert_eq(tma_gemm_plan_make(&plan, p, p, p, 64, 64, 64), cudaSuccess);
    CUDA_OK(cudaFree(p));
}
