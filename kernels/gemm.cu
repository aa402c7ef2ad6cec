/* tma::kernels GEMM (tma/kernels.h): C = A * B^T, bf16 in, fp32 accumulate, bf16 or fp32 out.
 *
 * Block: 384 threads = 3 warpgroups. Warpgroup 0 is the producer (setmaxnreg down to 40; one thread issues
 * the TMA loads), warpgroups 1 and 2 are consumers (setmaxnreg up to 232), each computing 64 rows x 256
 * columns of the 128 x 256 output tile with wgmma m64n256k16 (128 fp32 accumulators per thread).
 * Shared memory (1024-byte aligned): a ring of TMA_GEMM_STAGES stages, each an A box (64 K x 128 rows,
 * 16 KiB) and a B box (64 K x 256 rows, 32 KiB), 128B-swizzled; per consumer two 8 KiB epilogue boxes
 * (64 rows x 128 bytes: 64 bf16 or 32 fp32 columns, 128B-swizzled); full[s] (1 arrival + the boxes'
 * bytes) and empty[s] (one arrival per consumer warp, 8; 16 with clusters) mbarriers: 225 KiB of the
 * 227 KiB a block may have.
 * Consumers keep one wgmma group in flight and release a stage when the group that read it has completed.
 * Persistent: gridDim.x blocks walk tiles t = blockIdx.x, + gridDim.x, ... in gm_tile_of order. */
#include <stdio.h>
#include <string.h>

#include "gemm_device.cuh"
#include "kernel_diag.h"
#include "kernel_maps.h"
#include "launch_record.h"
#include "tuning_sm90.h"

#include "tma/wgmma.cuh"

/* The GEMM's arguments: its maps and sizes, the same whatever the tile width (run fills one for any instance). */
struct GemmArgs {
    tma_tensor a, b; /* b: the whole B box (no clusters; as many rows as the tile) or the half box (clusters of 2) */
    uint32_t m, n, k;
};

/* The GEMM's operands for gm_pipeline_kernel (gemm_device.cuh) on tiles of 128 x TBN: A (M x K) in 128 x 64 boxes, B
 * (N x K) in TBN x 64 boxes, or with TBN = 256 in 128 x 64 halves that the two blocks of a cluster multicast to each
 * other. */
template <uint32_t TBN>
struct GemmOpsT : GmDenseTiles, GemmArgs {
    static constexpr uint32_t BN = TBN;
    static constexpr bool C_TRANSPOSED = false;
    __device__ uint32_t rows() const { return m; }
    __device__ uint32_t cols() const { return n; }
    __device__ uint32_t k_blocks() const { return (k + BK - 1u) / BK; }
    __device__ const tma_box_info &a_box() const { return a.box; }
    __device__ const tma_box_info &b_box() const { return b.box; }
    __device__ uint32_t tx_bytes(int cl) const { return a.box.tx_bytes + b.box.tx_bytes * (uint32_t)cl; }
    __device__ void prefetch() const {
        tma_prefetch_desc(&a);
        tma_prefetch_desc(&b);
    }
    template <int CL>
    __device__ void load(uint8_t *sa, uint8_t *sb, uint64_t *bar, uint32_t kb, const GmTile &t, uint32_t rank) const {
        tma_load_2d(sa, &a, bar, (int32_t)(kb * BK), (int32_t)(t.tm * BM));
        if (CL == 2)
            tma_load_multicast<2>(sb + rank * (GmShape<TBN>::B_BYTES / 2), &b, bar,
                                  {(int32_t)(kb * BK), (int32_t)(t.tn * BN + rank * (BN / 2)), 0, 0, 0},
                                  tma_cluster_mask_all(2));
        else
            tma_load_2d(sb, &b, bar, (int32_t)(kb * BK), (int32_t)(t.tn * BN));
    }
};
using GemmOps = GemmOpsT<BN>;
static_assert(sizeof(GemmOpsT<128>) == sizeof(GemmArgs) && sizeof(GemmOpsT<256>) == sizeof(GemmArgs),
              "every instance's Ops is its GemmArgs: run passes one for any tile width");

