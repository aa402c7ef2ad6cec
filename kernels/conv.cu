/* tma::kernels convolution (tma/kernels.h): y = conv2d(x, w), bf16 NHWC forward, as an implicit GEMM on the GEMM's
 * pipeline (gemm_device.cuh: gm_pipeline_kernel). Only the loads differ: ConvOps gathers each stage's A operand (128
 * output pixels x 64 channels of one filter tap) with one im2col TMA load, and its B operand (block_n filters x the
 * same 64 channels of the same tap) with one tiled load of w viewed as {C, S, R, K}; where they go is
 * conv_tiles.h, the maps are made in conv_plan.c. */
#include <string.h>

#include "conv_plan.h"
#include "gemm_device.cuh"
#include "kernel_diag.h"

/* The convolution's operands for gm_pipeline_kernel: tiles of 128 output pixels x TBN output channels. */
template <uint32_t TBN>
struct ConvOps {
    static constexpr uint32_t BN = TBN;
    tma_tensor x, w; /* w: the whole filter tile (no clusters) or the half tile (clusters of two) */
    conv_geom g;
    uint32_t k;      /* output channels */
    __device__ uint32_t rows() const { return g.m; }
    __device__ uint32_t cols() const { return k; }
    __device__ uint32_t k_blocks() const { return g.stages; }
    __device__ const tma_box_info &a_box() const { return x.box; }
    __device__ const tma_box_info &b_box() const { return w.box; }
    __device__ uint32_t tx_bytes(int cl) const { return x.box.tx_bytes + w.box.tx_bytes * (uint32_t)cl; }
    __device__ void prefetch() const {
        tma_prefetch_desc(&x);
        tma_prefetch_desc(&w);
    }
    template <int CL>
    __device__ void load(uint8_t *sa, uint8_t *sb, uint64_t *bar, uint32_t kb, uint32_t tm, uint32_t tn,
                         uint32_t rank) const {
        /* A cluster's second tile row may lie past the last pixel: load the last tile again (nothing is stored). */
        const uint32_t m0 = tm * BM < g.m ? tm * BM : (g.m - 1u) / BM * BM;
        int32_t a[5];
        conv_tile_start(&g, m0, a);
        uint32_t c0, r, s;
        conv_stage(&g, kb, &c0, &r, &s);
        uint16_t off[3];
        conv_tap_offsets(&g, r, s, off);
        a[0] = (int32_t)c0;
        tma_load_im2col<4>(sa, &x, bar, {a[0], a[1], a[2], a[3], 0}, {off[0], off[1], off[2]});
        const int32_t k0 = (int32_t)(tn * TBN + (CL == 2 ? rank * (TBN / 2u) : 0u));
        if (CL == 2)
            tma_load_multicast<4>(sb + rank * (GmShape<TBN>::B_BYTES / 2u), &w, bar,
                                  {(int32_t)c0, (int32_t)s, (int32_t)r, k0, 0}, (uint16_t)0x3);
        else
            tma_load<4>(sb, &w, bar, {(int32_t)c0, (int32_t)s, (int32_t)r, k0, 0});
    }
};

/* Every instance: tile width x cluster x epilogue (y is bf16) x schedule; stream-K without clusters; split-K at
 * widths 256 and 128 only, and with one epilogue (its blocks store their slices from registers). */
#define T_ GM_SCHED_TILES
#define SK_ GM_SCHED_STREAM_K
#define SPLIT_ GM_SCHED_SPLIT_K
#define CONV_INSTANCES(X)                                                                                     \
    X(256, 1, true, T_) X(256, 1, false, T_) X(256, 2, true, T_) X(256, 2, false, T_)                         \
    X(256, 1, true, SK_) X(256, 1, false, SK_) X(256, 1, false, SPLIT_)                                       \
    X(128, 1, true, T_) X(128, 1, false, T_) X(128, 2, true, T_) X(128, 2, false, T_)                         \
    X(128, 1, true, SK_) X(128, 1, false, SK_) X(128, 1, false, SPLIT_)                                       \
    X(64, 1, true, T_) X(64, 1, false, T_) X(64, 2, true, T_) X(64, 2, false, T_)                             \
    X(64, 1, true, SK_) X(64, 1, false, SK_)

