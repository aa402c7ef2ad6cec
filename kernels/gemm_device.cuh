/* Private to libtma_kernels: the device half the GEMMs share (gemm.cu, grouped_gemm.cu): the block's layout
 * constants, the consumers' release of a stage, and the two epilogues. CUDA, sm_90a. Not installed. */
#ifndef KERNELS_GEMM_DEVICE_CUH
#define KERNELS_GEMM_DEVICE_CUH

#include <string.h>

#include <cuda_bf16.h>

#include "gemm_tiles.h"

#include "tma/device.cuh"
#include "tma/kernels.h"
#include "tma/wgmma.cuh"

namespace {
constexpr uint32_t BM = TMA_GEMM_BM, BN = TMA_GEMM_BN, BK = TMA_GEMM_BK;
constexpr uint32_t THREADS = 384;
constexpr uint32_t CONSUMER_WARPS = 8;
/* The epilogue box: EPI_ROWS rows of 128 bytes = the 128B swizzle span. The host encodes C's map with
 * EPI_SWIZZLE; the kernel addresses the box through gm_epi_offset (gemm_tiles.h), which uses it too. */
constexpr uint32_t EPI_ROWS = GM_EPI_ROWS, EPI_ROW_BYTES = GM_EPI_ROW_BYTES;
constexpr uint32_t EPI_BYTES = EPI_ROWS * EPI_ROW_BYTES, EPI_BUFS = 2;
constexpr tma_swizzle EPI_SWIZZLE = GM_EPI_SWIZZLE;
/* The tile queue (gm_queue_push / gm_queue_take): slots of GM_QUEUED_BYTES, a full and an empty barrier each. */
constexpr uint32_t GM_TILE_SLOTS = 4, GM_QUEUED_BYTES = 48;
/* Then the schedule an Ops makes on the device (Ops::DEVICE_SCHED: gm_queue_sched). */
constexpr uint32_t GM_SCHED_SLOT_BYTES = 32;
constexpr uint32_t GM_QUEUE_BYTES =
    GM_TILE_SLOTS * (GM_QUEUED_BYTES + 2u * (uint32_t)sizeof(uint64_t)) + GM_SCHED_SLOT_BYTES;
static_assert(BM / 2u == EPI_ROWS && EPI_ROW_BYTES == TMA_SWIZZLE_SPAN_128B, "a consumer's 64 rows, 128-byte box rows");

/* A block's shared memory for output tiles of BM x TBN (TBN = 256, 192, 128 or 64: one m64nTBNk16 wgmma per
 * consumer warpgroup and K step): as many stages of an A box (BM rows x BK) and a B box (TBN rows x BK) as fit beside
 * the epilogue boxes and the barriers, at most 8. 256: 4 stages (225 KiB), 192: 4, 128: 6, 64: 8.
 * TAPS > 1 (the convolution's halo tile, conv.cu): a stage holds TAPS B boxes, and the consumers read its A box TAPS
 * times, tap t from row t on (GM_TAP_ROW_BYTES a row): rows BM .. BM + TAPS - 2 lie past the box, so each A box has a
 * swizzle period of slack after it that no load writes (what lands there feeds only output rows that are never
 * stored). 64 x 3 taps: 4 stages. */
constexpr uint32_t GM_TAP_ROW_BYTES = BK * 2u;
template <uint32_t TBN, uint32_t TAPS = 1u>
struct GmShape {
    static_assert(TAPS == 1u || (TAPS - 1u) * GM_TAP_ROW_BYTES <= TMA_SWIZZLE_PERIOD_128B,
                  "the taps' rows fit the slack");
    static constexpr uint32_t A_BYTES = BM * BK * 2u + (TAPS > 1u ? TMA_SWIZZLE_PERIOD_128B : 0u),
                              B_BYTES = TAPS * TBN * BK * 2u, B_TAP_BYTES = TBN * BK * 2u;
    /* alignment slack, epilogue boxes, full + empty barriers (at most 8 stages), stream-K's two fixup barriers and
     * the tile queue */
    static constexpr uint32_t FIXED = TMA_SWIZZLE_PERIOD_128B + 2u * EPI_BUFS * EPI_BYTES +
                                      (2u * 8u + 2u) * (uint32_t)sizeof(uint64_t) + GM_QUEUE_BYTES;
    static constexpr uint32_t FIT = (TMA_MAX_SMEM_PER_BLOCK - FIXED) / (A_BYTES + B_BYTES);
    static constexpr uint32_t STAGES = FIT < 8u ? FIT : 8u;
    static constexpr size_t SMEM_BYTES =
        TMA_SWIZZLE_PERIOD_128B + STAGES * (A_BYTES + B_BYTES) + 2u * EPI_BUFS * EPI_BYTES +
        (2u * STAGES + 2u) * sizeof(uint64_t) + GM_QUEUE_BYTES;
    /* stream-K's owner reads a helper's partial half tile (64 x TBN fp32) into its warpgroup's half of the stages */
    static_assert(STAGES * (A_BYTES + B_BYTES) / 2u >= 64u * TBN * 4u, "a partial half tile fits half the stages");
    static_assert(SMEM_BYTES <= TMA_MAX_SMEM_PER_BLOCK, "over the 227 KiB a block may have on sm_90");
};
/* The GEMMs' tile, 128 x 256. */
constexpr uint32_t A_BYTES = GmShape<BN>::A_BYTES, B_BYTES = GmShape<BN>::B_BYTES, STAGES = GmShape<BN>::STAGES;
constexpr size_t SMEM_BYTES = GmShape<BN>::SMEM_BYTES;
static_assert(STAGES == TMA_GEMM_STAGES, "the GEMM's documented ring");
} // namespace

/* GM_TRACE (a diagnostic build: -DGM_TRACE=N for CUDA): gm_pipeline_kernel prints the timeline of each block in its
 * launches N, N + 1 and N + 2 of the process (counted over every instance), one line per block:
 *     GM_TRACE launch sched block events e0 .. e9
 * each e = globaltimer (ns) x 16 + event, modulo 2^64, as consumer thread 128 passes: 0 the start, 1 a segment's
 * last wgmma done, 2 a stream-K helper's partial tile stored and its flag set, 3 an owner's stages free (its
 * fixup begins), 4 the epilogue begins, 5 the last segment done, 6 its last store has read shared memory, 7 split-K:
 * past the cluster barrier after the partial tiles, 8 split-K: its slice added up and stored. What the timelines of
 * docs/lab/conv.md come from; in the default build none of it exists. The events wait in global memory, not
 * registers: the consumers already hold 128 accumulators, and the traced build should keep the default's registers. */
#ifdef GM_TRACE
#define GM_TRACE_EVENTS 10u
#define GM_TRACE_BLOCKS 264u
__device__ unsigned int gm_trace_launch;
__device__ unsigned long long gm_trace_t[GM_TRACE_BLOCKS][GM_TRACE_EVENTS];
#define GM_TR(ev)                                                                                                  \
    do {                                                                                                           \
        if (tr_on) {                                                                                               \
            unsigned long long t_;                                                                                 \
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_));                                                \
            const uint32_t i_ = tr_n < GM_TRACE_EVENTS ? tr_n++ : GM_TRACE_EVENTS - 1u; /* past: the last again */ \
            gm_trace_t[blockIdx.x % GM_TRACE_BLOCKS][i_] = t_ * 16ull + (ev);                                     \
        }                                                                                                          \
    } while (0)
#else
#define GM_TR(ev) do { } while (0)
#endif
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
 * with parity `phase` (both advanced past the tile), of A's 64 rows x B's TBN = 2 R rows (wgmma m64nTBNk16, four
 * per stage). da0 / db0: the descriptors of stage 0's first 16-wide K step; the others are these plus, in the
 * start-address field, s * bytes-per-box + 32 bytes per K step (the boxes are 128B-swizzled, whose descriptors
 * address a K step by its byte offset in the row: wgmma.h, tma_wgmma_desc_kmajor; tests/test_wgmma.c checks the
 * derivation against the model). Deriving them afresh every stage cost ~270 instructions per warp per stage, a
 * serial chain longer than the previous stage's wgmma group (ncu: tensor pipe ~69% busy); keeping all eight of
 * stage 0 took 16 of the consumers' 168 registers, which stream-K's fixup then lacked (ptxas spilled 4-12 bytes).
 * One wgmma group stays in flight; a stage is released (by `releaser`, one lane per warp) when the group that read
 * it has completed. */
