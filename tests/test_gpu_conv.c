/* The implicit-GEMM convolution (tma_conv2d, tma/kernels.h) on the GPU against the fp64 direct convolution:
 *   fixed   - shapes chosen for each corner (channels and filters under one block, partial channel blocks, K past
 *             a 256-wide tile, K * 2 not a multiple of 16 so the epilogue stores from registers, strides,
 *             dilations, negative padding, 1x1, more tiles than SMs so blocks take several), each with no
 *             clusters, clusters of two sharing the filters, and the epilogue from registers: every element
 *             within 1e-2 |ref| + 1e-2 and finite (y poisoned with NaN first), and the 4 KiB after y unchanged.
 *   packed  - the same on inputs TMA cannot read as they are (C not a multiple of 8: the 3-channel stem, folded or
 *             padded channels), packed before each run.
 *   random  - the same on random shapes (TMA_TEST_SEED replays them; TMA_GPU_CONFIGS sets how many), a third of them
 *             with any C.
 *   one_call - tma_conv2d (plan, run, whole tiles, nothing left behind) on a shape whose plan is stream-K.
 *   refused - plan_make's rules (NULL pointers, a shape tma_conv2d_check refuses) and run's (a plan changed to
 *             something it cannot run, a schedule out of range), each with its message.
 *   resnet_1x1_race - ResNet-50's 1x1 layers where the epilogue race of odd box counts showed (kernels/gemm_device.cuh,
 *             epi_first_buf; docs/lab/conv.md "Wrong outputs on 1x1 layers"), with every tile, schedule, cluster and
 *             epilogue the plan offers, each run TMA_CONV_RACE_RUNS times (100) on integer data, y poisoned before
 *             each run and compared exactly with the GPU reference (tests/gpu_ref.h).
 * Each shape also runs stream-K with a random tile width on a random number of blocks (variant 4: from one block
 * doing everything to more blocks than stages, so ranges of every kind: empty, inside one tile, across several), and
 * the filter-major tile (variant 6: 192 pixels x 128 filters, y stored transposed) with a random schedule and
 * epilogue;
 * and the halo tile (variant 7, TMA_CONV2D_HALO: whole pixel rows a load, three taps a stage) where the shape has one,
 * refused with its rule where it has none;
 * a stream-K plan runs twice: the second result is checked (the owners must have cleared the flags) and must equal
 * the first bit for bit (owners add their helpers' partial tiles in a fixed order); a halo plan too (a race between
 * its loads and the taps' reads past the box would show as a different answer).
 *   halo    - the halo tile on ResNet-50's 3x3 stride-1 layers at small batch and on the corners of its geometry (rows
 *             of 16, 32 and 64 positions, output rows that leave the last tile part empty, padding 0 and 2, channel
 *             blocks past C, filters past 64, packed channels), variant 7, and the plan's own choice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_ref.h"
#include "gpu_common.h"
#include "gpu_ref.h"
#include "tma/kernels.h"

enum { GUARD = 4096 }; /* bytes after y that no variant may write */

/* One shape, one variant (1: the plan as made, 2: clusters of two, 3: no clusters and the epilogue from registers,
 * 2 and 3 whole tiles; 4: stream-K, a random tile width on 1 .. sms blocks; 5: split-K at width 128 or 256 where
 * the grid leaves two blocks a tile, else stream-K; 6: the 192 x 128 filter-major tile, whole tiles, stream-K on
 * 1 .. sms blocks or split-K where it applies, either epilogue): asserts every element and the guard. */
/* Whether the plan should offer the halo tile for sh (kernels/conv_tiles.h, THE HALO TILE): filters 3 wide at stride
 * and dilation 1, output rows of at most 62 pixels, y stored through a map (K a multiple of 8), taps not folded into
 * the channels by the packer (it folds a filter row's taps where S C <= 64). */
static bool halo_expected(const tma_conv2d_shape *sh) {
    int p, q;
    tma_conv2d_out_size(sh, &p, &q);
    return sh->s == 3 && sh->stride_h == 1 && sh->stride_w == 1 && sh->dilation_h == 1 && sh->dilation_w == 1 &&
           q + 2 <= 64 && sh->k % 8 == 0 && 3 * sh->c > 64;
}