template <uint32_t TBN, int CL, bool EPI_TMA, int SCHED>
static constexpr void (*conv_kernel)(ConvOps<TBN>, tma_tensor, __nv_bfloat16 *, uint32_t, uint32_t, gm_sched,
                                     GmPartials) =
    gm_pipeline_kernel<ConvOps<TBN>, CL, EPI_TMA, __nv_bfloat16, SCHED>;

static size_t conv_smem(int block_n) {
    return block_n == 256 ? GmShape<256>::SMEM_BYTES : block_n == 128 ? GmShape<128>::SMEM_BYTES
                                                                      : GmShape<64>::SMEM_BYTES;
}

/* Allow every instance of tile width bn its dynamic shared memory. */
static cudaError_t conv_set_smem(int bn) {
    cudaError_t e = cudaSuccess;
#define CONV_SET_SMEM_(BN_, CL, EPI, SCHED)                                                                   \
    if (e == cudaSuccess && BN_ == bn)                                                                        \
        e = cudaFuncSetAttribute(conv_kernel<BN_, CL, EPI, SCHED>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                 (int)GmShape<BN_>::SMEM_BYTES);
    CONV_INSTANCES(CONV_SET_SMEM_)
#undef CONV_SET_SMEM_
    return e;
}

static long conv_tiles_m(const tma_conv2d_plan *p) {
    return ((long)p->shape.n * p->p * p->q + (long)BM - 1) / (long)BM;
}
static long conv_tiles_n(const tma_conv2d_plan *p) { return (p->shape.k + (long)p->block_n - 1) / p->block_n; }
/* The tiles of the plan's output at width bn (the plan's own width or a candidate). */
static long conv_units(const tma_conv2d_plan *p, int bn) { return conv_tiles_m(p) * ((p->shape.k + bn - 1) / bn); }

/* The blocks a plan's grid may have: grid_blocks where set (below the multiprocessors), else one per multiprocessor. */
static long conv_blocks(const tma_conv2d_plan *p) {
    return p->grid_blocks > 0 && p->grid_blocks < p->sms ? p->grid_blocks : p->sms;
}

/* Split-K at width bn: the parts each tile is cut into (every block of the grid resident, at most GM_SPLIT_MAX, at
 * most a tile's stages); below 2, split-K does not apply. Split-K runs at widths 256 and 128 (the instances). */
static long conv_split_parts(const tma_conv2d_plan *p, int bn) {
    const long units = conv_units(p, bn);
    long parts = conv_blocks(p) / units;
    if (parts > (long)GM_SPLIT_MAX)
        parts = GM_SPLIT_MAX;
    if (parts > p->stages)
        parts = p->stages;
    return bn >= 128 && gm_split_fits((uint32_t)units, (uint32_t)p->stages, (uint32_t)parts) ? parts : 0;
}

/* Estimated microseconds of a plan's run at width bn and a schedule, on `workers` blocks: a model fitted to the
 * sweeps of docs/CONV.md (H200, ResNet-50's 3x3 layers at batch 32 and 128, every width x schedule timed in
 * interleaved rounds). A stage of a tile takes 0.45 / 0.55 / 0.69 us at width 64 / 128 / 256 (one tile per SM); a
 * stream-K or split-K stage 1.2 times that (every SM loading at once); a stream-K owner takes 3.5 us per helper's
 * partial tile it reads back (a tile's helpers: about workers / the tiles shared out), and split-K's fixup (every
 * block stores its partial tile, waits for its tile's other parts, reads and adds its slice of them)
 * CONV_SPLIT_FIXUP_US in all. The fixed costs (launch, first loads, last epilogue) are left out. On the sweep's ten
 * layers it picks the fastest plan, or one within 1 us of it. */
#define CONV_SPLIT_STAGE 1.2
/* Split-K measured against the others (H200, 2026-11-23, TMA_CONV_SWEEP, seed 1795387602): b32 7x7x512 at 256 wide
 * in 5 parts of 15 stages 28.7 us, stream-K at 128 wide 30.6; b32 14x14x256 at 256 wide in 2 parts of 18 stages
 * 30.1 us, whole 128-wide tiles 27.1. Any fixup between 4.9 and 15.2 us orders both; ncu on the first (24.9 us)
 * leaves ~10 us beside its 15 stages and the fixed costs whole tiles have too. */
