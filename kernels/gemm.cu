/* libtma GEMM sample kernel (see gemm.h): C = A * B^T, bf16 in, fp32 accumulate, bf16 or fp32 out.
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
 * Persistent: gridDim.x blocks walk tiles t = blockIdx.x, + gridDim.x, ... in tma_gemm_tile_of order. */
#include "gemm.h"

#include <stdio.h>
#include <string.h>

#include <cuda_bf16.h>

#include "tma/device.cuh"
#include "tma/tma.h"
#include "tma/wgmma.cuh"

namespace {
constexpr uint32_t BM = TMA_GEMM_BM, BN = TMA_GEMM_BN, BK = TMA_GEMM_BK, STAGES = TMA_GEMM_STAGES;
constexpr uint32_t THREADS = 384;
constexpr uint32_t CONSUMER_WARPS = 8;
constexpr uint32_t A_BYTES = BM * BK * 2u, B_BYTES = BN * BK * 2u;
/* The epilogue box: EPI_ROWS rows of 128 bytes = the 128B swizzle span. The host encodes C's map with
 * EPI_SWIZZLE; the kernel addresses the box through tma_gemm_epi_offset (gemm.h), which uses it too. */
constexpr uint32_t EPI_ROWS = TMA_GEMM_EPI_ROWS, EPI_ROW_BYTES = TMA_GEMM_EPI_ROW_BYTES;
constexpr uint32_t EPI_BYTES = EPI_ROWS * EPI_ROW_BYTES, EPI_BUFS = 2;
constexpr tma_swizzle EPI_SWIZZLE = TMA_GEMM_EPI_SWIZZLE;
static_assert(BM / 2u == EPI_ROWS && EPI_ROW_BYTES == 128u, "a consumer's 64 rows, 128-byte box rows");
constexpr size_t SMEM_BYTES =
    1024 + STAGES * (A_BYTES + B_BYTES) + 2u * EPI_BUFS * EPI_BYTES + 2u * STAGES * sizeof(uint64_t);
static_assert(SMEM_BYTES <= 227u * 1024u, "over the 227 KiB a block may have on sm_90");
} // namespace

/* A consumer warp releases a stage: on its own block's empty barrier, and with CL = 2 on the peer's too
 * (the peer's producer multicasts into this block's stage). */
template <int CL>
static __device__ __forceinline__ void release_stage(uint64_t *empty_bar) {
    if (CL == 2) {
        tma_mbar_arrive_cluster(empty_bar, 0);
        tma_mbar_arrive_cluster(empty_bar, 1);
    } else {
        tma_mbar_arrive(empty_bar);
    }
}

/* C's element type: two adjacent accumulators (a pair) or one, converted and stored. */
static __device__ __forceinline__ void store_pair(__nv_bfloat16 *p, float lo, float hi) {
    *(__nv_bfloat162 *)p = __floats2bfloat162_rn(lo, hi);
}
static __device__ __forceinline__ void store_pair(float *p, float lo, float hi) { *(float2 *)p = make_float2(lo, hi); }
static __device__ __forceinline__ void store_one(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }
static __device__ __forceinline__ void store_one(float *p, float v) { *p = v; }

/* One accumulator pair (row, col), (row, col + 1) into the epilogue box at `box`, as C's type (gemm.h:
 * tma_gemm_epi_offset, tma_gemm_epi_store_col). */
template <typename OutT>
static __device__ __forceinline__ void box_store_pair(uint8_t *box, uint32_t row, uint32_t col, float v0, float v1) {
    if constexpr (sizeof(OutT) == 2) {
        store_pair((OutT *)(box + tma_gemm_epi_offset(row, col, 2)), v0, v1);
    } else {
#pragma unroll
        for (uint32_t s = 0; s < 2; s++) {
            const uint32_t c = tma_gemm_epi_store_col(s, row, col);
            store_one((OutT *)(box + tma_gemm_epi_offset(row, c, 4)), c == col ? v0 : v1);
        }
    }
}

