/* tma::kernels convolution (tma/kernels.h): y = conv2d(x, w), bf16 NHWC forward, as an implicit GEMM on the GEMM's
 * pipeline (gemm_device.cuh: gm_pipeline_kernel). Only the loads differ: ConvOps gathers each stage's pixels (128
 * output pixels x 64 channels of one filter tap, or 192 in the filter-major tile) with one im2col TMA load, and its
 * filters (block_n filters x the same 64 channels of the same tap) with one tiled load of w viewed as {C, S, R, K};
 * where they go is conv_tiles.h, the maps are made in conv_plan.c. */
#include <string.h>

#include "conv_plan.h"
#include "gemm_device.cuh"
#include "tuning_sm90.h"
#include "kernel_diag.h"
#include "kernel_maps.h"
#include "launch_record.h"

/* The convolution's operands for gm_pipeline_kernel: tiles of TBM output pixels x TBN output channels.
 * Pixel-major (TBM = 128): the pixels are the product's rows (wgmma's A, two warpgroups of 64), the filters its TBN
 * columns. Filter-major (TBM = CONV_FM_PIXELS, TBN = CONV_FM_FILTERS, conv_tiles.h): the operands change places, the
 * product is y^T, and the pipeline stores it transposed (C_TRANSPOSED). */
/* The kernel arguments of every tile's ConvOps: the tile is the instance's, the data the same. */
struct ConvArgs {
    tma_tensor x, w; /* w: the whole filter tile (no clusters) or the half tile (clusters of two) */
    conv_geom g;
    uint32_t k;      /* output channels */
};

template <uint32_t TBM, uint32_t TBN>
struct ConvOps : GmDenseTiles, ConvArgs {
    static constexpr bool C_TRANSPOSED = TBM != BM;
    static_assert(TBM == BM || (TBM == CONV_FM_PIXELS && TBN == CONV_FM_FILTERS && TBN == BM), "the tiles of conv.cu");
    static constexpr uint32_t BN = C_TRANSPOSED ? TBM : TBN; /* the pipeline's B rows */
    __device__ uint32_t rows() const { return C_TRANSPOSED ? k : g.m; }
    __device__ uint32_t cols() const { return C_TRANSPOSED ? g.m : k; }
    __device__ uint32_t k_blocks() const { return g.stages; }
    __device__ const tma_box_info &a_box() const { return C_TRANSPOSED ? w.box : x.box; }
    __device__ const tma_box_info &b_box() const { return C_TRANSPOSED ? x.box : w.box; }
    __device__ uint32_t tx_bytes(int cl) const { return x.box.tx_bytes + w.box.tx_bytes * (uint32_t)cl; }
    __device__ void prefetch() const {
        tma_prefetch_desc(&x);
        tma_prefetch_desc(&w);
    }
    template <int CL>
    __device__ void load(uint8_t *sa, uint8_t *sb, uint64_t *bar, uint32_t kb, const GmTile &t, uint32_t rank) const {
        static_assert(CL == 1 || !C_TRANSPOSED, "filter-major tiles without clusters");
        uint32_t m0, k0, c0, r, s;
        if (C_TRANSPOSED) {
            m0 = t.tn * TBM, k0 = t.tm * TBN;
        } else {
            /* A cluster's second tile row may lie past the last pixel: load the last tile again (nothing is
             * stored). */
            m0 = t.tm * BM < g.m ? t.tm * BM : (g.m - 1u) / BM * BM;
            k0 = t.tn * TBN + (CL == 2 ? rank * (TBN / 2u) : 0u);
        }
        int32_t a[5];
        conv_tile_start(&g, m0, a);
        conv_stage(&g, kb, &c0, &r, &s);
        uint16_t off[3];
        conv_tap_offsets(&g, r, s, off);
        uint8_t *sx = C_TRANSPOSED ? sb : sa, *sw = C_TRANSPOSED ? sa : sb;
        tma_load_im2col<4>(sx, &x, bar, {(int32_t)c0, a[1], a[2], a[3], 0}, {off[0], off[1], off[2]});
        const int32_t wc[5] = {(int32_t)c0, (int32_t)s, (int32_t)r, (int32_t)k0, 0};
        if (CL == 2)
            tma_load_multicast<4>(sw + rank * (GmShape<TBN>::B_BYTES / 2u), &w, bar, {wc[0], wc[1], wc[2], wc[3], 0},
                                  tma_cluster_mask_all(2));
        else
            tma_load<4>(sw, &w, bar, {wc[0], wc[1], wc[2], wc[3], 0});
    }
};

/* The halo tile's operands (conv_tiles.h, THE HALO TILE): x through a tiled map of whole pixel rows, one box a stage
 * for the CONV_HALO_TAPS taps of a filter row, each tap's A operand the box from row s on (GmShape's TAPS); y
 * stored through its {K, Q, P, N} map (C_RANK 4), a warpgroup's 64 positions whole output rows. Its product is
 * n * halo_tiles * 128 positions by K: the pipeline's rows are positions, not pixels. */
struct ConvHaloOps : GmDenseTiles, ConvArgs {
    static constexpr bool C_TRANSPOSED = false;
    static constexpr uint32_t BN = CONV_HALO_FILTERS, TAPS = CONV_HALO_TAPS, C_RANK = 4u;
    __device__ uint32_t rows() const { return g.m / g.pq * g.halo_tiles * BM; } /* images x tiles x positions */
    __device__ uint32_t cols() const { return k; }
    __device__ uint32_t k_blocks() const { return g.halo_stages; }
    __device__ const tma_box_info &a_box() const { return x.box; }
    __device__ const tma_box_info &b_box() const { return w.box; }
    __device__ uint32_t tx_bytes(int) const { return x.box.tx_bytes + TAPS * w.box.tx_bytes; }
    __device__ void prefetch() const {
        tma_prefetch_desc(&x);
        tma_prefetch_desc(&w);
    }
    template <int CL>
    __device__ void load(uint8_t *sa, uint8_t *sb, uint64_t *bar, uint32_t kb, const GmTile &t, uint32_t) const {
        static_assert(CL == 1, "the halo tile runs without clusters");
        int32_t xc[5];
        uint32_t r;
        conv_halo_stage(&g, t.tm, kb, xc, &r);
        tma_load<4>(sa, &x, bar, {xc[0], xc[1], xc[2], xc[3], 0});
#pragma unroll
        for (uint32_t s = 0; s < TAPS; s++)
            tma_load<4>(sb + s * GmShape<BN, TAPS>::B_TAP_BYTES, &w, bar,
                        {xc[0], (int32_t)s, (int32_t)r, (int32_t)(t.tn * BN), 0});
    }
    __device__ GmStoreAt c_at(uint32_t row0) const {
        GmStoreAt at;
        conv_halo_store_at(&g, row0, at.d);
        return at;
    }
};

/* Every instance: tile (pixels x filters) x cluster x epilogue (y is bf16) x schedule; stream-K without clusters;
 * split-K at widths 256 and 128 only, and with one epilogue (its blocks store their slices from registers; its
 * clusters are the launch's, not the template's: CL is the multicast pairs');
 * filter-major tiles without clusters. */
