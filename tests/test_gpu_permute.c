/* tma_permute (tma/kernels.h) on the GPU against a plain CPU permutation (tests/permute_ref.h): random ranks 1-5,
 * odd sizes, random perms, dense, 16-byte aligned and odd strides (any multiple of the element, dimensions in another
 * order in memory), element-aligned addresses, every element size; the shapes the TMA-only permute refused (rows of
 * 3, 49, 6789 or 50,257 elements, 17 x 31) and the paths the plan takes for them; fresh random data, dst poisoned
 * first with guard bytes around it, every byte checked: elements bitwise, every other byte of dst's span (between
 * rows, in a row's tail, in a gap) and the guards untouched. Skips without an sm_90 device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "permute_ref.h"
#include "permute_tiles.h" /* pm_plan: the chunk transpose's cases take it */
#include "tma/kernels.h"

/* What a case's plan chose (one_call: unknown, -1). */
typedef struct gpu_path {
    int transpose, threads, group;
} gpu_path;

/* d at src_off and dst_off bytes past 64-byte boundaries (multiples of the element), dst with PR_GUARD poisoned bytes
 * around it. group = ~0u: the plan's defaults; else tma_permute_plan_tune(group, l2) first. one_call: tma_permute. */
static gpu_path gpu_case_at(tma_permute_desc d, size_t src_off, size_t dst_off, uint32_t group, tma_l2_promotion l2,
                            int one_call) {
    const pr_layout L = pr_layout_of(&d);
    const size_t region = pr_buf_bytes(L.dst_bytes, dst_off);
    uint8_t *src = malloc(L.src_bytes), *got = malloc(region), *want = malloc(L.dst_bytes);
    cr_assert(src && got && want);
    rnd_bytes(src, L.src_bytes);
    memset(want, PR_POISON, L.dst_bytes);
    pr_reference(&d, src, want);
    uint8_t *dsrc, *ddst; /* cudaMalloc: 256-byte aligned */
    CUDA_OK(cudaMalloc((void **)&dsrc, src_off + L.src_bytes));
    CUDA_OK(cudaMalloc((void **)&ddst, region));
    CUDA_OK(cudaMemcpy(dsrc + src_off, src, L.src_bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(ddst, PR_POISON, region));
    d.src = dsrc + src_off, d.dst = ddst + PR_GUARD + dst_off;
    char what[480], where[200] = "";
    pr_describe(&d, what, sizeof what);
    tma_diag diag;
    tma_permute_plan p;
    memset(&p, 0, sizeof p);
    gpu_path path = {-1, -1, -1};
    if (one_call) {
        tma_status st = tma_permute(&d, NULL, &diag);
        cr_assert_eq(st, TMA_OK, "%s: tma_permute refused a valid tensor: %s", what, diag.message);
    } else {
        tma_status st = tma_permute_plan_make(&p, &d, &diag);
        cr_assert_eq(st, TMA_OK, "%s: plan refused a valid tensor: %s", what, diag.message);
        path.transpose = (int)p.transpose, path.threads = (int)p.threads, path.group = (int)p.group;
        if (group != ~0u) {
            st = tma_permute_plan_tune(&p, group, l2, &diag);
            cr_assert_eq(st, TMA_OK, "%s: tune: %s", what, diag.message);
        }
        st = tma_permute_run(&p, NULL, &diag);
        cr_assert_eq(st, TMA_OK, "%s: run: %s", what, diag.message);
    }
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, ddst, region, cudaMemcpyDeviceToHost));
    const char *how = one_call ? "one call" : p.threads ? "thread kernel" : p.transpose ? "TMA transpose" : "TMA copy";
    size_t bad = pr_check(&d, got + PR_GUARD + dst_off, want, where, sizeof where);
    cr_assert_eq(bad, 0, "%s (%s): %zu bad bytes, first %s", what, how, bad, where);
    size_t before, after;
    cr_assert_eq(pr_buf_outside(got, L.dst_bytes, dst_off, &before, &after), 0,
                 "%s (%s): wrote %zu bytes before dst and %zu after it", what, how, before, after);
    CUDA_OK(cudaFree(dsrc));
    CUDA_OK(cudaFree(ddst));
    free(src), free(got), free(want);
    return path;
}