#define CONV_SPLIT_FIXUP_US 10.0
static double conv_estimate_us(const tma_conv2d_plan *p, int bn, tma_conv2d_schedule schedule, long workers) {
    const double stage_us = bn == 64 ? 0.45 : bn == 128 ? 0.55 : 0.69;
    const long units = conv_units(p, bn), nk = p->stages;
    if (schedule == TMA_CONV2D_SCHEDULE_TILES)
        return (double)((units + workers - 1) / workers) * (double)nk * stage_us;
    if (schedule == TMA_CONV2D_SCHEDULE_SPLIT_K) {
        const long parts = conv_split_parts(p, bn);
        return (double)((nk + parts - 1) / parts) * stage_us * CONV_SPLIT_STAGE + CONV_SPLIT_FIXUP_US;
    }
    const long dp = (long)gm_sk_dp_units((uint32_t)units, (uint32_t)workers), shared = units - dp;
    const double whole = (double)(dp / workers) * (double)nk * stage_us;
    if (shared == 0)
        return whole;
    return whole + (double)shared * (double)nk / (double)workers * stage_us * 1.2 + 3.5 * (double)workers / (double)shared;
}

/* The plan's tiles where the caller leaves them free (block_n 0, schedule AUTO): the least estimated time, whole
 * tiles and wider tiles first among equals. */
static void conv_default_tiles(const tma_conv2d_plan *p, int *block_n, tma_conv2d_schedule *schedule) {
    static const tma_conv2d_schedule order[] = {TMA_CONV2D_SCHEDULE_TILES, TMA_CONV2D_SCHEDULE_STREAM_K,
                                                TMA_CONV2D_SCHEDULE_SPLIT_K};
    const long workers = conv_blocks(p);
    double best = -1.0;
    int best_bn = *block_n != 0 ? *block_n : 256;
    tma_conv2d_schedule best_schedule = TMA_CONV2D_SCHEDULE_TILES;
    for (int bn = 256; bn >= 64; bn /= 2) {
        if (*block_n != 0 && bn != *block_n)
            continue;
        const long units = conv_units(p, bn);
        for (int i = 0; i < 3; i++) {
            const tma_conv2d_schedule s = order[i];
            if ((*schedule != TMA_CONV2D_SCHEDULE_AUTO && s != *schedule) ||
                (s == TMA_CONV2D_SCHEDULE_STREAM_K &&
                 !gm_sk_fits((uint32_t)units, (uint32_t)p->stages, (uint32_t)workers)) ||
                (s == TMA_CONV2D_SCHEDULE_SPLIT_K && conv_split_parts(p, bn) < 2))
                continue;
            const double t = conv_estimate_us(p, bn, s, workers);
            if (best < 0.0 || t < best)
                best = t, best_bn = bn, best_schedule = s;
        }
    }
    *block_n = best_bn;
    *schedule = *schedule != TMA_CONV2D_SCHEDULE_AUTO ? *schedule : best_schedule;
}

/* The blocks of a run of the plan under its schedule (gm_launch_config's count without clusters): stream-K's a
 * unit's stages its shares, split-K's the tiles times their parts. What the workspace is sized for at plan time and
 * checked against before a launch. */
static int conv_workspace_blocks(const tma_conv2d_plan *p) {
    if (p->schedule == TMA_CONV2D_SCHEDULE_SPLIT_K)
        return (int)(conv_units(p, p->block_n) * conv_split_parts(p, p->block_n));
    const long work = conv_units(p, p->block_n) * p->stages;
    const long blocks = p->grid_blocks > 0 ? p->grid_blocks : p->sms;
    return (int)(blocks < work ? blocks : work);
}

/* The workspace (GmPartials): a slot of 128 x block_n fp32 per block, then two flags per block (stream-K, split-K)
 * and a counter per block (split-K: one per tile, fewer than the blocks), zeroed. */
static size_t conv_slots_bytes(int blocks, int block_n) { return (size_t)blocks * BM * (size_t)block_n * 4u; }

static tma_status conv_make_workspace(tma_conv2d_plan *p, tma_diag *diag) {
    const int blocks = conv_workspace_blocks(p);
    const size_t slots = conv_slots_bytes(blocks, p->block_n), flags = (size_t)blocks * 3u * sizeof(uint32_t);
    tma_status st = kd_cuda(diag, cudaMalloc(&p->workspace, slots + flags), "cudaMalloc of the stream-K workspace");
    if (st != TMA_OK)
        return st;
    p->workspace_blocks = blocks;
    return kd_cuda(diag, cudaMemset((uint8_t *)p->workspace + slots, 0, flags), "cudaMemset of the stream-K flags");
}