template <int CL, uint32_t R, uint32_t TAPS = 1u>
static __device__ __forceinline__ void gm_mainloop(float (&acc)[R], uint64_t da0, uint64_t db0, uint64_t *full,
                                                   uint64_t *empty, uint32_t nk, uint32_t &s, uint32_t &phase,
                                                   bool releaser) {
#pragma unroll
    for (uint32_t i = 0; i < R; i++)
        acc[i] = 0.f;
    using Shape = GmShape<2u * R, TAPS>;
    constexpr uint32_t KS = BK / 16u; /* K steps a tap */
    uint32_t prev = 0;
    for (uint32_t kb = 0; kb < nk; kb++) {
        tma_mbar_wait_quiet(&full[s], phase);
        uint64_t da[TAPS * KS], db[TAPS * KS]; /* all descriptors before the fence (ptxas C7519) */
#pragma unroll
        for (uint32_t t = 0; t < TAPS; t++)
#pragma unroll
            for (uint32_t kk = 0; kk < KS; kk++) {
                da[t * KS + kk] =
                    tma_wgmma_desc_advance(da0, s * Shape::A_BYTES + t * GM_TAP_ROW_BYTES + kk * GM_K_STEP_BYTES);
                db[t * KS + kk] =
                    tma_wgmma_desc_advance(db0, s * Shape::B_BYTES + t * Shape::B_TAP_BYTES + kk * GM_K_STEP_BYTES);
            }
        tma_wgmma_fence();
#pragma unroll
        for (uint32_t i = 0; i < TAPS * KS; i++)
            tma_wgmma_m64nk16_bf16<2u * R>(acc, da[i], db[i]);
        tma_wgmma_commit();
        tma_wgmma_wait<1>(); /* the group of the previous stage is done: release that stage */
        if (kb > 0 && releaser)
            release_stage<CL>(&empty[prev]);
        prev = s;
        if (++s == Shape::STAGES) {
            s = 0;
            phase ^= 1u;
        }
    }
    tma_wgmma_wait<0>();
    tma_wgmma_fence_regs(acc);
    if (nk > 0 && releaser)
        release_stage<CL>(&empty[prev]);
}

/* gm_mainloop for a consumer warpgroup whose 64 rows all lie past the tile's rows (the product's last tile row with at
 * most 64 rows left, a grouped GEMM's group of at most 64 rows, a cluster's second tile row past M): it waits for each
 * of the nk stages and releases it at once, with no wgmma, so the other warpgroup has the tensor cores to itself. Such
 * a block keeps a pace of its own: where blocks share a B tile through the L2, the grouped GEMM computes rows of the
 * tile above instead (gg_box_row, docs/lab/grouped_gemm.md "One pace for the blocks that share B"). Its accumulators
 * are zeros (what the zero-filled rows sum to). The stages pass at the same ring positions and parities as
 * gm_mainloop's. A loop of its own: a branch on it inside gm_mainloop's loop made ptxas
 * serialize every wgmma of the kernel (C7518: a warpgroup dependency barrier in a divergent path; CUDA 13.0). */
template <int CL, uint32_t R, uint32_t TAPS = 1u>
static __device__ __forceinline__ void gm_pass_stages(float (&acc)[R], uint64_t *full, uint64_t *empty, uint32_t nk,
                                                      uint32_t &s, uint32_t &phase, bool releaser) {
#pragma unroll
    for (uint32_t i = 0; i < R; i++)
        acc[i] = 0.f;
    for (uint32_t kb = 0; kb < nk; kb++) {
        tma_mbar_wait_quiet(&full[s], phase);
        if (releaser)
            release_stage<CL>(&empty[s]);
        if (++s == GmShape<2u * R, TAPS>::STAGES) {
            s = 0;
            phase ^= 1u;
        }
    }
}

/* The descriptors of stage 0's first K step for gm_mainloop: consumer warpgroup cw's 64 rows of A start
 * 64 * row_pitch bytes into the A box (on the swizzle period); B's whole box. */
static __device__ __forceinline__ void gm_stage0_descs(const tma_box_info *a_box, const tma_box_info *b_box,
                                                       uint32_t sa, uint32_t sb, uint32_t cw, uint64_t *da0,
                                                       uint64_t *db0) {
    *da0 = tma_wgmma_desc_box(a_box, sa + cw * 64u * a_box->row_pitch, 0);
    *db0 = tma_wgmma_desc_box(b_box, sb, 0);
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

/* A warpgroup's two epilogue buffers take its boxes in turn across all of its tiles, not afresh with each tile: box i
 * goes to buffer i % EPI_BUFS, counted from the warpgroup's first box. epi_store_box's issuer waits, before the barrier
 * of box i, until the store of box i - 1 has read its buffer, which is the buffer box i + 1 writes after that barrier:
 * that is the only thing that keeps a buffer's next writes behind its last store. Restarting at buffer 0 with each tile
 * broke it wherever a tile has an odd number of boxes (128 x 64 bf16 tiles: 1; the filter-major 128 x 192: 3): the
 * next tile's first box was written into the buffer whose store was still in flight, and y got values of two tiles
 * mixed, a different mix from run to run. It showed on ResNet-50's 1x1 layers, where a tile has 1-4 stages and the
 * epilogues come back to back (docs/lab/conv.md, "Wrong outputs on 1x1 layers"). `next` is the buffer of the
 * warpgroup's next box; with an even number of boxes per tile it stays 0 and folds away. */
template <uint32_t BOXES>
static __device__ __forceinline__ uint32_t epi_first_buf(uint32_t &next) {
    const uint32_t first = BOXES % EPI_BUFS == 0u ? 0u : next;
    next = (first + BOXES) % EPI_BUFS;
    return first;
}

/* Where a warpgroup's epilogue boxes go in C's map, past dimension 0 (the column, the epilogue's own): a matrix's
 * {row0} (CRANK 2, Ops::C_RANK's default); the halo convolution's y {q, p, n} (CRANK 4: its 64 rows are whole image
 * rows, conv.cu). */
struct GmStoreAt {
    int32_t d[3];
};

/* The end of one epilogue box, once the warpgroup's threads have written it into `buf`: each thread's writes ordered
 * before the copy engine's reads; the issuer waits until the previous box's store has read the other buffer; a named
 * barrier; then the issuer stores the box at (x, at) of C's map, of rank CRANK. */
template <uint32_t CRANK = 2u>
static __device__ __forceinline__ void epi_store_box(const tma_tensor *tc, uint8_t *buf, int32_t x,
                                                     const GmStoreAt &at, uint32_t barrier_id, bool issuer,
                                                     bool no_store) {
    tma_fence_proxy_async(); /* this thread's writes, before the copy engine reads them */
    if (issuer)
        tma_store_wait_read<0>(); /* the box before has left the other buffer */
    tma_named_barrier_sync(barrier_id, 128);
    if (issuer && !no_store) {
        tma_store<CRANK>(tc, buf, {x, at.d[0], at.d[1], at.d[2], 0});
        tma_store_commit();
    }
}

/* Epilogue through shared memory: this consumer warpgroup's 64 x 2R accumulators (wgmma fragment: row
 * 16 * warp + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + {0, 1} in acc[4 j + 2 h + {0, 1}]) become boxes
 * of 64 rows x 128 bytes (64 bf16 or 32 fp32 columns), written in turn into the warpgroup's two buffers and
 * TMA-stored at (row0, col0 + q * box columns) by thread 0 of the warpgroup (the `issuer`). One named
 * barrier per box: before it, the issuer waits until the copy engine has read the previous box out of the
 * other buffer, so after it every thread may write that buffer again (the next box), and the issuer may store
 * this one. The last two boxes' stores are still in flight when this returns; the next tile's first boxes wait
 * for them the same way, its first box in the buffer after this tile's last (epi_first_buf: `next_buf`).
 * Writes: 4-byte stores, each warp store 8 rows (lane / 4, all different mod 8) x 16 bytes; the 128B
 * swizzle and, for fp32, the element order of gm_epi_store_col put them in 32 different banks (the
 * sample's CPU self-check counts it). */
template <typename OutT, uint32_t R, uint32_t CRANK = 2u>
static __device__ __forceinline__ void epilogue_tma(const float (&acc)[R], const tma_tensor *tc, uint8_t *bufs,
                                                    const GmStoreAt &at, uint32_t col0, uint32_t barrier_id,
                                                    bool issuer, bool no_store, uint32_t &next_buf) {
    constexpr uint32_t COLS = EPI_ROW_BYTES / sizeof(OutT), GROUPS = COLS / 8u; /* 8-column groups per box */
    constexpr uint32_t BOXES = 2u * R / COLS;
    const uint32_t warp = (threadIdx.x % 128u) / 32u, lane = threadIdx.x % 32u;
    const uint32_t first = epi_first_buf<BOXES>(next_buf);
#pragma unroll
    for (uint32_t q = 0; q < BOXES; q++) {
        uint8_t *buf = bufs + ((first + q) % EPI_BUFS) * EPI_BYTES;
#pragma unroll
        for (uint32_t jj = 0; jj < GROUPS; jj++) {
            const uint32_t j = q * GROUPS + jj;
#pragma unroll
            for (uint32_t h = 0; h < 2; h++) {
                const uint32_t row = 16u * warp + lane / 4u + 8u * h, col = 8u * jj + 2u * (lane % 4u);
                box_store_pair<OutT>(buf, row, col, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
            }
        }
        epi_store_box<CRANK>(tc, buf, (int32_t)(col0 + q * COLS), at, barrier_id, issuer, no_store);
    }
}

/* Two accumulators as the low and high halves of a bf16 pair's 32 bits (stmatrix's register operand). */
static __device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* epilogue_tma for a product stored transposed (Ops::C_TRANSPOSED: C^T is the row-major matrix in memory, so the
 * accumulators' columns are its rows), bf16. This warpgroup's 64 x 2R accumulators become boxes of 64 rows of C^T
 * (accumulator columns 64 q ..) x the warpgroup's 64 rows as 128 bytes, TMA-stored at (x = row0, y = col0 + 64 q)
 * of C^T's map, with the buffers and barriers of epilogue_tma. The transposition is stmatrix.trans's
 * (tma_stmatrix_x4_trans, addressed by gm_epi_t_offset): accumulator rows 16 warp + 8 h .. + 7 by columns 8 j .. + 7
 * are one 8 x 8 matrix, whose column b becomes box row 8 (j % 8) + b, bytes 32 warp + 16 h .. + 15; one instruction
 * stores four (h = 0, 1 by j, j + 1), each matrix's 8 box rows in 8 different 16-byte bank groups (the 128B swizzle:
 * 8 consecutive rows), one wavefront a matrix. 12 instructions a thread for 96 accumulators, where 4-byte stores
 * would need 48 and a shuffle each. */
template <uint32_t R>
static __device__ __forceinline__ void epilogue_tma_t(const float (&acc)[R], const tma_tensor *tc, uint8_t *bufs,
                                                      uint32_t row0, uint32_t col0, uint32_t barrier_id, bool issuer,
                                                      bool no_store, uint32_t &next_buf) {
    static_assert(2u * R % EPI_ROWS == 0, "whole boxes of 64 accumulator columns");
    constexpr uint32_t BOXES = 2u * R / EPI_ROWS;
    const uint32_t warp = (threadIdx.x % 128u) / 32u, lane = threadIdx.x % 32u;
    const uint32_t first = epi_first_buf<BOXES>(next_buf);
#pragma unroll
    for (uint32_t q = 0; q < BOXES; q++) {
        uint8_t *buf = bufs + ((first + q) % EPI_BUFS) * EPI_BYTES;
#pragma unroll
        for (uint32_t jj = 0; jj < EPI_ROWS / 8u; jj += 2) {
            const uint32_t j = q * (EPI_ROWS / 8u) + jj;
            tma_stmatrix_x4_trans(tma_smem_addr(buf + gm_epi_t_offset(warp, lane, jj)),
                                  pack_bf16x2(acc[4 * j], acc[4 * j + 1]), pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]),
                                  pack_bf16x2(acc[4 * j + 4], acc[4 * j + 5]),
                                  pack_bf16x2(acc[4 * j + 6], acc[4 * j + 7]));
        }
        epi_store_box(tc, buf, (int32_t)row0, GmStoreAt{{(int32_t)(col0 + q * EPI_ROWS), 0, 0}}, barrier_id, issuer,
                      no_store);
    }
}