/* A dense permute of e-byte elements (gpu_case_at sets the addresses). */
static tma_permute_desc dense_desc(uint32_t e, uint32_t rank, const uint64_t dims[5], const uint32_t perm[5]) {
    tma_permute_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = e, d.rank = rank;
    memcpy(d.src_dims, dims, sizeof d.src_dims);
    memcpy(d.perm, perm, sizeof d.perm);
    return d;
}

static void gpu_case(tma_permute_desc d, uint32_t group, tma_l2_promotion l2, int one_call) {
    gpu_case_at(d, 0, 0, group, l2, one_call);
}

static void random_cases(uint32_t e) {
    require_sm90();
    char name[64];
    snprintf(name, sizeof name, "gpu_permute elem %u", e);
    seed_rng(name);
    uint64_t r = rnd() | 1u;
    int n = 0, threads = 0, tma_kernels = 0;
    for (int i = 0; i < 60; i++, n++) { /* small ones, then a few of a million or more elements */
        const int tma = i % 3 == 0; /* a third in the TMA kernels' domain, at 16-byte aligned addresses */
        const tma_permute_desc d = pr_random(&r, e, i < 50 ? 60000 : 3000000, tma);
        const size_t so = tma ? 16u * (size_t)(i % 4) : pr_offset(&r, e), dof = tma ? 0 : pr_offset(&r, e);
        const gpu_path p = gpu_case_at(d, so, dof, ~0u, TMA_L2_NONE, 0);
        threads += p.threads == 1, tma_kernels += p.threads == 0;
    }
    cr_log_info("%s: %d random permutations (%d on the thread kernel, %d on the TMA kernels) matched the CPU "
                "permutation bitwise, nothing written outside dst's elements",
                name, n, threads, tma_kernels);
}

Test(gpu_permute, random_elem1, .timeout = 300) { random_cases(1); }
Test(gpu_permute, random_elem2, .timeout = 300) { random_cases(2); }
Test(gpu_permute, random_elem4, .timeout = 300) { random_cases(4); }
Test(gpu_permute, random_elem8, .timeout = 300) { random_cases(8); }

/* The shapes, scaled down so the CPU check stays quick, with ragged sizes; every element size; each rank.
 * Twice: rows padded to 16 bytes at aligned addresses (the TMA kernels' domain), then dense at odd addresses. */
Test(gpu_permute, shapes_every_rank, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_permute shapes");
    static const struct { uint32_t rank; uint64_t dims[5]; uint32_t perm[5]; } cases[] = {
        {1, {1000}, {0}},
        {1, {777}, {0}},
        {2, {1235, 679}, {1, 0}},
        {2, {333, 201}, {0, 1}},
        {3, {100, 90, 7}, {1, 0, 2}},                  /* batched transpose */
        {4, {56, 56, 24, 3}, {2, 0, 1, 3}},            /* NCHW -> NHWC */
        {4, {24, 56, 56, 3}, {1, 2, 0, 3}},            /* NHWC -> NCHW */
        {4, {128, 32, 40, 2}, {0, 2, 1, 3}},           /* [B,S,H,D] -> [B,H,S,D] */
        {5, {9, 40, 7, 6, 5}, {3, 0, 4, 1, 2}},        /* rank 5, innermost moves */
        {5, {33, 8, 7, 6, 5}, {0, 3, 4, 2, 1}},        /* rank 5, a copy */
    };
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tma_permute_desc d = dense_desc(e, cases[i].rank, cases[i].dims, cases[i].perm);
            gpu_case_at(d, e, (3u * e) % 64u, ~0u, TMA_L2_NONE, (int)(i % 3 == 1)); /* dense, odd addresses */
            /* strides: rows padded to 16 bytes (+16 on odd cases: the kernels must honour strides) */
            pr_layout L = pr_layout_of(&d);
            for (uint32_t k = 1; k < d.rank; k++) {
                L = pr_layout_of(&d);
                if (L.ss[k] % 16 || (i % 2 && k == 1))
                    d.src_strides[k - 1] = (L.ss[k] + 15) / 16 * 16 + 16 * (i % 2);
                L = pr_layout_of(&d);
                if (L.ds[k] % 16)
                    d.dst_strides[k - 1] = (L.ds[k] + 15) / 16 * 16;
            }
            gpu_case(d, ~0u, TMA_L2_NONE, (int)(i % 3 == 0));
        }
}

