/* The TMA + wgmma GEMM (tma_gemm, tma/kernels.h) on the GPU against a double-precision CPU product:
 *   packed  - K not a multiple of 8 and A, B at 2-byte offsets (copied into the plan's packed rows first), every
 *                 variant, bf16 and fp32 C.
 *   ragged, ragged_f32 - bf16 and fp32 C: every variant (split-K where the plan splits K, on 128 x 256 or 128 x 128
 *                 tiles, and whole tiles there;
 *                 no clusters; clusters of two sharing B by
 *                 multicast, the default where blocks have more than one tile; no clusters with the
 *                 epilogue from registers) on ragged M, N, K (C row pitches not multiples of 16 bytes, where
 *                 the default falls back to storing from registers, and multiples that are not of the
 *                 store box; M and N under one tile, K not a multiple of the 64-element stage, more tiles
 *                 than SMs): relative Frobenius error <= 1e-2 (bf16 C) or 1e-5 (fp32 C), every element
 *                 finite (the output is poisoned with NaN first), and the 4 KiB after C unchanged (TMA
 *                 stores clip at C's edge); fresh random data.
 *   k_zero      - K = 0 gives zeros (both C types).
 *   refused     - A at an odd address and a misaligned fp32 C are refused with TMA_ERR_ARG and a message naming the
 *                 argument (K = 12 and A 8 bytes past 16 are taken: packed); a plan changed to something it cannot
 *                 run is refused by run, split-K's parts and clusters included. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "gpu_common.h"
#include "tma/kernels.h"

enum { GUARD = 4096 }; /* bytes after C that no variant may write */

/* n random bf16 values in [-1, 1) (from the seeded generator of gpu_common.h) into device memory at p. */
static void fill_bf16(void *p, size_t n) {
    uint16_t *h = malloc(n * 2 + 2);
    cr_assert(h != NULL, "out of host memory");
    for (size_t i = 0; i < n; i++) {
        const float f = (float)(rnd() >> 40) * (2.0f / 16777216.0f) - 1.0f;
        h[i] = to_bf16(f);
    }
    CUDA_OK(cudaMemcpy(p, h, n * 2, cudaMemcpyHostToDevice));
    free(h);
}

static tma_gemm_plan make_plan(const void *a, const void *b, void *c, tma_gemm_out out, int m, int n, int k) {
    tma_gemm_plan plan;
    tma_diag diag;
    const tma_status st = tma_gemm_plan_make(&plan, a, b, c, out, m, n, k, &diag);
    cr_assert_eq(st, TMA_OK, "tma_gemm_plan_make %dx%dx%d: %s: %s", m, n, k, tma_status_name(st), diag.message);
    return plan;
}

static void run_plan(const tma_gemm_plan *plan) {
    tma_diag diag;
    const tma_status st = tma_gemm_run(plan, NULL, &diag);
    cr_assert_eq(st, TMA_OK, "tma_gemm_run: %s: %s", tma_status_name(st), diag.message);
}