extern "C" tma_status tma_conv2d_plan_tiles(tma_conv2d_plan *p, int block_n, tma_conv2d_schedule schedule,
                                            tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_conv2d_plan_make");
    if (schedule != TMA_CONV2D_SCHEDULE_AUTO && schedule != TMA_CONV2D_SCHEDULE_TILES &&
        schedule != TMA_CONV2D_SCHEDULE_STREAM_K && schedule != TMA_CONV2D_SCHEDULE_SPLIT_K)
        return kd_fail(diag, TMA_ERR_ARG, "schedule = %d: use TMA_CONV2D_SCHEDULE_AUTO, _TILES, _STREAM_K or _SPLIT_K",
                       (int)schedule);
    if (schedule == TMA_CONV2D_SCHEDULE_SPLIT_K && block_n == 64)
        return kd_fail(diag, TMA_ERR_ARG, "block_n = 64 with SPLIT_K: split-K runs at widths 128 and 256 (or 0: the "
                       "plan's choice)");
    conv_descs d;
    conv_geom g;
    int bn = block_n;
    tma_status st = conv_prepare(&p->shape, p->x, p->w, p->y, &d, &g, &bn, diag);
    if (st != TMA_OK)
        return st;
    p->stages = (int)g.stages;
    if (block_n == 0 || schedule == TMA_CONV2D_SCHEDULE_AUTO) {
        bn = block_n;
        conv_default_tiles(p, &bn, &schedule);
        if (bn != block_n && (st = conv_prepare(&p->shape, p->x, p->w, p->y, &d, &g, &bn, diag)) != TMA_OK)
            return st;
    }
    if (schedule == TMA_CONV2D_SCHEDULE_SPLIT_K && conv_split_parts(p, bn) < 2)
        return kd_fail(diag, TMA_ERR_ARG, "SPLIT_K at width %d: %ld tiles on %ld blocks leave fewer than two blocks "
                       "per tile; use STREAM_K or TILES", bn, conv_units(p, bn),
                       conv_blocks(p));
    p->block_n = bn;
    if ((st = tma_conv2d_plan_free(p, diag)) != TMA_OK || (st = tma_tensor_make(&p->w_map, &d.w, diag)) != TMA_OK ||
        (st = tma_tensor_make(&p->w_half, &d.w_half, diag)) != TMA_OK ||
        (st = kd_cuda(diag, conv_set_smem(bn), "cudaFuncSetAttribute")) != TMA_OK)
        return st;
    p->block_n = bn;
    p->smem = conv_smem(bn);
    p->schedule = schedule;
    if (schedule != TMA_CONV2D_SCHEDULE_TILES && (st = conv_make_workspace(p, diag)) != TMA_OK) {
        tma_conv2d_plan_free(p, NULL);
        return st;
    }
    return kd_ok(diag);
}

extern "C" tma_status tma_conv2d_plan_free(tma_conv2d_plan *p, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL");
    cudaError_t e = cudaSuccess;
    if (p->workspace)
        e = cudaFree(p->workspace);
    p->workspace = NULL;
    p->workspace_blocks = 0;
    p->schedule = TMA_CONV2D_SCHEDULE_TILES;
    return e == cudaSuccess ? kd_ok(diag) : kd_cuda(diag, e, "cudaFree of the stream-K workspace");
}