/* Epilogue through shared memory: this consumer warpgroup's 64 x 256 accumulators (wgmma fragment: row
 * 16 * warp + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + {0, 1} in acc[4 j + 2 h + {0, 1}]) become boxes
 * of 64 rows x 128 bytes (64 bf16 or 32 fp32 columns), written in turn into the warpgroup's two buffers and
 * TMA-stored at (row0, col0 + q * box columns) by thread 0 of the warpgroup (the `issuer`). One named
 * barrier per box: before it, the issuer waits until the copy engine has read the previous box out of the
 * other buffer, so after it every thread may write that buffer again (box q + 1), and the issuer may store
 * box q. The last two boxes' stores are still in flight when this returns; the next tile's first boxes wait
 * for them the same way.
 * Writes: 4-byte stores, each warp store 8 rows (lane / 4, all different mod 8) x 16 bytes; the 128B
 * swizzle and, for fp32, the element order of tma_gemm_epi_store_col put them in 32 different banks (the
 * sample's CPU self-check counts it). */
template <typename OutT>
static __device__ __forceinline__ void epilogue_tma(const float (&acc)[128], const tma_tensor *tc, uint8_t *bufs,
                                                    uint32_t row0, uint32_t col0, uint32_t barrier_id, bool issuer,
                                                    bool no_store) {
    constexpr uint32_t COLS = EPI_ROW_BYTES / sizeof(OutT), GROUPS = COLS / 8u; /* 8-column groups per box */
    const uint32_t warp = (threadIdx.x % 128u) / 32u, lane = threadIdx.x % 32u;
#pragma unroll
    for (uint32_t q = 0; q < BN / COLS; q++) {
        uint8_t *buf = bufs + (q % EPI_BUFS) * EPI_BYTES;
#pragma unroll
        for (uint32_t jj = 0; jj < GROUPS; jj++) {
            const uint32_t j = q * GROUPS + jj;
#pragma unroll
            for (uint32_t h = 0; h < 2; h++) {
                const uint32_t row = 16u * warp + lane / 4u + 8u * h, col = 8u * jj + 2u * (lane % 4u);
                box_store_pair<OutT>(buf, row, col, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            }
        }
        tma_fence_proxy_async(); /* this thread's writes, before the copy engine reads them */
        if (issuer)
            tma_store_wait_read<0>(); /* box q - 1 has left the other buffer */
        tma_named_barrier_sync(barrier_id, 128);
        if (issuer && !no_store) {
            tma_store_2d(tc, buf, (int32_t)(col0 + q * COLS), (int32_t)row0);
            tma_store_commit();
        }
    }
}

/* Epilogue from registers: pairs straight to global memory where N is even and C aligned to a pair,
 * single elements otherwise, clipped to M x N (any N). */
template <typename OutT>
static __device__ __forceinline__ void epilogue_direct(const float (&acc)[128], OutT *__restrict__ c, int M, int N,
                                                       uint32_t row_base, uint32_t col_base) {
    const uint32_t warp = (threadIdx.x % 128u) / 32u, lane = threadIdx.x % 32u;
    const uint32_t row0 = row_base + warp * 16u + lane / 4u;
    const uint32_t col0 = col_base + 2u * (lane % 4u);
    const bool pairs = (N % 2) == 0 && (uintptr_t)c % (2u * sizeof(OutT)) == 0;
#pragma unroll
    for (uint32_t j = 0; j < 32; j++) {
        const uint32_t col = col0 + 8u * j;
#pragma unroll
        for (uint32_t h = 0; h < 2; h++) {
            const uint32_t row = row0 + 8u * h;
            if (row >= (uint32_t)M || col >= (uint32_t)N)
                continue;
            OutT *p = c + (size_t)row * (size_t)N + col;
            const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
            if (pairs) {
                store_pair(p, v0, v1);
            } else {
                store_one(p, v0);
                if (col + 1 < (uint32_t)N)
                    store_one(p + 1, v1);
            }
        }
    }
}

/* CL = 1: one block per tile. CL = 2: clusters of two blocks on vertically adjacent tiles (tile rows
 * 2 * i and 2 * i + 1, same tile column) that share B: each block loads its own A box and one half (128
 * rows) of the B tile, multicast into both blocks; a stage is free when the consumers of BOTH blocks
 * have released it (empty[s] counts 16 arrivals, made with cluster-scope arrives).
 * TMA_EPI: the epilogue through shared memory and TMA stores (epilogue_tma), else epilogue_direct.
 * OutT: C's element type, __nv_bfloat16 or float. */
template <int CL, bool TMA_EPI, typename OutT>
__global__ void __launch_bounds__(THREADS, 1)
    tma_gemm_kernel(const __grid_constant__ tma_tensor ta, const __grid_constant__ tma_tensor tb,
                    const __grid_constant__ tma_tensor tc, OutT *__restrict__ c, int M, int N, int K,
                    uint32_t group_m, uint32_t no_store) {
    extern __shared__ uint8_t dyn[];
    uint8_t *base = dyn + ((1024u - tma_smem_addr(dyn) % 1024u) % 1024u);
    uint8_t *sa = base;                    /* STAGES A boxes */
    uint8_t *sb = base + STAGES * A_BYTES; /* STAGES B tiles (one box, or two half boxes with CL = 2) */
    uint8_t *se = sb + STAGES * B_BYTES;   /* 2 consumers x EPI_BUFS epilogue boxes */
    uint64_t *full = (uint64_t *)(se + 2u * EPI_BUFS * EPI_BYTES);
    uint64_t *empty = full + STAGES;

    const uint32_t wg = threadIdx.x / 128u;
    const uint32_t rank = CL == 2 ? tma_cluster_ctarank() : 0u;
    const uint32_t cluster_id = blockIdx.x / CL, clusters = gridDim.x / CL;
    const uint32_t tiles_m = ((uint32_t)M + BM - 1) / BM, tiles_n = ((uint32_t)N + BN - 1) / BN;
    const uint32_t groups_m = (tiles_m + CL - 1) / CL; /* cluster tile rows */
    const uint32_t units = groups_m * tiles_n;
    const uint32_t nk = ((uint32_t)K + BK - 1) / BK;
    group_m = group_m / CL > 0 ? group_m / CL : 1u; /* in cluster tile rows */

    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < STAGES; s++) {
            tma_mbar_init(&full[s], 1);
            tma_mbar_init(&empty[s], CONSUMER_WARPS * CL);
        }
        tma_fence_mbar_init();
    }
    if (CL == 2) {
        tma_cluster_arrive(); /* the peer's barriers are initialised before any multicast or remote arrive */
        tma_cluster_wait();
    } else {
        __syncthreads();
    }

    if (wg == 0) {
        /* ---- producer ---- */
        tma_setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            tma_prefetch_desc(&ta);
            tma_prefetch_desc(&tb);
            const uint32_t tx = ta.box.tx_bytes + tb.box.tx_bytes * CL; /* A + the whole B tile */
            uint32_t s = 0, phase = 0;
            for (uint32_t u = cluster_id; u < units; u += clusters) {
                uint32_t gm, tn;
                tma_gemm_tile_of(u, groups_m, tiles_n, group_m, &gm, &tn);
                const uint32_t tm = gm * CL + rank;
                for (uint32_t kb = 0; kb < nk; kb++) {
                    tma_mbar_wait_quiet(&empty[s], phase ^ 1u); /* a fresh barrier passes parity 1 at once */
                    tma_mbar_arrive_expect_tx(&full[s], tx);
                    tma_load_2d(sa + s * A_BYTES, &ta, &full[s], (int32_t)(kb * BK), (int32_t)(tm * BM));
                    if (CL == 2)
                        tma_load_multicast<2>(sb + s * B_BYTES + rank * (B_BYTES / 2), &tb, &full[s],
                                              {(int32_t)(kb * BK), (int32_t)(tn * BN + rank * (BN / 2)), 0, 0, 0},
                                              (uint16_t)0x3);
                    else
                        tma_load_2d(sb + s * B_BYTES, &tb, &full[s], (int32_t)(kb * BK), (int32_t)(tn * BN));
                    if (++s == STAGES) {
                        s = 0;
                        phase ^= 1u;
                    }
                }
            }
        }
    } else {
        /* ---- consumers ---- */
        tma_setmaxnreg_inc<232>();
        const uint32_t cw = wg - 1u; /* rows 64 * cw .. of the tile */
        const uint32_t lane = threadIdx.x % 32u;
        const bool issuer = threadIdx.x % 128u == 0; /* issues this warpgroup's epilogue stores */
        if (TMA_EPI && issuer)
            tma_prefetch_desc(&tc);
        float acc[128];
        /* The descriptors of stage 0, one per K step, derived once from the box facts (this warpgroup's 64
         * rows of A start 64 * row_pitch bytes into the box: on the swizzle period). Stage s's are these
         * plus s * bytes-per-box in the start-address field (tma_wgmma_desc_advance). Deriving all eight in
         * the loop cost ~270 instructions per consumer warp per stage, a serial chain longer than the
         * previous stage's wgmma group (ncu: tensor pipe ~69% busy, fixed-latency stalls 43%). */
        uint64_t da0[BK / 16u], db0[BK / 16u];
#pragma unroll
        for (uint32_t kk = 0; kk < BK / 16u; kk++) {
            da0[kk] = tma_wgmma_desc_box(&ta.box, tma_smem_addr(sa) + cw * 64u * ta.box.row_pitch, kk * 16u);
            db0[kk] = tma_wgmma_desc_box(&tb.box, tma_smem_addr(sb), kk * 16u);
        }
        uint32_t s = 0, phase = 0;
        for (uint32_t u = cluster_id; u < units; u += clusters) {
            uint32_t gm, tn;
            tma_gemm_tile_of(u, groups_m, tiles_n, group_m, &gm, &tn);
            const uint32_t tm = gm * CL + rank; /* may be past the last tile row: loads fill zeros, no store */
#pragma unroll
            for (int i = 0; i < 128; i++)
                acc[i] = 0.f;
            uint32_t prev = 0;
            for (uint32_t kb = 0; kb < nk; kb++) {
                tma_mbar_wait_quiet(&full[s], phase);
                uint64_t da[BK / 16u], db[BK / 16u]; /* all descriptors before the fence (ptxas C7519) */
#pragma unroll
                for (uint32_t kk = 0; kk < BK / 16u; kk++) {
                    da[kk] = tma_wgmma_desc_advance(da0[kk], s * A_BYTES);
                    db[kk] = tma_wgmma_desc_advance(db0[kk], s * B_BYTES);
                }
                tma_wgmma_fence();
#pragma unroll
                for (uint32_t kk = 0; kk < BK / 16u; kk++)
                    tma_wgmma_m64n256k16_bf16(acc, da[kk], db[kk]);
                tma_wgmma_commit();
                tma_wgmma_wait<1>(); /* the group of the previous stage is done: release that stage */
                if (kb > 0 && lane == 0)
                    release_stage<CL>(&empty[prev]);
                prev = s;
                if (++s == STAGES) {
                    s = 0;
                    phase ^= 1u;
                }
            }
            tma_wgmma_wait<0>();
            tma_wgmma_fence_regs(acc);
            if (nk > 0 && lane == 0)
                release_stage<CL>(&empty[prev]);

            const uint32_t row0 = tm * BM + cw * 64u, col0 = tn * BN;
            if (row0 >= (uint32_t)M)
                continue; /* a cluster's second tile row past the end of C (uniform in the warpgroup) */
            if (TMA_EPI)
                epilogue_tma<OutT>(acc, &tc, se + cw * EPI_BUFS * EPI_BYTES, row0, col0, 1u + cw, issuer,
                                   no_store != 0);
            else if (!no_store)
                epilogue_direct(acc, c, M, N, row0, col0);
        }
        if (TMA_EPI && issuer)
            tma_store_wait<0>(); /* the block's shared memory stays until the last store has read it */
    }
    if (CL == 2) {
        tma_cluster_arrive(); /* no block leaves while its peer may still arrive on its barriers */
        tma_cluster_wait();
    }
}