/* Shapes of real models that TMA cannot describe densely, all refused before issue 31, dense at cudaMalloc's
 * addresses: fp32 / bf16 T 12345 x 6789 (scaled to 2345 x 1789), logits rows of 50,257, NCHW <-> NHWC of 3-channel
 * 224 x 224 images and of 7 x 7 maps of 2048 channels, PyTorch 333 x 444 x 55 permute(2, 0, 1), tiny 17 x 31; and
 * the rank-5 16 x 32 x 24 x 40 x 48 permute(0, 3, 1, 4, 2). Every element size (the rank-5 case: 2 and 4). */
Test(gpu_permute, shapes_the_tma_permute_refused, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_permute refused shapes");
    static const struct { uint32_t rank; uint64_t dims[5]; uint32_t perm[5]; } cases[] = {
        {2, {1789, 2345}, {1, 0}},
        {2, {2345, 1789}, {1, 0}},
        {2, {50257, 33}, {1, 0}},             /* logits {V, T} -> {T, V} */
        {3, {50257, 7, 3}, {0, 2, 1}},        /* logits {V, T, B} -> {V, B, T}: rows of 50,257 copied */
        {4, {224, 224, 3, 2}, {2, 0, 1, 3}},  /* NCHW -> NHWC, C = 3 */
        {4, {3, 224, 224, 2}, {1, 2, 0, 3}},  /* NHWC -> NCHW, C = 3 */
        {4, {7, 7, 2048, 3}, {2, 0, 1, 3}},   /* NCHW -> NHWC, 7 x 7 */
        {4, {2048, 7, 7, 3}, {1, 2, 0, 3}},   /* NHWC -> NCHW, 7 x 7 */
        {3, {55, 444, 333}, {1, 2, 0}},       /* PyTorch (333, 444, 55).permute(2, 0, 1) */
        {2, {31, 17}, {1, 0}},                /* tiny */
        {2, {17, 31}, {1, 0}},
    };
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tma_permute_desc d = dense_desc(e, cases[i].rank, cases[i].dims, cases[i].perm);
            gpu_case(d, ~0u, TMA_L2_NONE, (int)(i % 4 == 3));
        }
    for (uint32_t e = 2; e <= 4; e *= 2) {
        tma_permute_desc d = {.elem_bytes = e, .rank = 5, .src_dims = {48, 40, 24, 32, 16}, .perm = {2, 0, 3, 1, 4}};
        gpu_case(d, ~0u, TMA_L2_NONE, 0);
    }
}

/* The chunk transpose (pm_chunks_kernel: transposes long in both dimensions, the logits' {V, T} -> {T, V} among
 * them): src rows of odd lengths at every phase and with odd strides, dst rows on 16 bytes and off them (the halo),
 * full and short last tiles in both dimensions, batched too, every element size, each case run twice on fresh data. */