/* One thread's accumulators of 8-column group j (wgmma fragment: acc[4 j], acc[4 j + 1] at (row, col), (row, col + 1);
 * acc[4 j + 2], acc[4 j + 3] eight rows below) straight to global memory: pairs where N is even and C aligned to a
 * pair, single elements otherwise, clipped to M x N (any N). CT (Ops::C_TRANSPOSED): element (i, j) at c[j M + i],
 * single elements (a pair's two lie in two rows of C^T). */
template <bool CT = false, typename OutT>
static __device__ __forceinline__ void store_group(OutT *__restrict__ c, uint32_t M, uint32_t N, bool pairs,
                                                   uint32_t row, uint32_t col, float4 v) {
#pragma unroll
    for (uint32_t h = 0; h < 2; h++) {
        if (row + 8u * h >= M || col >= N)
            continue;
        if constexpr (CT) {
            OutT *p = c + (size_t)col * (size_t)M + row + 8u * h;
            store_one(p, h ? v.z : v.x);
            if (col + 1 < N)
                store_one(p + M, h ? v.w : v.y);
            continue;
        }
        OutT *p = c + (size_t)(row + 8u * h) * (size_t)N + col;
        const float v0 = h ? v.z : v.x, v1 = h ? v.w : v.y;
        if (pairs) {
            store_pair(p, v0, v1);
        } else {
            store_one(p, v0);
            if (col + 1 < N)
                store_one(p + 1, v1);
        }
    }
}

/* Whether store_group may store pairs. */
template <typename OutT>
static __device__ __forceinline__ bool store_pairs_ok(const OutT *c, uint32_t N) {
    return N % 2u == 0u && (uintptr_t)c % (2u * sizeof(OutT)) == 0;
}

/* Epilogue from registers: this consumer warpgroup's 64 x 2R accumulators (store_group; CT: C stored transposed). */
template <bool CT, typename OutT, uint32_t R>
static __device__ __forceinline__ void epilogue_direct(const float (&acc)[R], OutT *__restrict__ c, int M, int N,
                                                       uint32_t row_base, uint32_t col_base) {
    const uint32_t warp = (threadIdx.x % 128u) / 32u, lane = threadIdx.x % 32u;
    const uint32_t row0 = row_base + warp * 16u + lane / 4u;
    const uint32_t col0 = col_base + 2u * (lane % 4u);
    const bool pairs = store_pairs_ok(c, (uint32_t)N);
#pragma unroll
    for (uint32_t j = 0; j < R / 4u; j++)
        store_group<CT>(c, (uint32_t)M, (uint32_t)N, pairs, row0, col0 + 8u * j,
                    make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
}

/* Stream-K's partial tiles (gm_sched in gemm_tiles.h): each block of the grid has a slot of BM x TBN fp32 in
 * `partials`, in the accumulators' own order (consumer warpgroup cw's half, then float4 j of thread t at
 * j * 128 + t: each warp's store or load is 512 contiguous bytes), and two flags (one per consumer warpgroup), 0 while
 * the slot holds nothing for this launch. A helper stores its partial tile and sets its flags; the owner waits for
 * them, adds the slot to its accumulators and clears them, so the next launch finds them 0 again. */
struct GmPartials {
    float4 *slots;
    uint32_t *flags;
};

static __device__ __forceinline__ void gm_flag_release(uint32_t *flag, uint32_t v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(v) : "memory");
}
static __device__ __forceinline__ uint32_t gm_flag_acquire(const uint32_t *flag) {
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    return v;
}

/* A helper's partial tile into its slot, then the flag (thread 0, after every thread of the warpgroup stored its
 * part: the named barrier orders their stores before its release). */