/* Every instance of the kernel, for attributes and occupancy queries. */
#define TMA_GEMM_INSTANCES(X)                                                                               \
    X(1, true, __nv_bfloat16) X(1, false, __nv_bfloat16) X(2, true, __nv_bfloat16) X(2, false, __nv_bfloat16)  \
    X(1, true, float) X(1, false, float) X(2, true, float) X(2, false, float)

static size_t out_bytes(tma_gemm_out out) { return out == TMA_GEMM_OUT_F32 ? 4u : 2u; }

extern "C" cudaError_t tma_gemm_plan_make_out(tma_gemm_plan *p, const void *a, const void *b, void *c,
                                              tma_gemm_out out, int m, int n, int k) {
    if (!p || m < 0 || n < 0 || k < 0 || k % 8 != 0 || ((uintptr_t)a | (uintptr_t)b) % 16 != 0 ||
        (m > 0 && n > 0 && !c) || (k > 0 && (!a || !b)) || (out != TMA_GEMM_OUT_BF16 && out != TMA_GEMM_OUT_F32) ||
        (uintptr_t)c % out_bytes(out) != 0) {
        fprintf(stderr, "tma_gemm: needs M, N, K >= 0, K a multiple of 8 (16-byte TMA row stride), A and B "
                        "16-byte aligned and non-NULL, C aligned to its element, C bf16 or fp32 (got M=%d N=%d "
                        "K=%d, C type %d)\n",
                m, n, k, (int)out);
        return cudaErrorInvalidValue;
    }
    memset(p, 0, sizeof *p);
    p->cluster = 1;
    p->group_m = TMA_GEMM_GROUP_M;
    p->c = c;
    p->out = out;
    p->m = m, p->n = n, p->k = k;
    /* TMA can store C when its row pitch and address are multiples of 16 bytes; otherwise from registers */
    const size_t eb = out_bytes(out);
    p->epilogue = ((size_t)n * eb % 16 == 0 && (uintptr_t)c % 16 == 0) ? TMA_GEMM_EPILOGUE_TMA_STORE
                                                                       : TMA_GEMM_EPILOGUE_DIRECT;
    p->smem = SMEM_BYTES;
    if (m == 0 || n == 0 || k == 0)
        return cudaSuccess; /* nothing to multiply; run() writes zeros when K == 0 */
    tma_tiled_desc da = tma_desc_2d(TMA_DTYPE_BF16, (void *)a, (uint64_t)m, (uint64_t)k, (uint64_t)k * 2u, BM, BK,
                                    TMA_SWIZZLE_128B);
    tma_tiled_desc db = tma_desc_2d(TMA_DTYPE_BF16, (void *)b, (uint64_t)n, (uint64_t)k, (uint64_t)k * 2u, BN, BK,
                                    TMA_SWIZZLE_128B);
    tma_tiled_desc dbh = db;
    dbh.box_dim[1] = BN / 2;
    da.l2_promotion = db.l2_promotion = dbh.l2_promotion = TMA_L2_256B;
    tma_diag diag;
    if (tma_tensor_make(&p->a, &da, &diag) != TMA_OK || tma_tensor_make(&p->b, &db, &diag) != TMA_OK ||
        tma_tensor_make(&p->b_half, &dbh, &diag) != TMA_OK) {
        fprintf(stderr, "tma_gemm: %s: %s\n", tma_status_name(diag.status), diag.message);
        return cudaErrorInvalidValue;
    }
    if (p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE) {
        tma_tiled_desc dc = tma_desc_2d(out == TMA_GEMM_OUT_F32 ? TMA_DTYPE_F32 : TMA_DTYPE_BF16, c, (uint64_t)m,
                                        (uint64_t)n, (uint64_t)n * eb, EPI_ROWS, (uint32_t)(EPI_ROW_BYTES / eb),
                                        EPI_SWIZZLE);
        if (tma_tensor_make(&p->c_map, &dc, &diag) != TMA_OK) {
            fprintf(stderr, "tma_gemm: C: %s: %s\n", tma_status_name(diag.status), diag.message);
            return cudaErrorInvalidValue;
        }
    }
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&p->sms, cudaDevAttrMultiProcessorCount, dev);
#define TMA_GEMM_SET_SMEM_(CL, EPI_TMA, T)                                                                \
    if (e == cudaSuccess)                                                                                 \
        e = cudaFuncSetAttribute(tma_gemm_kernel<CL, EPI_TMA, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                 (int)SMEM_BYTES);
    TMA_GEMM_INSTANCES(TMA_GEMM_SET_SMEM_)