static void run_shape(const tma_conv2d_shape *sh, int variant, uint64_t *rng) {
    const size_t nx = conv_x_elems(sh), nw = conv_w_elems(sh), ny = conv_y_elems(sh);
    uint16_t *hx = conv_random_bf16(rng, nx), *hw = conv_random_bf16(rng, nw);
    uint8_t *hy = malloc(ny * 2 + GUARD);
    cr_assert(hx && hw && hy, "out of host memory");
    void *x, *w, *y;
    CUDA_OK(cudaMalloc(&x, nx * 2));
    CUDA_OK(cudaMalloc(&w, nw * 2));
    CUDA_OK(cudaMalloc(&y, ny * 2 + GUARD));
    CUDA_OK(cudaMemcpy(x, hx, nx * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(w, hw, nw * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(y, 0xFF, ny * 2 + GUARD)); /* NaN poison, and the guard's pattern */
    tma_conv2d_plan plan;
    tma_diag d;
    tma_status st = tma_conv2d_plan_make(&plan, sh, x, w, y, &d);
    cr_assert_eq(st, TMA_OK, "plan_make: %s: %s", tma_status_name(st), d.message);
    if (variant == 7) { /* the halo tile where the shape has one, its rule where it has none */
        st = tma_conv2d_plan_tiles(&plan, TMA_CONV2D_HALO, 0, TMA_CONV2D_SCHEDULE_TILES, &d);
        if (!halo_expected(sh)) {
            cr_assert_eq(st, TMA_ERR_ARG, "the halo tile taken on a shape without one (%d x %d filter, stride %d)",
                         sh->r, sh->s, sh->stride_w);
            cr_assert(strstr(d.message, "TMA_CONV2D_HALO") != NULL, "%s", d.message);
            st = tma_conv2d_plan_tiles(&plan, 0, 0, TMA_CONV2D_SCHEDULE_AUTO, &d); /* the plan as before */
        }
        cr_assert_eq(st, TMA_OK, "plan_tiles (halo): %s: %s", tma_status_name(st), d.message);
    } else if (variant >= 2) { /* 2, 3: the default tile, whole tiles; 4: stream-K, a random width and grid; 5:
                                  split-K; 6: filter-major */
        int bm = variant == 6 ? 192 : variant == 2 || variant == 3 ? plan.block_m : 128;
        int bn = variant == 4   ? 64 << (conv_rnd(rng) % 3)
                 : variant == 5 ? 128 << (conv_rnd(rng) % 2)
                 : variant == 6 ? 128
                                : plan.block_n;
        if (variant == 2 && (bm == 192 || bm == TMA_CONV2D_HALO)) /* clusters: 128-pixel tiles only */
            bm = 128, bn = 0;
        if (variant == 3 && bm == TMA_CONV2D_HALO) /* the epilogue from registers: not the halo tile's */
            bm = 128, bn = 0;
        const uint64_t pick = variant == 6 ? conv_rnd(rng) % 3 : 0; /* 6: tiles, stream-K or split-K */
        tma_conv2d_schedule sched =
            variant == 4 || pick == 1 ? TMA_CONV2D_SCHEDULE_STREAM_K : TMA_CONV2D_SCHEDULE_TILES;
        if (sched == TMA_CONV2D_SCHEDULE_STREAM_K)
            plan.grid_blocks = conv_rnd(rng) % 2 ? plan.sms : 1 + (int)(conv_rnd(rng) % (uint64_t)plan.sms);
        if (variant == 5 || pick == 2) {
            const long tiles = ((long)sh->n * plan.p * plan.q + bm - 1) / bm * ((sh->k + bn - 1) / bn);
            sched = 2 * tiles <= plan.sms && plan.stages >= 2 ? TMA_CONV2D_SCHEDULE_SPLIT_K
                                                              : TMA_CONV2D_SCHEDULE_STREAM_K;
            if (sched == TMA_CONV2D_SCHEDULE_SPLIT_K && conv_rnd(rng) % 2) /* fewer blocks, at least two a tile */
                plan.grid_blocks = (int)(2 * tiles + (long)(conv_rnd(rng) % (uint64_t)(plan.sms - 2 * tiles + 1)));
        }
        st = tma_conv2d_plan_tiles(&plan, bm, bn, sched, &d);
        cr_assert_eq(st, TMA_OK, "plan_tiles: %s: %s", tma_status_name(st), d.message);
    }
    if (variant == 2) { /* clusters through the tune function (the launch derived once) */
        st = tma_conv2d_plan_tune(&plan, 2, plan.epilogue, plan.group_m, plan.grid_blocks, &d);
        cr_assert_eq(st, TMA_OK, "tune: %s: %s", tma_status_name(st), d.message);
    } else { /* by hand (run checks the fields and derives the launch) */
        plan.cluster = 1;
        if (variant == 3 || (variant == 6 && conv_rnd(rng) % 2))
            plan.epilogue = TMA_GEMM_EPILOGUE_DIRECT;
    }
    st = tma_conv2d_run(&plan, NULL, &d);
    cr_assert_eq(st, TMA_OK, "run: %s: %s", tma_status_name(st), d.message);
    uint8_t *first_run = NULL;
    if (plan.schedule != TMA_CONV2D_SCHEDULE_TILES || plan.block_m == TMA_CONV2D_HALO) {
        /* again: the first run must have cleared its flags; the halo tile's result must not depend on timing */
        first_run = malloc(ny * 2);
        cr_assert(first_run, "out of host memory");
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(first_run, y, ny * 2, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemset(y, 0xFF, ny * 2));
        st = tma_conv2d_run(&plan, NULL, &d);
        cr_assert_eq(st, TMA_OK, "second run: %s: %s", tma_status_name(st), d.message);
    }
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(hy, y, ny * 2 + GUARD, cudaMemcpyDeviceToHost));
    if (first_run) { /* partial tiles are added in a fixed order: the same bits whatever the timing */
        cr_assert(memcmp(first_run, hy, ny * 2) == 0, "stream-K / split-K / halo: the second run differs from the first");
        free(first_run);
    }
    size_t first, guard_changed = 0;
    for (size_t i = ny * 2; i < ny * 2 + GUARD; i++)
        guard_changed += hy[i] != 0xFFu;
    const size_t bad = conv_count_bad(sh, hx, hw, (const uint16_t *)hy, &first);
    cr_log_info("N %d H %d W %d C %d K %d R %d S %d stride %d,%d pad %d,%d dil %d,%d, tile %dx%d, %s on %d blocks, "
                "variant %d (%s epilogue): %zu bad of %zu", sh->n, sh->h, sh->w, sh->c, sh->k, sh->r, sh->s,
                sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w, sh->dilation_h, sh->dilation_w, plan.block_m,
                plan.block_n,
                plan.schedule == TMA_CONV2D_SCHEDULE_STREAM_K  ? "stream-K"
                : plan.schedule == TMA_CONV2D_SCHEDULE_SPLIT_K ? "split-K"
                                                               : "tiles",
                plan.grid_blocks > 0 ? plan.grid_blocks : plan.sms, variant,
                plan.epilogue == TMA_GEMM_EPILOGUE_TMA_STORE ? "TMA-store" : "direct", bad, ny);
    cr_assert(bad == 0 && guard_changed == 0,
              "N %d H %d W %d C %d K %d R %d S %d stride %d,%d pad %d,%d dil %d,%d, variant %d: %zu of %zu elements "
              "wrong (first %zu), %zu guard bytes after y written", sh->n, sh->h, sh->w, sh->c, sh->k, sh->r, sh->s,
              sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w, sh->dilation_h, sh->dilation_w, variant, bad, ny,
              first, guard_changed);
    cr_assert_eq(tma_conv2d_plan_free(&plan, &d), TMA_OK, "%s", d.message);
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(w));
    CUDA_OK(cudaFree(y));
    free(hx), free(hw), free(hy);
}