static double c_elem(const uint8_t *c, size_t i, tma_gemm_out out) {
    if (out == TMA_GEMM_OUT_F32) {
        float f;
        memcpy(&f, c + 4 * i, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, c + 2 * i, 2);
    return bf16d(h);
}

/* Runs one shape with C of type `out` and variant 1 (no clusters), 2 (clusters of two, whole tiles), 3 (no clusters,
 * epilogue from registers) or 4 (split-K where the plan has whole tiles, whole tiles where it splits K), each with
 * the epilogue and split-K parts tma_gemm_plan_make chose unless told otherwise;
 * returns the relative Frobenius error (NaN if any output is not finite or a byte after C changed). */
static double run_shape_at(int m, int n, int k, int variant, tma_gemm_out out, int *tma_epilogue, size_t ab_off) {
    const size_t eb = out == TMA_GEMM_OUT_F32 ? 4u : 2u;
    size_t na = (size_t)m * k, nb = (size_t)n * k, nc = (size_t)m * n;
    void *a, *b, *c, *a0, *b0;
    CUDA_OK(cudaMalloc(&a0, na * 2 + 16));
    CUDA_OK(cudaMalloc(&b0, nb * 2 + 16));
    a = (uint8_t *)a0 + ab_off, b = (uint8_t *)b0 + ab_off;
    CUDA_OK(cudaMalloc(&c, nc * eb + GUARD));
    fill_bf16(a, na);
    fill_bf16(b, nb);
    CUDA_OK(cudaMemset(c, 0xFF, nc * eb + GUARD)); /* NaN poison (bf16 and fp32), and the guard's pattern */
    tma_gemm_plan plan = make_plan(a, b, c, out, m, n, k);
    if (variant == 2) { /* whole 128 x 256 tiles in pairs, through the tune function (the launch derived once) */
        tma_diag d;
        plan.split_parts = 0, plan.block_n = 256;
        cr_assert_eq(tma_gemm_plan_tune(&plan, 2, plan.epilogue, plan.group_m, plan.grid_blocks, &d), TMA_OK, "%s",
                     d.message);
    } else { /* by hand (run checks the fields and derives the launch) */
        plan.cluster = 1;
        if (variant == 3)
            plan.epilogue = TMA_GEMM_EPILOGUE_DIRECT;
        if (variant == 4) { /* whole tiles where the plan splits K; split-K with 2..8 parts where it does not; on
                               128 x 256 or 128 x 128 tiles */
            plan.split_parts = plan.split_parts ? 0 : 2 + (m + n + k) % 7 <= (k + 63) / 64 ? 2 + (m + n + k) % 7 : 0;
            plan.block_n = (m + n) % 2 ? 128 : 256;
        }
    }
    *tma_epilogue = plan.epilogue == TMA_GEMM_EPILOGUE_TMA_STORE;
    run_plan(&plan);
    CUDA_OK(cudaDeviceSynchronize());
    uint16_t *ha = malloc(na * 2 + 2), *hb = malloc(nb * 2 + 2);
    uint8_t *hc = malloc(nc * eb + GUARD);
    cr_assert(ha && hb && hc);
    CUDA_OK(cudaMemcpy(ha, a, na * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hb, b, nb * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hc, c, nc * eb + GUARD, cudaMemcpyDeviceToHost));
    int guard_intact = 1;
    for (size_t i = nc * eb; i < nc * eb + GUARD; i++)
        guard_intact &= hc[i] == 0xFFu;
    double num = 0, den = 0;
    int finite = 1;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double ref = 0;
            for (int kk = 0; kk < k; kk++)
                ref += bf16d(ha[(size_t)i * k + kk]) * bf16d(hb[(size_t)j * k + kk]);
            double got = c_elem(hc, (size_t)i * n + j, out);
            finite &= isfinite(got) != 0;
            num += (got - ref) * (got - ref);
            den += ref * ref;
        }
    free(ha), free(hb), free(hc);
    tma_diag d;
    cr_assert_eq(tma_gemm_plan_free(&plan, &d), TMA_OK, "%s", d.message);
    CUDA_OK(cudaFree(a0));
    CUDA_OK(cudaFree(b0));
    CUDA_OK(cudaFree(c));
    if (!finite || !guard_intact)
        return NAN;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double run_shape(int m, int n, int k, int variant, tma_gemm_out out, int *tma_epilogue) {
    return run_shape_at(m, n, k, variant, out, tma_epilogue, 0);
}

/* Every variant on every ragged shape with C of type `out`. The first four shapes are what the sanitizer
 * runs see (TMA_GPU_CONFIGS=4): TMA-store epilogue on a ragged tile, blocks that store more than one tile
 * (192 tiles, 132 blocks: the epilogue buffers reused across tiles), and split-K (2 tiles of 32 K steps). */
static void ragged_suite(tma_gemm_out out, const char *suite) {
    seed_rng(suite); /* the data come from the seeded generator: TMA_TEST_SEED replays them */
    const int eb = out == TMA_GEMM_OUT_F32 ? 4 : 2;
    const double tolerance = out == TMA_GEMM_OUT_F32 ? 1e-5 : 1e-2; /* fp32 C: only the summation order differs */
    const int shapes[][3] = {{1, 1, 8},         {129, 264, 72},   {3000, 2056, 64}, {20, 300, 2048},
                             {7, 3, 16},
                             {64, 256, 64},     {128, 256, 64},   {77, 300, 136},   {129, 257, 72},
                             {300, 513, 1000},  {200, 3, 8},      {5, 1031, 64},    {1000, 999, 200},
                             {2500, 1100, 96},  {130, 600, 4104}, {1, 8, 8},        {77, 296, 136},
                             {300, 520, 1000},  {1000, 1000, 200}, {2500, 1104, 96}};
    int tma_epilogues = 0, tma_expected = 0;
    /* all shapes, or the first TMA_GPU_CONFIGS (the sanitizer runs) */
    const size_t nshapes = sizeof shapes / sizeof shapes[0], count = (size_t)config_count((int)nshapes);
    for (size_t s = 0; s < nshapes && s < count; s++)
        for (int v = 1; v <= 4; v++) { /* 1: no clusters, 2: clusters of two, 3: epilogue from registers, 4: the
                                          other schedule */
            int tma_epi = 0;
            double err = run_shape(shapes[s][0], shapes[s][1], shapes[s][2], v, out, &tma_epi);
            tma_epilogues += tma_epi;
            tma_expected += (v < 3 || v == 4) && shapes[s][1] * eb % 16 == 0;
            cr_log_info("%d x %d x %d %s C variant %d (%s epilogue): relative Frobenius error %.3e", shapes[s][0],
                        shapes[s][1], shapes[s][2], eb == 4 ? "fp32" : "bf16", v, tma_epi ? "TMA-store" : "direct",
                        err);
            cr_assert(err <= tolerance,
                      "%d x %d x %d %s C variant %d: relative Frobenius error %g (NaN: an element unwritten or not "
                      "finite, or a byte after C written)",
                      shapes[s][0], shapes[s][1], shapes[s][2], eb == 4 ? "fp32" : "bf16", v, err);
        }
    cr_assert(tma_expected > 0 && tma_epilogues == tma_expected,
              "variants 1 and 2 store with TMA exactly where C's row pitch is a multiple of 16 bytes (%d runs of %d)",
              tma_epilogues, tma_expected);
}

Test(gpu_gemm, ragged) {
    require_sm90();
    ragged_suite(TMA_GEMM_OUT_BF16, "gpu_gemm");
}

Test(gpu_gemm, ragged_f32) {
    require_sm90();
    ragged_suite(TMA_GEMM_OUT_F32, "gpu_gemm_f32");
}

/* PACKED INPUTS (kernels/gemm.cu): K not a multiple of 8, and A and B at 2-byte offsets, copied into the plan's
 * packed rows first; every variant, bf16 and fp32 C. */
Test(gpu_gemm, packed) {
    require_sm90();
    seed_rng("gpu_gemm/packed");
    const int shapes[][4] = {{5, 300, 100, 0}, {130, 257, 1001, 0}, {64, 64, 13, 0}, {200, 513, 64, 2}, {3, 40, 7, 6},
                             {300, 1000, 4099, 10}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int v = 1; v <= 4; v++)
            for (int o = 0; o < 2; o++) {
                const tma_gemm_out out = o ? TMA_GEMM_OUT_F32 : TMA_GEMM_OUT_BF16;
                int tma_epi = 0;
                const double err = run_shape_at(shapes[s][0], shapes[s][1], shapes[s][2], v, out, &tma_epi,
                                                (size_t)shapes[s][3]);
                cr_assert(err <= (o ? 1e-5 : 1e-2), "%d x %d x %d, A and B at +%d bytes, %s C, variant %d: relative "
                          "Frobenius error %g (NaN: an element unwritten or not finite, or a byte after C written)",
                          shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], o ? "fp32" : "bf16", v, err);
            }
}