template <uint32_t R>
static __device__ __forceinline__ void gm_store_partial(const float (&acc)[R], float4 *slot, uint32_t *flag,
                                                        uint32_t barrier_id) {
    const uint32_t t = threadIdx.x % 128u;
#pragma unroll
    for (uint32_t j = 0; j < R / 4u; j++)
        __stcg(slot + j * 128u + t, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
    tma_named_barrier_sync(barrier_id, 128);
    if (t == 0)
        gm_flag_release(flag, 1u);
}

/* fence.proxy.async.global: this thread's view of global memory (what it acquired) before its copies read it. */
static __device__ __forceinline__ void gm_fence_proxy_async_global() {
    asm volatile("fence.proxy.async.global;" ::: "memory");
}

/* Thread 0 of a warpgroup waits for a helper's flag, bounded by a count of polls (each an L2 round trip, ~0.5 us,
 * plus a sleep: 2^22 of them take seconds; the clock-based bound of tma_mbar_wait needs two 64-bit registers more,
 * here where the 128 accumulators are live, and ptxas spilled). A hang becomes a trap: a helper that never stored
 * its part (a launch with more blocks than are resident). Then it clears the flag (nothing else touches it in this
 * launch) and orders what it acquired before its bulk copies read it. */
static __device__ __forceinline__ void gm_poll_flag(const uint32_t *flag) {
    for (uint32_t polls = 0; gm_flag_acquire(flag) == 0u; polls++) {
        if (polls == (1u << 22))
            __trap();
        __nanosleep(256);
    }
}
static __device__ __forceinline__ void gm_take_flag(uint32_t *flag) {
    gm_poll_flag(flag);
    *flag = 0u;
    gm_fence_proxy_async_global();
}

/* The slots of an owner's helpers, in the order their partial tiles are added: first, first + stride, ... (count of
 * them); a slot number s holds consumer warpgroup cw's half at 2 s + cw. */
struct GmHelpers {
    uint32_t first, count, stride;
};

/* The owner adds its helpers' partial half tiles (this warpgroup's 64 rows) to its accumulators, in helper order.
 * `region`: this warpgroup's half of the stages, free (the owner's segment is its block's last, and both warpgroups
 * are past their last wgmma). Thread 0 bulk-copies as many halves as fit in the region at once (one barrier, their
 * bytes together), then every thread adds them from there; again for the rest.
 * Measured on an H200 (two runs of the sweep, the same day): with the threads' own loads of the slots instead, four
 * float4 in flight per thread (all the registers beside 128 accumulators allow), the fixup was latency-bound:
 * stream-K at 256 wide took 51.8 us on b128 7x7x512 and 35.8 on b32 7x7x512, against 50.0 and 31.6 with one bulk
 * copy per helper. */
template <uint32_t R, uint32_t REGION>
static __device__ __forceinline__ void gm_add_partials(float (&acc)[R], const GmHelpers &helpers,
                                                       const GmPartials &partials, uint32_t cw, uint8_t *region,
                                                       uint64_t *bar, uint32_t barrier_id) {
    constexpr uint32_t HALF = R / 4u * 128u; /* float4 in a slot's half */
    constexpr uint32_t BYTES = HALF * (uint32_t)sizeof(float4), NBUF = REGION / BYTES;
    static_assert(NBUF >= 1, "a partial half tile fits the region");
    const uint32_t t = threadIdx.x % 128u;
    uint32_t phase = 0;
    for (uint32_t h0 = 0; h0 < helpers.count; h0 += NBUF) {
        const uint32_t n = helpers.count - h0 < NBUF ? helpers.count - h0 : NBUF; /* this batch */
        if (t == 0) {
            for (uint32_t b = 0; b < n; b++) {
                const uint32_t slot = 2u * (helpers.first + (h0 + b) * helpers.stride) + cw;
                gm_take_flag(partials.flags + slot);
                if (b == 0)
                    tma_mbar_arrive_expect_tx(bar, n * BYTES);
                tma_bulk_load(region + b * BYTES, partials.slots + slot * HALF, BYTES, bar);
            }
        }
        tma_mbar_wait_quiet(bar, phase);
        phase ^= 1u;
        for (uint32_t b = 0; b < n; b++) {
            const float4 *part = (const float4 *)(region + b * BYTES) + t; /* j * 128 + t: no bank conflicts */
#pragma unroll
            for (uint32_t j = 0; j < R / 4u; j++) {
                const float4 v = part[j * 128u];
                acc[4 * j] += v.x;
                acc[4 * j + 1] += v.y;
                acc[4 * j + 2] += v.z;
                acc[4 * j + 3] += v.w;
            }
        }
        tma_named_barrier_sync(barrier_id, 128); /* every thread has read the region before the next batch */
    }
}

/* A worker's next segment under the kernel's schedule (split-K's apart: gm_split_segment). */
template <bool SPLIT>
static __device__ __forceinline__ bool gm_segment_of(const gm_sched *s, uint32_t w, uint32_t *cursor,
                                                     gm_segment *seg) {
    if constexpr (SPLIT)
        return gm_split_segment(s, w, cursor, seg);
    else
        return gm_next_segment(s, w, cursor, seg);
}

/* Split-K's fixup (gm_sched_split): a unit's `split` blocks are one cluster, block `part` of it the cluster's rank
 * `part`. Each warpgroup has put its partial half tile into `mine`, its half of its block's stages (float4 j * 128 + t,
 * the slots' order), and passed a cluster barrier; now it adds up slice `part` of the half tile (gm_split_slice:
 * 8-column groups j0 .. j1 - 1) over the cluster's blocks, reading theirs through distributed shared memory, in rank
 * order (C does not depend on timing), and stores it as C's type: where C's rows take 16-byte chunks, staged in the
 * warpgroup's epilogue buffers (`stage`, gm_split_stage_offset) and stored 16 bytes a thread, consecutive threads on
 * consecutive chunks; else element by element (store_group). The partial tiles never leave the cluster's shared
 * memory.
 * Why through the cluster and staged: through global memory the fixup took 8.2 of b32 7x7x512's 26 us (H200); this
 * way 5.5-6.6 us, the remote reads at about 40 GB/s an SM (docs/lab/conv.md "Split-K's fixup, taken apart", with what
 * was tried and not kept). */
template <bool CT, typename OutT, uint32_t R>
static __device__ __forceinline__ void gm_split_reduce(const float4 *mine, uint32_t parts, uint32_t part, OutT *c,
                                                       uint32_t M, uint32_t N, uint32_t row0, uint32_t col0,
                                                       uint8_t *stage, uint32_t barrier_id) {
    constexpr uint32_t J = R / 4u; /* 8-column groups of a half tile */
    const uint32_t t = threadIdx.x % 128u, warp = t / 32u, lane = t % 32u;
    uint32_t j0, j1;
    gm_split_slice(J, parts, part, &j0, &j1);
    /* staged (gm_split_stage_offset) where C's rows take 16-byte chunks: 8-element runs, 16-byte aligned */
    constexpr uint32_t CHUNK = TMA_SWIZZLE_CHUNK_BYTES, LINE = TMA_SWIZZLE_LINE_BYTES;
    const bool staged = sizeof(OutT) == 2 && (CT ? M : N) % (CHUNK / 2u) == 0 && (uintptr_t)c % CHUNK == 0;
    /* a staged row: C^T's, the warpgroup's 64 rows of bf16; C's, the slice's groups of 8 bf16 (a chunk each) */
    const uint32_t row_bytes = CT ? EPI_ROWS * 2u : CHUNK * (j1 - j0), pitch = gm_split_stage_pitch(row_bytes);
    constexpr uint32_t MOST = (J + 1u) / 2u; /* groups of the largest slice (two parts) */
    static_assert(EPI_ROWS * ((CHUNK * MOST + LINE - 1u) / LINE * LINE) <= EPI_BUFS * EPI_BYTES &&
                      8u * MOST * LINE <= EPI_BUFS * EPI_BYTES,
                  "the largest slice, staged (gm_split_stage_pitch), fits a warpgroup's epilogue buffers");
    const bool pairs = store_pairs_ok(c, N);
    uint32_t at[GM_SPLIT_MAX]; /* this thread's float4 of group 0 in each block of the cluster */
#pragma unroll
    for (uint32_t p = 0; p < GM_SPLIT_MAX; p++)
        at[p] = p < parts ? tma_cluster_addr(mine + t, p) : 0u;
    const uint32_t row = 16u * warp + lane / 4u; /* this thread's accumulator rows: row, row + 8 */
    /* A warp whose 16 rows all lie past the product's M reads nothing: what it would stage is never stored (small M:
     * the GEMM at M = 16 sums one warp's rows of the tile's 8) */
    const bool rows_past = row0 + 16u * warp >= M;
    for (uint32_t j = rows_past ? j1 : j0; j < j1; j++) {
        float4 x[GM_SPLIT_MAX]; /* every part's loads in flight before the sum (the accumulators are dead here) */
#pragma unroll
        for (uint32_t p = 0; p < GM_SPLIT_MAX; p++)
            if (p < parts)
                x[p] = tma_ld_cluster_f4(at[p] + j * 128u * (uint32_t)sizeof(float4));
        float4 v = x[0];
#pragma unroll
        for (uint32_t p = 1; p < GM_SPLIT_MAX; p++)
            if (p < parts)
                v.x += x[p].x, v.y += x[p].y, v.z += x[p].z, v.w += x[p].w;
        const uint32_t col = 8u * (j - j0) + 2u * (lane % 4u); /* in the slice */
        if (!staged) {
            store_group<CT>(c, M, N, pairs, row0 + row, col0 + 8u * j0 + col, v);
        } else if constexpr (CT) { /* staged rows: the slice's columns; their bytes: the warpgroup's 64 rows */
            store_one((OutT *)(stage + gm_split_stage_offset(col, 2u * row, pitch)), v.x);
            store_one((OutT *)(stage + gm_split_stage_offset(col + 1u, 2u * row, pitch)), v.y);
            store_one((OutT *)(stage + gm_split_stage_offset(col, 2u * (row + 8u), pitch)), v.z);
            store_one((OutT *)(stage + gm_split_stage_offset(col + 1u, 2u * (row + 8u), pitch)), v.w);
        } else {
            store_pair((OutT *)(stage + gm_split_stage_offset(row, 2u * col, pitch)), v.x, v.y);
            store_pair((OutT *)(stage + gm_split_stage_offset(row + 8u, 2u * col, pitch)), v.z, v.w);
        }
    }
    if (!staged)
        return;
    /* the staged slice to C, 16 bytes a thread at a time: consecutive threads, consecutive chunks of a row */
    tma_named_barrier_sync(barrier_id, 128);
    const uint32_t chunks = row_bytes / CHUNK, rows = CT ? 8u * (j1 - j0) : EPI_ROWS;
    for (uint32_t i = t; i < rows * chunks; i += 128u) {
        const uint32_t r = i / chunks, k = i % chunks;
        const uint4 w = *(const uint4 *)(stage + gm_split_stage_offset(r, CHUNK * k, pitch));
        /* C^T: staged row r is C's column col0 + 8 j0 + r (a row of C^T), chunk k its rows row0 + 8 k .. + 7 */
        const uint32_t ci = CT ? row0 + 8u * k : row0 + r, cj = CT ? col0 + 8u * j0 + r : col0 + 8u * (j0 + k);
        if (ci < M && cj < N)
            *(uint4 *)(CT ? c + (size_t)cj * M + ci : c + (size_t)ci * N + cj) = w;
    }
}

/* A tile of the pipeline's schedule, as its Ops found it. */
struct GmTile {
    uint32_t tm, tn;  /* tile row (this block's, in a cluster) and column */
    uint32_t rows;    /* the rows of C its stores are clipped to: M, or the group's M_g in the grouped GEMM */
    uint32_t group;   /* the grouped GEMM's group (0 elsewhere) */
    uint32_t row0;    /* where its A box is loaded, and consumer warpgroup cw's rows of C start at row0 + 64 cw:
                         tm * BM, but for the grouped GEMM's tiles of at most 64 rows (GroupedOps::next) */
    uint32_t first;   /* its first row of C (row0 but there): a warpgroup whose rows start before it computes
                         them (the rows of the tile above: the pace of the blocks sharing B, gg_box_row) but stores
                         nothing; one whose rows start at or past `rows` does neither */
};

/* THE TILE QUEUE: the producer decides the block's schedule (Ops::next, the only caller) and passes each tile to the
 * consumers through a ring of GM_TILE_SLOTS slots in shared memory, the last entry saying there is no more. So the
 * consumers follow whatever the producer took, a schedule fixed in advance (the GEMM's and the convolution's) or one
 * taken at run time (the grouped GEMM's units from a counter); before, every role derived the same fixed schedule
 * itself. A slot's full barrier takes the producer's arrive (release: its write of the slot before it), its empty
 * barrier the arrive of every consumer thread once it is done with the tile: the producer runs up to
 * GM_TILE_SLOTS - 1 tiles ahead. Every reader arrives itself (256 arrives a tile), not one lane a warp after a
 * __syncwarp: correct either way under the PTX memory model, but compute-sanitizer's racecheck follows only the direct
 * arrive-wait edge and reported the producer's rewrite of a slot as a hazard (H100, CUDA 13.0). */
struct GmQueued {
    GmTile t;
    gm_segment seg;
    uint32_t more; /* 0: the block's schedule is done */
};
static_assert(sizeof(GmQueued) <= GM_QUEUED_BYTES, "a queue entry fits its slot");

/* The queue's slots at `at` (GM_QUEUE_BYTES: the full barriers, the empty ones, the entries); a role counts the
 * entries it has passed, n (slot n % GM_TILE_SLOTS, parity n / GM_TILE_SLOTS % 2). The kernel passes `at` as a
 * constant offset from its stage barriers at each call, not as a pointer of its own: one register more beside the
 * consumers' accumulators and split-K's instances spilled 112 bytes (ptxas, CUDA 13.0). */
static __device__ __forceinline__ uint64_t *gm_queue_full(uint8_t *at, uint32_t i) { return (uint64_t *)at + i; }
static __device__ __forceinline__ uint64_t *gm_queue_empty(uint8_t *at, uint32_t i) {
    return (uint64_t *)at + GM_TILE_SLOTS + i;
}
static __device__ __forceinline__ GmQueued *gm_queue_slot(uint8_t *at, uint32_t i) {
    return (GmQueued *)(at + 2u * GM_TILE_SLOTS * sizeof(uint64_t)) + i;
}

/* The schedule a DEVICE_SCHED Ops made on the device (Ops::device_sched), after the entries: the producer's alone. */
static __device__ __forceinline__ uint8_t *gm_queue_sched(uint8_t *at) {
    return at + GM_TILE_SLOTS * (GM_QUEUED_BYTES + 2u * (uint32_t)sizeof(uint64_t));
}

/* The schedule the producer's next() follows: the host's (the kernel's sched argument), or, for a DEVICE_SCHED Ops,
 * the one it made in the queue's slot. Read where it lies: after setmaxnreg.dec the producer has 40 registers, and a
 * copy of a schedule in them spilled (ptxas, CUDA 13.0). */
template <typename Ops>
static __device__ __forceinline__ const typename Ops::Sched &gm_sched_of(const gm_sched &host, uint8_t *queue) {
    static_assert(sizeof(typename Ops::Sched) <= GM_SCHED_SLOT_BYTES, "the Ops' schedule fits its slot");
    if constexpr (Ops::DEVICE_SCHED)
        return *(const typename Ops::Sched *)gm_queue_sched(queue);
    else
        return host;
}

static __device__ __forceinline__ void gm_queue_init(uint8_t *at) { /* one thread, before the block's barrier */
    for (uint32_t i = 0; i < GM_TILE_SLOTS; i++) {
        tma_mbar_init(gm_queue_full(at, i), 1);
        tma_mbar_init(gm_queue_empty(at, i), CONSUMER_WARPS * 32u);
    }
}

/* The producer's thread: entry e into the next slot, once the consumers have read what it held. */
static __device__ __forceinline__ void gm_queue_push(uint8_t *at, uint32_t &n, const GmQueued &e) {
    const uint32_t i = n % GM_TILE_SLOTS, phase = n / GM_TILE_SLOTS % 2u;
    tma_mbar_wait_quiet(gm_queue_empty(at, i), phase ^ 1u); /* a fresh barrier passes parity 1 at once */
    *gm_queue_slot(at, i) = e;
    tma_mbar_arrive(gm_queue_full(at, i));
    n++;
}

/* Every consumer thread: the next entry, read in place (its fields loaded where they are used, not held in registers
 * beside the accumulators). Taking it gives back the slot of the entry before, which this thread has finished with;
 * the last entry (more = 0) is never given back. */
static __device__ __forceinline__ const GmQueued *gm_queue_take(uint8_t *at, uint32_t &n) {
    if (n > 0)
        tma_mbar_arrive(gm_queue_empty(at, (n - 1u) % GM_TILE_SLOTS));
    const uint32_t i = n % GM_TILE_SLOTS, phase = n / GM_TILE_SLOTS % 2u;
    tma_mbar_wait_quiet(gm_queue_full(at, i), phase);
    n++;
    return gm_queue_slot(at, i);
}

/* The tiles of one M x N product under a gm_sched, in gm_tile_of order: the GEMM's and the convolution's walk (a
 * worker is a block, or a cluster of CL blocks on vertically adjacent tile rows). */
struct GmDenseWalk {
    uint32_t worker, rank, rows, groups_m, tiles_n, group_m, cursor;
};

/* What every Ops over one dense product shares: its walk, and C's one map. The Ops say M and N (rows(), cols()). */
struct GmDenseTiles {
    using Walk = GmDenseWalk;
    static constexpr bool DEPENDENT_LAUNCH = false; /* nothing to wait for before reading global memory */
    using Sched = gm_sched;                         /* the host's (the kernel's sched argument) */
    static constexpr bool DEVICE_SCHED = false;
    static constexpr uint32_t TAPS = 1u;  /* B boxes a stage, each read against A from row t on (GmShape) */
    static constexpr uint32_t C_RANK = 2u; /* C's map: a matrix */
    __device__ __forceinline__ Sched device_sched(const gm_sched &host) const { return host; }
    /* where a warpgroup's rows from row0 on are stored in C's map (GmStoreAt) */
    __device__ __forceinline__ GmStoreAt c_at(uint32_t row0) const { return GmStoreAt{{(int32_t)row0, 0, 0}}; }
    template <int CL, uint32_t TBN>
    static __device__ __forceinline__ Walk walk(uint32_t M, uint32_t N, uint32_t group_m, uint32_t worker,
                                                uint32_t rank) {
        Walk w;
        const uint32_t tiles_m = (M + BM - 1) / BM;
        w.worker = worker, w.rank = rank, w.rows = M, w.cursor = 0;
        w.tiles_n = (N + TBN - 1) / TBN;
        w.groups_m = (tiles_m + CL - 1) / CL;               /* cluster tile rows */
        w.group_m = group_m / CL > 0 ? group_m / CL : 1u;   /* in cluster tile rows */
        return w;
    }
    /* The worker's next segment and its tile. A cluster's second tile row may lie past the last row of C: its loads
     * fill zeros, and nothing is stored. */
    template <bool SPLIT, int CL>
    __device__ __forceinline__ bool next(Walk &w, const gm_sched &sched, gm_segment *seg, GmTile *t) const {
        if (!gm_segment_of<SPLIT>(&sched, w.worker, &w.cursor, seg))
            return false;
        uint32_t gm;
        gm_tile_of(seg->unit, w.groups_m, w.tiles_n, w.group_m, &gm, &t->tn);
        t->tm = gm * CL + w.rank;
        t->row0 = t->first = t->tm * BM;
        t->rows = w.rows;
        t->group = 0;
        return true;
    }
    /* Stream-K (gm_sched): a helper's partial tile goes to its block's slot (each block stores at most one a launch);
     * an owner's helpers are the workers after it that hold stages of its unit, each on this block's tile row. */
    template <int CL>
    __device__ __forceinline__ uint32_t partial_slot(const gm_segment &, uint32_t) const { return blockIdx.x; }
    template <int CL>
    __device__ __forceinline__ GmHelpers partial_helpers(const gm_sched &s, const gm_segment &seg,
                                                         uint32_t rank) const {
        uint32_t owner, last;
        gm_sk_workers_of(&s, seg.unit, &owner, &last);
        return GmHelpers{(owner + 1u) * (uint32_t)CL + rank, last - owner, (uint32_t)CL};
    }
    __device__ __forceinline__ void enter_loads(Walk &, const GmTile &) const {}
    __device__ __forceinline__ void finish(Walk &) const {}
    __device__ __forceinline__ const tma_tensor *c_map(Walk &, const GmTile &, const tma_tensor *tc, bool) const {
        return tc;
    }
};

/* The block's pipeline for C = A * B^T on tiles of BM x Ops::BN, whatever fills the stages. Ops (a struct passed
 * to the kernel as a __grid_constant__ parameter) says where the operands come from:
 *     static constexpr uint32_t BN;            the tile width (256, 192, 128 or 64)
 *     static constexpr bool C_TRANSPOSED;      C is stored transposed: element (i, j) of the product at c[j M + i]
 *                                              (C^T row-major; the TMA epilogue's map is C^T's: epilogue_tma_t)
 *     uint32_t rows() const, cols() const;     M and N of the product (C is M x N, row-major)
 *     uint32_t k_blocks() const;               the pipeline stages of one tile (BK-wide steps of K)
 *     const tma_box_info &a_box() const, &b_box() const;   the boxes that fill a stage (wgmma descriptors)
 *     uint32_t tx_bytes(int cl) const;         what one stage's loads deliver into a block
 *     void prefetch() const;                   prefetch the maps
 *     template <int CL> void load(uint8_t *sa, uint8_t *sb, uint64_t *bar, uint32_t kb, const GmTile &t,
 *                                 uint32_t rank) const;
 *                                              issue stage kb of tile t: A's BM rows into sa, B's rows into sb
 *                                              (with CL = 2, this block's half of them, multicast to both)
 *     the tiles, and where each is stored (GmDenseTiles for one product; the grouped GEMM's its own):
 *     Walk; DEPENDENT_LAUNCH (wait for the grid before, programmatic serialization, before reading global memory);
 *     Sched, DEVICE_SCHED, Sched device_sched(const gm_sched &host) const;
 *                                              the schedule next() follows: the host's (DEVICE_SCHED false, Sched
 *                                              gm_sched), or one the producer warp's 32 threads make on the device
 *                                              (the grouped GEMM's tile count is known only there)
 *     template <int CL, uint32_t TBN> static Walk walk(M, N, group_m, worker, rank);
 *     template <bool SPLIT, int CL> bool next(Walk &, const Sched &, gm_segment *, GmTile *) const;
 *                                              the worker's next segment of stages and its tile (the producer's
 *                                              thread alone calls it; the consumers take its tiles from the queue)
 *     template <int CL> uint32_t partial_slot(const gm_segment &, uint32_t rank) const;
 *     template <int CL> GmHelpers partial_helpers(const Sched &, const gm_segment &, uint32_t rank) const;
 *                                              stream-K (SK): the slot a helper stores its partial tile in, and
 *                                              the slots an owner adds (GmDenseTiles: a block's own slot; the
 *                                              grouped GEMM's: the schedule's)
 *     void enter_loads(Walk &, const GmTile &) const;   before the producer's loads of a tile (a group's maps)
 *     void finish(Walk &) const;               the producer's thread, after next() has said there is no more
 *     const tma_tensor *c_map(Walk &, const GmTile &, const tma_tensor *tc, bool issuer) const;
 *                                              the map the epilogue stores tile t through (tc, or a group's)
 * The GEMM's Ops reads A and B through tiled maps (gemm.cu); the convolution's gathers A through an im2col map
 * (conv.cu); the grouped GEMM's reads each group's maps, built on the device (grouped_gemm.cu). Everything else is
 * this one kernel.
 *
 * CL = 1: one block per tile. CL = 2: clusters of two blocks on vertically adjacent tiles (tile rows
 * 2 * i and 2 * i + 1, same tile column) that share B: each block loads its own A box and one half (BN / 2
 * rows) of the B tile, multicast into both blocks; a stage is free when the consumers of BOTH blocks
 * have released it (empty[s] counts 16 arrivals, made with cluster-scope arrives).
 * TMA_EPI: the epilogue through shared memory and TMA stores (epilogue_tma), else epilogue_direct.
 * OutT: C's element type, __nv_bfloat16 or float.
 * sched: the work of the grid's clusters, made on the host by gm_launch_sched (a kernel parameter: its fields are
 * read from the constant bank, not kept in the consumers' registers, which the 128 x 256 tile's 128 accumulators
 * leave scarce: computed in the kernel they spilled 16-20 bytes).
 * SCHED (gemm_tiles.h): GM_SCHED_TILES, GM_SCHED_STREAM_K (SK below) or GM_SCHED_SPLIT_K (gm_sched_split: every
 * tile's stages cut into `split` parts, one block each, the tile's blocks a cluster of `split` launched as such; each
 * block keeps its partial tile in its shared memory, then adds up and stores a slice of the tile, gm_split_reduce;
 * no workspace, and no block waits for another cluster).
 * SK: stream-K (gm_sched, gemm_tiles.h): the last one or two waves of tiles are shared out by stages, each block an
 * equal share, and owners add their helpers' partial tiles (GmPartials: a slot per block of the grid) before the
 * epilogue. Without SK every tile is whole (blocks take tiles blockIdx.x, + gridDim.x, ...). SK needs every block
 * of the grid resident at once (the host's grid is the co-resident count): an owner waits for its helpers. */
template <typename Ops, int CL, bool TMA_EPI, typename OutT, int SCHED = GM_SCHED_TILES>
__global__ void __launch_bounds__(THREADS, 1)
    gm_pipeline_kernel(const __grid_constant__ Ops ops, const __grid_constant__ tma_tensor tc, OutT *__restrict__ c,
                       uint32_t group_m, uint32_t no_store, const gm_sched sched, GmPartials partials) {
    constexpr bool SK = SCHED == GM_SCHED_STREAM_K, SPLIT = SCHED == GM_SCHED_SPLIT_K, CT = Ops::C_TRANSPOSED;
    static_assert(!SPLIT || CL == 1, "split-K without clusters");
    static_assert(!CT || !TMA_EPI || sizeof(OutT) == 2, "the transposed TMA-store epilogue is bf16's");
    using Shape = GmShape<Ops::BN, Ops::TAPS>;
    constexpr uint32_t TBN = Ops::BN, NSTAGES = Shape::STAGES;
    static_assert(Ops::TAPS == 1u || (SCHED == GM_SCHED_TILES && CL == 1 && TMA_EPI && !CT),
                  "taps (the halo tile): whole tiles, no clusters, the TMA store");
    extern __shared__ uint8_t dyn[];
    uint8_t *base = dyn + tma_swizzle_phase0_pad(TMA_SWIZZLE_128B, tma_smem_addr(dyn));
    uint8_t *sa = base;                             /* NSTAGES A boxes */
    uint8_t *sb = base + NSTAGES * Shape::A_BYTES;  /* NSTAGES B tiles (one box, or two half boxes with CL = 2) */
    uint8_t *se = sb + NSTAGES * Shape::B_BYTES;    /* 2 consumers x EPI_BUFS epilogue boxes */
    uint64_t *full = (uint64_t *)(se + 2u * EPI_BUFS * EPI_BYTES);
    uint64_t *empty = full + NSTAGES;
    uint64_t *fixup = empty + NSTAGES; /* stream-K: one per consumer warpgroup, its bulk copies of partial tiles */
    uint8_t *const queue = (uint8_t *)(fixup + 2); /* the tiles, from the producer to the consumers */

    const uint32_t M = ops.rows(), N = ops.cols();
    const uint32_t wg = threadIdx.x / 128u;
#ifdef GM_TRACE
    const unsigned int tr_launch = *(volatile unsigned int *)&gm_trace_launch;
    const bool tr_on = threadIdx.x == 128u && tr_launch >= GM_TRACE && tr_launch < GM_TRACE + 3u;
    uint32_t tr_n = 0;
    GM_TR(0);
#endif
    const uint32_t rank = CL == 2 ? tma_cluster_ctarank() : 0u;
    const uint32_t cluster_id = blockIdx.x / CL;

    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < NSTAGES; s++) {
            tma_mbar_init(&full[s], 1);
            tma_mbar_init(&empty[s], CONSUMER_WARPS * CL);
        }
        tma_mbar_init(&fixup[0], 1);
        tma_mbar_init(&fixup[1], 1);
        gm_queue_init(queue);
        tma_fence_mbar_init();
    }
    if (Ops::DEPENDENT_LAUNCH) {
        tma_grid_dependency_wait(); /* nothing in global memory is read before the grid before has finished */
        tma_grid_launch_dependents(); /* a kernel launched after this one with programmatic serialization may
                                         start as SMs free up (the grouped GEMM's groups off 16 bytes) */
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
        if (Ops::DEVICE_SCHED && threadIdx.x < 32u) {
            const typename Ops::Sched d = ops.device_sched(sched);
            if (threadIdx.x == 0)
                *(typename Ops::Sched *)gm_queue_sched(queue) = d;
        }
        const typename Ops::Sched &psched = gm_sched_of<Ops>(sched, queue);
        if (threadIdx.x == 0) {
            ops.prefetch();
            const uint32_t tx = ops.tx_bytes(CL);
            uint32_t s = 0, phase = 0;
            typename Ops::Walk walk = Ops::template walk<CL, TBN>(M, N, group_m, cluster_id, rank);
            uint32_t queued = 0;
            for (;;) {
                GmQueued e;
                e.more = ops.template next<SPLIT, CL>(walk, psched, &e.seg, &e.t) ? 1u : 0u;
                gm_queue_push(queue, queued, e);
                if (!e.more)
                    break;
                const GmTile &t = e.t;
                ops.enter_loads(walk, t);
                for (uint32_t kb = e.seg.kb0; kb < e.seg.kb1; kb++) {
                    tma_mbar_wait_quiet(&empty[s], phase ^ 1u); /* a fresh barrier passes parity 1 at once */
                    tma_mbar_arrive_expect_tx(&full[s], tx);
                    ops.template load<CL>(sa + s * Shape::A_BYTES, sb + s * Shape::B_BYTES, &full[s], kb, t, rank);
                    if (++s == NSTAGES) {
                        s = 0;
                        phase ^= 1u;
                    }
                }
            }
            ops.finish(walk);
        }
        if (SPLIT) { /* the consumers' two cluster barriers (gm_split_reduce): every thread of the cluster arrives */
            tma_cluster_arrive();
            tma_cluster_wait();
            tma_cluster_arrive();
            tma_cluster_wait();
        }
    } else {
        /* ---- consumers ---- */
        tma_setmaxnreg_inc<232>();
        const uint32_t cw = wg - 1u; /* rows 64 * cw .. of the tile */
        const uint32_t lane = threadIdx.x % 32u;
        const bool issuer = threadIdx.x % 128u == 0; /* issues this warpgroup's epilogue stores */
        if (TMA_EPI && issuer)
            tma_prefetch_desc(&tc);
        float acc[TBN / 2u];
        uint64_t da0, db0;
        gm_stage0_descs(&ops.a_box(), &ops.b_box(), tma_smem_addr(sa), tma_smem_addr(sb), cw, &da0, &db0);
        uint32_t s = 0, phase = 0;
        uint32_t epi_next_buf = 0; /* the epilogue buffer of this warpgroup's next box (epi_first_buf) */
        /* the consumers' walk: only for c_map (the maps this thread has acquired); the tiles come from the queue */
        typename Ops::Walk walk = Ops::template walk<CL, TBN>(M, N, group_m, cluster_id, rank);
        uint32_t taken = 0;
        for (;;) {
            const GmQueued *e = gm_queue_take(queue, taken);
            if (!e->more)
                break;
            const GmTile &t = e->t;
            const gm_segment &seg = e->seg;
            /* t.tm may be past the last tile row (a cluster's second): loads filled zeros, nothing is stored */
            const uint32_t row0 = t.row0 + cw * 64u, col0 = t.tn * TBN;
            const bool computes = row0 < t.rows;            /* its rows start before the end of C */
            const bool stores = computes && row0 >= t.first; /* and they are the tile's (GmTile.first) */
            if (computes)
                gm_mainloop<CL, TBN / 2u, Ops::TAPS>(acc, da0, db0, full, empty, seg.kb1 - seg.kb0, s, phase,
                                                     lane == 0);
            else
                gm_pass_stages<CL, TBN / 2u, Ops::TAPS>(acc, full, empty, seg.kb1 - seg.kb0, s, phase, lane == 0);
            GM_TR(1);
            constexpr uint32_t REGION = NSTAGES * (Shape::A_BYTES + Shape::B_BYTES) / 2u; /* a warpgroup's half */
            if (SPLIT) { /* gm_sched_split: this block's one segment is part blockIdx.x % split of its unit, and the
                            unit's blocks are its cluster */
                tma_named_barrier_sync(3, 256); /* both warpgroups past their last wgmma: the stages are free */
                float4 *mine = (float4 *)(base + cw * REGION);
                const uint32_t me = threadIdx.x % 128u;
#pragma unroll
                for (uint32_t j = 0; j < TBN / 8u; j++)
                    mine[j * 128u + me] = make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
                tma_cluster_arrive(); /* every part's partial tile in its block (the producers arrive too) */
                tma_cluster_wait();
                GM_TR(7);
                if (stores) /* no_store: every row clipped */
                    gm_split_reduce<CT, OutT, TBN / 2u>(mine, sched.split, blockIdx.x % sched.split, c,
                                                        no_store ? 0u : t.rows, N, row0, col0,
                                                        se + cw * EPI_BUFS * EPI_BYTES, 1u + cw);
                GM_TR(8);
                tma_cluster_arrive(); /* no block leaves while the others read its partial tile */
                tma_cluster_wait();
                break; /* a split-K block has one segment (gm_split_segment): the queue's last entry is not taken,
                          and nothing of the loop stays live across the fixup (with `continue`, ptxas spilled
                          88-112 bytes here once the tile queue came) */
            }
            if (SK && seg.kb1 - seg.kb0 != sched.nk) {
                /* a block's slot: partial tiles of this warpgroup's 64 rows (TBN / 2 float4 per thread) */
                constexpr uint32_t HALF = TBN / 8u * 128u;
                if (seg.kb0 > 0) { /* a helper: its part, then on to its next segment */
                    const uint32_t slot = 2u * ops.template partial_slot<CL>(seg, rank) + cw;
                    if (computes) /* as the owner adds it */
                        gm_store_partial(acc, partials.slots + slot * HALF, partials.flags + slot, 1u + cw);
                    GM_TR(2);
                    continue;
                }
                /* The owner: its block's last segment, so once both warpgroups are past their last wgmma the stages
                 * are free (the producer has issued nothing since): each warpgroup reads its helpers' halves into
                 * its half of them. */
                tma_named_barrier_sync(3, 256);
                GM_TR(3);
                if (computes)
                    gm_add_partials<TBN / 2u, REGION>(
                        acc, ops.template partial_helpers<CL>(gm_sched_of<Ops>(sched, queue), seg, rank), partials,
                        cw, base + cw * REGION, &fixup[cw], 1u + cw);
            }
            GM_TR(4);
            if (!computes)
                continue; /* none of this warpgroup's rows (a cluster's second tile row past the end of C, a group's
                             last tile) */
            if (TMA_EPI) {
                /* a warpgroup that computed the tile above's rows (GmTile.first) goes through the epilogue without
                   its stores: the block keeps the pace of the blocks sharing its B tile (gg_box_row) */
                const bool skip = no_store != 0 || !stores;
                const tma_tensor *map = ops.c_map(walk, t, &tc, issuer);
                if (CT)
                    epilogue_tma_t(acc, map, se + cw * EPI_BUFS * EPI_BYTES, row0, col0, 1u + cw, issuer, skip,
                                   epi_next_buf);
                else
                    epilogue_tma<OutT, TBN / 2u, Ops::C_RANK>(acc, map, se + cw * EPI_BUFS * EPI_BYTES,
                                                              ops.c_at(row0), col0, 1u + cw, issuer, skip,
                                                              epi_next_buf);
            } else if (!no_store && stores) {
                epilogue_direct<CT>(acc, c, (int)t.rows, (int)N, row0, col0);
            }
        }
        GM_TR(5);
        if (TMA_EPI && issuer)
            tma_store_wait<0>(); /* the block's shared memory stays until the last store has read it */
        GM_TR(6);
#ifdef GM_TRACE
        if (tr_on) {
            unsigned long long e[GM_TRACE_EVENTS]; /* written by this thread: no fence needed */
            for (uint32_t i = 0; i < GM_TRACE_EVENTS; i++)
                e[i] = i < tr_n ? gm_trace_t[blockIdx.x % GM_TRACE_BLOCKS][i] : 0ull;
            printf("GM_TRACE %u %d %u %u %llx %llx %llx %llx %llx %llx %llx %llx %llx %llx\n", tr_launch, SCHED,
                   blockIdx.x, tr_n, e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9]);
        }