Test(gpu_permute, chunk_transpose_src_at_any_phase, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_permute chunks");
    int n = 0;
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (int i = 0; i < 8; i++) {
            const uint32_t v = 16u / e;
            tma_permute_desc d = {.elem_bytes = e, .rank = i >= 6 ? 3u : 2u, .perm = {1, 0, 2}};
            d.src_dims[0] = (uint64_t)rnd_in(129, 3000) | 1u;
            d.src_dims[1] = (uint64_t)((uint32_t)rnd_in(257 / v, 3000 / v) | 1u) * v; /* 16 bytes x odd: on 16, off 32 */
            d.src_dims[2] = (uint64_t)rnd_in(2, 3);
            if (i % 2) { /* odd src strides (an odd number of elements: rows off 16 bytes), dst strides of whole chunks */
                d.src_strides[0] = e * (d.src_dims[0] + 2u * (uint64_t)rnd_in(1, 4));
                d.dst_strides[0] = e * d.src_dims[1] + 32u;
                d.src_strides[1] = d.src_strides[0] * d.src_dims[1] + e;
                d.dst_strides[1] = d.dst_strides[0] * d.src_dims[0] + 48u;
                if (d.rank == 2)
                    d.src_strides[1] = d.dst_strides[1] = 0;
            }
            /* dst on 16 bytes, or (every other case) off them: the halo */
            const size_t so = e * (size_t)rnd_in(0, 15), dof = 16u * (size_t)rnd_in(0, 3) + (i % 4 >= 2 ? e * (size_t)rnd_in(1, 15u / e > 1u ? 15u / e : 1u) : 0u);
            static uint8_t at[64] __attribute__((aligned(64))); /* the plan at the same phases */
            tma_permute_desc q = d;
            q.src = at + so % 16u, q.dst = at + dof % 16u;
            pm_layout L;
            tma_diag diag;
            cr_assert(pm_plan(&q, &L, &diag) == TMA_OK && L.threads && L.thr.chunks,
                      "e %u %u x %u: the chunk transpose", e, (unsigned)d.src_dims[1], (unsigned)d.src_dims[0]);
            for (int run = 0; run < 2; run++, n++) {
                const gpu_path p = gpu_case_at(d, so, dof, ~0u, TMA_L2_NONE, 0);
                cr_assert_eq(p.threads, 1, "e %u: the thread kernel's chunk transpose", e);
                cr_assert_eq(p.group, (int)pm_ct_group(L.thr.halo), "e %u: plan.group is the chunk walk's bands", e);
            }
        }
    cr_log_info("gpu_permute chunks: %d transposes matched the CPU permutation bitwise", n);
}

/* Which kernel the plan picks where it is certain: a dense fp32 17 x 31 transpose has src rows of 124 bytes, which
 * no TMA map describes: the thread kernel; a dense fp32 8192 x 8192 one is a TMA map's exactly: the TMA transpose. */
Test(gpu_permute, plan_picks_the_thread_kernel_only_where_tma_cannot_describe, .timeout = 120) {
    require_sm90();
    seed_rng("gpu_permute paths");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src_dims = {31, 17}, .perm = {1, 0}};
    const gpu_path small = gpu_case_at(d, 0, 0, ~0u, TMA_L2_NONE, 0);
    cr_assert_eq(small.threads, 1, "fp32 17 x 31: threads %d", small.threads);
    const size_t big = (size_t)8192 * 8192 * 4;
    void *a = NULL, *b = NULL;
    CUDA_OK(cudaMalloc(&a, big));
    CUDA_OK(cudaMalloc(&b, big));
    d.src = a, d.dst = b, d.src_dims[0] = 8192, d.src_dims[1] = 8192;
    tma_permute_plan p;
    tma_diag diag;
    cr_assert_eq(tma_permute_plan_make(&p, &d, &diag), TMA_OK, "fp32 8192^2: %s", diag.message);
    cr_assert_eq(p.threads, 0u, "fp32 8192^2 takes the TMA kernels");
    cr_assert_eq(p.transpose, 1u, "fp32 8192^2: a tile transpose");
    CUDA_OK(cudaFree(a));
    CUDA_OK(cudaFree(b));
}

/* NCHW -> NHWC with few channels: dst rows shorter than 128 bytes take short tiles (pm_short_rows in
 * kernels/permute_tiles.h: several slabs' rows side by side in each output line, stored by the threads); NHWC ->
 * NCHW: src rows shorter than 128 bytes take packed tiles (pm_packed_cols: several slabs side by side in each input
 * line, loaded unswizzled). Ragged H W and N, so the last tile's slabs run past N. */