#define T_ GM_SCHED_TILES
#define SK_ GM_SCHED_STREAM_K
#define SPLIT_ GM_SCHED_SPLIT_K
#define CONV_INSTANCES(X)                                                                                     \
    X(128, 256, 1, true, T_) X(128, 256, 1, false, T_) X(128, 256, 2, true, T_) X(128, 256, 2, false, T_)     \
    X(128, 256, 1, true, SK_) X(128, 256, 1, false, SK_) X(128, 256, 1, false, SPLIT_)                        \
    X(128, 128, 1, true, T_) X(128, 128, 1, false, T_) X(128, 128, 2, true, T_) X(128, 128, 2, false, T_)     \
    X(128, 128, 1, true, SK_) X(128, 128, 1, false, SK_) X(128, 128, 1, false, SPLIT_)                        \
    X(128, 64, 1, true, T_) X(128, 64, 1, false, T_) X(128, 64, 2, true, T_) X(128, 64, 2, false, T_)         \
    X(128, 64, 1, true, SK_) X(128, 64, 1, false, SK_)                                                        \
    X(192, 128, 1, true, T_) X(192, 128, 1, false, T_) X(192, 128, 1, true, SK_) X(192, 128, 1, false, SK_)   \
    X(192, 128, 1, false, SPLIT_)

/* A kernel instance: the plan's choices it runs (tile, cluster, epilogue, schedule), its entry point and its dynamic
 * shared memory (the pipeline's B box is bn filters, or bm pixels when filter-major). The one table every attribute,
 * occupancy query and launch reads. */
typedef struct conv_instance {
    int bm, bn, cluster;
    bool tma_epi;
    int sched;
    const void *kernel;
    size_t smem;
} conv_instance;

#define CONV_INSTANCE_ROW_(BM_, BN_, CL, EPI, SCHED)                                                                  \
    {BM_, BN_, CL, EPI, SCHED, (const void *)gm_pipeline_kernel<ConvOps<BM_, BN_>, CL, EPI, __nv_bfloat16, SCHED>,  \
     GmShape<(BM_ == (int)CONV_FM_PIXELS ? BM_ : BN_)>::SMEM_BYTES},
static const conv_instance conv_instances[] = {
    CONV_INSTANCES(CONV_INSTANCE_ROW_)
    /* the halo tile: whole tiles, no clusters, the TMA store */
    {TMA_CONV2D_HALO, (int)CONV_HALO_FILTERS, 1, true, GM_SCHED_TILES,
     (const void *)gm_pipeline_kernel<ConvHaloOps, 1, true, __nv_bfloat16, GM_SCHED_TILES>,
     GmShape<CONV_HALO_FILTERS, CONV_HALO_TAPS>::SMEM_BYTES}};
#undef CONV_INSTANCE_ROW_
static_assert(sizeof(ConvOps<128, 256>) == sizeof(ConvArgs) && sizeof(ConvOps<192, 128>) == sizeof(ConvArgs) &&
                  sizeof(ConvHaloOps) == sizeof(ConvArgs),
              "every instance takes a ConvArgs as its ConvOps");

/* The instance of these choices; NULL where there is none. */
static const conv_instance *conv_instance_of(int bm, int bn, int cluster, bool tma_epi, int sched) {
    for (size_t i = 0; i < sizeof conv_instances / sizeof conv_instances[0]; i++) {
        const conv_instance *c = &conv_instances[i];
        if (c->bm == bm && c->bn == bn && c->cluster == cluster && c->tma_epi == tma_epi && c->sched == sched)
            return c;
    }
    return NULL;
}

/* The dynamic shared memory of tile bm x bn (every instance of a tile has the same). */
static size_t conv_smem(int bm, int bn) {
    const conv_instance *c = conv_instance_of(bm, bn, 1, true, GM_SCHED_TILES);
    return c ? c->smem : 0u;
}

/* PACKED INPUTS (conv_tiles.h): each thread packs 8 channels (16 bytes; C' is a multiple of 8) of a packed pixel,
 * each read from its source element or 0. The work is cut into units of up to CONV_PACK_RUN consecutive pixels of
 * one packed row (image, y), in row order; a block takes a range of consecutive units and its threads consecutive
 * pieces of each. What depends on the row (its first source row, which taps' rows lie inside the image) is worked
 * out once a unit, and the next unit's row by a count, not a division. Where the block is a whole number of pixels'
 * pieces (conv_pack_block: FIXED), a thread's piece of every pixel is the same, its 8 channels' taps are worked out
 * once, into registers, and its pixel advances by a constant. A piece then costs its column's bounds check per
 * channel, or one check and one 16-byte load where the 8 channels are one run of a source pixel (VEC: C a multiple
 * of 8, the source 16-byte aligned); offsets are 32-bit where the source's fit (Off). Each piece divided into image,
 * row, pixel and tap (three divisions a piece, 64-bit bounds a channel), the stem's packing at batch 32 was
 * instruction-bound at 98-107 us (118 registers, a quarter of the warps; H100, docs/lab/conv.md "The packer, a row at
 * a time"). */
constexpr uint32_t CONV_PACK_RUN = 128u; /* packed pixels a unit, at most */

/* A pack's units a packed row: CONV_PACK_RUN pixels each, the row's last shorter. */
static __host__ __device__ uint32_t conv_pack_runs_a_row(const conv_pack &k) {
    return (k.w_out + CONV_PACK_RUN - 1u) / CONV_PACK_RUN;
}

/* Whether every offset the pack reads, past the start of an image, fits 31 bits: rows from -pad_h to the last tap's
 * row, columns likewise, by C channels. */
static bool conv_pack_fits32(const conv_pack &k) {
    const uint64_t rows = (uint64_t)k.h_out * (uint64_t)llabs(k.step_h) + (uint64_t)llabs(k.pad_h) +
                          (uint64_t)k.taps_r * (uint64_t)llabs(k.dil_h) + k.h;
    const uint64_t cols = (uint64_t)k.w_out * (uint64_t)llabs(k.step_w) + (uint64_t)llabs(k.pad_w) +
                          (uint64_t)k.taps_s * (uint64_t)llabs(k.dil_w) + k.w;
    return rows < (1ull << 31) && cols < (1ull << 31) && rows * cols <= (0x7FFFFFFFull / (k.c ? k.c : 1u));
}

/* A piece's 8 channels: which have a tap (conv_pack_tap's result), and each tap's rows and columns past the pixel's
 * first tap (dr, dc) and source element past that tap's first (at). */
template <typename Off>
struct conv_pack_taps {
    Off dr[8], dc[8], at[8];
    uint32_t has;
};

template <typename Off>
static __device__ __forceinline__ void conv_pack_taps_of(const conv_pack &k, uint32_t piece, conv_pack_taps<Off> *t) {
    t->has = 0;
#pragma unroll
    for (uint32_t j = 0; j < 8u; j++) {
        int64_t dr, dc, at;
        t->has |= (uint32_t)conv_pack_tap(&k, piece * 8u + j, &dr, &dc, &at) << j;
        t->dr[j] = (Off)dr, t->dc[j] = (Off)dc, t->at[j] = (Off)at;
    }
}

/* Bit j: channel j has a tap whose source row lies inside the image (row0: the packed row's first source row). */
template <typename Off>
static __device__ __forceinline__ uint32_t conv_pack_live(const conv_pack &k, Off row0, const conv_pack_taps<Off> &t) {
    uint32_t live = 0;
#pragma unroll
    for (uint32_t j = 0; j < 8u; j++)
        live |= (uint32_t)(((t.has >> j) & 1u) && row0 + t.dr[j] >= 0 && row0 + t.dr[j] < (Off)k.h) << j;
    return live;
}

/* One piece: the 8 channels of packed column q with taps t (live: conv_pack_live's), read from `row` (the source at
 * the packed row's first source row, column 0) or 0. */