extern "C" tma_status tma_conv2d_plan_make(tma_conv2d_plan *p, const tma_conv2d_shape *shape, const void *x,
                                           const void *w, void *y, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass the address of a tma_conv2d_plan");
    memset(p, 0, sizeof *p);
    if (x == NULL || w == NULL || y == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "%s = NULL: pass device addresses of x, w and y",
                       x == NULL ? "x" : w == NULL ? "w" : "y");
    conv_descs d;
    conv_geom g;
    int bn = 0;
    tma_status st = conv_prepare(shape, x, w, y, &d, &g, &bn, diag);
    if (st != TMA_OK)
        return st;
    p->shape = *shape;
    tma_conv2d_out_size(shape, &p->p, &p->q);
    p->x = x, p->w = w, p->y = y;
    p->group_m = TMA_GEMM_GROUP_M;
    p->epilogue = d.y_tma ? TMA_GEMM_EPILOGUE_TMA_STORE : TMA_GEMM_EPILOGUE_DIRECT;
    /* No clusters: measured on an H200 (docs/CONV.md), clusters of two sharing the filter tile were 3-11% slower on
     * every ResNet-50 layer, the GEMM's rule (pairs where blocks have several tiles) notwithstanding. */
    p->cluster = 1;
    if ((st = kd_require_sm90(diag, "tma_conv2d", &p->sms)) != TMA_OK ||
        (st = tma_tensor_make_im2col(&p->x_map, &d.x, diag)) != TMA_OK ||
        (d.y_tma && (st = tma_tensor_make(&p->y_map, &d.y, diag)) != TMA_OK))
        return st;
    return tma_conv2d_plan_tiles(p, 0, TMA_CONV2D_SCHEDULE_AUTO, diag);
}

/* The fields a caller may change, checked before a launch. */
static tma_status conv_check_plan(const tma_conv2d_plan *p, tma_diag *diag) {
    if (p->x_map.box.tx_bytes == 0 || (p->block_n != 256 && p->block_n != 128 && p->block_n != 64))
        return kd_fail(diag, TMA_ERR_ARG, "the plan was not made by tma_conv2d_plan_make");
    if (p->cluster != 1 && p->cluster != 2)
        return kd_fail(diag, TMA_ERR_ARG, "plan.cluster = %d: use 1 (no clusters) or 2 (pairs sharing the filters)",
                       p->cluster);
    if (p->epilogue != TMA_GEMM_EPILOGUE_TMA_STORE && p->epilogue != TMA_GEMM_EPILOGUE_DIRECT)
        return kd_fail(diag, TMA_ERR_ARG, "plan.epilogue = %d: use TMA_GEMM_EPILOGUE_TMA_STORE or _DIRECT",
                       (int)p->epilogue);
    if (p->schedule != TMA_CONV2D_SCHEDULE_TILES && p->schedule != TMA_CONV2D_SCHEDULE_STREAM_K &&
        p->schedule != TMA_CONV2D_SCHEDULE_SPLIT_K)
        return kd_fail(diag, TMA_ERR_ARG, "plan.schedule = %d: change it with tma_conv2d_plan_tiles", (int)p->schedule);
    if (p->schedule != TMA_CONV2D_SCHEDULE_TILES) {
        /* every block of the grid resident (blocks wait for each other's partial tiles), each with its slot */
        const char *name = p->schedule == TMA_CONV2D_SCHEDULE_STREAM_K ? "STREAM_K" : "SPLIT_K";
        const int blocks = conv_workspace_blocks(p);
        if (p->workspace == NULL)
            return kd_fail(diag, TMA_ERR_ARG, "plan.schedule = %s without its workspace: change it with "
                           "tma_conv2d_plan_tiles", name);
        if (p->cluster != 1)
            return kd_fail(diag, TMA_ERR_ARG, "plan.cluster = %d with %s: it runs without clusters", p->cluster, name);
        if (p->schedule == TMA_CONV2D_SCHEDULE_SPLIT_K && conv_split_parts(p, p->block_n) < 2)
            return kd_fail(diag, TMA_ERR_ARG, "plan.grid_blocks = %d with SPLIT_K: fewer than two blocks per tile; "
                           "change it with tma_conv2d_plan_tiles", p->grid_blocks);
        if (p->grid_blocks > p->sms || blocks > p->workspace_blocks)
            return kd_fail(diag, TMA_ERR_ARG, "plan.grid_blocks = %d with %s: at most %d (the multiprocessors, "
                           "every block resident) and %d (the workspace's slots; tma_conv2d_plan_tiles makes them "
                           "for the grid at the time)", p->grid_blocks, name, p->sms, p->workspace_blocks);
    }
    if (p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && p->y_map.box.tx_bytes == 0)
        return kd_fail(diag, TMA_ERR_ARG, "plan.epilogue = TMA_GEMM_EPILOGUE_TMA_STORE, but TMA cannot describe y "
                       "(K = %d times 2 bytes, or y's address, is not a multiple of 16): use TMA_GEMM_EPILOGUE_DIRECT",
                       p->shape.k);
    return TMA_OK;
}