Test(gpu_gemm, k_zero) {
    require_sm90();
    void *c;
    CUDA_OK(cudaMalloc(&c, 100 * 70 * 2));
    CUDA_OK(cudaMemset(c, 0xFF, 100 * 70 * 2));
    void *dummy;
    CUDA_OK(cudaMalloc(&dummy, 256));
    tma_diag diag;
    cr_assert_eq(tma_gemm(dummy, dummy, c, TMA_GEMM_OUT_BF16, 100, 70, 0, NULL, &diag), TMA_OK, "%s", diag.message);
    CUDA_OK(cudaDeviceSynchronize());
    uint16_t h[100 * 70];
    CUDA_OK(cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 100 * 70; i++)
        cr_assert_eq(h[i], 0, "element %d = 0x%04x", i, h[i]);
    CUDA_OK(cudaMemset(c, 0xFF, 100 * 70 * 2)); /* fp32 C: zeros in all four bytes */
    const tma_gemm_plan plan = make_plan(dummy, dummy, c, TMA_GEMM_OUT_F32, 50, 70, 0);
    run_plan(&plan);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 100 * 70; i++)
        cr_assert_eq(h[i], 0, "fp32 C: half-word %d = 0x%04x", i, h[i]);
    CUDA_OK(cudaFree(c));
    CUDA_OK(cudaFree(dummy));
}