Test(gpu_permute, short_channels, .timeout = 120) {
    require_sm90();
    seed_rng("gpu_permute short channels");
    static const struct { uint32_t e, c; } cases[] = {{1, 16}, {1, 48}, {2, 8},  {2, 16}, {2, 24}, {2, 32},
                                                      {4, 4},  {4, 8},  {4, 12}, {4, 16}, {8, 2},  {8, 4}, {8, 8}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tma_permute_desc d;
        memset(&d, 0, sizeof d);
        d.elem_bytes = cases[i].e, d.rank = 4;
        d.src_dims[0] = 37, d.src_dims[1] = 29, d.src_dims[2] = cases[i].c, d.src_dims[3] = 13;
        d.perm[0] = 2, d.perm[1] = 0, d.perm[2] = 1, d.perm[3] = 3;
        pr_layout L = pr_layout_of(&d);
        if (L.ss[1] % 16) /* rows of 37 elements padded to 16 bytes */
            d.src_strides[0] = (L.ss[1] + 15) / 16 * 16, d.src_strides[1] = d.src_strides[0] * 29,
            d.src_strides[2] = d.src_strides[1] * cases[i].c;
        gpu_case(d, ~0u, TMA_L2_NONE, (int)(i % 2));
        /* and back: NHWC {C, W, H, N} -> NCHW, each H W plane padded to 32 bytes (TMA stores) */
        memset(&d, 0, sizeof d);
        d.elem_bytes = cases[i].e, d.rank = 4;
        d.src_dims[0] = cases[i].c, d.src_dims[1] = 37, d.src_dims[2] = 29, d.src_dims[3] = 13;
        d.perm[0] = 1, d.perm[1] = 2, d.perm[2] = 0, d.perm[3] = 3;
        d.dst_strides[0] = 37u * cases[i].e;
        d.dst_strides[1] = (37u * 29u * cases[i].e + 31u) / 32u * 32u, d.dst_strides[2] = d.dst_strides[1] * cases[i].c;
        gpu_case(d, ~0u, TMA_L2_NONE, (int)(i % 2));
    }
}

/* Thread-stored tiles whose slabs are each one run of dst (pm_dst_slab_runs: dst rows of whole 16-byte chunks but not
 * 32, dense; all of dimension a in the tile; every run PM_SLAB_RUN_MIN_BYTES or more) leave by one bulk copy a slab:
 * 2-, 4- and 8-byte elements, slab counts that leave the last tile part full, src's dimension 0 in one tile or in
 * several (the last one's rows part past dst: shorter runs), the L2-hinted instances, the issue-31 rank-5 shape, each
 * case checked every byte, twice (a race on the run buffer shows as a different answer). */
Test(gpu_permute, slab_runs_by_bulk_copies, .timeout = 120) {
    require_sm90();
    seed_rng("gpu_permute slab runs");
    static const struct { uint32_t e, rank; uint64_t dims[5]; uint32_t perm[5]; } cases[] = {
        {2, 5, {48, 40, 24, 32, 16}, {2, 0, 3, 1, 4}}, /* issue 31's rank 5: 48 rows of 48 bytes a slab */
        {2, 4, {48, 7, 24, 5}, {2, 0, 3, 1}},
        {2, 4, {48, 13, 24, 5}, {2, 0, 3, 1}},          /* 13 slabs: the last tile of each row 5 of 8 */
        {2, 3, {48, 24, 35}, {1, 0, 2}},
        {2, 3, {64, 16, 37}, {1, 0, 2}},                /* rows of 32 bytes, all 64 of dimension 0 */
        {4, 3, {32, 16, 33}, {1, 0, 2}},
        {4, 3, {32, 20, 9}, {1, 0, 2}},                 /* rows of 80 bytes (L2 hints) */
        {8, 3, {16, 18, 37}, {1, 0, 2}},                /* rows of 144 bytes */
        /* dimension 0 in several tiles */
        {4, 5, {64, 32, 6, 16, 5}, {3, 0, 4, 1, 2}},    /* rank 5, 64-byte rows: two tiles of 32 */
        {2, 4, {112, 7, 24, 3}, {2, 0, 3, 1}},          /* 64 + 48 rows, 7 slabs of 8 */
        {2, 3, {304, 24, 5}, {1, 0, 2}},                /* 24 channels: rows of 48 bytes, 4 x 64 + 48 */
        {4, 3, {1088, 16, 3}, {1, 0, 2}},               /* 16 channels: rows of 64 bytes */
        {4, 3, {1084, 20, 3}, {1, 0, 2}},               /* rows of 80 bytes, 33 x 32 + 28 (L2 hints) */
        {8, 3, {58, 26, 7}, {1, 0, 2}},                 /* rows of 208 bytes, 3 x 16 + 10 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tma_permute_desc d = dense_desc(cases[i].e, cases[i].rank, cases[i].dims, cases[i].perm);
        static uint8_t at[32] __attribute__((aligned(256))); /* the plan's addresses (gpu_case_at sets its own) */
        tma_permute_desc planned = d;
        planned.src = at, planned.dst = at + 16;
        pm_layout L;
        tma_diag diag;
        cr_assert_eq(pm_plan(&planned, &L, &diag), TMA_OK, "case %zu: %s", i, diag.message);
        cr_assert(L.transpose && !L.threads && L.grid.tstore && L.grid.dspan,
                  "case %zu: the TMA transpose with slab runs (threads %u, tstore %u, dspan %u)", i, L.threads,
                  L.grid.tstore, L.grid.dspan);
        for (int run = 0; run < 2; run++)
            gpu_case(d, ~0u, TMA_L2_NONE, run);
    }
    cr_log_info("gpu_permute: %zu slab-run plans matched the CPU permutation bitwise, twice each",
                sizeof cases / sizeof cases[0]);
}