/* Every instance of the kernel: cluster x epilogue x C's type, whole 128 x 256 tiles; whole 128 x 128 tiles (no
 * clusters of pairs: a pair shares B in halves of a 256-wide tile); and split-K on 128 x 256 or 128 x 128 tiles (no
 * clusters of pairs: its clusters are a tile's parts; the epilogue from registers: each block stores its slice of the
 * summed tile). */
#define T_ GM_SCHED_TILES
#define SPLIT_ GM_SCHED_SPLIT_K
#define GM_INSTANCES(X)                                                                                            \
    X(1, true, __nv_bfloat16, T_, 256) X(1, false, __nv_bfloat16, T_, 256) X(2, true, __nv_bfloat16, T_, 256)       \
    X(2, false, __nv_bfloat16, T_, 256) X(1, true, float, T_, 256) X(1, false, float, T_, 256)                      \
    X(2, true, float, T_, 256) X(2, false, float, T_, 256) X(1, true, __nv_bfloat16, T_, 128)                       \
    X(1, false, __nv_bfloat16, T_, 128) X(1, true, float, T_, 128) X(1, false, float, T_, 128)                      \
    X(1, false, __nv_bfloat16, SPLIT_, 256) X(1, false, float, SPLIT_, 256) X(1, false, __nv_bfloat16, SPLIT_, 128) \
    X(1, false, float, SPLIT_, 128)

/* A kernel instance: the plan's choices it runs, its entry point and its dynamic shared memory. The one table the
 * attributes and the launch read. */
typedef struct gm_instance {
    int cluster;
    bool tma_epi, f32;
    int sched;
    uint32_t tile_n;
    size_t smem;
    const void *kernel;
} gm_instance;
#define GM_INSTANCE_ROW_(CL, EPI_TMA, T, SCHED, TBN)                                                                  \
    {CL, EPI_TMA, sizeof(T) == 4, SCHED, TBN, GmShape<TBN>::SMEM_BYTES,                                              \
     (const void *)gm_pipeline_kernel<GemmOpsT<TBN>, CL, EPI_TMA, T, SCHED>},
static const gm_instance gm_instances[] = {GM_INSTANCES(GM_INSTANCE_ROW_)};
#undef GM_INSTANCE_ROW_
#undef T_
#undef SPLIT_

/* The instance of these choices; NULL where there is none. */
static const gm_instance *gm_instance_of(int cluster, bool tma_epi, bool f32, int sched = GM_SCHED_TILES,
                                         uint32_t tile_n = BN) {
    for (size_t i = 0; i < sizeof gm_instances / sizeof gm_instances[0]; i++)
        if (gm_instances[i].cluster == cluster && gm_instances[i].tma_epi == tma_epi && gm_instances[i].f32 == f32 &&
            gm_instances[i].sched == sched && gm_instances[i].tile_n == tile_n)
            return &gm_instances[i];
    return NULL;
}

/* The plan's tiles along M and N, and K's stages. */
static long gm_tiles_m(const tma_gemm_plan *p) { return (p->m + (long)BM - 1) / (long)BM; }
static long gm_tiles_n(const tma_gemm_plan *p, long tile_n) { return (p->n + tile_n - 1) / tile_n; }
/* The tile's columns (whole tiles and split-K's alike). */
static uint32_t gm_tile_n(const tma_gemm_plan *p) { return (uint32_t)p->block_n; }
static long gm_tiles_n(const tma_gemm_plan *p) { return gm_tiles_n(p, (long)gm_tile_n(p)); }
static uint32_t gm_stages(const tma_gemm_plan *p) { return (uint32_t)((p->k + (long)BK - 1) / (long)BK); }

static size_t out_bytes(tma_gemm_out out) { return out == TMA_GEMM_OUT_F32 ? 4u : 2u; }