#endif
    }
    if (CL == 2) {
        tma_cluster_arrive(); /* no block leaves while its peer may still arrive on its barriers */
        tma_cluster_wait();
    }
#ifdef GM_TRACE
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(&gm_trace_launch, 1u);
#endif
}

/* ---- host side of gm_pipeline_kernel ---- */

/* The schedule of a launch of `blocks` blocks (gm_grid_blocks' count) on tiles_m x tiles_n tiles of nk stages. */
static inline gm_sched gm_launch_sched(long tiles_m, long tiles_n, int cluster, int blocks, uint32_t nk,
                                       bool stream_k) {
    const uint32_t cl = cluster == 2 ? 2u : 1u;
    return gm_sched_make((uint32_t)((tiles_m + cl - 1) / cl * tiles_n), nk, (uint32_t)blocks / cl, stream_k);
}

/* Clusters of two sharing B where each block has more than one tile. Measured on an H200 for the GEMM
 * (docs/lab/gemm.md "History 3", interleaved timing): within 1% at 4096^3, 4000^3 and 8192^3, +29-36% at
 * 8192 x 8192 x 1000; 5-6% slower at 2048^3, where each block has one tile. */
static inline int gm_default_cluster(long tiles_m, long tiles_n, int sms) {
    return tiles_m >= 2 && tiles_m * tiles_n > sms ? 2 : 1;
}