template <bool VEC, typename Off>
static __device__ __forceinline__ uint4 conv_pack_piece(const conv_pack &k, const uint16_t *row, uint32_t q,
                                                        uint32_t live, const conv_pack_taps<Off> &t) {
    const Off col0 = (Off)q * (Off)k.step_w - (Off)k.pad_w;
    if constexpr (VEC) { /* the 8 channels are one tap's, consecutive in one source pixel */
        const bool inside = (live & 1u) && col0 + t.dc[0] >= 0 && col0 + t.dc[0] < (Off)k.w;
        return inside ? *(const uint4 *)(row + (col0 * (Off)k.c + t.at[0])) : make_uint4(0u, 0u, 0u, 0u);
    } else {
        uint16_t v[8];
#pragma unroll
        for (uint32_t j = 0; j < 8u; j++) {
            const bool inside = ((live >> j) & 1u) && col0 + t.dc[j] >= 0 && col0 + t.dc[j] < (Off)k.w;
            v[j] = inside ? row[col0 * (Off)k.c + t.at[j]] : (uint16_t)0;
        }
        return make_uint4(v[0] | (uint32_t)v[1] << 16, v[2] | (uint32_t)v[3] << 16, v[4] | (uint32_t)v[5] << 16,
                          v[6] | (uint32_t)v[7] << 16);
    }
}

template <bool FIXED, bool VEC, typename Off>
__global__ void conv_pack_kernel(const conv_pack k, const uint16_t *__restrict__ src, uint16_t *__restrict__ dst) {
    const uint32_t per_pixel = k.c_out / 8u, runs_a_row = conv_pack_runs_a_row(k);
    const uint64_t units = (uint64_t)k.n * k.h_out * runs_a_row, per_block = (units + gridDim.x - 1u) / gridDim.x;
    uint64_t u = blockIdx.x * per_block;
    const uint64_t u_end = u + per_block < units ? u + per_block : units;
    if (u >= u_end)
        return;
    uint32_t part, y;
    uint64_t img = conv_divmod(conv_divmod(u, runs_a_row, &part), k.h_out, &y);
    conv_pack_taps<Off> t;
    const uint32_t my_piece = threadIdx.x % per_pixel;
    if (FIXED) /* this thread's piece of every pixel */
        conv_pack_taps_of(k, my_piece, &t);
    for (; u < u_end; u++) {
        const Off row0 = (Off)y * (Off)k.step_h - (Off)k.pad_h;
        const uint16_t *const from = src + (int64_t)img * k.h * k.w * k.c + (int64_t)row0 * k.w * k.c;
        uint16_t *const out = dst + (img * k.h_out + y) * (uint64_t)k.w_out * k.c_out;
        const uint32_t q_first = part * CONV_PACK_RUN, q_end = min(q_first + CONV_PACK_RUN, k.w_out);
        if (FIXED) {
            const uint32_t live = conv_pack_live(k, row0, t), step = blockDim.x / per_pixel;
            for (uint32_t q = q_first + threadIdx.x / per_pixel; q < q_end; q += step)
                *(uint4 *)(out + ((uint64_t)q * per_pixel + my_piece) * 8u) = conv_pack_piece<VEC>(k, from, q, live, t);
        } else {
            for (uint32_t i = q_first * per_pixel + threadIdx.x; i < q_end * per_pixel; i += blockDim.x) {
                const uint32_t q = i / per_pixel;
                conv_pack_taps_of(k, i - q * per_pixel, &t);
                *(uint4 *)(out + (uint64_t)i * 8u) = conv_pack_piece<VEC>(k, from, q, conv_pack_live(k, row0, t), t);
            }
        }
        if (++part == runs_a_row) { /* the next unit's row */
            part = 0;
            if (++y == k.h_out)
                y = 0, img++;
        }
    }
}

/* The packing kernel's block: a whole number of pixels' pieces, about 256 threads (FIXED), where a pixel has at most
 * 256 pieces; else 256 threads. */
static unsigned conv_pack_block(const conv_pack &k, bool *fixed) {
    const unsigned per_pixel = k.c_out / 8u;
    *fixed = per_pixel <= 256u;
    return *fixed ? per_pixel * (256u / per_pixel) : 256u;
}

typedef void (*conv_pack_fn)(conv_pack, const uint16_t *, uint16_t *);
/* The instance for a pack: FIXED where the block is a whole number of pixels' pieces, VEC where every piece is 8
 * consecutive channels of one source pixel at a 16-byte aligned address (C a multiple of 8, the source aligned), and
 * 32-bit offsets where they fit (for the instance whose registers hold 24 of them: FIXED without VEC). */
static conv_pack_fn conv_pack_of(const conv_pack &k, bool fixed, bool vec) {
    if (fixed && !vec)
        return conv_pack_fits32(k) ? conv_pack_kernel<true, false, int32_t> : conv_pack_kernel<true, false, int64_t>;
    if (fixed)
        return conv_pack_kernel<true, true, int64_t>;
    return vec ? conv_pack_kernel<false, true, int64_t> : conv_pack_kernel<false, false, int64_t>;
}

/* The packings of a plan's x and w, the addresses its maps read (the workspace's, or x and w), and the convolution the
 * kernel runs. */
struct conv_sources {
    conv_shape_facts f; /* packed, run, xp, wp, x_bytes, w_bytes (conv_pack_plan) */
    const void *x, *w;
};
static conv_sources conv_sources_of(const tma_conv2d_plan *p) {
    conv_sources s;
    memset(&s, 0, sizeof s);
    s.f.p = p->p, s.f.q = p->q;
    conv_pack_plan(&p->shape, p->x, p->w, &s.f);
    s.x = s.f.packed ? p->packed : p->x;
    s.w = s.f.packed ? (const void *)((const uint8_t *)p->packed + s.f.x_bytes) : p->w;
    return s;
}

/* Pack x and w into the plan's workspace on `stream` (two launches), where the plan packs. */
static tma_status conv_pack_run(const tma_conv2d_plan *p, cudaStream_t stream, tma_diag *diag) {
    const conv_sources s = conv_sources_of(p);
    if (!s.f.packed)
        return TMA_OK;
    if (p->packed == NULL || p->packed_bytes < s.f.x_bytes + s.f.w_bytes)
        return KD_FAIL(diag, CONV_NOT_MADE, tma_arg_u(0));
    const conv_pack *packs[2] = {&s.f.xp, &s.f.wp};
    const void *from[2] = {p->x, p->w};
    void *to[2] = {(void *)s.x, (void *)s.w};
    for (int i = 0; i < 2; i++) {
        bool fixed;
        const unsigned threads = conv_pack_block(*packs[i], &fixed);
        const bool vec = packs[i]->c % 8u == 0 && (uintptr_t)from[i] % 16u == 0;
        const uint64_t units = (uint64_t)packs[i]->n * packs[i]->h_out * conv_pack_runs_a_row(*packs[i]);
        const uint64_t most = (uint64_t)p->sms * 8u;
        const unsigned grid = (unsigned)(units < most ? units : most);
        conv_pack_of(*packs[i], fixed, vec)<<<grid, threads, 0, stream>>>(*packs[i], (const uint16_t *)from[i],
                                                                 (uint16_t *)to[i]);
        const tma_status st = kd_cuda(diag, cudaGetLastError(), "tma_conv2d packing kernel launch");
        if (st != TMA_OK)
            return st;
    }
    return TMA_OK;
}

/* Allow every instance of tile bm x bn its dynamic shared memory. */
static cudaError_t conv_set_smem(int bm, int bn) {
    cudaError_t e = cudaSuccess;
    for (size_t i = 0; i < sizeof conv_instances / sizeof conv_instances[0] && e == cudaSuccess; i++) {
        const conv_instance *c = &conv_instances[i];
        if (c->bm == bm && c->bn == bn)
            e = cudaFuncSetAttribute(c->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c->smem);
    }
    return e;
}

static bool conv_filter_major(int bm) { return bm == (int)CONV_FM_PIXELS; }
static bool conv_halo(int bm) { return bm == TMA_CONV2D_HALO; }