/* The argument rules of tma_gemm_plan_make, each with its message. */
static tma_status gm_check_args(const void *a, const void *b, const void *c, tma_gemm_out out, int m, int n, int k,
                                tma_diag *diag) {
    if (out != TMA_GEMM_OUT_BF16 && out != TMA_GEMM_OUT_F32)
        return KD_FAIL(diag, GEMM_OUT, tma_arg_i((int)out));
    if (m < 0 || n < 0 || k < 0)
        return KD_FAIL(diag, GEMM_SIZES, tma_arg_i(m), tma_arg_i(n), tma_arg_i(k));
    if (k > 0 && (a == NULL || b == NULL))
        return KD_FAIL(diag, GEMM_AB_NULL, tma_arg_s(a == NULL ? "A" : "B"), tma_arg_i(k));
    if (((uintptr_t)a | (uintptr_t)b) % 2u != 0) /* whole bf16 elements (packed where not 16-byte aligned) */
        return KD_FAIL(diag, ELEMENT_ALIGN, tma_arg_s((uintptr_t)a % 2u ? "A" : "B"),
                       tma_arg_x((uintptr_t)((uintptr_t)a % 2u ? a : b)), tma_arg_u(2));
    if (m > 0 && n > 0 && c == NULL)
        return KD_FAIL(diag, GEMM_C_NULL, tma_arg_i(m), tma_arg_i(n));
    if ((uintptr_t)c % out_bytes(out) != 0)
        return KD_FAIL(diag, ELEMENT_ALIGN, tma_arg_s("C"), tma_arg_x((uintptr_t)c), tma_arg_u(out_bytes(out)));
    return TMA_OK;
}

/* One of the plan's maps: its descriptor checked once through the rules (a refusal names the map and what it is made
 * from, then quotes the rule), then encoded without a second check. */
static tma_status gm_make_map(tma_tensor *t, const tma_tiled_desc *d, const char *map, const char *from,
                              tma_diag *diag) {
    tma_violation why;
    if (tma_rule_check_tiled(d, &why) != TMA_OK)
        return KD_FAIL_CAUSE(diag, &why, MAP_REFUSED, tma_arg_s(map), tma_arg_s(from));
    return tma_tensor_make_prechecked_(t, d, diag);
}

/* PACKED INPUTS: TMA reads rows of 16-byte multiples from 16-byte aligned addresses, so A and B are read as they are
 * only where K is a multiple of 8 and both are 16-byte aligned. Otherwise the plan keeps a zeroed copy of each with
 * rows of gm_packed_k elements (the columns past K stay zero: they add nothing to the product), which every run
 * refreshes with one 2-D copy each (gm_pack_run) before the kernel. */
static bool gm_packs(int k, const void *a, const void *b) {
    return k > 0 && ((size_t)k * 2u % TMA_GLOBAL_ALIGN != 0 || ((uintptr_t)a | (uintptr_t)b) % TMA_GLOBAL_ALIGN != 0);
}
static uint64_t gm_packed_k(int k) { return ((uint64_t)k + 7u) / 8u * 8u; }
/* Bytes of the packed A (B follows it), a 256-byte multiple. */
static size_t gm_packed_a_bytes(const tma_gemm_plan *p) {
    return (size_t)(((uint64_t)p->m * gm_packed_k(p->k) * 2u + 255u) / 256u * 256u);
}

/* The tensor maps of a plan: A and B for the loads (the packed copies where the plan has them), and C for the
 * TMA-store epilogue where TMA can describe C (row pitch and address multiples of 16 bytes), else the epilogue stores
 * from registers. */