#undef TMA_GEMM_SET_SMEM_
    /* Clusters of two sharing B where each block has more than one tile. Measured on an H200 (docs/GEMM.md,
     * interleaved timing): within 1% at 4096^3, 4000^3 and 8192^3, +29-36% at 8192 x 8192 x 1000; 5-6%
     * slower at 2048^3, where each block has one tile. */
    const long tiles_m = (m + (long)BM - 1) / (long)BM, tiles_n = (n + (long)BN - 1) / (long)BN;
    p->cluster = tiles_m >= 2 && tiles_m * tiles_n > p->sms ? 2 : 1;
    return e;
}

extern "C" cudaError_t tma_gemm_plan_make(tma_gemm_plan *p, const void *a, const void *b, void *c, int m, int n,
                                          int k) {
    return tma_gemm_plan_make_out(p, a, b, c, TMA_GEMM_OUT_BF16, m, n, k);
}

/* The launch configuration of a plan: persistent grid of min(co-resident blocks, work) blocks. */
static int launch_config(const tma_gemm_plan *p, cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr) {
    if (p->m == 0 || p->n == 0 || p->k == 0)
        return 0;
    const int cl = p->cluster == 2 ? 2 : 1;
    const long tiles_m = (p->m + (long)BM - 1) / (long)BM, tiles_n = (p->n + (long)BN - 1) / (long)BN;
    const long units = (tiles_m + cl - 1) / cl * tiles_n; /* clusters' worth of work */
    memset(cfg, 0, sizeof *cfg);
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)cl;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg->blockDim = dim3(THREADS, 1, 1);
    cfg->dynamicSmemBytes = p->smem;
    cfg->attrs = attr;
    cfg->numAttrs = 1;
    long clusters = p->sms / cl;
    if (cl == 2) {
        int active = 0; /* co-resident clusters: GPCs with an odd SM count leave an SM out */
        cfg->gridDim = dim3((unsigned)(2 * clusters), 1, 1);
        if (cudaOccupancyMaxActiveClusters(&active, tma_gemm_kernel<2, true, __nv_bfloat16>, cfg) == cudaSuccess &&
            active > 0)
            clusters = active;
        (void)cudaGetLastError();
    }
    if (p->grid_blocks > 0)
        clusters = p->grid_blocks / cl > 0 ? p->grid_blocks / cl : 1;
    if (clusters > units)
        clusters = units;
    cfg->gridDim = dim3((unsigned)(clusters * cl), 1, 1);
    return (int)(clusters * cl);
}