/* The pixel tiles and filter tiles of tile bm x bn (the plan's own or a candidate); the halo tile's are whole output
 * rows of one image (conv_tiles.h: the packing that keeps it, padded channels, keeps P, Q and S). */
static long conv_pixel_tiles(const tma_conv2d_plan *p, int bm) {
    if (conv_halo(bm))
        return (long)p->shape.n * conv_halo_tiles((uint32_t)p->p, conv_halo_wp((uint32_t)p->q, (uint32_t)p->shape.s));
    return ((long)p->shape.n * p->p * p->q + bm - 1) / bm;
}
static long conv_filter_tiles(const tma_conv2d_plan *p, int bn) { return (p->shape.k + (long)bn - 1) / bn; }
static long conv_units(const tma_conv2d_plan *p, int bm, int bn) {
    return conv_pixel_tiles(p, bm) * conv_filter_tiles(p, bn);
}
/* The pipeline's tile grid of the plan's tiles: rows (wgmma's A operand: pixels, or filters when filter-major) by
 * columns. */
static void conv_grid(const tma_conv2d_plan *p, long *tiles_m, long *tiles_n) {
    const long pixels = conv_pixel_tiles(p, p->block_m), filters = conv_filter_tiles(p, p->block_n);
    *tiles_m = conv_filter_major(p->block_m) ? filters : pixels;
    *tiles_n = conv_filter_major(p->block_m) ? pixels : filters;
}

/* The blocks a plan's grid may have: grid_blocks where set (below the multiprocessors), else one per multiprocessor. */
static long conv_blocks(const tma_conv2d_plan *p) {
    return p->grid_blocks > 0 && p->grid_blocks < p->sms ? p->grid_blocks : p->sms;
}

/* Split-K on tile bm x bn: gm_split_parts for its tiles, the plan's stages and blocks, at widths 128 and 256 only (the
 * split-K instances); 0 where split-K does not apply. b32 7x7x512's 26 tiles of 128 x 256 take 4 parts, not 5 (H200).
 * A host query: at plan time only (tma_conv2d_plan_tiles keeps the result). */