/* The first TMA_GPU_CONFIGS of n shapes, each through the given variants of run_shape in turn. */
static void run_shapes(const tma_conv2d_shape *shapes, size_t n, const int *variants, int nv, uint64_t *rng) {
    const size_t count = (size_t)config_count((int)n);
    for (size_t i = 0; i < n && i < count; i++)
        for (int v = 0; v < nv; v++)
            run_shape(&shapes[i], variants[v], rng);
}

Test(gpu_conv, fixed) {
    require_sm90();
    uint64_t rng = seed_rng("gpu_conv/fixed");
    /* The first four are what the sanitizer runs see (TMA_GPU_CONFIGS=4). */
    const tma_conv2d_shape shapes[] = {
        {2, 7, 9, 24, 40, 3, 3, 1, 1, 1, 1, 1, 1},      {8, 48, 48, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1},
        {2, 9, 11, 16, 13, 3, 3, 1, 1, 1, 1, 1, 1},     {1, 12, 12, 200, 300, 3, 3, 3, 3, 2, 2, 2, 2},
        {1, 10, 13, 72, 136, 5, 3, 2, 1, 2, 1, 1, 2},   {3, 5, 6, 8, 8, 1, 1, 1, 1, 0, 0, 1, 1},
        {1, 6, 5, 32, 96, 3, 3, 1, 1, -1, 2, 1, 1},     {1, 1, 1, 8, 1, 1, 1, 1, 1, 0, 0, 1, 1},
        {2, 16, 3, 64, 256, 7, 1, 1, 1, 3, 0, 1, 1},    {4, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1, 1, 1},
        {2, 20, 20, 128, 520, 3, 3, 2, 2, 1, 1, 1, 1},  {1, 30, 30, 8, 64, 3, 3, 8, 8, 1, 1, 1, 1},
    };
    static const int every[] = {1, 2, 3, 4, 5, 6, 7};
    run_shapes(shapes, sizeof shapes / sizeof shapes[0], every, 7, &rng);
}