/* Other tile orders and L2 promotions: on a TMA transpose (rows padded to 16 bytes), and on the same matrix dense
 * at odd addresses, which the thread kernel takes; tuning must not refuse it. */
Test(gpu_permute, tile_orders_and_l2, .timeout = 120) {
    require_sm90();
    seed_rng("gpu_permute tune");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src_dims = {1235, 679}, .perm = {1, 0},
                          .src_strides = {4944}, .dst_strides = {2720}};
    for (uint32_t g = 0; g <= 16; g += 4)
        gpu_case(d, g, (tma_l2_promotion)(g / 4 % 4), 0);
    d.src_strides[0] = 0, d.dst_strides[0] = 0;
    for (uint32_t g = 0; g <= 16; g += 8)
        gpu_case_at(d, 4, 12, g, (tma_l2_promotion)(g / 4 % 4), 0);
}

/* Refused: what is not a tensor, with its status and the field in the message. Accepted: what the TMA-only permute
 * refused for TMA's 16-byte rules (plans made, not run). */
Test(gpu_permute, refused_arguments_name_the_rule, .timeout = 60) {
    require_sm90();
    uint8_t *b = NULL;
    CUDA_OK(cudaMalloc((void **)&b, 1 << 16));
    tma_permute_plan p;
    tma_diag diag;
    tma_permute_desc d = {.elem_bytes = 16, .rank = 2, .src = b, .dst = b + 4096, .src_dims = {8, 8}, .perm = {1, 0}};
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_ERR_ARG, "16-byte elements");
    cr_expect(strstr(diag.message, "elem_bytes = 16") != NULL, "%s", diag.message);
    d.elem_bytes = 4, d.src_strides[0] = 40; /* rows of 32 bytes 40 apart: not TMA's, but a tensor */
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_OK, "stride 40: %s", diag.message);
    d.src_strides[0] = 42;
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_ERR_ARG, "stride 42");
    cr_expect(strstr(diag.message, "src_strides[0]") != NULL, "%s", diag.message);
    d.src_strides[0] = 0, d.dst_strides[0] = 36;
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_OK, "dst stride 36: %s", diag.message);
    d.dst_strides[0] = 0, d.src = b + 4; /* 4-aligned: fine */
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_OK, "src at +4: %s", diag.message);
    d.src = b + 2;
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_ERR_ARG, "src at +2");
    cr_expect(strstr(diag.message, "src") != NULL && strstr(diag.message, "4") != NULL, "%s", diag.message);
    d.src = b, d.elem_bytes = 8, d.dst = b + 4096 + 4;
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_ERR_ARG, "8-byte elements, dst at +4");
    cr_expect(strstr(diag.message, "dst") != NULL && strstr(diag.message, "8") != NULL, "%s", diag.message);
    d.dst = b + 4096, d.elem_bytes = 4, d.dst_strides[0] = 16; /* dst rows of 8 fp32 (32 bytes) 16 apart */
    tma_status st = tma_permute_plan_make(&p, &d, &diag);
    cr_expect_neq(st, TMA_OK, "dst rows overlapping");
    cr_expect(strstr(diag.message, "dst") != NULL, "%s", diag.message);
    d.dst_strides[0] = 0, d.src_strides[0] = 1ull << 40;
    cr_expect_eq(tma_permute_plan_make(&p, &d, &diag), TMA_ERR_ARG, "a stride of 2^40 bytes");
    cr_expect(strstr(diag.message, "src_strides[0]") != NULL, "%s", diag.message);
    cr_expect_eq(tma_permute_run(NULL, NULL, &diag), TMA_ERR_NULL_ARG, "NULL plan");
    cr_expect_eq(tma_permute(NULL, NULL, &diag), TMA_ERR_NULL_ARG, "NULL desc");
    CUDA_OK(cudaFree(b));
}