static tma_status gm_make_maps(tma_gemm_plan *p, tma_diag *diag) {
    const size_t eb = out_bytes(p->out);
    p->epilogue = ((size_t)p->n * eb % TMA_GLOBAL_ALIGN == 0 && (uintptr_t)p->c % TMA_GLOBAL_ALIGN == 0)
                      ? TMA_GEMM_EPILOGUE_TMA_STORE
                      : TMA_GEMM_EPILOGUE_DIRECT;
    const uint64_t k = p->packed ? gm_packed_k(p->k) : (uint64_t)p->k;
    const void *a = p->packed ? p->packed : p->a_in;
    const void *b = p->packed ? (const void *)((const uint8_t *)p->packed + gm_packed_a_bytes(p)) : p->b_in;
    /* A's box: the tile's 128 rows, or 64 where M <= 64: there the second consumer warpgroup has no rows (it reads
     * nothing of the box), and the copy engine need not fill 64 rows of zeros into every stage */
    const uint32_t a_rows = p->m <= 64 ? BM / 2u : BM;
    tma_tiled_desc da = tma_desc_2d(TMA_DTYPE_BF16, (void *)a, (uint64_t)p->m, k, k * 2u, a_rows, BK,
                                    TMA_SWIZZLE_128B);
    tma_tiled_desc db = tma_desc_2d(TMA_DTYPE_BF16, (void *)b, (uint64_t)p->n, k, k * 2u, BN, BK, TMA_SWIZZLE_128B);
    tma_tiled_desc dbh = db;
    dbh.box_dim[1] = BN / 2;
    da.l2_promotion = db.l2_promotion = dbh.l2_promotion = TMA_L2_256B;
    tma_status st = gm_make_map(&p->a, &da, "A's map", "A, M and K: boxes of 64 K x 128 rows (64 where M <= 64)",
                                diag);
    if (st == TMA_OK)
        st = gm_make_map(&p->b, &db, "B's map", "B, N and K: boxes of 64 K x 256 rows", diag);
    if (st == TMA_OK)
        st = gm_make_map(&p->b_half, &dbh, "B's half map", "B, N and K: boxes of 64 K x 128 rows", diag);
    if (st == TMA_OK && p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE) {
        tma_tiled_desc dc = tma_desc_2d(p->out == TMA_GEMM_OUT_F32 ? TMA_DTYPE_F32 : TMA_DTYPE_BF16, p->c,
                                        (uint64_t)p->m, (uint64_t)p->n, (uint64_t)p->n * eb, EPI_ROWS,
                                        (uint32_t)(EPI_ROW_BYTES / eb), EPI_SWIZZLE);
        st = gm_make_map(&p->c_map, &dc, "C's map", "C, M and N: the epilogue's boxes", diag);
    }
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * The launch record (tma_launch_record): what run launches, made by tma_gemm_plan_make and tma_gemm_plan_tune from
 * the plan's fields (gm_inputs), taken as it is by run while those fields stay as they were.
 * ------------------------------------------------------------------------------------------- */

/* The plan fields a record is made from. */
struct gm_inputs {
    uint64_t c, out, m, n, k, sms, cluster, group_m, grid_blocks, epilogue, smem, a_tx, c_tx, split_parts, packed,
        block_n;
};

struct gm_launch_record {
    uint32_t mark; /* KD_RECORD_GEMM */
    GmLaunch launch;
    gm_inputs from;
};
static_assert(sizeof(gm_launch_record) <= sizeof(tma_launch_record), "the record fits tma_launch_record");

static gm_inputs gm_inputs_of(const tma_gemm_plan *p) {
    gm_inputs in;
    in.c = (uint64_t)(uintptr_t)p->c, in.out = (uint64_t)p->out;
    in.m = (uint64_t)p->m, in.n = (uint64_t)p->n, in.k = (uint64_t)p->k, in.sms = (uint64_t)p->sms;
    in.cluster = (uint64_t)p->cluster, in.group_m = (uint64_t)p->group_m, in.grid_blocks = (uint64_t)p->grid_blocks;
    in.epilogue = (uint64_t)p->epilogue, in.smem = (uint64_t)p->smem;
    in.a_tx = p->a.box.tx_bytes, in.c_tx = p->c_map.box.tx_bytes;
    in.split_parts = (uint64_t)p->split_parts, in.packed = (uint64_t)(uintptr_t)p->packed;
    in.block_n = (uint64_t)p->block_n;
    return in;
}

static bool gm_nothing_to_launch(const tma_gemm_plan *p) { return p->m == 0 || p->n == 0 || p->k == 0; }

/* The fields a caller may change: their values (a plan with nothing to launch has no maps to agree with). */
static tma_status gm_check_choices(const tma_gemm_plan *p, tma_diag *diag) {
    if (p->cluster != 1 && p->cluster != 2)
        return KD_FAIL(diag, GEMM_CLUSTER, tma_arg_i(p->cluster));
    if (p->split_parts != 0 && (p->split_parts < 2 || p->split_parts > (int)GM_SPLIT_MAX ||
                                (p->k > 0 && (uint32_t)p->split_parts > gm_stages(p))))
        return KD_FAIL(diag, GEMM_SPLIT_PARTS, tma_arg_i(p->split_parts), tma_arg_u(GM_SPLIT_MAX),
                       tma_arg_u(gm_stages(p)));
    if (p->split_parts != 0 && p->cluster != 1)
        return KD_FAIL(diag, GEMM_SPLIT_CLUSTER, tma_arg_i(p->cluster), tma_arg_i(p->split_parts));
    if (p->block_n != (int)BN && p->block_n != 128)
        return KD_FAIL(diag, GEMM_BLOCK_N, tma_arg_i(p->block_n));
    if (p->block_n != (int)BN && p->cluster != 1)
        return KD_FAIL(diag, GEMM_BLOCK_N_CLUSTER, tma_arg_i(p->block_n), tma_arg_i(p->cluster));
    if (p->epilogue != TMA_GEMM_EPILOGUE_TMA_STORE && p->epilogue != TMA_GEMM_EPILOGUE_DIRECT)
        return KD_FAIL(diag, EPILOGUE, tma_arg_i((int)p->epilogue));
    return TMA_OK;
}

/* Every field of a plan with work to launch, checked before its launch is derived. */
static tma_status gm_check_plan(const tma_gemm_plan *p, tma_diag *diag) {
    tma_status st = gm_check_choices(p, diag);
    if (st != TMA_OK)
        return st;
    if (p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && p->c_map.box.tx_bytes == 0)
        return KD_FAIL(diag, GEMM_EPILOGUE_TMA, tma_arg_i(p->n), tma_arg_u(TMA_GLOBAL_ALIGN));
    if (p->a.box.tx_bytes == 0)
        return KD_FAIL(diag, GEMM_NOT_MADE, tma_arg_u(0));
    return TMA_OK;
}

/* The launch of a plan that gm_check_plan accepted: the instance of its choices, a persistent grid of
 * min(co-resident blocks, work) blocks (an occupancy query with clusters), the schedule. */
static GmLaunch gm_launch_of(const tma_gemm_plan *p) {
    const long tiles_m = gm_tiles_m(p), tiles_n = gm_tiles_n(p);
    const bool f32 = p->out == TMA_GEMM_OUT_F32;
    GmLaunch l;
    l.group = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    if (p->split_parts >= 2) { /* every tile's parts one cluster, every tile's blocks launched */
        const long units = tiles_m * tiles_n;
        const gm_instance *in = gm_instance_of(1, false, f32, GM_SCHED_SPLIT_K, gm_tile_n(p));
        l.kernel = in->kernel;
        l.smem = in->smem;
        l.blocks = (uint32_t)(units * p->split_parts);
        l.cluster = (uint32_t)p->split_parts;
        l.sched = gm_sched_split((uint32_t)units, gm_stages(p), (uint32_t)p->split_parts);
        return l;
    }
    const gm_instance *in = gm_instance_of(p->cluster, p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE, f32,
                                           GM_SCHED_TILES, gm_tile_n(p));
    l.kernel = in->kernel; /* gm_check_plan: every choice has one */
    l.smem = in->smem;
    l.blocks = (uint32_t)gm_grid_blocks(tiles_m, tiles_n, p->cluster, p->sms, p->grid_blocks, in->smem,
                                        gm_instance_of(2, true, false)->kernel); /* the clusters' occupancy query */
    l.cluster = (uint32_t)p->cluster;
    l.sched = gm_launch_sched(tiles_m, tiles_n, p->cluster, (int)l.blocks, gm_stages(p), false);
    return l;
}

static void gm_launch_record_make(tma_gemm_plan *p) {
    kd_record_make<gm_launch_record>(p->launch, KD_RECORD_GEMM, gm_launch_of(p), gm_inputs_of(p));
}

/* The launch run makes: the record where the plan's fields are those it was made from; else every field checked and
 * the launch derived again (a field changed by hand). */
static tma_status gm_launch_for_run(const tma_gemm_plan *p, GmLaunch *l, tma_diag *diag) {
    if (kd_record_launch<gm_launch_record>(p->launch, KD_RECORD_GEMM, gm_inputs_of(p), l))
        return TMA_OK;
    const tma_status st = gm_check_plan(p, diag);
    if (st == TMA_OK)
        *l = gm_launch_of(p);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * The C API
 * ------------------------------------------------------------------------------------------- */

/* Release the packed inputs (on `stream` where the one-call tma_gemm allocated them there). */
static cudaError_t gm_free_packed(tma_gemm_plan *p, cudaStream_t stream) {
    p->packed_bytes = 0;
    return kd_free_on(&p->packed, stream);
}

/* Refresh the packed A and B from the caller's (one 2-D copy each, rows of K elements into rows of gm_packed_k). */
static tma_status gm_pack_run(const tma_gemm_plan *p, cudaStream_t stream, tma_diag *diag) {
    if (p->packed == NULL)
        return TMA_OK;
    const size_t row = (size_t)p->k * 2u, pitch = (size_t)gm_packed_k(p->k) * 2u;
    if (p->packed_bytes < gm_packed_a_bytes(p) + (size_t)p->n * pitch)
        return KD_FAIL(diag, GEMM_NOT_MADE, tma_arg_u(0));
    uint8_t *pa = (uint8_t *)p->packed, *pb = pa + gm_packed_a_bytes(p);
    cudaError_t e = cudaMemcpy2DAsync(pa, pitch, p->a_in, row, row, (size_t)p->m, cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess)
        e = cudaMemcpy2DAsync(pb, pitch, p->b_in, row, row, (size_t)p->n, cudaMemcpyDeviceToDevice, stream);
    return kd_cuda(diag, e, "cudaMemcpy2DAsync of A and B into the packed copies");
}

/* A plan's tiles: their width (block_n, 256 or 128) and split-K's parts (0: whole tiles). The model, one rule for
 * every shape: the choice that keeps the most blocks busy at once; among equals the fewest parts (each part adds its
 * partial tile to the cluster's sum), then the wider tile (fewer bytes of A and B per FLOP). The candidates:
 * - whole 128 x 256 tiles, in as many waves as the work takes;
 * - whole 128 x 128 tiles where they all run in one wave (tiles <= SMs): past one wave the 256-wide tiles win
 *   (768 x 4096 x 4096: 60.1 us against 46.4), within it the narrow tiles' twice as many blocks win (512 x 4096 x
 *   4096: 35.9 us against 39.9 on 256-wide tiles in two parts; H100, docs/lab/gemm.md "Whole 128-wide tiles");
 * - split-K where the tiles are fewer than half the SMs (small M or N): every tile's K cut among the blocks it
 *   would leave idle (gm_split_parts), each part GM_SPLIT_MIN_STEPS K steps or more.
 * 128-wide tiles only where M > 64: below, one consumer warpgroup of a tile has no rows, and a 128-wide stage
 * carries as many bytes of A's box (zero-filled) as of B; there they were slower (docs/lab/gemm.md "Split-K on
 * 128-wide tiles": M = 1-64 at N = K = 4096, 24.0-26.2 us against 20.8-23.1). */
static void gm_choose_tiles(tma_gemm_plan *p) {
    const long tiles_m = gm_tiles_m(p), most = (long)(gm_stages(p) / GM_SPLIT_MIN_STEPS);
    long best_busy = 0, best_parts = 0;
    p->split_parts = 0;
    p->block_n = (int)BN;
    for (long tile_n = (long)BN; tile_n >= 128 && (tile_n == (long)BN || p->m > 64); tile_n /= 2) {
        const long units = tiles_m * gm_tiles_n(p, tile_n);
        long parts = 1;
        if (2 * units <= p->sms) {
            const gm_instance *in = gm_instance_of(1, false, p->out == TMA_GEMM_OUT_F32, GM_SCHED_SPLIT_K,
                                                   (uint32_t)tile_n);
            const long blocks = units * most < p->sms ? units * most : p->sms;
            const long split = gm_split_parts(units, gm_stages(p), blocks, in->kernel, in->smem);
            parts = split >= 2 ? split : 1;
        } else if (tile_n != (long)BN && units > p->sms) {
            continue; /* 128-wide whole tiles past one wave */
        }
        const long busy = units * parts < p->sms ? units * parts : p->sms;
        if (busy > best_busy || (busy == best_busy && parts < best_parts)) {
            best_busy = busy, best_parts = parts;
            p->split_parts = parts >= 2 ? (int)parts : 0;
            p->block_n = (int)tile_n;
        }
    }
}

/* tma_gemm_plan_make; alloc_stream: the one-call tma_gemm's stream, where the packed inputs are allocated (NULL: a
 * plan's, cudaMalloc). */
static tma_status gm_plan_make(tma_gemm_plan *p, const void *a, const void *b, void *c, tma_gemm_out out, int m,
                               int n, int k, cudaStream_t alloc_stream, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("the address of a tma_gemm_plan"));
    memset(p, 0, sizeof *p);
    tma_status st = gm_check_args(a, b, c, out, m, n, k, diag);
    if (st != TMA_OK)
        return st;
    p->cluster = 1;
    p->group_m = TMA_GEMM_GROUP_M;
    p->c = c;
    p->out = out;
    p->m = m, p->n = n, p->k = k;
    p->smem = SMEM_BYTES;
    p->block_n = (int)BN;
    p->a_in = a, p->b_in = b;
    if (m == 0 || n == 0 || k == 0)
        return kd_ok(diag); /* nothing to multiply; run() writes zeros when K == 0 */
    if ((st = kd_require_sm90(diag, "tma_gemm", &p->sms)) != TMA_OK)
        return st;
    if (gm_packs(k, a, b)) { /* zeroed once: the copies never write the columns past K */
        const size_t bytes = gm_packed_a_bytes(p) + (size_t)((uint64_t)n * gm_packed_k(k) * 2u);
        cudaError_t e = kd_malloc_on(&p->packed, bytes, alloc_stream);
        if (e == cudaSuccess)
            e = alloc_stream ? cudaMemsetAsync(p->packed, 0, bytes, alloc_stream) : cudaMemset(p->packed, 0, bytes);
        if ((st = kd_cuda(diag, e, "cudaMalloc and cudaMemset of the packed A and B")) != TMA_OK) {
            gm_free_packed(p, alloc_stream);
            return st;
        }
        p->packed_bytes = bytes;
    }
    if ((st = gm_make_maps(p, diag)) != TMA_OK) {
        gm_free_packed(p, alloc_stream);
        return st;
    }
    cudaError_t e = cudaSuccess;
    for (size_t i = 0; i < sizeof gm_instances / sizeof gm_instances[0] && e == cudaSuccess; i++)
        e = cudaFuncSetAttribute(gm_instances[i].kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)gm_instances[i].smem);
    if ((st = kd_cuda(diag, e, "cudaFuncSetAttribute")) != TMA_OK)
        return st;
    gm_choose_tiles(p);
    p->cluster = p->split_parts >= 2 || p->block_n != (int)BN ? 1 : gm_default_cluster(gm_tiles_m(p), gm_tiles_n(p),
                                                                                       p->sms);
    p->smem = gm_instance_of(1, false, out == TMA_GEMM_OUT_F32, p->split_parts >= 2 ? GM_SCHED_SPLIT_K : GM_SCHED_TILES,
                             gm_tile_n(p))->smem;
    gm_launch_record_make(p);
    return kd_ok(diag);
}