Test(gpu_conv, packed) {
    require_sm90();
    uint64_t rng = seed_rng("gpu_conv/packed");
    /* inputs packed first (kernels/conv_tiles.h, PACKED INPUTS): the 3-channel stem, 1, 5 and 13 channels with
     * the taps of a filter row side by side, and 100 channels padded to 104 (x and w at 2-byte offsets: the fuzzer) */
    const tma_conv2d_shape shapes[] = {
        {2, 64, 64, 3, 64, 7, 7, 2, 2, 3, 3, 1, 1},     {1, 9, 11, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1},
        {2, 10, 13, 5, 17, 3, 5, 2, 3, -1, 2, 2, 1},    {1, 8, 9, 13, 70, 3, 3, 1, 1, 1, 1, 1, 2},
        {1, 7, 6, 100, 33, 3, 3, 1, 2, 1, 0, 1, 1},
    };
    static const int every[] = {1, 2, 3, 4, 5, 6, 7};
    run_shapes(shapes, sizeof shapes / sizeof shapes[0], every, 7, &rng);
}

Test(gpu_conv, random) {
    require_sm90();
    uint64_t rng = seed_rng("gpu_conv/random");
    const int count = config_count(40);
    for (int i = 0; i < count; i++) {
        const tma_conv2d_shape sh = conv_random_shape(&rng);
        run_shape(&sh, 1 + (int)(conv_rnd(&rng) % 7), &rng);
    }
}

Test(gpu_conv, halo) {
    require_sm90();
    uint64_t rng = seed_rng("gpu_conv/halo");
    /* The corners first (the sanitizers' four): Q = 62 (the widest row), P = 9 (the last tile's second row past the
     * image), padding 0 and 2, C = 72 and 136 (channel blocks past C), K = 104 and 200 (filters past a 64-wide tile),
     * C = 23 (padded to 24 by the packer), Q = 1; then ResNet-50's 3x3 stride-1 layers at batch 1-2 (rows of 64, 32,
     * 16 and 16 positions) */
    const tma_conv2d_shape shapes[] = {
        {1, 9, 62, 72, 104, 3, 3, 1, 1, 1, 1, 1, 1},   {2, 9, 33, 136, 200, 3, 3, 1, 1, 0, 2, 1, 1},
        {1, 11, 20, 23, 16, 5, 3, 1, 1, 2, 1, 1, 1},   {4, 5, 1, 64, 8, 2, 3, 1, 1, 0, 1, 1, 1},
        {2, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1},   {1, 28, 28, 128, 128, 3, 3, 1, 1, 1, 1, 1, 1},
        {2, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1, 1, 1}, {3, 7, 7, 512, 64, 3, 3, 1, 1, 1, 1, 1, 1},
    };
    static const int halo_then_plan[] = {7, 1};
    run_shapes(shapes, sizeof shapes / sizeof shapes[0], halo_then_plan, 2, &rng);
}

/* The one-call form on a shape whose plan shares its tiles out (8 x 7 x 7 x 512 -> 512: 4 pixel tiles, stream-K or
 * split-K): it runs whole tiles, with no workspace to outlive the call, and gives the same result. */