/* Two plans of the same kernel with different shared memory, the larger made first: running it after the smaller
 * one was made must still work (the kernel's shared-memory attribute is the kernel's, not the last plan's; before
 * the fix the launch failed with cudaErrorInvalidValue). */
Test(gpu_permute, plans_of_one_kernel_coexist) {
    require_sm90();
    seed_rng("gpu_permute plans");
    tma_permute_desc big, small;
    memset(&big, 0, sizeof big);
    big.elem_bytes = 4, big.rank = 3; /* a copy: dst keeps src's innermost dimension */
    big.src_dims[0] = 256, big.src_dims[1] = 64, big.src_dims[2] = 64;
    big.perm[0] = 0, big.perm[1] = 2, big.perm[2] = 1;
    small = big;
    small.src_dims[0] = 8, small.src_dims[1] = 4, small.src_dims[2] = 4;
    const pr_layout Lb = pr_layout_of(&big), Ls = pr_layout_of(&small);
    uint8_t *src = malloc(Lb.src_bytes), *got = malloc(Lb.dst_bytes), *want = malloc(Lb.dst_bytes);
    cr_assert(src && got && want);
    rnd_bytes(src, Lb.src_bytes);
    memset(want, PR_POISON, Lb.dst_bytes);
    big.src = src, big.dst = want;
    pr_reference(&big, src, want);
    void *bs, *bd, *ss, *sd;
    CUDA_OK(cudaMalloc(&bs, Lb.src_bytes));
    CUDA_OK(cudaMalloc(&bd, Lb.dst_bytes));
    CUDA_OK(cudaMalloc(&ss, Ls.src_bytes));
    CUDA_OK(cudaMalloc(&sd, Ls.dst_bytes));
    CUDA_OK(cudaMemcpy(bs, src, Lb.src_bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(bd, PR_POISON, Lb.dst_bytes));
    big.src = bs, big.dst = bd, small.src = ss, small.dst = sd;
    tma_permute_plan pb, ps;
    tma_diag diag;
    cr_assert_eq(tma_permute_plan_make(&pb, &big, &diag), TMA_OK, "big: %s", diag.message);
    cr_assert_eq(tma_permute_plan_make(&ps, &small, &diag), TMA_OK, "small: %s", diag.message);
    cr_assert(!pb.transpose && !ps.transpose && pb.smem > ps.smem, "two copy plans, the first larger (%zu, %zu)",
              pb.smem, ps.smem);
    cr_assert_eq(tma_permute_run(&pb, NULL, &diag), TMA_OK, "the earlier, larger plan: %s", diag.message);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, bd, Lb.dst_bytes, cudaMemcpyDeviceToHost));
    char where[200] = "";
    big.src = src, big.dst = got;
    const size_t bad = pr_check(&big, got, want, where, sizeof where);
    cr_assert_eq(bad, 0, "%zu bad bytes, first %s", bad, where);
    CUDA_OK(cudaFree(bs));
    CUDA_OK(cudaFree(bd));
    CUDA_OK(cudaFree(ss));
    CUDA_OK(cudaFree(sd));
    free(src), free(got), free(want);
}