Test(gpu_gemm, refused) {
    require_sm90();
    void *p;
    CUDA_OK(cudaMalloc(&p, 1 << 20));
    tma_gemm_plan plan;
    tma_diag diag;
    const tma_gemm_out BF = TMA_GEMM_OUT_BF16;
    cr_assert_eq(tma_gemm_plan_make(&plan, p, p, p, BF, 64, 64, 12, &diag), TMA_OK, "K = 12 (packed): %s",
                 diag.message);
    cr_expect(plan.packed != NULL && plan.packed_bytes >= 2u * 64u * 16u * 2u, "K = 12: packed rows of 16");
    cr_expect_eq(tma_gemm_plan_free(&plan, &diag), TMA_OK, "%s", diag.message);
    cr_expect(plan.packed == NULL, "freed");
    cr_assert_eq(tma_gemm_plan_make(&plan, (char *)p + 8, p, p, BF, 64, 64, 64, &diag), TMA_OK, "A + 8: %s",
                 diag.message);
    cr_expect(plan.packed != NULL, "A + 8: packed");
    cr_expect_eq(tma_gemm_plan_free(&plan, &diag), TMA_OK, "%s", diag.message);
    cr_expect_eq(tma_gemm_plan_make(&plan, (char *)p + 1, p, p, BF, 64, 64, 64, &diag), TMA_ERR_ARG, "A + 1");
    cr_expect(strstr(diag.message, "A = ") != NULL && strstr(diag.message, "2-byte") != NULL, "%s", diag.message);
    cr_expect_eq(tma_gemm_plan_make(&plan, p, p, (char *)p + 2, TMA_GEMM_OUT_F32, 64, 64, 64, &diag), TMA_ERR_ARG,
                 "fp32 C not 4-byte aligned");
    cr_expect_eq(tma_gemm_plan_make(&plan, NULL, p, p, BF, 64, 64, 64, &diag), TMA_ERR_NULL_ARG, "A NULL");
    cr_expect_eq(tma_gemm_plan_make(&plan, p, p, p, BF, -1, 64, 64, &diag), TMA_ERR_ARG, "M < 0");
    cr_assert_eq(tma_gemm_plan_make(&plan, p, p, p, BF, 64, 64, 64, &diag), TMA_OK, "%s", diag.message);
    tma_gemm_plan bad = plan;
    bad.cluster = 3;
    cr_expect_eq(tma_gemm_run(&bad, NULL, &diag), TMA_ERR_ARG, "cluster 3");
    cr_expect(strstr(diag.message, "plan.cluster = 3") != NULL, "%s", diag.message);
    /* tune refuses what run refuses, with the same words, and leaves the plan as it was */
    bad = plan;
    cr_expect_eq(tma_gemm_plan_tune(&bad, 3, bad.epilogue, 0, 0, &diag), TMA_ERR_ARG, "tune: cluster 3");
    cr_expect(strstr(diag.message, "plan.cluster = 3") != NULL, "%s", diag.message);
    cr_expect_eq(bad.cluster, plan.cluster, "a refused tune changes nothing");
    cr_expect_eq(tma_gemm_plan_tune(NULL, 1, TMA_GEMM_EPILOGUE_DIRECT, 0, 0, &diag), TMA_ERR_NULL_ARG, "NULL plan");
    bad = plan;
    cr_assert_eq(tma_gemm_plan_make(&bad, p, p, p, BF, 64, 60, 64, &diag), TMA_OK, "N = 60: %s", diag.message);
    cr_expect_eq(bad.epilogue, TMA_GEMM_EPILOGUE_DIRECT, "bf16 rows of 120 bytes: no TMA store");
    bad.epilogue = TMA_GEMM_EPILOGUE_TMA_STORE;
    cr_expect_eq(tma_gemm_run(&bad, NULL, &diag), TMA_ERR_ARG, "TMA-store epilogue where TMA cannot describe C");
    bad.epilogue = TMA_GEMM_EPILOGUE_DIRECT;
    cr_expect_eq(tma_gemm_plan_tune(&bad, 1, TMA_GEMM_EPILOGUE_TMA_STORE, 0, 0, &diag), TMA_ERR_ARG,
                 "tune: TMA-store epilogue where TMA cannot describe C");
    cr_expect(strstr(diag.message, "TMA cannot describe C") != NULL, "%s", diag.message);
    cr_expect_eq(tma_gemm_run(NULL, NULL, &diag), TMA_ERR_NULL_ARG, "NULL plan");
    /* split-K: 2..8 parts, at most K's steps of 64, without clusters of pairs */
    void *q;
    CUDA_OK(cudaMalloc(&q, 64 * 4096 * 2));
    cr_assert_eq(tma_gemm_plan_make(&bad, q, q, p, BF, 64, 64, 4096, &diag), TMA_OK, "%s", diag.message);
    cr_expect(bad.split_parts >= 2 && bad.cluster == 1, "one tile of 64 K steps: split-K (%d parts)", bad.split_parts);
    tma_gemm_plan split = bad;
    split.split_parts = 9;
    cr_expect_eq(tma_gemm_run(&split, NULL, &diag), TMA_ERR_ARG, "9 parts");
    cr_expect(strstr(diag.message, "plan.split_parts = 9") != NULL, "%s", diag.message);
    cr_assert_eq(tma_gemm_plan_make(&split, p, p, p, BF, 64, 64, 64, &diag), TMA_OK, "%s", diag.message);
    cr_expect_eq(split.split_parts, 0, "one K step: whole tiles");
    split.split_parts = 2;
    cr_expect_eq(tma_gemm_run(&split, NULL, &diag), TMA_ERR_ARG, "2 parts of 1 K step");
    cr_expect(strstr(diag.message, "at most the 1 K steps") != NULL, "%s", diag.message);
    split = bad;
    split.split_parts = 2;
    cr_expect_eq(tma_gemm_plan_tune(&split, 2, split.epilogue, 0, 0, &diag), TMA_ERR_ARG, "split-K with pairs");
    cr_expect(strstr(diag.message, "split-K's clusters are a tile's parts") != NULL, "%s", diag.message);
    /* the tile width: 256 or 128, the narrow one without pairs */
    split = bad;
    split.block_n = 64;
    cr_expect_eq(tma_gemm_run(&split, NULL, &diag), TMA_ERR_ARG, "block_n 64");
    cr_expect(strstr(diag.message, "plan.block_n = 64") != NULL, "%s", diag.message);
    split.block_n = 0;
    cr_expect_eq(tma_gemm_run(&split, NULL, &diag), TMA_ERR_ARG, "block_n 0");
    cr_expect(strstr(diag.message, "a tile is 256 or 128 columns wide") != NULL, "%s", diag.message);
    split = bad;
    split.split_parts = 0, split.block_n = 128;
    cr_expect_eq(tma_gemm_plan_tune(&split, 2, split.epilogue, 0, 0, &diag), TMA_ERR_ARG, "128-wide tiles in pairs");
    cr_expect(strstr(diag.message, "plan.block_n = 128 with cluster = 2") != NULL, "%s", diag.message);
    CUDA_OK(cudaFree(q));
    CUDA_OK(cudaFree(p));
}