Test(gpu_conv, one_call) {
    require_sm90();
    uint64_t rng = seed_rng("gpu_conv/one_call");
    const tma_conv2d_shape sh = {8, 7, 7, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1};
    const size_t nx = conv_x_elems(&sh), nw = conv_w_elems(&sh), ny = conv_y_elems(&sh);
    uint16_t *hx = conv_random_bf16(&rng, nx), *hw = conv_random_bf16(&rng, nw), *hy = malloc(ny * 2);
    cr_assert(hx && hw && hy, "out of host memory");
    void *x, *w, *y;
    CUDA_OK(cudaMalloc(&x, nx * 2));
    CUDA_OK(cudaMalloc(&w, nw * 2));
    CUDA_OK(cudaMalloc(&y, ny * 2));
    CUDA_OK(cudaMemcpy(x, hx, nx * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(w, hw, nw * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(y, 0xFF, ny * 2));
    tma_conv2d_plan plan;
    tma_diag d;
    cr_assert_eq(tma_conv2d_plan_make(&plan, &sh, x, w, y, &d), TMA_OK, "%s", d.message);
    cr_expect(plan.schedule != TMA_CONV2D_SCHEDULE_TILES, "the plan shares tiles out (else the test proves nothing new)");
    cr_assert_eq(tma_conv2d_plan_free(&plan, &d), TMA_OK, "%s", d.message);
    cr_assert_eq(tma_conv2d(&sh, x, w, y, NULL, &d), TMA_OK, "%s", d.message);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(hy, y, ny * 2, cudaMemcpyDeviceToHost));
    size_t first;
    const size_t bad = conv_count_bad(&sh, hx, hw, hy, &first);
    cr_assert_eq(bad, 0, "%zu of %zu elements wrong, the first at %zu", bad, ny, first);
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(w));
    CUDA_OK(cudaFree(y));
    free(hx), free(hw), free(hy);
}

/* A run of a plan whose fields were changed: refused with TMA_ERR_ARG and a message that names the field. */
static void expect_run_refused(const tma_conv2d_plan *changed, const char *needle, const char *what) {
    tma_diag d;
    cr_expect_eq(tma_conv2d_run(changed, NULL, &d), TMA_ERR_ARG, "%s", what);
    cr_expect(needle == NULL || strstr(d.message, needle) != NULL, "%s: %s", what, d.message);
}

