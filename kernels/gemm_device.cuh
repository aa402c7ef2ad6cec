/* Private to libtma_kernels: the device half the GEMMs share (gemm.cu, grouped_gemm.cu): the block's layout
 * constants, the consumers' release of a stage, and the two epilogues. CUDA, sm_90a. Not installed. */
#ifndef KERNELS_GEMM_DEVICE_CUH
#define KERNELS_GEMM_DEVICE_CUH

#include <cuda_bf16.h>

#include "gemm_tiles.h"

#include "tma/device.cuh"
#include "tma/kernels.h"
#include "tma/wgmma.cuh"

namespace {
constexpr uint32_t BM = TMA_GEMM_BM, BN = TMA_GEMM_BN, BK = TMA_GEMM_BK, STAGES = TMA_GEMM_STAGES;
constexpr uint32_t THREADS = 384;
constexpr uint32_t CONSUMER_WARPS = 8;
constexpr uint32_t A_BYTES = BM * BK * 2u, B_BYTES = BN * BK * 2u;
/* The epilogue box: EPI_ROWS rows of 128 bytes = the 128B swizzle span. The host encodes C's map with
 * EPI_SWIZZLE; the kernel addresses the box through gm_epi_offset (gemm_tiles.h), which uses it too. */
constexpr uint32_t EPI_ROWS = GM_EPI_ROWS, EPI_ROW_BYTES = GM_EPI_ROW_BYTES;
constexpr uint32_t EPI_BYTES = EPI_ROWS * EPI_ROW_BYTES, EPI_BUFS = 2;
constexpr tma_swizzle EPI_SWIZZLE = GM_EPI_SWIZZLE;
static_assert(BM / 2u == EPI_ROWS && EPI_ROW_BYTES == 128u, "a consumer's 64 rows, 128-byte box rows");
constexpr size_t SMEM_BYTES =
    1024 + STAGES * (A_BYTES + B_BYTES) + 2u * EPI_BUFS * EPI_BYTES + 2u * STAGES * sizeof(uint64_t);
static_assert(SMEM_BYTES <= TMA_MAX_SMEM_PER_BLOCK, "over the 227 KiB a block may have on sm_90");
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

/* A consumer warpgroup's main loop for one tile: acc = the sum over nk stages of the ring, starting at stage s
 * with parity `phase` (both advanced past the tile), of A's 64 rows x B's 256 rows (wgmma m64n256k16, four per
 * stage). da0 / db0: the descriptors of stage 0, one per 16-wide K step; stage s's are these plus s * bytes-per-box
 * in the start-address field (deriving all eight in the loop cost ~270 instructions per warp per stage, a serial
 * chain longer than the previous stage's wgmma group: ncu, tensor pipe ~69% busy). One wgmma group stays in
 * flight; a stage is released (by `releaser`, one lane per warp) when the group that read it has completed. */
template <int CL>
static __device__ __forceinline__ void gm_mainloop(float (&acc)[128], const uint64_t (&da0)[BK / 16u],
                                                   const uint64_t (&db0)[BK / 16u], uint64_t *full, uint64_t *empty,
                                                   uint32_t nk, uint32_t &s, uint32_t &phase, bool releaser) {
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
        if (kb > 0 && releaser)
            release_stage<CL>(&empty[prev]);
        prev = s;
        if (++s == STAGES) {
            s = 0;
            phase ^= 1u;
        }
    }
    tma_wgmma_wait<0>();
    tma_wgmma_fence_regs(acc);
    if (nk > 0 && releaser)
        release_stage<CL>(&empty[prev]);
}

/* The descriptors of stage 0 for gm_mainloop: consumer warpgroup cw's 64 rows of A start 64 * row_pitch bytes
 * into the A box (on the swizzle period); B's whole box. */
static __device__ __forceinline__ void gm_stage0_descs(const tma_box_info *a_box, const tma_box_info *b_box,
                                                       uint32_t sa, uint32_t sb, uint32_t cw,
                                                       uint64_t (&da0)[BK / 16u], uint64_t (&db0)[BK / 16u]) {
#pragma unroll
    for (uint32_t kk = 0; kk < BK / 16u; kk++) {
        da0[kk] = tma_wgmma_desc_box(a_box, sa + cw * 64u * a_box->row_pitch, kk * 16u);
        db0[kk] = tma_wgmma_desc_box(b_box, sb, kk * 16u);
    }
}

/* C's element type: two adjacent accumulators (a pair) or one, converted and stored. */
static __device__ __forceinline__ void store_pair(__nv_bfloat16 *p, float lo, float hi) {
    *(__nv_bfloat162 *)p = __floats2bfloat162_rn(lo, hi);
}
static __device__ __forceinline__ void store_pair(float *p, float lo, float hi) { *(float2 *)p = make_float2(lo, hi); }
static __device__ __forceinline__ void store_one(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }
static __device__ __forceinline__ void store_one(float *p, float v) { *p = v; }

/* One accumulator pair (row, col), (row, col + 1) into the epilogue box at `box`, as C's type (gemm_tiles.h:
 * gm_epi_offset, gm_epi_store_col). */
template <typename OutT>
static __device__ __forceinline__ void box_store_pair(uint8_t *box, uint32_t row, uint32_t col, float v0, float v1) {
    if constexpr (sizeof(OutT) == 2) {
        store_pair((OutT *)(box + gm_epi_offset(row, col, 2)), v0, v1);
    } else {
#pragma unroll
        for (uint32_t s = 0; s < 2; s++) {
            const uint32_t c = gm_epi_store_col(s, row, col);
            store_one((OutT *)(box + gm_epi_offset(row, c, 4)), c == col ? v0 : v1);
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
 * swizzle and, for fp32, the element order of gm_epi_store_col put them in 32 different banks (the
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

#endif /* KERNELS_GEMM_DEVICE_CUH */