extern "C" int tma_gemm_grid(const tma_gemm_plan *p) {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    return launch_config(p, &cfg, attr);
}

extern "C" cudaError_t tma_gemm_run(const tma_gemm_plan *p, cudaStream_t stream) {
    if (p->m == 0 || p->n == 0)
        return cudaSuccess;
    if (p->k == 0)
        return cudaMemsetAsync(p->c, 0, (size_t)p->m * (size_t)p->n * out_bytes(p->out), stream);
    const bool tma_epi = p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE;
    if ((tma_epi && p->c_map.box.tx_bytes == 0) || (p->epilogue != TMA_GEMM_EPILOGUE_TMA_STORE &&
                                                    p->epilogue != TMA_GEMM_EPILOGUE_DIRECT)) {
        fprintf(stderr, "tma_gemm: epilogue %d is not available for this plan (TMA stores need N times the element "
                        "size and C's address to be multiples of 16; N = %d)\n",
                p->epilogue, p->n);
        return cudaErrorInvalidValue;
    }
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    launch_config(p, &cfg, attr);
    cfg.stream = stream;
    const uint32_t group = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    const uint32_t no_store = p->diag_no_store ? 1u : 0u;
    const tma_tensor *tb = p->cluster == 2 ? &p->b_half : &p->b;
    const bool f32 = p->out == TMA_GEMM_OUT_F32;
#define TMA_GEMM_LAUNCH_(CL, EPI_TMA, T)                                                                  \
    if ((p->cluster == 2 ? 2 : 1) == CL && tma_epi == EPI_TMA && f32 == (sizeof(T) == 4))                 \
        return cudaLaunchKernelEx(&cfg, tma_gemm_kernel<CL, EPI_TMA, T>, p->a, *tb, p->c_map, (T *)p->c, p->m, p->n, \
                                  p->k, group, no_store);
    TMA_GEMM_INSTANCES(TMA_GEMM_LAUNCH_)
#undef TMA_GEMM_LAUNCH_
    return cudaErrorInvalidValue; /* not reached: the instances cover every case */
}

extern "C" cudaError_t tma_gemm_bf16(const void *a, const void *b, void *c, int m, int n, int k) {
    tma_gemm_plan p;
    cudaError_t e = tma_gemm_plan_make(&p, a, b, c, m, n, k);
    if (e == cudaSuccess)
        e = tma_gemm_run(&p, 0);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    return e;
}

__global__ void fill_random_bf16_kernel(__nv_bfloat16 *p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 29;
        x *= 0x94D049BB133111EBull;
        x ^= x >> 32;
        p[i] = __float2bfloat16_rn((float)(x >> 40) * (2.0f / 16777216.0f) - 1.0f);
    }
}

extern "C" cudaError_t tma_gemm_fill_random_bf16(void *p, size_t n, uint64_t seed, cudaStream_t stream) {
    if (n == 0)
        return cudaSuccess;
    size_t blocks = (n + 255) / 256;
    fill_random_bf16_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>((__nv_bfloat16 *)p, n,
                                                                                            seed);
    return cudaGetLastError();
}