Test(gpu_conv, refused) {
    require_sm90();
    void *p;
    CUDA_OK(cudaMalloc(&p, 1 << 20));
    const tma_conv2d_shape ok = {1, 8, 8, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1};
    tma_conv2d_plan plan;
    tma_diag d;
    cr_expect_eq(tma_conv2d_plan_make(&plan, &ok, NULL, p, p, &d), TMA_ERR_NULL_ARG, "x NULL");
    cr_expect(strstr(d.message, "x = NULL") != NULL, "%s", d.message);
    tma_conv2d_shape bad = ok;
    bad.c = 20; /* packed first: taken, with the packed inputs in the plan until it is freed */
    cr_assert_eq(tma_conv2d_plan_make(&plan, &bad, p, p, p, &d), TMA_OK, "C = 20: %s", d.message);
    cr_expect(plan.packed != NULL && plan.packed_bytes > 0, "C = 20: packed inputs");
    cr_expect_eq(tma_conv2d_plan_free(&plan, &d), TMA_OK, "%s", d.message);
    cr_expect(plan.packed == NULL, "freed");
    cr_expect_eq(tma_conv2d_plan_make(&plan, &ok, (const uint8_t *)p + 1, p, p, &d), TMA_ERR_ARG, "x odd");
    cr_expect(strstr(d.message, "x = ") != NULL && strstr(d.message, "2-byte") != NULL, "%s", d.message);
    cr_assert_eq(tma_conv2d_plan_make(&plan, &ok, p, p, p, &d), TMA_OK, "%s", d.message);
    tma_conv2d_plan changed = plan;
    changed.cluster = 4;
    expect_run_refused(&changed, "plan.cluster = 4", "cluster 4");
    changed = plan;
    changed.epilogue = (tma_gemm_epilogue)7;
    expect_run_refused(&changed, NULL, "epilogue 7");
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, 0, 0, (tma_conv2d_schedule)-1, &d), TMA_ERR_ARG, "schedule -1");
    cr_expect(strstr(d.message, "schedule = -1") != NULL, "%s", d.message);
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, 0, 96, TMA_CONV2D_SCHEDULE_TILES, &d), TMA_ERR_ARG, "96 wide tiles");
    cr_expect(strstr(d.message, "block_n = 96") != NULL, "%s", d.message);
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, 96, 0, TMA_CONV2D_SCHEDULE_TILES, &d), TMA_ERR_ARG, "96-pixel tiles");
    cr_expect(strstr(d.message, "block_m = 96") != NULL, "%s", d.message);
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, 192, 256, TMA_CONV2D_SCHEDULE_TILES, &d), TMA_ERR_ARG, "192 x 256");
    cr_expect(strstr(d.message, "block_n = 256 with block_m = 192") != NULL, "%s", d.message);
    cr_assert_eq(tma_conv2d_plan_tiles(&plan, 192, 0, TMA_CONV2D_SCHEDULE_TILES, &d), TMA_OK, "%s", d.message);
    cr_expect(plan.block_m == 192 && plan.block_n == 128, "192 pixels: 128 filters (%d x %d)", plan.block_m,
              plan.block_n);
    changed = plan;
    changed.cluster = 2;
    expect_run_refused(&changed, "filter-major tiles run without clusters", "filter-major with clusters");
    /* tune refuses what run refuses, with the same words, and leaves the plan as it was */
    changed = plan;
    cr_expect_eq(tma_conv2d_plan_tune(&changed, 2, changed.epilogue, 0, 0, &d), TMA_ERR_ARG, "tune: clusters");
    cr_expect(strstr(d.message, "filter-major tiles run without clusters") != NULL, "%s", d.message);
    cr_expect_eq(changed.cluster, plan.cluster, "a refused tune changes nothing");
    cr_expect_eq(tma_conv2d_plan_tune(NULL, 1, TMA_GEMM_EPILOGUE_DIRECT, 0, 0, &d), TMA_ERR_NULL_ARG, "NULL plan");
    changed = plan;
    changed.block_m = 128; /* the x map still gathers 192 pixels */
    expect_run_refused(&changed, "tile was changed without tma_conv2d_plan_tiles", "block_m changed by hand");
    /* the halo tile: 64 filters, whole tiles, no clusters, the TMA store; its maps are its own */
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, TMA_CONV2D_HALO, 128, TMA_CONV2D_SCHEDULE_TILES, &d), TMA_ERR_ARG,
                 "halo x 128");
    cr_expect(strstr(d.message, "block_n = 128 with block_m = TMA_CONV2D_HALO") != NULL, "%s", d.message);
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, TMA_CONV2D_HALO, 0, TMA_CONV2D_SCHEDULE_STREAM_K, &d), TMA_ERR_ARG,
                 "halo, stream-K");
    cr_expect(strstr(d.message, "on the halo tile") != NULL && strstr(d.message, "schedule") != NULL, "%s",
              d.message);
    cr_assert_eq(tma_conv2d_plan_tiles(&plan, TMA_CONV2D_HALO, 0, TMA_CONV2D_SCHEDULE_AUTO, &d), TMA_OK, "%s",
                 d.message);
    cr_expect(plan.block_n == 64 && plan.schedule == TMA_CONV2D_SCHEDULE_TILES && plan.stages == 3,
              "halo: 64 filters, whole tiles, 3 stages of 3 taps (%d, %d, %d)", plan.block_n, (int)plan.schedule,
              plan.stages);
    changed = plan;
    changed.cluster = 2;
    expect_run_refused(&changed, "plan.cluster = 2 on the halo tile", "halo with clusters");
    changed = plan;
    changed.epilogue = TMA_GEMM_EPILOGUE_DIRECT;
    expect_run_refused(&changed, "plan.epilogue = 1 on the halo tile", "halo, epilogue from registers");
    changed = plan;
    changed.block_m = 128; /* the x map is the halo's tiled one */
    expect_run_refused(&changed, "tile was changed without tma_conv2d_plan_tiles", "halo's block_m changed by hand");
    cr_expect_eq(tma_conv2d_plan_tune(&plan, 2, plan.epilogue, 0, 0, &d), TMA_ERR_ARG, "tune: halo with clusters");
    cr_expect(strstr(d.message, "on the halo tile") != NULL, "%s", d.message);
    plan.grid_blocks = 3;
    cr_assert_eq(tma_conv2d_plan_tiles(&plan, 128, 128, TMA_CONV2D_SCHEDULE_STREAM_K, &d), TMA_OK, "%s", d.message);
    cr_expect_eq(plan.workspace_blocks, 3, "slots for the grid of the time");
    changed = plan;
    changed.cluster = 2;
    expect_run_refused(&changed, "plan.cluster = 2 with STREAM_K", "stream-K with clusters");
    changed = plan;
    changed.workspace = NULL;
    expect_run_refused(&changed, "without its workspace", "stream-K without its workspace");
    changed = plan;
    changed.grid_blocks = 4;
    expect_run_refused(&changed, "plan.grid_blocks = 4 with STREAM_K", "more blocks than the workspace has slots");
    changed.grid_blocks = plan.sms + 1;
    expect_run_refused(&changed, NULL, "more blocks than multiprocessors");
    changed = plan;
    changed.schedule = (tma_conv2d_schedule)5;
    expect_run_refused(&changed, "plan.schedule = 5", "schedule 5");
    /* split-K: 1 x 8 x 8 -> 64 is one tile; on 3 blocks it is cut into 3 parts (a cluster of 3), on 1 block it
     * cannot be split */
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, 128, 64, TMA_CONV2D_SCHEDULE_SPLIT_K, &d), TMA_ERR_ARG, "split-K at 64");
    cr_expect(strstr(d.message, "block_n = 64 with SPLIT_K") != NULL, "%s", d.message);
    cr_assert_eq(tma_conv2d_plan_tiles(&plan, 128, 128, TMA_CONV2D_SCHEDULE_SPLIT_K, &d), TMA_OK, "%s", d.message);
    cr_expect(plan.workspace == NULL && plan.workspace_blocks == 0, "split-K needs no workspace");
    cr_expect_eq(plan.split_parts, 3, "three parts");
    changed = plan;
    changed.cluster = 2;
    expect_run_refused(&changed, "plan.cluster = 2 with SPLIT_K", "split-K with multicast pairs");
    changed = plan;
    changed.split_parts = 1;
    expect_run_refused(&changed, "plan.split_parts = 1 with SPLIT_K", "split-K in one part");
    plan.grid_blocks = 1;
    cr_expect_eq(tma_conv2d_plan_tiles(&plan, 128, 128, TMA_CONV2D_SCHEDULE_SPLIT_K, &d), TMA_ERR_ARG, "one block");
    cr_expect(strstr(d.message, "fewer than two blocks per tile") != NULL, "%s", d.message);
    cr_assert_eq(tma_conv2d_plan_free(&plan, &d), TMA_OK, "%s", d.message);
    CUDA_OK(cudaFree(p));
}

