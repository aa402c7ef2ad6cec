/* The TMA + wgmma GEMM (kernels/gemm.h) on the GPU against a double-precision CPU product:
 *   ragged      - every variant (no clusters; clusters of two sharing B by multicast, the default where
 *                 blocks have more than one tile; no clusters with the epilogue from registers) on ragged
 *                 M, N, K (N odd or not a multiple of 8, where the default falls back
 *                 to storing from registers, and multiples of 8 that are not of the 64-column store box;
 *                 M and N under one tile, K not a multiple of the 64-element stage, more tiles than SMs):
 *                 relative Frobenius error <= 1e-2, every element finite (the output is poisoned with NaN
 *                 first), and the 4 KiB after C unchanged (TMA stores clip at C's edge); fresh random data.
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

enum { GUARD = 4096 }; /* bytes after C that no variant may write */

/* Runs one shape with variant 1 (no clusters), 2 (clusters of two) or 3 (no clusters, epilogue from registers),
 * each with the epilogue tma_gemm_plan_make chose unless told otherwise; returns the
 * relative Frobenius error (NaN if any output is not finite or a byte after C changed). */
static double run_shape(int m, int n, int k, uint64_t seed, int variant, int *tma_epilogue) {
    size_t na = (size_t)m * k, nb = (size_t)n * k, nc = (size_t)m * n;
    void *a, *b, *c;
    CUDA_OK(cudaMalloc(&a, na * 2 + 16));
    CUDA_OK(cudaMalloc(&b, nb * 2 + 16));
    CUDA_OK(cudaMalloc(&c, nc * 2 + GUARD));
    CUDA_OK(tma_gemm_fill_random_bf16(a, na, seed, 0));
    CUDA_OK(tma_gemm_fill_random_bf16(b, nb, seed ^ 0xABCDEFull, 0));
    CUDA_OK(cudaMemset(c, 0xFF, nc * 2 + GUARD)); /* NaN poison, and the guard's pattern */
    tma_gemm_plan plan;
    CUDA_OK(tma_gemm_plan_make(&plan, a, b, c, m, n, k));
    plan.cluster = variant == 2 ? 2 : 1;
    if (variant == 3)
        plan.epilogue = TMA_GEMM_EPILOGUE_DIRECT;
    *tma_epilogue = plan.epilogue == TMA_GEMM_EPILOGUE_TMA_STORE;
    CUDA_OK(tma_gemm_run(&plan, 0));
    CUDA_OK(cudaDeviceSynchronize());
    uint16_t *ha = malloc(na * 2 + 2), *hb = malloc(nb * 2 + 2), *hc = malloc(nc * 2 + GUARD);
    cr_assert(ha && hb && hc);
    CUDA_OK(cudaMemcpy(ha, a, na * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hb, b, nb * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hc, c, nc * 2 + GUARD, cudaMemcpyDeviceToHost));
    int guard_intact = 1;
    for (size_t i = nc; i < nc + GUARD / 2; i++)
        guard_intact &= hc[i] == 0xFFFFu;
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
    if (!finite || !guard_intact)
        return NAN;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

Test(gpu_gemm, ragged) {
    require_sm90();
    uint64_t seed = seed_rng("gpu_gemm");
    /* the first four are what the sanitizer runs see: TMA-store epilogue on a ragged tile, blocks that
     * store more than one tile (192 tiles, 132 blocks: the epilogue buffers reused across tiles), and
     * the fallback for an odd N */
    const int shapes[][3] = {{1, 1, 8},         {129, 264, 72},   {3000, 2056, 64}, {7, 3, 16},
                             {64, 256, 64},     {128, 256, 64},   {77, 300, 136},   {129, 257, 72},
                             {300, 513, 1000},  {200, 3, 8},      {5, 1031, 64},    {1000, 999, 200},
                             {2500, 1100, 96},  {130, 600, 4104}, {1, 8, 8},        {77, 296, 136},
                             {300, 520, 1000},  {1000, 1000, 200}, {2500, 1104, 96}};
    int tma_epilogues = 0, n_multiple_of_8 = 0;
    /* all shapes, or the first TMA_GPU_CONFIGS (the sanitizer runs) */
    const size_t nshapes = sizeof shapes / sizeof shapes[0], count = (size_t)config_count((int)nshapes);
    for (size_t s = 0; s < nshapes && s < count; s++)
        for (int v = 1; v <= 3; v++) { /* 1: no clusters, 2: clusters of two, 3: epilogue from registers */
            int tma_epi = 0;
            double err = run_shape(shapes[s][0], shapes[s][1], shapes[s][2], seed + s * 0x9E3779B9ull + (uint64_t)v, v,
                                   &tma_epi);
            tma_epilogues += tma_epi;
            n_multiple_of_8 += v < 3 && shapes[s][1] % 8 == 0;
            cr_log_info("%d x %d x %d variant %d (%s epilogue): relative Frobenius error %.3e", shapes[s][0],
                        shapes[s][1], shapes[s][2], v, tma_epi ? "TMA-store" : "direct", err);
            cr_assert(err <= 1e-2,
                      "%d x %d x %d variant %d: relative Frobenius error %g (NaN: an element unwritten or not finite, "
                      "or a byte after C written)",
                      shapes[s][0], shapes[s][1], shapes[s][2], v, err);
        }
    cr_assert(n_multiple_of_8 > 0 && tma_epilogues == n_multiple_of_8,
              "variants 1 and 2 store with TMA exactly where N %% 8 == 0 (%d runs of %d)", tma_epilogues,
              n_multiple_of_8);
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