/* How many clusters of `cluster` blocks of `kernel` (its shared memory allowed) the device runs at once, asked for a
 * grid of `grid` blocks (cudaOccupancyMaxActiveClusters); 0 where the query fails. A cluster's blocks run in one GPC,
 * so the clusters that fit are not the blocks / cluster: on an H200 (132 SMs, one block an SM), 66 clusters of 2, 39
 * of 3, 30 of 4, 22 of 5, 17 of 6, 15 of 7 or 8 (2026-11-23). A host query. */
static inline long gm_active_clusters(const void *kernel, size_t smem, long cluster, long grid) {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    memset(&cfg, 0, sizeof cfg);
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)grid, 1, 1);
    cfg.blockDim = dim3(THREADS, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (kernel == NULL || cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
        (void)cudaGetLastError(); /* the query's own error */
        return 0;
    }
    return clusters;
}

/* The blocks of a launch of gm_pipeline_kernel on tiles_m x tiles_n tiles: a persistent grid of min(co-resident
 * blocks, work) blocks, or grid_blocks (rounded down to whole clusters, at least one) when > 0. cluster_kernel: an
 * instance with CL = 2, for the co-residency query (a host query: a plan makes it once, for its launch record).
 * shares: the parts a unit of work can be cut into (1; under stream-K its stages). */