static long conv_split_parts(const tma_conv2d_plan *p, int bm, int bn) {
    const conv_instance *split = conv_instance_of(bm, bn, 1, false, GM_SCHED_SPLIT_K);
    if (bn < 128 || split == NULL || conv_set_smem(bm, bn) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return gm_split_parts(conv_units(p, bm, bn), (uint32_t)p->stages, conv_blocks(p), split->kernel, split->smem);
}

/* Estimated microseconds of a plan's run on tile bm x bn and a schedule, on `workers` blocks, by the cost model of
 * tuning_sm90.h: a tile's stages at its stage time, and each tile a block finishes CONV_TILE_US per 128 x 256 outputs
 * besides (its epilogue, and the pipeline's turn to the next tile); a stream-K or split-K stage CONV_SHARED_STAGE times
 * a stage (every SM loading at once); a stream-K owner CONV_SK_PARTIAL_US per helper's partial tile it reads back (a
 * tile's helpers: about workers / the tiles shared out); split-K's fixup (every block puts its partial tile in its
 * shared memory, then reads and adds its slice of the cluster's) CONV_SPLIT_FIXUP_US in all. The fixed costs (launch,
 * first loads) are left out. parts: split-K's (conv_split_parts). */
static double conv_estimate_us(const tma_conv2d_plan *p, int bm, int bn, tma_conv2d_schedule schedule,
                               long workers, long parts, long nk) {
    const double stage_us = conv_halo(bm)           ? CONV_HALO_STAGE_US
                            : conv_filter_major(bm) ? CONV_FM_STAGE_US
                            : bn == 64              ? CONV_STAGE_US_64
                            : bn == 128             ? CONV_STAGE_US_128
                                                    : CONV_STAGE_US_256;
    const double tile_us = CONV_TILE_US * (conv_halo(bm) ? (double)CONV_BM : (double)bm) * (double)bn / (128.0 * 256.0);
    const long units = conv_units(p, bm, bn);
    if (schedule == TMA_CONV2D_SCHEDULE_TILES)
        return (double)((units + workers - 1) / workers) * ((double)nk * stage_us + tile_us);
    if (schedule == TMA_CONV2D_SCHEDULE_SPLIT_K)
        return (double)((nk + parts - 1) / parts) * stage_us * CONV_SHARED_STAGE + CONV_SPLIT_FIXUP_US;
    const long dp = (long)gm_sk_dp_units((uint32_t)units, (uint32_t)workers), shared = units - dp;
    const double whole = (double)(dp / workers) * ((double)nk * stage_us + tile_us);
    if (shared == 0)
        return whole;
    return whole + (double)shared * (double)nk / (double)workers * stage_us * CONV_SHARED_STAGE +
           CONV_SK_PARTIAL_US * (double)workers / (double)shared + tile_us;
}

/* The tiles a plan may have, pixels x filters; ties in conv_default_tiles go to the earlier. */
static const struct conv_tile {
    int bm, bn;
} conv_tile_list[] = {{128, 256}, {(int)CONV_FM_PIXELS, (int)CONV_FM_FILTERS}, {128, 128}, {128, 64},
                       {TMA_CONV2D_HALO, (int)CONV_HALO_FILTERS}};

/* The plan's tiles where the caller leaves them free (block_m or block_n 0, schedule AUTO): the least estimated time,
 * whole tiles first among equals. fm_ok: whether the filter-major tile is a candidate (its maps pass, and the
 * epilogue is the TMA store's: from registers, y^T's elements would be stored one by one); halo_ok: the halo tile
 * (the shape has one, and the plan runs it: no clusters, the TMA store). Both only where block_m is free. */
static void conv_default_tiles(const tma_conv2d_plan *p, const conv_geom &g, bool fm_ok, bool halo_ok, int *block_m,
                               int *block_n, tma_conv2d_schedule *schedule, long *split_parts) {
    static const tma_conv2d_schedule order[] = {TMA_CONV2D_SCHEDULE_TILES, TMA_CONV2D_SCHEDULE_STREAM_K,
                                                TMA_CONV2D_SCHEDULE_SPLIT_K};
    const long workers = conv_blocks(p);
    double best = -1.0;
    int best_bm = CONV_BM, best_bn = 256;
    long best_parts = 0;
    tma_conv2d_schedule best_schedule = TMA_CONV2D_SCHEDULE_TILES;
    for (size_t t = 0; t < sizeof conv_tile_list / sizeof conv_tile_list[0]; t++) {
        const int bm = conv_tile_list[t].bm, bn = conv_tile_list[t].bn;
        /* a tile the caller asked for is kept even where it is no candidate: its maps or run then say why */
        if ((*block_m != 0 && bm != *block_m) || (*block_n != 0 && bn != *block_n) ||
            (*block_m == 0 && ((conv_filter_major(bm) && !fm_ok) || (conv_halo(bm) && !halo_ok))))
            continue;
        const long nk = conv_halo(bm) ? (long)g.halo_stages : (long)g.stages;
        const long units = conv_units(p, bm, bn);
        const long parts = *schedule == TMA_CONV2D_SCHEDULE_AUTO || *schedule == TMA_CONV2D_SCHEDULE_SPLIT_K
                               ? conv_split_parts(p, bm, bn) /* host queries: once a tile */
                               : 0;
        for (int i = 0; i < (conv_halo(bm) ? 1 : 3); i++) { /* the halo tile: whole tiles only */
            const tma_conv2d_schedule s = order[i];
            if ((*schedule != TMA_CONV2D_SCHEDULE_AUTO && s != *schedule) ||
                (s == TMA_CONV2D_SCHEDULE_STREAM_K &&
                 !gm_sk_fits((uint32_t)units, (uint32_t)p->stages, (uint32_t)workers)) ||
                (s == TMA_CONV2D_SCHEDULE_SPLIT_K && parts < 2))
                continue;
            const double est = conv_estimate_us(p, bm, bn, s, workers, parts, nk);
            if (best < 0.0 || est < best)
                best = est, best_bm = bm, best_bn = bn, best_schedule = s, best_parts = parts;
        }
        if (best < 0.0) /* no schedule fits this tile (only where one was asked for): keep it, the caller refuses */
            best_bm = bm, best_bn = bn, best_parts = parts;
    }
    *block_m = best_bm;
    *block_n = best_bn;
    *schedule = *schedule != TMA_CONV2D_SCHEDULE_AUTO ? *schedule : best_schedule;
    *split_parts = best_parts; /* conv_split_parts of the tile chosen, where split-K was a candidate; else 0 */
}

/* The blocks of a stream-K run of the plan (gm_grid_blocks' count without clusters: a unit's stages its shares).
 * What the workspace is sized for at plan time and checked against before a launch. */
static int conv_workspace_blocks(const tma_conv2d_plan *p) {
    const long work = conv_units(p, p->block_m, p->block_n) * p->stages;
    const long blocks = p->grid_blocks > 0 ? p->grid_blocks : p->sms;
    return (int)(blocks < work ? blocks : work);
}

/* Stream-K's workspace (GmPartials): a slot of block_m x block_n fp32 per block, then two flags per block, zeroed. */
static size_t conv_slots_bytes(int blocks, int block_m, int block_n) {
    return (size_t)blocks * (size_t)block_m * (size_t)block_n * 4u;
}

/* Release stream-K's workspace (the packed inputs stay: tma_conv2d_plan_free releases both). */
static tma_status conv_free_workspace(tma_conv2d_plan *p, tma_diag *diag) {
    const cudaError_t e = p->workspace ? cudaFree(p->workspace) : cudaSuccess;
    p->workspace = NULL;
    p->workspace_blocks = 0;
    p->schedule = TMA_CONV2D_SCHEDULE_TILES;
    return e == cudaSuccess ? TMA_OK : kd_cuda(diag, e, "cudaFree of the stream-K workspace");
}

static tma_status conv_make_workspace(tma_conv2d_plan *p, tma_diag *diag) {
    const int blocks = conv_workspace_blocks(p);
    const size_t slots = conv_slots_bytes(blocks, p->block_m, p->block_n);
    const size_t flags = (size_t)blocks * 2u * sizeof(uint32_t);
    tma_status st = kd_cuda(diag, cudaMalloc(&p->workspace, slots + flags), "cudaMalloc of the stream-K workspace");
    if (st != TMA_OK)
        return st;
    p->workspace_blocks = blocks;
    return kd_cuda(diag, cudaMemset((uint8_t *)p->workspace + slots, 0, flags), "cudaMemset of the stream-K flags");
}

/* ---------------------------------------------------------------------------------------------
 * The launch record (tma_launch_record): the instance, the grid, the schedule and the copies' integers, made by
 * tma_conv2d_plan_make, tma_conv2d_plan_tiles and tma_conv2d_plan_tune from the plan's fields (conv_inputs), taken as
 * it is by run while they stay as they were. The shape's part (conv_shape_inputs) also tells tma_conv2d_plan_tiles
 * that the shape was checked: it checks only the tile's maps then.
 * ------------------------------------------------------------------------------------------- */

/* The plan fields a record is made from: the shape's (checked by conv_shape_check), then the choices'. */
struct conv_shape_inputs {
    uint64_t x, w, y, n, h, wd, c, k, r, s, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};
struct conv_choice_inputs {
    uint64_t p, q, block_m, block_n, cluster, group_m, sms, grid_blocks, epilogue, smem, stages, schedule,
        split_parts, workspace, workspace_blocks, x_tx, x_rows, y_tx, packed, packed_bytes;
};
struct conv_inputs {
    conv_shape_inputs shape;
    conv_choice_inputs choice;
};

struct conv_launch {
    GmLaunch gm;          /* the kernel instance, grid, cluster, shared memory, schedule */
    conv_geom g;          /* ConvArgs' integers */
    size_t flags_offset;  /* stream-K: where the flags follow the slots in the workspace */
};

struct conv_launch_record {
    uint32_t mark; /* KD_RECORD_CONV */
    conv_launch launch;
    conv_inputs from;
};
static_assert(sizeof(conv_launch_record) <= sizeof(tma_launch_record), "the record fits tma_launch_record");

static conv_shape_inputs conv_shape_inputs_of(const tma_conv2d_plan *p) {
    const tma_conv2d_shape *sh = &p->shape;
    conv_shape_inputs in;
    in.x = (uint64_t)(uintptr_t)p->x, in.w = (uint64_t)(uintptr_t)p->w, in.y = (uint64_t)(uintptr_t)p->y;
    in.n = (uint64_t)sh->n, in.h = (uint64_t)sh->h, in.wd = (uint64_t)sh->w, in.c = (uint64_t)sh->c;
    in.k = (uint64_t)sh->k, in.r = (uint64_t)sh->r, in.s = (uint64_t)sh->s;
    in.stride_h = (uint64_t)sh->stride_h, in.stride_w = (uint64_t)sh->stride_w;
    in.pad_h = (uint64_t)sh->pad_h, in.pad_w = (uint64_t)sh->pad_w;
    in.dilation_h = (uint64_t)sh->dilation_h, in.dilation_w = (uint64_t)sh->dilation_w;
    return in;
}

static conv_inputs conv_inputs_of(const tma_conv2d_plan *p) {
    conv_inputs in;
    in.shape = conv_shape_inputs_of(p);
    conv_choice_inputs &c = in.choice;
    c.p = (uint64_t)p->p, c.q = (uint64_t)p->q, c.block_m = (uint64_t)p->block_m, c.block_n = (uint64_t)p->block_n;
    c.cluster = (uint64_t)p->cluster, c.group_m = (uint64_t)p->group_m, c.sms = (uint64_t)p->sms;
    c.grid_blocks = (uint64_t)p->grid_blocks, c.epilogue = (uint64_t)p->epilogue, c.smem = (uint64_t)p->smem;
    c.stages = (uint64_t)p->stages, c.schedule = (uint64_t)p->schedule, c.split_parts = (uint64_t)p->split_parts;
    c.workspace = (uint64_t)(uintptr_t)p->workspace, c.workspace_blocks = (uint64_t)p->workspace_blocks;
    c.x_tx = p->x_map.box.tx_bytes, c.x_rows = p->x_map.box.rows, c.y_tx = p->y_map.box.tx_bytes;
    c.packed = (uint64_t)(uintptr_t)p->packed, c.packed_bytes = (uint64_t)p->packed_bytes;
    return in;
}

/* The fields a caller may change, checked before a launch is derived. */
static tma_status conv_check_plan(const tma_conv2d_plan *p, tma_diag *diag) {
    bool tile_known = false;
    for (size_t t = 0; t < sizeof conv_tile_list / sizeof conv_tile_list[0]; t++)
        tile_known |= p->block_m == conv_tile_list[t].bm && p->block_n == conv_tile_list[t].bn;
    /* the maps are the tile's: x's an im2col map of block_m pixels, or the halo's tiled one; y's (where made) the
     * halo's {K, Q, P, N} or the (N P Q) x K matrix */
    const bool halo = conv_halo(p->block_m), im2col = (p->x_map.box.flags & TMA_BOX_IM2COL) != 0;
    if (p->x_map.box.tx_bytes == 0 || !tile_known || im2col == halo ||
        p->x_map.box.rows != (halo ? CONV_BM : (uint32_t)p->block_m) ||
        (p->y_map.box.tx_bytes != 0 && p->y_map.box.rank != (halo ? 4u : 2u)))
        return KD_FAIL(diag, CONV_NOT_MADE, tma_arg_u(0));
    if (halo && p->cluster != 1)
        return KD_FAIL(diag, CONV_HALO_PLAN, tma_arg_s("cluster"), tma_arg_i(p->cluster), tma_arg_s("1"));
    if (halo && p->epilogue != TMA_GEMM_EPILOGUE_TMA_STORE)
        return KD_FAIL(diag, CONV_HALO_PLAN, tma_arg_s("epilogue"), tma_arg_i((int)p->epilogue),
                       tma_arg_s("TMA_GEMM_EPILOGUE_TMA_STORE"));
    if (halo && p->schedule != TMA_CONV2D_SCHEDULE_TILES)
        return KD_FAIL(diag, CONV_HALO_PLAN, tma_arg_s("schedule"), tma_arg_i((int)p->schedule),
                       tma_arg_s("TMA_CONV2D_SCHEDULE_TILES"));
    if (p->cluster != 1 && p->cluster != 2)
        return KD_FAIL(diag, CONV_CLUSTER, tma_arg_i(p->cluster));
    if (p->cluster == 2 && conv_filter_major(p->block_m))
        return KD_FAIL(diag, CONV_CLUSTER_FM, tma_arg_i(p->block_m), tma_arg_i(p->block_n));
    if (p->epilogue != TMA_GEMM_EPILOGUE_TMA_STORE && p->epilogue != TMA_GEMM_EPILOGUE_DIRECT)
        return KD_FAIL(diag, EPILOGUE, tma_arg_i((int)p->epilogue));
    if (p->schedule != TMA_CONV2D_SCHEDULE_TILES && p->schedule != TMA_CONV2D_SCHEDULE_STREAM_K &&
        p->schedule != TMA_CONV2D_SCHEDULE_SPLIT_K)
        return KD_FAIL(diag, CONV_PLAN_SCHEDULE, tma_arg_i((int)p->schedule));
    if (p->schedule == TMA_CONV2D_SCHEDULE_STREAM_K) {
        /* every block of the grid resident (blocks wait for each other's partial tiles), each with its slot */
        const int blocks = conv_workspace_blocks(p);
        if (p->workspace == NULL)
            return KD_FAIL(diag, CONV_SK_WORKSPACE, tma_arg_u(0));
        if (p->cluster != 1)
            return KD_FAIL(diag, CONV_SK_CLUSTER, tma_arg_i(p->cluster));
        if (p->grid_blocks > p->sms || blocks > p->workspace_blocks)
            return KD_FAIL(diag, CONV_SK_GRID, tma_arg_i(p->grid_blocks), tma_arg_i(p->sms),
                           tma_arg_i(p->workspace_blocks));
    }
    if (p->schedule == TMA_CONV2D_SCHEDULE_SPLIT_K) {
        if (p->cluster != 1)
            return KD_FAIL(diag, CONV_SPLIT_CLUSTER, tma_arg_i(p->cluster));
        if (p->split_parts < 2 || p->split_parts > (int)GM_SPLIT_MAX)
            return KD_FAIL(diag, CONV_SPLIT_PARTS, tma_arg_i(p->split_parts), tma_arg_u(GM_SPLIT_MAX));
    }
    if (p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && p->y_map.box.tx_bytes == 0)
        return KD_FAIL(diag, CONV_EPILOGUE_TMA, tma_arg_i(p->shape.k), tma_arg_u(TMA_GLOBAL_ALIGN));
    return TMA_OK;
}

/* The launch of a plan that conv_check_plan accepted, g its copies' integers: the instance of its choices, the grid
 * (an occupancy query with clusters), the schedule. */
static tma_status conv_launch_of(const tma_conv2d_plan *p, const conv_geom &g, conv_launch *l, tma_diag *diag) {
    const int sched_kind = p->schedule == TMA_CONV2D_SCHEDULE_STREAM_K  ? GM_SCHED_STREAM_K
                           : p->schedule == TMA_CONV2D_SCHEDULE_SPLIT_K ? GM_SCHED_SPLIT_K
                                                                        : GM_SCHED_TILES;
    const long parts = sched_kind == GM_SCHED_SPLIT_K ? p->split_parts : 1;
    /* split-K's blocks store their slices from registers: its instances have the direct epilogue only */
    const bool tma_epi = p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && sched_kind != GM_SCHED_SPLIT_K;
    const conv_instance *inst = conv_instance_of(p->block_m, p->block_n, p->cluster, tma_epi, sched_kind);
    if (inst == NULL) /* conv_check_plan refuses every combination the table lacks */
        return KD_FAIL(diag, CONV_NO_INSTANCE, tma_arg_i(p->block_m), tma_arg_i(p->block_n), tma_arg_i(p->cluster),
                       tma_arg_s(tma_epi ? "TMA-store" : "direct"), tma_arg_i((int)p->schedule));
    /* the co-residency query of clusters (pixel-major tiles only) */
    const conv_instance *pair =
        conv_halo(p->block_m) ? NULL : conv_instance_of(128, p->block_n, 2, true, GM_SCHED_TILES);
    const long units = conv_units(p, p->block_m, p->block_n);
    long tiles_m, tiles_n;
    conv_grid(p, &tiles_m, &tiles_n);
    const int blocks = gm_grid_blocks(tiles_m, tiles_n, p->cluster, p->sms,
                                      sched_kind == GM_SCHED_SPLIT_K ? (int)(units * parts) : p->grid_blocks, p->smem,
                                      pair ? pair->kernel : NULL,
                                      sched_kind == GM_SCHED_STREAM_K ? p->stages : parts);
    l->gm.kernel = inst->kernel;
    l->gm.blocks = (uint32_t)blocks;
    l->gm.cluster = sched_kind == GM_SCHED_SPLIT_K ? (uint32_t)parts /* a tile's parts are one cluster */
                                                   : (uint32_t)p->cluster;
    l->gm.smem = p->smem;
    l->gm.sched = sched_kind == GM_SCHED_SPLIT_K
                      ? gm_sched_split((uint32_t)units, (uint32_t)p->stages, (uint32_t)parts)
                      : gm_launch_sched(tiles_m, tiles_n, p->cluster, blocks, (uint32_t)p->stages,
                                        sched_kind == GM_SCHED_STREAM_K);
    l->gm.group = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    l->g = g;
    l->flags_offset = sched_kind == GM_SCHED_STREAM_K
                          ? conv_slots_bytes(p->workspace_blocks, p->block_m, p->block_n)
                          : 0u;
    return TMA_OK;
}

/* The record of a plan whose fields conv_check_plan accepts; none (run derives and refuses) where it does not. */
static tma_status conv_launch_record_make(tma_conv2d_plan *p, const conv_geom &g, tma_diag *diag) {
    conv_launch_record r;
    memset(&r, 0, sizeof r);
    if (conv_check_plan(p, NULL) == TMA_OK) {
        const tma_status st = conv_launch_of(p, g, &r.launch, diag);
        if (st != TMA_OK)
            return st;
        r.mark = KD_RECORD_CONV;
        r.from = conv_inputs_of(p);
    }
    kd_record_put(p->launch, r);
    return TMA_OK;
}

/* The copies' integers of the plan's shape: the record's where the shape is the one it was made for (checked then),
 * else the shape checked again (a field changed by hand), as plan_make checks it. */
static tma_status conv_geom_of_plan(const tma_conv2d_plan *p, conv_geom *g, tma_diag *diag) {
    const conv_launch_record r = kd_record_get<conv_launch_record>(p->launch);
    if (r.mark == KD_RECORD_CONV && kd_same_inputs(r.from.shape, conv_shape_inputs_of(p))) {
        *g = r.launch.g;
        return TMA_OK;
    }
    conv_shape_facts f;
    const tma_status st = conv_shape_check(&p->shape, p->x, p->w, p->y, &f, diag);
    if (st == TMA_OK)
        *g = f.g;
    return st;
}

/* The launch run makes: the record where the plan's fields are those it was made from; else every field checked and
 * the launch derived again (a field changed by hand). */
static tma_status conv_launch_for_run(const tma_conv2d_plan *p, conv_launch *l, tma_diag *diag) {
    if (kd_record_launch<conv_launch_record>(p->launch, KD_RECORD_CONV, conv_inputs_of(p), l))
        return TMA_OK;
    const tma_status st = conv_check_plan(p, diag);
    return st != TMA_OK ? st : conv_launch_of(p, conv_geom_of(&p->shape, p->x, p->w), l, diag);
}

/* ---------------------------------------------------------------------------------------------
 * Choosing the tiles
 * ------------------------------------------------------------------------------------------- */

/* The maps of tile block_m x block_n: those already checked where `made` (tma_conv2d_plan_make's, for the 128-pixel
 * tile of made_bn filters) or `fm_x` (the filter-major tile's x map, checked as a candidate) has them, else built and
 * checked now. Each map is checked once per plan_make or plan_tiles. */
static tma_status conv_tile_maps(const tma_conv2d_plan *p, const conv_geom &g, const conv_descs *made, int made_bn,
                                 const tma_im2col_desc *fm_x, int block_m, int block_n, conv_descs *d,
                                 tma_diag *diag) {
    tma_status st = TMA_OK;
    const conv_sources src = conv_sources_of(p);
    if (conv_halo(block_m)) {
        conv_shape_facts f = src.f; /* the packing's facts; the copies' integers and y's, the plan's */
        f.g = g;
        f.y_tma = p->y_map.box.tx_bytes != 0;
        st = conv_halo_maps(&f, src.x, p->y, &d->halo_x, &d->halo_y, diag);
    } else if (made != NULL && block_m == (int)CONV_BM)
        d->x = made->x;
    else if (fm_x != NULL && conv_filter_major(block_m))
        d->x = *fm_x;
    else
        st = conv_x_map(&src.f.run, src.x, (uint32_t)block_m, &d->x, diag);
    if (st != TMA_OK)
        return st;
    if (made != NULL && block_n == made_bn) {
        d->w = made->w, d->w_half = made->w_half;
        return TMA_OK;
    }
    return conv_w_maps(&src.f.run, src.w, (uint32_t)block_n, &d->w, &d->w_half, diag);
}

/* tma_conv2d_plan_tiles on a plan whose shape is checked (g its copies' integers); `made`: tma_conv2d_plan_make's
 * checked maps for the 128-pixel tile of made_bn filters, or NULL. whole_tiles (tma_conv2d): the tile AUTO chooses,
 * run whole (no workspace: the launch may outlive the plan). */
static tma_status conv_tiles_apply(tma_conv2d_plan *p, const conv_geom &g, const conv_descs *made, int made_bn,
                                   int block_m, int block_n, tma_conv2d_schedule schedule, bool whole_tiles,
                                   tma_diag *diag) {
    /* the caller's tile checked first (the same messages whatever is chosen after) */
    int bn_arg = block_n;
    tma_status st = conv_tile_check(block_m != 0 ? block_m : (int)CONV_BM, &bn_arg, p->shape.k, diag);
    if (st != TMA_OK)
        return st;
    if (conv_halo(block_m) && schedule != TMA_CONV2D_SCHEDULE_AUTO && schedule != TMA_CONV2D_SCHEDULE_TILES)
        return KD_FAIL(diag, CONV_HALO_PLAN, tma_arg_s("schedule"), tma_arg_i((int)schedule),
                       tma_arg_s("TMA_CONV2D_SCHEDULE_TILES"));
    p->stages = (int)g.stages; /* the im2col tiles' (the queries below); the halo tile's once chosen */
    int bm = block_m, bn = block_n;
    long parts = 0;
    tma_im2col_desc fm_x;
    bool fm_checked = false;
    if (block_m == 0 || block_n == 0 || schedule == TMA_CONV2D_SCHEDULE_AUTO) {
        /* the filter-major tile is a candidate where its maps pass and the epilogue is the TMA store's (from
         * registers, y^T's elements would be stored one by one) */
        const bool fm_asked = (block_m == 0 || conv_filter_major(block_m)) &&
                              (block_n == 0 || block_n == (int)CONV_FM_FILTERS);
        const conv_sources src = conv_sources_of(p);
        fm_checked = fm_asked && p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && p->y_map.box.tx_bytes != 0 &&
                     conv_x_map(&src.f.run, src.x, CONV_FM_PIXELS, &fm_x, NULL) == TMA_OK;
        /* the halo tile, where the shape has one and the plan can run it (no clusters, the TMA store; its maps are
         * built and checked if it is chosen) */
        const bool halo_ok = g.halo_wp != 0 && p->cluster == 1 && p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE &&
                             p->y_map.box.tx_bytes != 0;
        conv_default_tiles(p, g, fm_checked, halo_ok, &bm, &bn, &schedule, &parts);
    }
    if (whole_tiles || conv_halo(bm)) /* the halo tile runs whole tiles only */
        schedule = TMA_CONV2D_SCHEDULE_TILES;
    conv_descs d;
    if ((st = conv_tile_maps(p, g, made, made_bn, fm_checked ? &fm_x : NULL, bm, bn, &d, diag)) != TMA_OK)
        return st;
    if (schedule == TMA_CONV2D_SCHEDULE_SPLIT_K && parts == 0)
        parts = conv_split_parts(p, bm, bn); /* the caller's tile: not a candidate above */
    if (schedule != TMA_CONV2D_SCHEDULE_SPLIT_K)
        parts = 0;
    else if (parts < 2)
        return KD_FAIL(diag, CONV_SPLIT_FEW, tma_arg_i(bm), tma_arg_i(bn), tma_arg_i(conv_units(p, bm, bn)),
                       tma_arg_i(conv_blocks(p)));
    /* y's map is the tile's (where TMA can describe y: plan_make made one, the matrix): made again where the tile
     * changes between the halo tile's rank 4 and the others' rank 2 */
    const uint32_t y_rank = conv_halo(bm) ? 4u : 2u;
    const tma_tiled_desc yd = conv_halo(bm) ? d.halo_y : conv_y_desc(&p->shape, &g, p->y);
    if ((st = conv_free_workspace(p, diag)) != TMA_OK ||
        (conv_halo(bm) ? (st = tma_tensor_make_prechecked_(&p->x_map, &d.halo_x, diag))
                       : (st = tma_tensor_make_im2col_prechecked_(&p->x_map, &d.x, diag))) != TMA_OK ||
        (p->y_map.box.tx_bytes != 0 && p->y_map.box.rank != y_rank &&
         (st = tma_tensor_make_prechecked_(&p->y_map, &yd, diag)) != TMA_OK) ||
        (st = tma_tensor_make_prechecked_(&p->w_map, &d.w, diag)) != TMA_OK ||
        (st = tma_tensor_make_prechecked_(&p->w_half, &d.w_half, diag)) != TMA_OK ||
        (st = kd_cuda(diag, conv_set_smem(bm, bn), "cudaFuncSetAttribute")) != TMA_OK)
        return st;
    p->block_m = bm;
    p->block_n = bn;
    p->stages = (int)(conv_halo(bm) ? g.halo_stages : g.stages);
    p->smem = conv_smem(bm, bn);
    p->schedule = schedule;
    p->split_parts = (int)parts;
    if (schedule == TMA_CONV2D_SCHEDULE_STREAM_K && (st = conv_make_workspace(p, diag)) != TMA_OK) {
        conv_free_workspace(p, NULL);
        return st;
    }
    st = conv_launch_record_make(p, g, diag);
    return st == TMA_OK ? kd_ok(diag) : st;
}

/* ---------------------------------------------------------------------------------------------
 * The C API
 * ------------------------------------------------------------------------------------------- */

extern "C" tma_status tma_conv2d_plan_tiles(tma_conv2d_plan *p, int block_m, int block_n,
                                            tma_conv2d_schedule schedule, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_conv2d_plan_make"));
    if (schedule != TMA_CONV2D_SCHEDULE_AUTO && schedule != TMA_CONV2D_SCHEDULE_TILES &&
        schedule != TMA_CONV2D_SCHEDULE_STREAM_K && schedule != TMA_CONV2D_SCHEDULE_SPLIT_K)
        return KD_FAIL(diag, CONV_SCHEDULE, tma_arg_i((int)schedule));
    if (schedule == TMA_CONV2D_SCHEDULE_SPLIT_K && block_n == 64)
        return KD_FAIL(diag, CONV_SPLIT_WIDTH, tma_arg_u(0));
    conv_geom g;
    const tma_status st = conv_geom_of_plan(p, &g, diag);
    return st != TMA_OK ? st : conv_tiles_apply(p, g, NULL, 0, block_m, block_n, schedule, false, diag);
}

extern "C" tma_status tma_conv2d_plan_free(tma_conv2d_plan *p, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_conv2d_plan_make"));
    const tma_status st = conv_free_workspace(p, diag);
    const cudaError_t e = kd_free_on(&p->packed, NULL);
    p->packed_bytes = 0;
    if (st != TMA_OK)
        return st;
    return e == cudaSuccess ? kd_ok(diag) : kd_cuda(diag, e, "cudaFree of the packed x and w");
}

/* tma_conv2d_plan_make; whole_tiles: tma_conv2d's plan (the tile AUTO chooses, every tile whole); stream: where its
 * packed inputs are allocated (kd_malloc_on: NULL for a plan's; tma_conv2d's stream, which frees them after the run). */
static tma_status conv_plan_make(tma_conv2d_plan *p, const tma_conv2d_shape *shape, const void *x, const void *w,
                                 void *y, bool whole_tiles, cudaStream_t stream, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("the address of a tma_conv2d_plan"));
    memset(p, 0, sizeof *p);
    if (x == NULL || w == NULL || y == NULL)
        return KD_FAIL(diag, CONV_POINTER_NULL, tma_arg_s(x == NULL ? "x" : w == NULL ? "w" : "y"));
    /* tma_conv2d_check's rules, in its order, before the device is asked for: the shape, then the maps of the
     * 128-pixel tile (kept: the tile chosen below is usually that one) */
    conv_shape_facts f;
    conv_descs made;
    int bn = 0;
    tma_status st = conv_prepare(shape, x, w, y, &made, &f, CONV_BM, &bn, diag);
    if (st != TMA_OK)
        return st;
    p->shape = *shape;
    p->p = f.p, p->q = f.q;
    p->x = x, p->w = w, p->y = y;
    p->group_m = TMA_GEMM_GROUP_M;
    p->epilogue = f.y_tma ? TMA_GEMM_EPILOGUE_TMA_STORE : TMA_GEMM_EPILOGUE_DIRECT;
    /* No clusters: measured on an H200 (docs/lab/conv.md "The plan's choices"), clusters of two sharing the filter tile
     * were 3-11% slower on every ResNet-50 layer, the GEMM's rule (pairs where blocks have several tiles)
     * notwithstanding. */
    p->cluster = 1;
    if ((st = kd_require_sm90(diag, "tma_conv2d", &p->sms)) != TMA_OK ||
        (f.y_tma && (st = tma_tensor_make_prechecked_(&p->y_map, &f.y, diag)) != TMA_OK))
        return st;
    if (f.packed) { /* the packed tensors' maps are made by conv_tiles_apply, at the workspace's addresses */
        const size_t bytes = f.x_bytes + f.w_bytes;
        if ((st = kd_cuda(diag, kd_malloc_on(&p->packed, bytes, stream), "cudaMalloc of the packed x and w")) != TMA_OK)
            return st;
        p->packed_bytes = bytes;
    }
    st = conv_tiles_apply(p, f.g, f.packed ? NULL : &made, bn, 0, 0, TMA_CONV2D_SCHEDULE_AUTO, whole_tiles, diag);
    if (st != TMA_OK) {
        (void)kd_free_on(&p->packed, stream);
        p->packed_bytes = 0;
    }
    return st;
}