/* ---- The epilogue race of odd box counts (fixed in epi_first_buf, gemm_device.cuh) ----
 * Before the fix, these 1x1 layers gave millions of wrong outputs a run on 128 x 64 tiles, and up to hundreds of
 * thousands on the filter-major 192 x 128 ones (as seen from PyTorch on an H100, issue 29); 0 on 128 x 128 and
 * 128 x 256. Integer data: the exact result, whatever the order of summation, so every element must match. */

/* One plan option of a layer: tile, schedule, cluster, epilogue. */
typedef struct race_option {
    int bm, bn;
    tma_conv2d_schedule sched;
    int cluster;
    tma_gemm_epilogue epilogue;
} race_option;

/* Runs `runs` times and counts the runs with a wrong element (and their wrong elements). */
static void race_runs(const tma_conv2d_shape *sh, tma_conv2d_plan *plan, uint8_t *y, size_t ny, const float *ref,
                      int runs, unsigned long long *bad_runs, unsigned long long *bad_elems) {
    tma_diag d;
    for (int r = 0; r < runs; r++) {
        CUDA_OK(cudaMemset(y, 0xFF, ny * 2 + GUARD)); /* NaN, and the guard's pattern */
        cr_assert_eq(tma_conv2d_run(plan, NULL, &d), TMA_OK, "run: %s", d.message);
        CUDA_OK(cudaDeviceSynchronize());
        ref_diff diff;
        unsigned long long guard = 0;
        CUDA_OK(ref_compare(y, 0, ref, NULL, ny, 0.f, 0.f, &diff));
        CUDA_OK(ref_count_not(y + ny * 2, GUARD, 0xFF, &guard));
        cr_assert_eq(guard, 0, "N %d %dx%d C %d -> K %d: %llu bytes after y written", sh->n, sh->h, sh->w, sh->c,
                     sh->k, guard);
        *bad_runs += diff.bad != 0;
        *bad_elems += diff.bad;
    }
}