static inline int gm_grid_blocks(long tiles_m, long tiles_n, int cluster, int sms, int grid_blocks, size_t smem,
                                 const void *cluster_kernel, long shares = 1) {
    const int cl = cluster == 2 ? 2 : 1;
    const long units = (tiles_m + cl - 1) / cl * tiles_n * shares; /* clusters' worth of work */
    long clusters = sms / cl;
    if (grid_blocks > 0) {
        clusters = grid_blocks / cl > 0 ? grid_blocks / cl : 1;
    } else if (cl == 2) { /* co-resident clusters: GPCs with an odd SM count leave an SM out */
        const long active = gm_active_clusters(cluster_kernel, smem, 2, 2 * clusters);
        if (active > 0) /* else the query failed: the estimate sms / 2 stands */
            clusters = active;
    }
    if (clusters > units)
        clusters = units;
    return (int)(clusters * cl);
}

/* Split-K's parts for `units` tiles of nk stages on `blocks` blocks (gm_sched_split): the most, up to the blocks a
 * tile gets (blocks / units), nk and GM_SPLIT_MAX, whose clusters all run at once (gm_active_clusters); 0 below 2
 * (split-K does not apply). A host query: at plan time only. */
static inline long gm_split_parts(long units, uint32_t nk, long blocks, const void *kernel, size_t smem) {
    long parts = units > 0 ? blocks / units : 0;
    if (parts > (long)GM_SPLIT_MAX)
        parts = GM_SPLIT_MAX;
    if (parts > (long)nk)
        parts = nk;
    for (; parts >= 2; parts--)
        if (gm_split_fits((uint32_t)units, nk, (uint32_t)parts) &&
            gm_active_clusters(kernel, smem, parts, parts) >= units)
            return parts;
    return 0;
}

/* What one launch of gm_pipeline_kernel needs besides its arguments: the part of a GEMM's or a convolution's launch
 * record (tma_launch_record) that run hands to the CUDA runtime as it is. */
struct GmLaunch {
    const void *kernel; /* the instance (gm_instances, conv_instances) */
    uint32_t blocks;    /* the persistent grid */
    uint32_t cluster;   /* blocks per cluster: 1, 2 (pairs sharing B), or split-K's parts */
    size_t smem;        /* dynamic shared memory per block */
    gm_sched sched;     /* the kernel's schedule argument */
    uint32_t group;     /* the kernel's group_m argument (the plan's, or TMA_GEMM_GROUP_M for <= 0) */
};

/* Launch it on `stream` with the kernel's arguments `params` (gm_pipeline_kernel's, in order). */
static inline cudaError_t gm_launch(const GmLaunch &l, cudaStream_t stream, void **params) {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    memset(&cfg, 0, sizeof cfg);
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = l.cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(l.blocks, 1, 1);
    cfg.blockDim = dim3(THREADS, 1, 1);
    cfg.dynamicSmemBytes = l.smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelExC(&cfg, l.kernel, params);
}

#endif /* KERNELS_GEMM_DEVICE_CUH */