extern "C" tma_status tma_gemm_plan_make(tma_gemm_plan *p, const void *a, const void *b, void *c, tma_gemm_out out,
                                         int m, int n, int k, tma_diag *diag) {
    return gm_plan_make(p, a, b, c, out, m, n, k, NULL, diag);
}

extern "C" tma_status tma_gemm_plan_free(tma_gemm_plan *p, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_gemm_plan_make"));
    const cudaError_t e = gm_free_packed(p, NULL);
    return e == cudaSuccess ? kd_ok(diag) : kd_cuda(diag, e, "cudaFree of the packed A and B");
}

extern "C" tma_status tma_gemm_plan_tune(tma_gemm_plan *p, int cluster, tma_gemm_epilogue epilogue, int group_m,
                                         int grid_blocks, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_gemm_plan_make"));
    tma_gemm_plan q = *p;
    q.cluster = cluster, q.epilogue = epilogue, q.group_m = group_m, q.grid_blocks = grid_blocks;
    const tma_status st = gm_nothing_to_launch(&q) ? gm_check_choices(&q, diag) : gm_check_plan(&q, diag);
    if (st != TMA_OK)
        return st;
    if (!gm_nothing_to_launch(&q))
        gm_launch_record_make(&q);
    *p = q;
    return kd_ok(diag);
}