extern "C" tma_status tma_conv2d_plan_make(tma_conv2d_plan *p, const tma_conv2d_shape *shape, const void *x,
                                           const void *w, void *y, tma_diag *diag) {
    return conv_plan_make(p, shape, x, w, y, false, NULL, diag);
}

extern "C" tma_status tma_conv2d_plan_tune(tma_conv2d_plan *p, int cluster, tma_gemm_epilogue epilogue, int group_m,
                                           int grid_blocks, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_conv2d_plan_make"));
    tma_conv2d_plan q = *p;
    q.cluster = cluster, q.epilogue = epilogue, q.group_m = group_m, q.grid_blocks = grid_blocks;
    conv_geom g;
    tma_status st = conv_check_plan(&q, diag);
    if (st == TMA_OK)
        st = conv_geom_of_plan(&q, &g, diag);
    if (st == TMA_OK)
        st = conv_launch_record_make(&q, g, diag);
    if (st != TMA_OK)
        return st;
    *p = q;
    return kd_ok(diag);
}

extern "C" tma_status tma_conv2d_run(const tma_conv2d_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_conv2d_plan_make"));
    conv_launch l;
    tma_status st = conv_launch_for_run(p, &l, diag);
    if (st != TMA_OK || (st = conv_pack_run(p, (cudaStream_t)stream, diag)) != TMA_OK)
        return st;
    ConvArgs args;
    args.g = l.g;
    args.x = p->x_map;
    args.w = p->cluster == 2 ? p->w_half : p->w_map;
    args.k = (uint32_t)p->shape.k;
    GmPartials partials = {};
    if (p->schedule == TMA_CONV2D_SCHEDULE_STREAM_K) {
        partials.slots = (float4 *)p->workspace;
        partials.flags = (uint32_t *)((uint8_t *)p->workspace + l.flags_offset);
    }
    tma_tensor y_map = p->y_map;
    void *y = p->y;
    uint32_t no_store = 0u;
    void *params[] = {&args, &y_map, &y, &l.gm.group, &no_store, &l.gm.sched, &partials};
    st = kd_cuda(diag, gm_launch(l.gm, (cudaStream_t)stream, params), "tma_conv2d kernel launch (cudaLaunchKernelExC)");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_conv2d(const tma_conv2d_shape *shape, const void *x, const void *w, void *y,
                                 tma_stream stream, tma_diag *diag) {
    tma_conv2d_plan p;
    /* whole tiles: no workspace, since the launch may outlive this call; packed inputs allocated and freed on the
     * stream */
    const cudaStream_t s = stream ? (cudaStream_t)stream : cudaStreamLegacy;
    tma_status st = conv_plan_make(&p, shape, x, w, y, true, s, diag);
    if (st != TMA_OK)
        return st;
    st = tma_conv2d_run(&p, stream, diag);
    const tma_status fr = kd_cuda(diag, kd_free_on(&p.packed, s), "cudaFreeAsync of the packed x and w");
    return st != TMA_OK ? st : fr;
}