Test(gpu_conv, resnet_1x1_race, .timeout = 600) {
    require_sm90();
    const char *env = getenv("TMA_CONV_RACE_RUNS");
    const int runs = env && atoi(env) > 0 ? atoi(env) : 100;
    /* the layers: N, H = W, C, K (1x1, stride 1, no padding) */
    static const int layers[][4] = {{128, 56, 128, 64}, {128, 56, 192, 64}, {128, 56, 256, 64}, {32, 56, 256, 64},
                                    {32, 56, 64, 64},   {128, 56, 256, 128}, {8, 56, 256, 64},  {128, 28, 512, 128}};
    static const int tiles[][2] = {{128, 64}, {128, 128}, {128, 256}, {192, 128}};
    unsigned long long options = 0, total_runs = 0, total_bad_runs = 0;
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
        const tma_conv2d_shape sh = {layers[l][0], layers[l][1], layers[l][1], layers[l][2], layers[l][3], 1, 1,
                                     1, 1, 0, 0, 1, 1};
        const size_t nx = conv_x_elems(&sh), nw = conv_w_elems(&sh), ny = conv_y_elems(&sh);
        void *x, *w;
        uint8_t *y;
        float *ref;
        CUDA_OK(cudaMalloc(&x, nx * 2));
        CUDA_OK(cudaMalloc(&w, nw * 2));
        CUDA_OK(cudaMalloc((void **)&y, ny * 2 + GUARD));
        CUDA_OK(cudaMalloc((void **)&ref, ny * 4));
        CUDA_OK(ref_fill_bf16(x, nx, 0x1a2b3c4du + l, REF_DATA_INTS));
        CUDA_OK(ref_fill_bf16(w, nw, 0x5e6f7081u + l, REF_DATA_INTS));
        CUDA_OK(ref_conv2d(&sh, x, w, ref, NULL));
        tma_conv2d_plan plan;
        tma_diag d;
        cr_assert_eq(tma_conv2d_plan_make(&plan, &sh, x, w, y, &d), TMA_OK, "plan_make: %s", d.message);
        unsigned long long bad_runs = 0, bad_elems = 0, layer_options = 0;
        /* the plan's own choice first, then every tile x schedule x cluster x epilogue it accepts */
        race_runs(&sh, &plan, y, ny, ref, runs, &bad_runs, &bad_elems);
        layer_options++;
        for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
            const long units = ((long)sh.n * sh.h * sh.w + tiles[t][0] - 1) / tiles[t][0] *
                               ((sh.k + tiles[t][1] - 1) / tiles[t][1]);
            for (int sc = 0; sc < 3; sc++) {
                const tma_conv2d_schedule sched = sc == 0   ? TMA_CONV2D_SCHEDULE_TILES
                                                  : sc == 1 ? TMA_CONV2D_SCHEDULE_STREAM_K
                                                            : TMA_CONV2D_SCHEDULE_SPLIT_K;
                /* split-K where documented: two blocks a tile, two stages, 128 or 256 wide */
                if (sched == TMA_CONV2D_SCHEDULE_SPLIT_K && (tiles[t][1] < 128 || 2 * units > plan.sms ||
                                                             plan.stages < 2))
                    continue;
                cr_assert_eq(tma_conv2d_plan_tiles(&plan, tiles[t][0], tiles[t][1], sched, &d), TMA_OK,
                             "plan_tiles %d x %d, schedule %d: %s", tiles[t][0], tiles[t][1], (int)sched, d.message);
                const int clusters = sched == TMA_CONV2D_SCHEDULE_TILES && tiles[t][0] == 128 ? 2 : 1;
                for (int cl = 1; cl <= clusters; cl++)
                    for (int e = 0; e < 2; e++) {
                        tma_conv2d_plan option = plan;
                        option.cluster = cl;
                        option.epilogue = e ? TMA_GEMM_EPILOGUE_DIRECT : TMA_GEMM_EPILOGUE_TMA_STORE;
                        unsigned long long before = bad_runs;
                        race_runs(&sh, &option, y, ny, ref, runs, &bad_runs, &bad_elems);
                        layer_options++;
                        if (bad_runs != before)
                            cr_log_error("N %d %dx%d C %d -> K %d, tile %d x %d, %s, cluster %d, %s epilogue: %llu of "
                                         "%d runs wrong", sh.n, sh.h, sh.w, sh.c, sh.k, tiles[t][0], tiles[t][1],
                                         sched == TMA_CONV2D_SCHEDULE_TILES      ? "tiles"
                                         : sched == TMA_CONV2D_SCHEDULE_STREAM_K ? "stream-K"
                                                                                 : "split-K",
                                         cl, e ? "direct" : "TMA-store", bad_runs - before, runs);
                    }
            }
        }
        printf("gpu_conv resnet_1x1_race: N %d %dx%d C %d -> K %d: %llu plan options x %d runs, %llu runs wrong (%llu "
               "elements)\n", sh.n, sh.h, sh.w, sh.c, sh.k, layer_options, runs, bad_runs, bad_elems);
        options += layer_options;
        total_runs += layer_options * (unsigned long long)runs;
        total_bad_runs += bad_runs;
        cr_assert_eq(tma_conv2d_plan_free(&plan, &d), TMA_OK, "%s", d.message);
        CUDA_OK(cudaFree(x));
        CUDA_OK(cudaFree(w));
        CUDA_OK(cudaFree(y));
        CUDA_OK(cudaFree(ref));
    }
    printf("gpu_conv resnet_1x1_race: %llu layer x option pairs, %llu runs, %llu wrong\n", options, total_runs,
           total_bad_runs);
    fflush(stdout);
    cr_assert_eq(total_bad_runs, 0, "%llu of %llu runs gave wrong outputs (see the log)", total_bad_runs, total_runs);
}