extern "C" int tma_gemm_grid(const tma_gemm_plan *p) {
    GmLaunch l;
    if (p == NULL || gm_nothing_to_launch(p) || gm_launch_for_run(p, &l, NULL) != TMA_OK)
        return 0;
    return (int)l.blocks;
}

extern "C" tma_status tma_gemm_run(const tma_gemm_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_gemm_plan_make"));
    if (p->m == 0 || p->n == 0)
        return kd_ok(diag);
    if (p->k == 0)
        return kd_cuda(diag, cudaMemsetAsync(p->c, 0, (size_t)p->m * (size_t)p->n * out_bytes(p->out),
                                             (cudaStream_t)stream), "cudaMemsetAsync of C (K = 0)");
    GmLaunch l;
    tma_status st = gm_launch_for_run(p, &l, diag);
    if (st != TMA_OK || (st = gm_pack_run(p, (cudaStream_t)stream, diag)) != TMA_OK)
        return st;
    uint32_t no_store = p->diag_no_store ? 1u : 0u;
    GemmOps ops; /* its GemmArgs serve every instance */
    ops.a = p->a, ops.b = p->cluster == 2 || gm_tile_n(p) == 128 ? p->b_half : p->b;
    ops.m = (uint32_t)p->m, ops.n = (uint32_t)p->n, ops.k = (uint32_t)p->k;
    tma_tensor c_map = p->c_map;
    void *c = p->c;
    GmPartials partials = {};
    void *params[] = {&ops, &c_map, &c, &l.group, &no_store, &l.sched, &partials};
    st = kd_cuda(diag, gm_launch(l, (cudaStream_t)stream, params), "tma_gemm kernel launch (cudaLaunchKernelExC)");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_gemm(const void *a, const void *b, void *c, tma_gemm_out out, int m, int n, int k,
                               tma_stream stream, tma_diag *diag) {
    tma_gemm_plan p;
    /* packed inputs, where the plan has them, allocated and freed on the stream */
    const cudaStream_t s = stream ? (cudaStream_t)stream : cudaStreamLegacy;
    tma_status st = gm_plan_make(&p, a, b, c, out, m, n, k, s, diag);
    if (st != TMA_OK)
        return st;
    st = tma_gemm_run(&p, stream, diag);
    const tma_status fr = kd_cuda(diag, gm_free_packed(&p, s), "cudaFreeAsync of the packed A and B");
    return st != TMA_OK ? st : fr;
}