/* The kernel arguments of a plan (the plan keeps the shape, checked when it was made; conv_geom is private). */
template <uint32_t TBN>
static ConvOps<TBN> conv_ops(const tma_conv2d_plan *p) {
    ConvOps<TBN> ops;
    ops.g = conv_geom_of(&p->shape);
    ops.x = p->x_map;
    ops.w = p->cluster == 2 ? p->w_half : p->w_map;
    ops.k = (uint32_t)p->shape.k;
    return ops;
}

extern "C" tma_status tma_conv2d_run(const tma_conv2d_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_conv2d_plan_make");
    tma_status st = conv_check_plan(p, diag);
    if (st != TMA_OK)
        return st;
    const int sched_kind = p->schedule == TMA_CONV2D_SCHEDULE_STREAM_K  ? GM_SCHED_STREAM_K
                           : p->schedule == TMA_CONV2D_SCHEDULE_SPLIT_K ? GM_SCHED_SPLIT_K
                                                                        : GM_SCHED_TILES;
    const long parts = sched_kind == GM_SCHED_SPLIT_K ? conv_split_parts(p, p->block_n) : 1;
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    const void *probe = p->block_n == 256   ? (const void *)conv_kernel<256, 2, true, GM_SCHED_TILES>
                        : p->block_n == 128 ? (const void *)conv_kernel<128, 2, true, GM_SCHED_TILES>
                                            : (const void *)conv_kernel<64, 2, true, GM_SCHED_TILES>;
    const long units = conv_units(p, p->block_n);
    const int blocks = gm_launch_config(conv_tiles_m(p), conv_tiles_n(p), p->cluster, p->sms,
                                        sched_kind == GM_SCHED_SPLIT_K ? (int)(units * parts) : p->grid_blocks,
                                        p->smem, probe, &cfg, attr,
                                        sched_kind == GM_SCHED_STREAM_K ? p->stages : parts);
    const gm_sched sched = sched_kind == GM_SCHED_SPLIT_K
                               ? gm_sched_split((uint32_t)units, (uint32_t)p->stages, (uint32_t)parts)
                               : gm_launch_sched(conv_tiles_m(p), conv_tiles_n(p), p->cluster, blocks,
                                                 (uint32_t)p->stages, sched_kind == GM_SCHED_STREAM_K);
    cfg.stream = (cudaStream_t)stream;
    const uint32_t group = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    /* split-K's blocks store their slices from registers: its instances have the direct epilogue only */
    const bool tma_epi = p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && sched_kind != GM_SCHED_SPLIT_K;
    GmPartials partials = {};
    if (sched_kind != GM_SCHED_TILES) {
        partials.slots = (float4 *)p->workspace;
        partials.flags = (uint32_t *)((uint8_t *)p->workspace + conv_slots_bytes(p->workspace_blocks, p->block_n));
        partials.done = partials.flags + 2 * p->workspace_blocks;
    }
    cudaError_t e = cudaErrorInvalidValue; /* not kept: the instances cover every case */
#define CONV_LAUNCH_(BN_, CL, EPI, SCHED)                                                                 \
    if (p->block_n == BN_ && p->cluster == CL && tma_epi == EPI && sched_kind == SCHED)                   \
        e = cudaLaunchKernelEx(&cfg, conv_kernel<BN_, CL, EPI, SCHED>, conv_ops<BN_>(p), p->y_map,        \
                               (__nv_bfloat16 *)p->y, group, 0u, sched, partials);
    CONV_INSTANCES(CONV_LAUNCH_)
#undef CONV_LAUNCH_
    st = kd_cuda(diag, e, "tma_conv2d kernel launch (cudaLaunchKernelEx)");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_conv2d(const tma_conv2d_shape *shape, const void *x, const void *w, void *y,
                                 tma_stream stream, tma_diag *diag) {
    tma_conv2d_plan p;
    tma_status st = tma_conv2d_plan_make(&p, shape, x, w, y, diag);
    if (st == TMA_OK)
        st = tma_conv2d_plan_tiles(&p, p.block_n, TMA_CONV2D_SCHEDULE_TILES, diag); /* no workspace: the launch
                                                                                      may outlive this call */
    return st == TMA_OK ? tma_conv2d_run(&p, stream, diag) : st;
}
