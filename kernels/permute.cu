/* tma::kernels permute (tma/kernels.h): the plan of permute_tiles.h (THE PLAN) run by one of two persistent
 * kernels, a pure TMA copy (load map -> store map at the same coordinates) and a tile transpose (TMA load of a
 * 128B-swizzled box, conflict-free 16-byte shared reads and writes through the lane map of transpose_tiles.h,
 * TMA stores). The same pipeline runs on the CPU model in permute_plan.c. */
#include <stdio.h>
#include <string.h>

#include "kernel_diag.h"
#include "kernel_maps.h"
#include "launch_record.h"
#include "permute_tiles.h"
#include "transpose_regs.cuh"

#include "tma/device.cuh"
#include "tma/kernels.h"

/* A load or store of the plan's rank (a run-time value, one switch per copy in the one issuing thread). */
static __device__ __forceinline__ void pm_load(uint32_t rank, void *smem, const tma_tensor *t, uint64_t *bar,
                                               const int32_t (&c)[5]) {
    switch (rank) {
    case 1: tma_load<1>(smem, t, bar, c); break;
    case 2: tma_load<2>(smem, t, bar, c); break;
    case 3: tma_load<3>(smem, t, bar, c); break;
    case 4: tma_load<4>(smem, t, bar, c); break;
    default: tma_load<5>(smem, t, bar, c); break;
    }
}

/* The same load with an L2 evict_last policy (where pm_src_keep holds). */
static __device__ __forceinline__ void pm_load_keep(uint32_t rank, void *smem, const tma_tensor *t, uint64_t *bar,
                                                    const int32_t (&c)[5]) {
    const uint64_t pol = tma_l2_policy_evict_last();
    switch (rank) {
    case 1: tma_load_hint<1>(smem, t, bar, c, pol); break;
    case 2: tma_load_hint<2>(smem, t, bar, c, pol); break;
    case 3: tma_load_hint<3>(smem, t, bar, c, pol); break;
    case 4: tma_load_hint<4>(smem, t, bar, c, pol); break;
    default: tma_load_hint<5>(smem, t, bar, c, pol); break;
    }
}

static __device__ __forceinline__ void pm_store(uint32_t rank, const tma_tensor *t, const void *smem,
                                                const int32_t (&c)[5]) {
    switch (rank) {
    case 1: tma_store<1>(t, smem, c); break;
    case 2: tma_store<2>(t, smem, c); break;
    case 3: tma_store<3>(t, smem, c); break;
    case 4: tma_store<4>(t, smem, c); break;
    default: tma_store<5>(t, smem, c); break;
    }
}

/* The store with an L2 evict_first policy (pm_src_keep's transposes: the output, never read again here, should not
 * push src's shared 256-byte blocks out of L2). */
static __device__ __forceinline__ void pm_store_drop(uint32_t rank, const tma_tensor *t, const void *smem,
                                                     const int32_t (&c)[5]) {
    const uint64_t pol = tma_l2_policy_evict_first();
    switch (rank) {
    case 1: tma_store_hint<1>(t, smem, c, pol); break;
    case 2: tma_store_hint<2>(t, smem, c, pol); break;
    case 3: tma_store_hint<3>(t, smem, c, pol); break;
    case 4: tma_store_hint<4>(t, smem, c, pol); break;
    default: tma_store_hint<5>(t, smem, c, pol); break;
    }
}

/* A 16-byte thread store with the same kind of L2 policy (the thread stores' form of pm_store_drop). */
static __device__ __forceinline__ void pm_st16_hint(void *p, uint4 v, uint64_t pol) {
    TMA_PTX("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
            "r"(v.w), "l"(pol) : "memory");
}

/* The first `bytes` bytes (a multiple of E, at most 16) of v to p, an address of an E-byte element: in pieces as wide
 * as p's alignment allows (bf16 rows of 98 bytes: 2 + 4 + 8 + 2, not 8 stores of 2). */
template <int E>
static __device__ __forceinline__ void pm_st_elems(uint8_t *p, uint4 v, uint32_t bytes) {
    const unsigned long long lo = (unsigned long long)v.y << 32 | v.x, hi = (unsigned long long)v.w << 32 | v.z;
    for (uint32_t o = 0; o < bytes;) {
        const uintptr_t a = (uintptr_t)(p + o);
        const unsigned long long w = o == 0 ? lo : o < 8u ? lo >> (8u * o) | hi << (64u - 8u * o) : hi >> (8u * (o - 8u));
        if (E <= 8 && a % 8u == 0u && o + 8u <= bytes) {
            *(unsigned long long *)(p + o) = w;
            o += 8;
        } else if (E <= 4 && a % 4u == 0u && o + 4u <= bytes) {
            *(uint32_t *)(p + o) = (uint32_t)w;
            o += 4;
        } else if (E <= 2 && a % 2u == 0u && o + 2u <= bytes) {
            *(uint16_t *)(p + o) = (uint16_t)w;
            o += 2;
        } else {
            p[o] = (uint8_t)w;
            o += 1;
        }
    }
}

/* ------------------------------------------------------------------------------------------------
 * Both kernels: the copies are issued by single threads, so what they do per tile is on the pipeline's critical
 * path. The arithmetic that turns a tile index into coordinates (divisions by the tile counts) is done once per
 * tile, for the tile that refills a stage, before the thread waits for the stage's own load (in a bandwidth-bound
 * kernel that wait is long), and each stage's coordinates are kept in shared memory until its store; in the
 * transpose, the stores of a tile's sub-tiles leave from as many threads (one per 64) in parallel. Measured on an
 * H200, fp32 8192^2: with one thread computing the coordinates twice per tile after the block's barrier and
 * issuing every store, 63% of a device-to-device copy. Waits are bounded: tma_mbar_wait_quiet traps after
 * TMA_WAIT_TIMEOUT_NS; the form with a message made ptxas save registers around its printf call (an 8-byte spill).
 * ---------------------------------------------------------------------------------------------- */

/* ------------------------------------------------------------------------------------------------
 * COPY: one thread (the block is one warp; the rest of it returns) keeps PM_COPY_STAGES - 1 loads in flight;
 * each box is stored from the stage it landed in, and a stage is refilled once the store of the tile before
 * has finished reading it (so loads and stores overlap). Block b takes tiles b, b + G, ...
 * ---------------------------------------------------------------------------------------------- */
__global__ void __launch_bounds__(32) pm_copy_kernel(const __grid_constant__ tma_tensor tin,
                                                     const __grid_constant__ tma_tensor tout, const pm_grid g,
                                                     uint64_t ntiles, uint32_t stage_bytes) {
    constexpr uint32_t S = PM_COPY_STAGES;
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t full[S];
    __shared__ int32_t crd[S][5]; /* the coordinates of the tile in each stage */
    if (threadIdx.x != 0)
        return;
    uint8_t *base = dyn + tma_swizzle_phase0_pad(TMA_SWIZZLE_128B, tma_smem_addr(dyn));
    const uint64_t G = gridDim.x;
    tma_prefetch_desc(&tin);
    tma_prefetch_desc(&tout);
    for (uint32_t s = 0; s < S; s++)
        tma_mbar_init(&full[s], 1);
    tma_fence_mbar_init();
    int32_t c[5];
    for (uint32_t s = 0; s + 1 < S; s++) { /* prologue: tiles 0 .. S-2 of this block */
        const uint64_t t = blockIdx.x + s * G;
        if (t < ntiles) {
            pm_copy_coords(&g, t, c);
            for (int k = 0; k < 5; k++)
                crd[s][k] = c[k];
            tma_mbar_expect_box(&full[s], &tin);
            pm_load(g.rank, base + s * stage_bytes, &tin, &full[s], c);
        }
    }
    for (uint64_t it = 0;; it++) {
        const uint64_t t = blockIdx.x + it * G;
        if (t >= ntiles)
            break;
        const uint32_t s = (uint32_t)(it % S), sn = (uint32_t)((it + S - 1) % S);
        const uint64_t tn = blockIdx.x + (it + S - 1) * G; /* refills the stage of tile it - 1 */
        int32_t nc[5];
        if (tn < ntiles)
            pm_copy_coords(&g, tn, nc);
        tma_mbar_wait_quiet(&full[s], (uint32_t)(it / S) & 1u);
        for (int k = 0; k < 5; k++)
            c[k] = crd[s][k];
        pm_store(g.rank, &tout, base + s * stage_bytes, c);
        tma_store_commit();
        if (tn < ntiles) {
            tma_store_wait_read<1>(); /* all but the newest store group have finished reading their stages */
            for (int k = 0; k < 5; k++)
                crd[sn][k] = nc[k];
            tma_mbar_expect_box(&full[sn], &tin);
            pm_load(g.rank, base + sn * stage_bytes, &tin, &full[sn], nc);
        }
    }
    tma_store_wait<0>(); /* shared memory must outlive the stores' reads */
}

/* ------------------------------------------------------------------------------------------------
 * TRANSPOSE (also tma_transpose, the 2-D case): each tile is TMA-loaded as one 128B-swizzled box (a packed tile:
 * unswizzled, pm_packed_cols) into one of
 * PM_TR_STAGES input stages, transposed through shared memory by the conflict-free lane map of transpose_tiles.h
 * into one of PM_TR_OUT_BUFFERS output buffers, and stored from there; any element size and any tile of box[1] x
 * box[2] lines (pm_store_coords; at most PM_MAX_LINES), 64 threads per W x W sub-tile; thread 0 issues the loads,
 * the first thread of each sub-tile its store. Ragged
 * edges: loads fill zeros, stores clip, output boxes wholly past dst are not issued; no thread branches on the
 * tensor's size. Where dst's row pitch is not a multiple of 32 bytes, or the tile is a short one (dst's innermost
 * dimension at most half of W, several slabs side by side in each line: pm_short_rows), the threads store the tile
 * themselves with 16-byte writes (pm_use_tstore: g.tstore), 512 contiguous bytes per warp where dst allows (THREAD
 * STORES in permute_tiles.h), whole 16-byte chunks, a row's last one in part (pm_tstore_bytes). For 4-byte
 * elements, and for 2- and 8-byte ones where src's row pitch is not a multiple of 128 bytes (pm_src_keep:
 * g.src_keep), the loads carry an L2 evict_last policy and the stores (threads' or TMA's) evict_first, so the 256-byte
 * blocks neighbouring tiles share stay in L2 and the output, never read again, leaves it first.
 * Template parameters, each an instance of its own (pm_transpose_of), because code compiled in but not taken cost
 * time: KEEP (the L2 hints, g.src_keep: the transposes without hints ran 3-6 points slower with the hinted code beside
 * theirs; inside KEEP's instance the hinted paths stay guarded by `KEEP && g.src_keep`, which `if constexpr` alone ran
 * 5 points slower, not established why); TALL (pm_tall: short, packed and 2-byte thread-stored tiles, up to
 * PM_TALL_TILE_LINES lines, no hints); TSTORE (the thread stores' code: the usual fp32 instance is compiled a second
 * time without it for the tiles TMA stores, 3 points faster on 3-5 dimensions, 1-3 slower on 2-D; the same split lost
 * up to 7 points for 2- and 8-byte elements, which keep one instance). Every instance declares 1 block per SM in its
 * launch bounds, what its shared memory allows (no spills; without it ptxas spilled). Measured on H200s: docs/lab/
 * permute.md "The three-way A/B, and the hints in kernel instances of their own (712479e)", "Whole chunks, tall bf16
 * tiles, few slabs", "The fp32 instance without thread stores".
 * ---------------------------------------------------------------------------------------------- */
template <int E, bool KEEP, bool TALL, bool TSTORE>
__global__ void __launch_bounds__(64 * E * PM_MAX_LINES(E, TALL) / TMA_SWIZZLE_LINE_BYTES, 1) pm_transpose_kernel(
    const __grid_constant__ tma_tensor tin, const __grid_constant__ tma_tensor tout, const pm_grid g, uint64_t ntiles,
    uint8_t *dst) {
    constexpr uint32_t V = TMA_SWIZZLE_CHUNK_BYTES / E, W = TMA_SWIZZLE_SPAN_128B / E;
    constexpr uint32_t S = PM_TR_STAGES, NB = PM_TR_OUT_BUFFERS;
    constexpr tma_swizzle SW = TMA_SWIZZLE_128B;
    /* lines of 128 bytes (pm_tile_lines). TALL: the 256-line instances (pm_tall), whose packed tiles (pm_packed:
     * pm_packed_cols) are loaded unswizzled through a map that lists {0, slab, a, ...}; the output is always
     * 128B-swizzled. */
    const bool packed = TALL && g.box[0] < W;
    const uint32_t TILE = g.box[1] * (packed ? 1u : g.box[2]) * TMA_SWIZZLE_LINE_BYTES;
    const tma_swizzle SW_IN = packed ? TMA_SWIZZLE_NONE : SW;
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t full[S];
    /* 1024-byte aligned: every tile starts the swizzle pattern at phase 0, which the lane map assumes. */
    uint8_t *base = dyn + tma_swizzle_phase0_pad(TMA_SWIZZLE_128B, tma_smem_addr(dyn));
    uint8_t *in_buf = base, *out_buf = base + S * TILE, *runs = out_buf + NB * TILE; /* runs: dspan only */
    const uint32_t tid = threadIdx.x;
    const uint64_t G = gridDim.x;
    __shared__ int32_t crd[S][5]; /* the load coordinates of the tile in each stage (thread 0's) */

    if (tid == 0) {
        tma_prefetch_desc(&tin);
        if (!(TSTORE && g.dst_any)) /* dst is no map where the threads store it at any alignment */
            tma_prefetch_desc(&tout);
        for (uint32_t s = 0; s < S; s++)
            tma_mbar_init(&full[s], 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (tid == 0)
        for (uint32_t s = 0; s < S; s++) {
            const uint64_t t = blockIdx.x + s * G;
            if (t < ntiles) {
                int32_t lc[5], mc[5];
                pm_transpose_coords(&g, t, lc);
                for (int i = 0; i < 5; i++)
                    crd[s][i] = lc[i];
                pm_load_order(packed, lc, mc);
                tma_mbar_expect_box(&full[s], &tin);
                if (KEEP && g.src_keep)
                    pm_load_keep(g.rank, in_buf + s * TILE, &tin, &full[s], mc);
                else
                    pm_load(g.rank, in_buf + s * TILE, &tin, &full[s], mc);
            }
        }

    const uint32_t q = tid / 64u; /* this thread's sub-tile and block (transpose_tiles.h, THE LANE MAP) */
    uint32_t k, c;
    tr_lane_block(tid % 64u, &k, &c);
    /* The first thread of each sub-tile's 64 issues that sub-tile's store (its own bulk groups): the stores of a
     * tile leave from as many warps in parallel, and thread 0 keeps only the loads. */
    const bool issuer = tid % 64u == 0u;
    /* THREAD STORES (permute_tiles.h; compiled only into the TSTORE instances, which the host launches for g.tstore) */
    pm_slot sl[V]; /* this thread's chunks of every tile */
    if (TSTORE && g.tstore)
#pragma unroll
        for (uint32_t j = 0; j < V; j++)
            pm_tstore_slot(&g, j * blockDim.x + tid, E, &sl[j]);
    /* sub-tile q: rows a2 W.. of slab c2 (TMA store boxes: box[1] is a multiple of W; short tiles store with the
     * threads) */
    const uint32_t QA = g.box[1] >= W ? g.box[1] / W : 1u, a2 = q % QA, c2 = q / QA;

    for (uint64_t it = 0;; it++) {
        const uint64_t t = blockIdx.x + it * G;
        if (t >= ntiles)
            break;
        const uint32_t s = (uint32_t)(it % S);
        uint8_t *in = in_buf + s * TILE, *out = out_buf + (uint32_t)(it % NB) * TILE;
        const uint64_t tn = blockIdx.x + (it + S) * G; /* refills stage s */
        int32_t nc[5], lc[5];
        if (tid == 0 && tn < ntiles)
            pm_transpose_coords(&g, tn, nc);
        tma_mbar_wait_quiet(&full[s], (uint32_t)(it / S) & 1u);

        const uint32_t in_a = tma_smem_addr(in), out_a = tma_smem_addr(out) + q * W * TMA_SWIZZLE_LINE_BYTES;
        uint4 a[V], o[V];
#pragma unroll
        for (uint32_t i = 0; i < V; i++)
            a[i] = *(const uint4 *)__cvta_shared_to_generic(
                tma_swizzle_elem(SW_IN, in_a, TMA_SWIZZLE_SPAN_128B, E, q * W + k * V + i, c * V));
        tr_regs<E>::run(a, o);
#pragma unroll
        for (uint32_t j = 0; j < V; j++)
            *(uint4 *)__cvta_shared_to_generic(
                tma_swizzle_elem(SW, out_a, TMA_SWIZZLE_SPAN_128B, E, c * V + j, k * V)) = o[j];

        if (TSTORE && g.tstore) {
            for (int i = 0; i < 5; i++) /* before the barrier: thread 0 rewrites crd[s] (tile it + S) after it */
                lc[i] = crd[s][i];
            if (g.dspan && tid < g.box[2])
                tma_store_wait_read<0>(); /* this thread's run of the tile before has left the run buffer */
            __syncthreads();
            /* THREAD STORES (permute_tiles.h): the buffer is read back before the next barrier, and rewritten
             * NB >= 2 tiles later, after it. */
            const uint32_t ob = tma_smem_addr(out);
            uint8_t *tb = dst + pm_tstore_base(&g, lc, E);
            uint4 x[V];
#pragma unroll
            for (uint32_t j = 0; j < V; j++)
                x[j] = *(const uint4 *)__cvta_shared_to_generic(ob + sl[j].soff);
            if (g.dspan) { /* each slab one run of dst (pm_dst_slab_runs): in dst order into the run buffer, then one
                            * bulk copy a slab; every chunk is whole (16 bytes) or past dst (0) */
                const uint32_t rb = tma_smem_addr(runs), room = pm_dst_run_bytes(&g, E);
                const uint32_t run = pm_dst_run_len(&g, lc[0], E);
#pragma unroll
                for (uint32_t j = 0; j < V; j++)
                    if (pm_tstore_bytes(&g, lc, &sl[j], E))
                        *(uint4 *)__cvta_shared_to_generic(rb + sl[j].run_off) = x[j];
                tma_fence_proxy_async();
                __syncthreads();
                const uint32_t left = g.lim_c - (uint32_t)lc[2], slabs = left < g.box[2] ? left : g.box[2];
                if (tid < slabs) {
                    tma_bulk_store(tb + (uint64_t)tid * g.dst_stride[2], runs + tid * room, run);
                    tma_store_commit();
                }
            } else {
                const uint64_t pol = KEEP ? tma_l2_policy_evict_first() : 0u;
#pragma unroll
                for (uint32_t j = 0; j < V; j++) {
                    const uint32_t bytes = pm_tstore_bytes(&g, lc, &sl[j], E);
                    uint8_t *at = tb + sl[j].rel;
                    if (bytes == TMA_SWIZZLE_CHUNK_BYTES && !(g.dst_any && (uintptr_t)at % 16u != 0u)) {
                        if (KEEP && g.src_keep)
                            pm_st16_hint(at, x[j], pol);
                        else
                            *(uint4 *)at = x[j];
                    } else if (bytes) { /* a row's last chunk, or a chunk of a dst at any element: its elements */
                        pm_st_elems<E>(at, x[j], bytes);
                    }
                }
            }
        } else {
            tma_fence_proxy_async(); /* this thread's shared writes -> visible to the stores (async proxy) */
            if (issuer) {
                for (int i = 0; i < 5; i++) /* before the barrier: thread 0 rewrites crd[s] (tile it + S) after it */
                    lc[i] = crd[s][i];
                tma_store_wait_read<NB - 2>(); /* this sub-tile's store from NB - 1 tiles ago has read its buffer */
            }
            __syncthreads();
            if (issuer) {
                int32_t cc[5];
                if (pm_store_coords(&g, lc, a2, c2, W, cc)) { /* a box wholly past dst is not issued */
                    if (KEEP && g.src_keep)
                        pm_store_drop(g.rank, &tout, out + q * W * TMA_SWIZZLE_LINE_BYTES, cc);
                    else
                        pm_store(g.rank, &tout, out + q * W * TMA_SWIZZLE_LINE_BYTES, cc);
                }
                tma_store_commit();
            }
        }
        if (tid == 0 && tn < ntiles) {
            int32_t mc[5];
            for (int i = 0; i < 5; i++)
                crd[s][i] = nc[i];
            pm_load_order(packed, nc, mc);
            tma_mbar_expect_box(&full[s], &tin);
            if (KEEP && g.src_keep)
                pm_load_keep(g.rank, in, &tin, &full[s], mc);
            else
                pm_load(g.rank, in, &tin, &full[s], mc);
        }
    }
    if (issuer || (TSTORE && g.dspan && tid < g.box[2]))
        tma_store_wait<0>(); /* shared memory must outlive the stores' reads */
}


/* ------------------------------------------------------------------------------------------------
 * THE THREAD KERNEL (permute_tiles.h): any tensor, element by element through a shared-memory tile. Block b takes
 * tiles b, b + G, ...; each thread issues all of its loads of a tile before it waits for any.
 * ---------------------------------------------------------------------------------------------- */
/* The element type of E bytes, as an unsigned integer. */
template <int E> struct pm_elem;
template <> struct pm_elem<1> { typedef uint8_t t; };
template <> struct pm_elem<2> { typedef uint16_t t; };
template <> struct pm_elem<4> { typedef uint32_t t; };
template <> struct pm_elem<8> { typedef unsigned long long t; };

/* A span's two partial 16-byte chunks (`head` bytes from its start, `tail` before its end, of `len`), and the aligned
 * interior between them, for a span whose first byte lies at `phase` past a 16-byte boundary. */
struct pm_span {
    uint32_t len, head, body, tail;
};
__device__ __forceinline__ pm_span pm_span_of(uint32_t phase, uint32_t len) {
    pm_span p;
    p.len = len;
    p.head = (16u - phase) % 16u < len ? (16u - phase) % 16u : len;
    p.body = (len - p.head) / 16u * 16u;
    p.tail = len - p.head - p.body;
    return p;
}

/* SPANS (permute_tiles.h): the elements of a span's two partial 16-byte chunks, copied by threads 0.. (head) and 16..
 * (tail) between global memory and a buffer at the span's phase. */
template <int E>
__device__ __forceinline__ void pm_span_ends(uint8_t *to, const uint8_t *from, const pm_span &sp, uint32_t i) {
    typedef typename pm_elem<E>::t T;
    if (i < sp.head / E)
        ((T *)to)[i] = ((const T *)from)[i];
    else if (i >= 16u && i - 16u < sp.tail / E)
        ((T *)(to + sp.len - sp.tail))[i - 16u] = ((const T *)(from + sp.len - sp.tail))[i - 16u];
}

/* GEN: the tile's sides are any numbers (a short dimension taken whole), each element's place a division (pm_div_by);
 * else both are powers of two up to PM_THR_THREADS, each thread's column fixed and its addresses a step apart: the same
 * elements (pm_thr_load_xy, pm_thr_store_xy), fewer instructions (the divisions cost bf16 T 4096 x 50257 61% -> 42%
 * of a copy). */
template <int E, bool TR, bool GEN, bool SPAN>
__global__ void __launch_bounds__(PM_THR_THREADS, PM_THR_BLOCKS_PER_SM) pm_threads_kernel(const pm_thr R,
                                                                                         const uint8_t *src,
                                                                                         uint8_t *dst, uint64_t ntiles) {
    static_assert(!SPAN || TR, "dst spans are a transpose's");
    typedef typename pm_elem<E>::t T;
    constexpr uint32_t K = PM_THR_TILE_ELEMS / PM_THR_THREADS; /* the most passes */
    extern __shared__ __align__(16) uint8_t dyn[];
    T *tile = (T *)dyn;
    const uint32_t i = threadIdx.x, passes = pm_thr_passes(&R);
    /* the power-of-two tile: pass k's element is (lx, ly + k lstep) for loads, (sx + k sstep, sy) or (sx, sy + k
     * sstep) for stores */
    uint32_t lx, ly, sx, sy;
    pm_thr_load_xy(&R, i, 0, &lx, &ly);
    pm_thr_store_xy(&R, i, 0, &sx, &sy);
    const uint32_t lstep = GEN ? 0u : PM_THR_THREADS / R.tx, sstep = GEN ? 0u : PM_THR_THREADS / (TR ? R.ty : R.tx);
    const uint64_t lrow = (uint64_t)lstep * R.ss[1], srow = (uint64_t)sstep * (TR ? R.ds[0] : R.ds[1]);
    uint32_t it = 0;
    for (uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x, it++) {
        pm_thr_tile TL;
        pm_thr_tile_of(&R, t, &TL);
        T v[K];
        const uint8_t *ps = src + TL.s + (uint64_t)lx * E + (uint64_t)ly * R.ss[1];
#pragma unroll
        for (uint32_t k = 0; k < K; k++) {
            uint32_t x = lx, y = ly + k * lstep;
            if (GEN)
                pm_thr_load_xy(&R, i, k, &x, &y);
            const bool live = k < passes && x < TL.nx && y < TL.ny;
            const uint8_t *p = GEN ? src + TL.s + (uint64_t)x * E + (uint64_t)y * R.ss[1] : ps + k * lrow;
            v[k] = live ? *(const T *)p : (T)0;
        }
        if (SPAN && R.drows) { /* DST ROW SPANS: row x of the tile at b + x rs, at its phase; thread x stores it */
            uint8_t *g = dst + TL.d, *b = dyn + (it & 1u) * pm_thr_span_stride(&R);
            const uint32_t rs = pm_thr_row_stride(&R);
            if (i < R.tx)
                tma_store_wait_read<1>(); /* row i of two tiles ago has been read from this buffer */
            __syncthreads();
#pragma unroll
            for (uint32_t k = 0; k < K; k++) {
                uint32_t x = lx, y = ly + k * lstep;
                if (GEN)
                    pm_thr_load_xy(&R, i, k, &x, &y);
                const uint32_t phase = (uint32_t)((uintptr_t)(g + (uint64_t)x * R.ds[0]) % 16u);
                if (k < passes && x < TL.nx && y < TL.ny)
                    *(T *)(b + x * rs + phase + y * E) = v[k];
            }
            tma_fence_proxy_async(); /* the shared writes -> visible to the bulk copies (async proxy) */
            __syncthreads();
            if (i < R.tx) {
                if (i < TL.nx) {
                    uint8_t *gr = g + (uint64_t)i * R.ds[0];
                    const uint32_t phase = (uint32_t)((uintptr_t)gr % 16u);
                    const pm_span rsp = pm_span_of(phase, TL.ny * E);
                    if (rsp.body)
                        tma_bulk_store(gr + rsp.head, b + i * rs + phase + rsp.head, rsp.body);
                }
                tma_store_commit(); /* a group every tile, empty or not: wait_read<1> counts tiles */
            }
            for (uint32_t x = i / 32u; x < TL.nx; x += PM_THR_THREADS / 32u) { /* the rows' partial chunks, a warp each */
                uint8_t *gr = g + (uint64_t)x * R.ds[0];
                const uint32_t phase = (uint32_t)((uintptr_t)gr % 16u);
                pm_span_ends<E>(gr, b + x * rs + phase, pm_span_of(phase, TL.ny * E), i % 32u);
            }
            continue;
        }
        if (SPAN) {
            uint8_t *g = dst + TL.d, *b = dyn + (it & 1u) * pm_thr_span_stride(&R);
            const uint32_t phase = (uint32_t)((uintptr_t)g % 16u);
            if (i == 0)
                tma_store_wait_read<1>(); /* the span of two tiles ago has been read from this buffer */
            __syncthreads();
#pragma unroll
            for (uint32_t k = 0; k < K; k++) {
                uint32_t x = lx, y = ly + k * lstep;
                if (GEN)
                    pm_thr_load_xy(&R, i, k, &x, &y);
                if (k < passes && x < TL.nx && y < TL.ny)
                    *(T *)(b + pm_thr_span_at(&R, phase, x, y)) = v[k];
            }
            tma_fence_proxy_async(); /* the shared writes -> visible to the bulk copy (async proxy) */
            __syncthreads();
            const pm_span ds = pm_span_of(phase, TL.nx * TL.ny * E);
            if (i == 0) {
                if (ds.body)
                    tma_bulk_store(g + ds.head, b + phase + ds.head, ds.body);
                tma_store_commit(); /* a group every tile, empty or not: wait_read<1> counts tiles */
            }
            pm_span_ends<E>(g, b + phase, ds, i);
            continue;
        }
        __syncthreads(); /* every thread has read the previous tile from shared memory */
#pragma unroll
        for (uint32_t k = 0; k < K; k++) {
            uint32_t x = lx, y = ly + k * lstep;
            if (GEN)
                pm_thr_load_xy(&R, i, k, &x, &y);
            if (k < passes && y < R.ty) /* a tile smaller than the block: the rows it has */
                tile[y * R.pitch + x] = v[k];
        }
        __syncthreads();
        uint8_t *pd = dst + TL.d + (uint64_t)sx * R.ds[0] + (uint64_t)sy * R.ds[1];
#pragma unroll
        for (uint32_t k = 0; k < K; k++) {
            uint32_t x = TR ? sx + k * sstep : sx, y = TR ? sy : sy + k * sstep;
            if (GEN)
                pm_thr_store_xy(&R, i, k, &x, &y);
            uint8_t *p = GEN ? dst + TL.d + (uint64_t)x * R.ds[0] + (uint64_t)y * R.ds[1] : pd + k * srow;
            if (k < passes && x < TL.nx && y < TL.ny)
                *(T *)p = tile[y * R.pitch + x];
        }
    }
    if (SPAN && (R.drows ? i < R.tx : i == 0))
        tma_store_wait<0>(); /* shared memory must outlive the bulk copies' reads */
}

/* SRC SPANS (permute_tiles.h): the src span of tile t into buffer b (at the span's phase): thread 0 issues the bulk
 * copy of its aligned interior, announced on `full` (0 bytes where it has none: the barrier's phase completes on the
 * arrival). */
template <int E>
__device__ __forceinline__ void pm_span_load_issue(const pm_thr &R, const uint8_t *src, uint64_t t, uint8_t *b,
                                                   uint64_t *full) {
    pm_thr_tile TL;
    pm_thr_tile_of(&R, t, &TL);
    const uint8_t *g = src + TL.s;
    const uint32_t phase = (uint32_t)((uintptr_t)g % 16u);
    const pm_span sp = pm_span_of(phase, TL.nx * TL.ny * E);
    tma_mbar_arrive_expect_tx(full, sp.body);
    if (sp.body)
        tma_bulk_load(b + phase + sp.head, g + sp.head, sp.body, full);
}

/* THE THREAD KERNEL with SRC SPANS (permute_tiles.h), and DST SPANS too where DSPAN. Block b takes tiles b, b + G, ...,
 * the bulk copy of the next one's src span in flight while this one is stored; shared memory: two src span buffers,
 * then (DSPAN) two dst span buffers. */
template <int E, bool DSPAN>
__global__ void __launch_bounds__(PM_THR_THREADS, PM_THR_BLOCKS_PER_SM) pm_threads_span_kernel(const pm_thr R,
                                                                                              const uint8_t *src,
                                                                                              uint8_t *dst,
                                                                                              uint64_t ntiles) {
    typedef typename pm_elem<E>::t T;
    extern __shared__ __align__(16) uint8_t dyn[];
    __shared__ uint64_t full[2];
    const uint32_t i = threadIdx.x, stride = pm_thr_span_stride(&R), passes = pm_thr_passes(&R);
    uint8_t *sbuf = dyn, *dbuf = dyn + 2u * stride;
    if (i == 0) {
        tma_mbar_init(&full[0], 1);
        tma_mbar_init(&full[1], 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (i == 0 && blockIdx.x < ntiles)
        pm_span_load_issue<E>(R, src, blockIdx.x, sbuf, &full[0]);
    uint32_t it = 0;
    for (uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x, it++) {
        const uint32_t b = it & 1u;
        if (i == 0 && t + gridDim.x < ntiles) /* buffer b ^ 1 was last read before the previous tile's last barrier */
            pm_span_load_issue<E>(R, src, t + gridDim.x, sbuf + (b ^ 1u) * stride, &full[b ^ 1u]);
        pm_thr_tile TL;
        pm_thr_tile_of(&R, t, &TL);
        const uint8_t *gs = src + TL.s;
        const uint32_t sphase = (uint32_t)((uintptr_t)gs % 16u);
        const pm_span ss = pm_span_of(sphase, TL.nx * TL.ny * E);
        uint8_t *s0 = sbuf + b * stride + sphase;
        pm_span_ends<E>(s0, gs, ss, i); /* the src span's partial chunks */
        tma_mbar_wait_quiet(&full[b], (it >> 1) & 1u);
        if (DSPAN && i == 0)
            tma_store_wait_read<1>(); /* the dst span of two tiles ago has been read from its buffer */
        __syncthreads();
        if (DSPAN) {
            uint8_t *gd = dst + TL.d, *d = dbuf + b * stride;
            const uint32_t dphase = (uint32_t)((uintptr_t)gd % 16u);
            for (uint32_t k = 0; k < passes; k++) { /* src order: the reads along the span */
                uint32_t x, y;
                pm_thr_load_xy(&R, i, k, &x, &y);
                if (x < TL.nx && y < TL.ny)
                    *(T *)(d + pm_thr_span_at(&R, dphase, x, y)) = *(const T *)(s0 + (y * R.tx + x) * E);
            }
            tma_fence_proxy_async(); /* the shared writes -> visible to the bulk copy (async proxy) */
            __syncthreads();
            const pm_span ds = pm_span_of(dphase, TL.nx * TL.ny * E);
            if (i == 0) {
                if (ds.body)
                    tma_bulk_store(gd + ds.head, d + dphase + ds.head, ds.body);
                tma_store_commit(); /* a group every tile, empty or not: wait_read<1> counts tiles */
            }
            pm_span_ends<E>(gd, d + dphase, ds, i);
        } else {
            for (uint32_t k = 0; k < passes; k++) { /* dst order: the stores along dst's rows */
                uint32_t x, y;
                pm_thr_store_xy(&R, i, k, &x, &y);
                if (x < TL.nx && y < TL.ny)
                    *(T *)(dst + TL.d + (uint64_t)x * R.ds[0] + (uint64_t)y * E) = *(const T *)(s0 + (y * R.tx + x) * E);
            }
        }
        __syncthreads(); /* every thread has read src buffer b: the tile after next may load into it */
    }
    if (DSPAN && i == 0)
        tma_store_wait<0>(); /* shared memory must outlive the bulk copies' reads */
}

/* ------------------------------------------------------------------------------------------------
 * CHUNK TRANSPOSE (permute_tiles.h): 16-byte chunks on both sides, whatever the rows' phases.
 * ---------------------------------------------------------------------------------------------- */
/* Bytes s .. s + 15 of the 32 bytes a:b (s < 16). */
static __device__ __forceinline__ uint4 pm_bytes_at(uint4 a, uint4 b, uint32_t s) {
    const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    uint32_t u[6], v[5];
#pragma unroll
    for (int j = 0; j < 6; j++)
        u[j] = s & 8u ? w[j + 2] : w[j];
#pragma unroll
    for (int j = 0; j < 5; j++)
        v[j] = s & 4u ? u[j + 1] : u[j];
    const uint32_t sh = (s % 4u) * 8u;
    return make_uint4(__funnelshift_r(v[0], v[1], sh), __funnelshift_r(v[1], v[2], sh),
                      __funnelshift_r(v[2], v[3], sh), __funnelshift_r(v[3], v[4], sh));
}

/* HALO: a whole tile's 16-byte loads and stores carry L2 hints, src evict_last (the rows and chunks a tile shares with
 * its neighbours, the halo rows below and the ninth chunks right of it, stay until those come; the band walk,
 * pm_thr_walk, brings them close) and dst evict_first (never read again here), as the TMA transposes' (pm_src_keep).
 * Without the halo (dst rows on 16 bytes) both were slower: tuning_sm90.h's PM_CT_GROUP. */
template <bool HINT>
static __device__ __forceinline__ uint4 pm_ct_ld16(const uint8_t *p, uint64_t keep) {
    if (!HINT)
        return *(const uint4 *)p;
    uint4 v;
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(keep));
    return v;
}

template <bool HINT>
static __device__ __forceinline__ void pm_ct_st16(uint8_t *p, uint4 v, uint64_t drop) {
    if (HINT)
        pm_st16_hint(p, v, drop);
    else
        *(uint4 *)p = v;
}

/* The aligned chunk at p with only its bytes inside [lo, hi) read (one at a time), the others 0: a chunk at src's two
 * ends. */
static __device__ __forceinline__ uint4 pm_ct_load_edge(const uint8_t *p, const uint8_t *lo, const uint8_t *hi) {
    unsigned long long w0 = 0u, w1 = 0u;
#pragma unroll 1
    for (uint32_t b = 0; b < 16u; b++) {
        const unsigned long long v = p + b >= lo && p + b < hi ? p[b] : 0u;
        if (b < 8u)
            w0 |= v << (8u * b);
        else
            w1 |= v << (8u * (b - 8u));
    }
    return make_uint4((uint32_t)w0, (uint32_t)(w0 >> 32), (uint32_t)w1, (uint32_t)(w1 >> 32));
}

/* The aligned chunk at p: one 16-byte load where it lies inside src's bytes [lo, hi). */
static __device__ __forceinline__ uint4 pm_ct_load(const uint8_t *p, const uint8_t *lo, const uint8_t *hi) {
    if (p >= lo && p + 16 <= hi)
        return *(const uint4 *)p;
    return pm_ct_load_edge(p, lo, hi);
}

static __device__ __forceinline__ uint4 pm_shfl_down(uint4 v, uint32_t d, int width) {
    return make_uint4(__shfl_down_sync(0xFFFFFFFFu, v.x, d, width), __shfl_down_sync(0xFFFFFFFFu, v.y, d, width),
                      __shfl_down_sync(0xFFFFFFFFu, v.z, d, width), __shfl_down_sync(0xFFFFFFFFu, v.w, d, width));
}

/* Thread i's item (pm_ct_item): the V rows of piece k, 4 elements of column quad xq each (64 bytes), read from the
 * tile and transposed into P[j], the piece of dst row 4 xq + j (V elements). */
template <int E>
static __device__ __forceinline__ void pm_ct_gather(const uint32_t *tile, uint32_t xq, uint32_t k, uint4 P[4]) {
    constexpr uint32_t V = 16u / E;
    uint32_t r[16];
#pragma unroll
    for (uint32_t j = 0; j < V; j++) {
        const uint32_t y = V * k + j;
        if (E == 1) {
            r[j] = tile[pm_ct_word(E, y, xq)];
        } else if (E == 2) {
            const uint2 h = *(const uint2 *)&tile[pm_ct_word(E, y, 2u * xq)];
            r[2 * j] = h.x, r[2 * j + 1] = h.y;
        } else {
#pragma unroll
            for (uint32_t c = 0; c < (E >= 4 ? E / 4u : 1u); c++) {
                const uint4 h = *(const uint4 *)&tile[pm_ct_word(E, y, (E / 4u) * 4u * xq + 4u * c)];
                r[E * j + 4 * c] = h.x, r[E * j + 4 * c + 1] = h.y, r[E * j + 4 * c + 2] = h.z,
                                r[E * j + 4 * c + 3] = h.w;
            }
        }
    }
    uint32_t o[4][4];
#pragma unroll
    for (uint32_t m = 0; m < 4u; m++) {
        if (E == 1) { /* a 4 x 4 byte block: rows 4m .. 4m + 3, bytes j of them */
            const uint32_t a = __byte_perm(r[4 * m], r[4 * m + 1], 0x5140), b = __byte_perm(r[4 * m + 2], r[4 * m + 3], 0x5140),
                           c = __byte_perm(r[4 * m], r[4 * m + 1], 0x7362), d = __byte_perm(r[4 * m + 2], r[4 * m + 3], 0x7362);
            o[0][m] = __byte_perm(a, b, 0x5410), o[1][m] = __byte_perm(a, b, 0x7632);
            o[2][m] = __byte_perm(c, d, 0x5410), o[3][m] = __byte_perm(c, d, 0x7632);
        } else if (E == 2) { /* rows 2m, 2m + 1: words 4m, 4m + 1 and 4m + 2, 4m + 3 */
            o[0][m] = __byte_perm(r[4 * m], r[4 * m + 2], 0x5410), o[1][m] = __byte_perm(r[4 * m], r[4 * m + 2], 0x7632);
            o[2][m] = __byte_perm(r[4 * m + 1], r[4 * m + 3], 0x5410),
            o[3][m] = __byte_perm(r[4 * m + 1], r[4 * m + 3], 0x7632);
        } else if (E == 4) {
#pragma unroll
            for (uint32_t j = 0; j < 4u; j++)
                o[j][m] = r[4 * m + j];
        } else { /* element j of row m / 2: words 2j, 2j + 1 of that row's 8 */
#pragma unroll
            for (uint32_t j = 0; j < 4u; j++)
                o[j][m] = r[8 * (m / 2u) + 2 * j + m % 2u];
        }
    }
#pragma unroll
    for (uint32_t j = 0; j < 4u; j++)
        P[j] = make_uint4(o[j][0], o[j][1], o[j][2], o[j][3]);
}

/* The loads of one tile: thread i's rows y = i / 8 + 32 j, each's chunk ci (and, ci = 7, the ninth) from the chunk
 * holding the row's first byte, at `ph[j]` past it; j = 4 is the halo's row (HALO: the next tile's first V rows,
 * threads 0 .. 8 V - 1). Rows from `rows` on are not loaded. WHOLE: a full tile all of whose rows' 9 chunks lie
 * inside src's bytes: no checks. */
template <int E, bool HALO, bool WHOLE>
static __device__ __forceinline__ void pm_ct_loads(const pm_thr &R, const uint8_t *src, uint64_t extent,
                                                   const pm_thr_tile &TL, uint32_t rows, uint32_t nxb, uint32_t i,
                                                   uint4 *c, uint4 *n, uint32_t *ph) {
    const uint32_t ci = i % 8u;
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
    const uint64_t keep = WHOLE && HALO ? tma_l2_policy_evict_last() : 0u;
    const uint8_t *a = src + TL.s + (uint64_t)(i / 8u) * R.ss[1], *hi = src + extent;
    const uint64_t step = (uint64_t)(PM_THR_THREADS / 8u) * R.ss[1];
#pragma unroll
    for (uint32_t j = 0; j < PM_CT_LOADS_PER_THREAD + (HALO ? 1u : 0u); j++, a += step) {
        ph[j] = (uint32_t)((uintptr_t)a % 16u);
        const uint8_t *b = a - ph[j];
        const bool row = (j < PM_CT_LOADS_PER_THREAD || i / 8u < 16u / E) &&
                         (WHOLE || i / 8u + (PM_THR_THREADS / 8u) * j < rows);
        if (WHOLE) {
            c[j] = row ? pm_ct_ld16<HALO>(b + 16u * ci, keep) : zero;
            n[j] = row && ci == 7u && ph[j] != 0u ? pm_ct_ld16<HALO>(b + 128u, keep) : zero;
        } else {
            c[j] = row && 16u * ci < ph[j] + nxb ? pm_ct_load(b + 16u * ci, src, hi) : zero;
            n[j] = row && ci == 7u && ph[j] != 0u && 128u < ph[j] + nxb ? pm_ct_load(b + 128u, src, hi) : zero;
        }
    }
}

/* The bytes [lo, hi) of dst of the 16-byte chunk v at ca (a multiple of 16): one store where it is all of them. */
template <int E>
static __device__ __forceinline__ void pm_ct_store_clipped(uint8_t *ca, uint4 v, const uint8_t *lo, const uint8_t *hi) {
    const uint8_t *from = ca > lo ? ca : lo, *to = ca + 16 < hi ? ca + 16 : hi;
    if (from == ca && to == ca + 16)
        *(uint4 *)ca = v;
    else if (from < to)
        pm_st_elems<E>((uint8_t *)from, pm_bytes_at(v, make_uint4(0u, 0u, 0u, 0u), (uint32_t)(from - ca)),
                       (uint32_t)(to - from));
}

/* THE CHUNK TRANSPOSE (permute_tiles.h). Block b takes tiles b, b + G, ... HALO: some dst row starts off 16 bytes;
 * a tile stores the aligned chunks of its dst rows whose first element is one of its rows, the last of them ending in
 * the halo, and the first tile of a row the partial chunk before too. */
template <int E, bool HALO>
__global__ void __launch_bounds__(PM_THR_THREADS, PM_THR_BLOCKS_PER_SM) pm_chunks_kernel(const pm_thr R,
                                                                                        const uint8_t *src,
                                                                                        uint8_t *dst, uint64_t ntiles) {
    constexpr uint32_t V = 16u / E, L = PM_CT_LOADS_PER_THREAD + (HALO ? 1u : 0u), TX = PM_CT_ROW_BYTES / E;
    constexpr uint32_t ROWS = PM_CT_ROWS + (HALO ? V : 0u); /* loaded */
    extern __shared__ __align__(16) uint8_t dyn[];
    uint32_t *tile = (uint32_t *)dyn;
    const uint32_t i = threadIdx.x, ci = i % 8u;
    uint32_t xq, k;
    pm_ct_item(E, i, &xq, &k);
    const uint64_t extent = pm_thr_extent(&R), drop = HALO ? tma_l2_policy_evict_first() : 0u;
    for (uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        pm_thr_tile TL;
        pm_thr_walk_tile(&R, t, pm_ct_group(HALO), &TL);
        const uint32_t nxb = TL.nx * E, rows = R.n[1] - TL.y0 < ROWS ? R.n[1] - TL.y0 : ROWS;
        /* whole: every row loaded, all of x, the chunks of the first and last rows inside src's bytes (strides are
         * positive), and (HALO) not the first tile of a dst row */
        const uint64_t last = TL.s + (uint64_t)(ROWS - 1u) * R.ss[1];
        const bool whole = TL.nx == TX && rows == ROWS && (!HALO || TL.y0 != 0u) &&
                           ((uintptr_t)src + TL.s) / 16u * 16u >= (uintptr_t)src &&
                           ((uintptr_t)src + last) / 16u * 16u + 144u <= (uintptr_t)src + extent;
        uint4 c[L], n[L];
        uint32_t ph[L];
        if (whole)
            pm_ct_loads<E, HALO, true>(R, src, extent, TL, rows, nxb, i, c, n, ph);
        else
            pm_ct_loads<E, HALO, false>(R, src, extent, TL, rows, nxb, i, c, n, ph);
#pragma unroll
        for (uint32_t j = 0; j < L; j++) { /* from the row's first byte */
            const uint4 d = pm_shfl_down(c[j], 1u, 8);
            c[j] = pm_bytes_at(c[j], ci == 7u ? n[j] : d, ph[j]);
        }
        __syncthreads(); /* every thread has read the previous tile */
#pragma unroll
        for (uint32_t j = 0; j < L; j++) {
            const uint32_t y = i / 8u + (PM_THR_THREADS / 8u) * j;
            const uint32_t at = pm_ct_word(E, y, 4u * ci); /* 2-byte elements: the chunk's halves swapped on odd pieces */
            const uint4 v = at % 4u ? make_uint4(c[j].z, c[j].w, c[j].x, c[j].y) : c[j];
            if (y < rows)
                *(uint4 *)&tile[at & ~3u] = v;
        }
        __syncthreads();
        uint4 P[4], N[4];
        pm_ct_gather<E>(tile, xq, k, P);
        if (HALO)
            pm_ct_gather<E>(tile, xq, k + 1u, N);
        /* dst row x from rs: piece k at a (phase q); its chunk is the piece itself where q = 0, else the one that starts
         * inside it, 16 - q bytes on, ending in piece k + 1 */
        uint8_t *rs = dst + TL.d - (uint64_t)TL.y0 * E + (uint64_t)(4u * xq) * R.ds[0];
#pragma unroll
        for (uint32_t j = 0; j < 4u; j++, rs += R.ds[0]) {
            uint8_t *a = rs + (uint64_t)(TL.y0 + V * k) * E;
            const uint32_t q = HALO ? (uint32_t)((uintptr_t)a % 16u) : 0u;
            uint8_t *ca = q ? a + 16u - q : a;
            const uint4 v = q ? pm_bytes_at(P[j], N[j], 16u - q) : P[j];
            if (whole) {
                pm_ct_st16<HALO>(ca, v, drop);
            } else if (4u * xq + j < TL.nx) {
                const uint8_t *re = rs + (uint64_t)R.n[1] * E;
                pm_ct_store_clipped<E>(ca, v, rs, re);
                if (HALO && q && TL.y0 == 0u && k == 0u) /* the row's first elements, in the chunk before */
                    pm_st_elems<E>(a, P[j], (uint64_t)(re - a) < 16u - q ? (uint32_t)(re - a) : 16u - q);
            }
        }
    }
}

typedef void (*pm_threads_fn)(pm_thr, const uint8_t *, uint8_t *, uint64_t);
/* The instance for e-byte elements, a transpose or a copy, power-of-two tiles or not: each compiled apart, so that a
 * path not taken costs no registers (one instance for all ran at 88 registers, 2 blocks an SM). */
template <int E>
static pm_threads_fn pm_threads_of_e(const pm_thr &R) {
    const bool gen = !pm_thr_pow2(&R);
    if (R.chunks)
        return R.halo ? pm_chunks_kernel<E, true> : pm_chunks_kernel<E, false>;
    if (R.sspan)
        return R.dspan ? pm_threads_span_kernel<E, true> : pm_threads_span_kernel<E, false>;
    if (R.dspan || R.drows)
        return gen ? pm_threads_kernel<E, true, true, true> : pm_threads_kernel<E, true, false, true>;
    if (R.transpose)
        return gen ? pm_threads_kernel<E, true, true, false> : pm_threads_kernel<E, true, false, false>;
    return gen ? pm_threads_kernel<E, false, true, false> : pm_threads_kernel<E, false, false, false>;
}
static pm_threads_fn pm_threads_of(const pm_thr &R) {
    switch (R.e) {
    case 1: return pm_threads_of_e<1>(R);
    case 2: return pm_threads_of_e<2>(R);
    case 4: return pm_threads_of_e<4>(R);
    default: return pm_threads_of_e<8>(R);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Host side: plan, tune, run
 * ---------------------------------------------------------------------------------------------- */
/* The transpose kernel for e-byte elements: the tall instance (tall: pm_tall), or the one with or without the L2
 * hints (keep: pm_src_keep, never for 1 byte, always for 4 bytes). */
typedef void (*pm_transpose_fn)(tma_tensor, tma_tensor, pm_grid, uint64_t, uint8_t *);
static pm_transpose_fn pm_transpose_of(uint32_t e, uint32_t keep, uint32_t tall, uint32_t tstore) {
    if (tall) /* never with the L2 hints (pm_grid_dst, pm_tstore_tall) */
        switch (e) {
        case 1: return pm_transpose_kernel<1, false, true, false>;
        case 2: return pm_transpose_kernel<2, false, true, true>;
        case 4: return pm_transpose_kernel<4, false, true, true>;
        default: return pm_transpose_kernel<8, false, true, true>;
        }
    switch (e) {
    case 1: return pm_transpose_kernel<1, false, false, false>;
    case 2: return keep ? pm_transpose_kernel<2, true, false, true> : pm_transpose_kernel<2, false, false, true>;
    case 4: /* the one instance compiled without the thread stores for the tiles TMA stores (TSTORE above) */
        return tstore ? pm_transpose_kernel<4, true, false, true> : pm_transpose_kernel<4, true, false, false>;
    default: return keep ? pm_transpose_kernel<8, true, false, true> : pm_transpose_kernel<8, false, false, true>;
    }
}

/* ---------------------------------------------------------------------------------------------
 * The launch record (tma_launch_record): the kernel instance and its grid argument, with the maps' descriptors
 * (checked once by pm_plan; tma_permute_plan_tune re-encodes them with another L2 promotion, nothing planned or
 * checked again), made by tma_permute_plan_make and tma_permute_plan_tune from the plan's fields (pm_inputs), taken
 * as it is by run while they stay as they were.
 * ------------------------------------------------------------------------------------------- */

/* The plan fields a record is made from: the description, then what the plan made of it. */
struct pm_inputs {
    uint64_t elem_bytes, desc_rank, src, dst, src_dims[5], src_strides[4], perm[5], dst_strides[4];
    uint64_t transpose, threads, rank, src_dim[5], dims[5], box[5], tiles_n[5], tiles, group, l2, grid, block, smem,
        load_smem;
};

struct pm_launch {
    pm_transpose_fn transpose; /* the TRANSPOSE instance (pm_transpose_of); NULL: COPY, pm_copy_kernel */
    pm_threads_fn threads;     /* THE THREAD KERNEL (pm_threads_of), taking the place of both; NULL: TMA */
    union {
        pm_grid g;             /* the TMA kernels' grid argument */
        pm_thr thr;            /* the thread kernel's */
    };
    uint32_t stage_bytes;      /* COPY: the stride of its stages in shared memory */
};

/* The plan's fields a launch reads (the grid, the block, the tiles, the maps' L2 setting, the tensors' addresses): what
 * run compares before it takes the record as it is. Few, so that the check costs little beside the launch: a permute
 * is often short (15-20 us), and run's host time lies between a caller's events and the kernel (docs/lab/
 * architecture.md: with the whole record copied and every input compared, a 26 MB bf16 NCHW -> NHWC read 2-3 points of
 * a copy lower in three rounds; with this key, within the spread). The plan's other fields are read-only
 * (kernels.h); a change to them is caught by the full compare only where one of these changed too. */
struct pm_key {
    uint64_t grid, block, smem, tiles, group, shape, l2, src, dst;
};

/* The front of the record: what run reads when the plan is as its record says. */
struct pm_launch_head {
    uint32_t mark; /* KD_RECORD_PERMUTE */
    pm_key key;
    pm_launch launch;
};

struct pm_launch_record {
    pm_launch_head head;
    tma_tiled_desc ld, st; /* the maps' descriptors, checked (l2_promotion: the plan's l2) */
    pm_inputs from;
};
static_assert(sizeof(pm_launch_record) <= sizeof(tma_launch_record), "the record fits tma_launch_record");

static pm_inputs pm_inputs_of(const tma_permute_plan *p) {
    pm_inputs in;
    memset(&in, 0, sizeof in);
    const tma_permute_desc *d = &p->desc;
    in.elem_bytes = d->elem_bytes, in.desc_rank = d->rank;
    in.src = (uint64_t)(uintptr_t)d->src, in.dst = (uint64_t)(uintptr_t)d->dst;
    for (uint32_t k = 0; k < 5u; k++) {
        in.src_dims[k] = d->src_dims[k], in.perm[k] = d->perm[k];
        in.src_dim[k] = p->src_dim[k], in.dims[k] = p->dims[k], in.box[k] = p->box[k], in.tiles_n[k] = p->tiles_n[k];
    }
    for (uint32_t k = 0; k < 4u; k++)
        in.src_strides[k] = d->src_strides[k], in.dst_strides[k] = d->dst_strides[k];
    in.transpose = p->transpose, in.threads = p->threads, in.rank = p->rank, in.tiles = p->tiles, in.group = p->group;
    in.l2 = (uint64_t)p->l2, in.grid = p->grid, in.block = p->block, in.smem = p->smem;
    in.load_smem = p->load_map.box.smem_bytes;
    return in;
}

static pm_key pm_key_of(const tma_permute_plan *p) {
    pm_key k;
    k.grid = p->grid, k.block = p->block, k.smem = p->smem, k.tiles = p->tiles, k.group = p->group;
    k.shape = (uint64_t)p->transpose | (uint64_t)p->rank << 8 | (uint64_t)p->desc.elem_bytes << 16 |
              (uint64_t)p->threads << 24;
    k.l2 = (uint64_t)p->l2;
    k.src = (uint64_t)(uintptr_t)p->desc.src, k.dst = (uint64_t)(uintptr_t)p->desc.dst;
    return k;
}

/* The COPY kernel's stage stride: a box rounded up to the 128B swizzle's period. */
static uint32_t pm_stage_bytes(const tma_permute_plan *p) {
    return (uint32_t)tma_swizzle_round_up(TMA_SWIZZLE_128B, p->load_map.box.smem_bytes);
}

static pm_launch pm_launch_make(uint32_t transpose, uint32_t e, const pm_grid &g, uint32_t stage_bytes) {
    pm_launch l;
    memset(&l, 0, sizeof l);
    l.transpose = transpose ? pm_transpose_of(e, g.src_keep, (uint32_t)pm_tall(&g, e), g.tstore) : NULL;
    l.g = g;
    l.stage_bytes = stage_bytes;
    return l;
}

static pm_launch pm_launch_threads(const pm_thr &R) {
    pm_launch l;
    memset(&l, 0, sizeof l);
    l.threads = pm_threads_of(R);
    l.thr = R;
    return l;
}

static void pm_launch_record_make(tma_permute_plan *p, const pm_launch &l, const tma_tiled_desc &ld,
                                  const tma_tiled_desc &st) {
    pm_launch_record r;
    memset(&r, 0, sizeof r);
    r.head.mark = KD_RECORD_PERMUTE;
    r.head.key = pm_key_of(p);
    r.head.launch = l;
    r.ld = ld, r.st = st;
    r.ld.l2_promotion = r.st.l2_promotion = p->l2;
    r.from = pm_inputs_of(p);
    kd_record_put(p->launch, r);
}

/* The grid argument of a plan changed by hand, rebuilt from its fields, the strides resolved from its
 * description. */
static pm_grid pm_grid_of(const tma_permute_plan *p) {
    pm_layout L;
    memset(&L, 0, sizeof L);
    L.elem_bytes = p->desc.elem_bytes;
    L.src_rank = p->desc.rank < 5u ? p->desc.rank : 5u;
    L.dst_phase = (uint32_t)((uintptr_t)p->desc.dst % TMA_GLOBAL_ALIGN);
    for (uint32_t k = 0; k < 5u; k++)
        L.src_dim[k] = p->src_dim[k];
    pm_strides_of(&p->desc, L.src_stride, L.dst_stride);
    pm_grid g;
    memset(&g, 0, sizeof g);
    g.rank = p->rank, g.group = p->group;
    for (uint32_t k = 0; k < 5u; k++)
        g.n[k] = p->tiles_n[k], g.box[k] = p->box[k];
    g.lim_a = (uint32_t)p->dims[1], g.lim_c = p->rank >= 3 ? (uint32_t)p->dims[2] : 1u;
    g.lim_0 = (uint32_t)p->dims[0];
    if (p->transpose)
        pm_grid_dst(&L, &g);
    return g;
}

/* The launch run makes: the record where the plan's fields are those it was made from; else, for a plan whose
 * fields were changed by hand, its grid argument rebuilt from them, after the checks that they still make a plan the
 * kernels can run. */
static tma_status pm_launch_for_run(const tma_permute_plan *p, pm_launch *l, tma_diag *diag) {
    const pm_launch_head h = kd_record_get<pm_launch_head>(p->launch);
    if (h.mark == KD_RECORD_PERMUTE && kd_same_inputs(h.key, pm_key_of(p))) {
        *l = h.launch;
        return TMA_OK;
    }
    const pm_launch_record r = kd_record_get<pm_launch_record>(p->launch);
    if (r.head.mark == KD_RECORD_PERMUTE && kd_same_inputs(r.from, pm_inputs_of(p))) {
        *l = r.head.launch;
        return TMA_OK;
    }
    const uint32_t e = p->desc.elem_bytes;
    if (p->threads) { /* planned again from the description: the fields must still be what it plans */
        pm_layout L;
        tma_diag ignored;
        if (p->threads != 1u || p->grid == 0 || pm_plan(&p->desc, &L, &ignored) != TMA_OK || !L.threads ||
            p->tiles != L.tiles || p->block != PM_THR_THREADS || p->smem != pm_thr_smem(&L.thr))
            return KD_FAIL(diag, PM_NOT_MADE, tma_arg_u(0));
        *l = pm_launch_threads(L.thr);
        return TMA_OK;
    }
    const bool sane = p->grid != 0 && p->group != 0 && p->rank >= 1 && p->rank <= 5 &&
                      (e == 1 || e == 2 || e == 4 || e == 8) && p->transpose <= 1u;
    const pm_grid g = sane ? pm_grid_of(p) : pm_grid{};
    if (!sane || (p->transpose && !pm_tile_fits(p->box[0], p->box[1], p->box[2], e, pm_tall(&g, e))))
        return KD_FAIL(diag, PM_NOT_MADE, tma_arg_u(0));
    *l = pm_launch_make(p->transpose, e, g, pm_stage_bytes(p));
    return TMA_OK;
}

/* The L2 promotion of a plan's maps: 256 bytes, but none for a transpose whose dst TMA stores where the load map's box
 * rows do not start on 128-byte lines (its row pitch or address not a multiple of 128): each 128-byte box row then
 * straddles two lines, the promotion fetches the 256-byte blocks around both, and what the neighbouring tile would use
 * of them is evicted before it comes. Measured on an H100 (docs/lab/permute.md "L2 promotion and rows off 128-byte
 * lines"): fp32 T 12344 x 6788 77.5 -> 82.2% of a copy (DRAM reads 412 -> 357 MB for 335 MB), fp64 77.1 -> 83.3%;
 * rows on lines (8192^2, u8 6784 wide) and transposes whose threads store dst (fp32 T 12345 x 6788: 70.4% with
 * it, 65.7% without) keep it. */
static tma_l2_promotion pm_default_l2(const pm_layout *L) {
    const uint64_t pitch = L->ld.global_stride[0], addr = (uint64_t)(uintptr_t)L->ld.global_address;
    const int off_lines =
        L->ld.rank >= 2u && (pitch % TMA_SWIZZLE_LINE_BYTES != 0u || addr % TMA_SWIZZLE_LINE_BYTES != 0u);
    return L->transpose && !L->grid.dst_any && off_lines ? TMA_L2_NONE : TMA_L2_256B;
}

/* Both maps, from descriptors pm_plan checked, with L2 promotion l2: encoded without a second check. A dst the
 * threads store at any alignment (dst_any) is no map: its store_map stays zeroed. */
static tma_status pm_encode(tma_permute_plan *p, tma_tiled_desc ld, tma_tiled_desc st, tma_l2_promotion l2,
                            uint32_t dst_any, tma_diag *diag) {
    ld.l2_promotion = st.l2_promotion = l2;
    tma_diag m;
    tma_status s = tma_tensor_make_prechecked_(&p->load_map, &ld, &m);
    if (s != TMA_OK)
        return KD_FAIL_STATUS(diag, s, PM_ENCODE, tma_arg_s("src (load)"), tma_arg_s(m.message));
    if (dst_any)
        memset(&p->store_map, 0, sizeof p->store_map);
    else if ((s = tma_tensor_make_prechecked_(&p->store_map, &st, &m)) != TMA_OK)
        return KD_FAIL_STATUS(diag, s, PM_ENCODE, tma_arg_s("dst (store)"), tma_arg_s(m.message));
    p->l2 = l2;
    return TMA_OK;
}

/* The grid of the largest number of blocks of fn that fit on the device's sms multiprocessors, at most one a tile;
 * the kernel's dynamic shared memory allowed up to smem_most first (the attribute belongs to the kernel, not to the
 * plan: allow the most any plan of this kernel uses, so a plan made later with a smaller tile cannot lower it under
 * an earlier plan's; its launch would then fail with cudaErrorInvalidValue: seen on an H200 when the sample made a
 * large copy plan and then a small one). */
static tma_status pm_fit_grid(tma_permute_plan *p, const void *fn, size_t smem_most, int sms, tma_diag *diag) {
    int per_sm = 0;
    tma_status st;
    if (p->smem > smem_most)
        return KD_FAIL(diag, PM_SMEM_DEFECT, tma_arg_u(p->smem), tma_arg_u(smem_most));
    if ((st = kd_cuda(diag, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_most),
                      "cudaFuncSetAttribute")) != TMA_OK ||
        (st = kd_cuda(diag, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, (int)p->block, p->smem),
                      "cudaOccupancyMaxActiveBlocksPerMultiprocessor")) != TMA_OK)
        return st;
    if (per_sm < 1)
        return KD_FAIL(diag, PM_NO_FIT, tma_arg_u(0));
    const uint64_t g = (uint64_t)sms * (uint64_t)per_sm;
    p->grid = (uint32_t)(p->tiles < g ? p->tiles : g);
    return TMA_OK;
}

/* plan_make's thread-kernel half: the plan's fields from the layout (no maps), the grid, the record. */
static tma_status pm_plan_make_threads(tma_permute_plan *p, const pm_layout &L, int sms, tma_diag *diag) {
    const pm_thr &R = L.thr;
    p->transpose = L.transpose, p->threads = 1, p->rank = R.rank, p->tiles = L.tiles;
    p->group = R.chunks ? pm_ct_group(R.halo) : 0u; /* the chunk transpose's walk (pm_thr_walk); the others row-major */
    for (uint32_t k = 0; k < 5u; k++)
        p->src_dim[k] = L.src_dim[k], p->box[k] = L.grid.box[k], p->tiles_n[k] = R.tn[k], p->dims[k] = R.n[k];
    p->l2 = TMA_L2_NONE;
    p->block = PM_THR_THREADS;
    p->smem = pm_thr_smem(&R);
    const pm_launch l = pm_launch_threads(R);
    const tma_status st = pm_fit_grid(p, (const void *)l.threads, pm_thr_smem_bound(R.e), sms, diag);
    if (st != TMA_OK)
        return st;
    tma_tiled_desc none;
    memset(&none, 0, sizeof none);
    pm_launch_record_make(p, l, none, none);
    return kd_ok(diag);
}

/* ---------------------------------------------------------------------------------------------
 * The C API
 * ------------------------------------------------------------------------------------------- */

extern "C" tma_status tma_permute_plan_make(tma_permute_plan *p, const tma_permute_desc *desc, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("the address of a tma_permute_plan"));
    memset(p, 0, sizeof *p);
    pm_layout L;
    tma_status st = pm_plan(desc, &L, diag);
    int sms = 0;
    if (st == TMA_OK)
        st = kd_require_sm90(diag, "tma_permute", &sms);
    if (st != TMA_OK)
        return st;
    p->desc = *desc;
    if (L.threads)
        return pm_plan_make_threads(p, L, sms, diag);
    p->transpose = L.transpose, p->rank = L.grid.rank, p->tiles = L.tiles, p->group = L.grid.group;
    const int swapped = L.transpose && pm_packed(&L.grid, desc->elem_bytes); /* load map {0, slab, a, ...} */
    for (uint32_t k = 0; k < 5u; k++)
        p->src_dim[k] = L.src_dim[k], p->box[k] = L.grid.box[k], p->tiles_n[k] = L.grid.n[k],
        p->dims[k] = k >= L.grid.rank ? 1u : L.ld.global_dim[swapped && (k == 1u || k == 2u) ? 3u - k : k];
    if ((st = pm_encode(p, L.ld, L.st, pm_default_l2(&L), L.transpose && L.grid.dst_any, diag)) != TMA_OK)
        return st;
    const uint32_t e = desc->elem_bytes;
    const int tall = L.transpose && pm_tall(&L.grid, e);
    if (L.transpose) {
        /* The kernel addresses shared memory with compile-time W and the box height; the maps must agree. */
        const uint32_t w = tr_box_cols(e), br = pm_tile_lines(L.grid.box[0], L.grid.box[1], L.grid.box[2], e);
        const int packed = pm_packed(&L.grid, e);
        if (p->load_map.box.swizzle != (packed ? TMA_SWIZZLE_NONE : TMA_SWIZZLE_128B) ||
            p->load_map.box.row_pitch != (packed ? L.grid.box[0] * e : TMA_SWIZZLE_SPAN_128B) ||
            p->load_map.box.smem_bytes != br * TMA_SWIZZLE_LINE_BYTES ||
            (!L.grid.dst_any && p->store_map.box.smem_bytes != w * TMA_SWIZZLE_LINE_BYTES) ||
            !pm_tile_fits(L.grid.box[0], L.grid.box[1], L.grid.box[2], e, tall))
            return KD_FAIL(diag, PM_LAYOUT_DEFECT, tma_arg_u(0));
        /* dspan: one more tile's bytes for the runs (a tile's runs are at most its lines' bytes) */
        p->smem = (size_t)(PM_TR_STAGES + PM_TR_OUT_BUFFERS + L.grid.dspan) * br * TMA_SWIZZLE_LINE_BYTES +
                  TMA_SWIZZLE_PERIOD_128B;
        p->block = 64u * br / w;
    } else {
        p->smem = PM_COPY_STAGES * (size_t)pm_stage_bytes(p) + TMA_SWIZZLE_PERIOD_128B;
        p->block = 32u;
    }
    const pm_launch l = pm_launch_make(L.transpose, e, L.grid, L.transpose ? 0u : pm_stage_bytes(p));
    const void *fn = l.transpose ? (const void *)l.transpose : (const void *)pm_copy_kernel;
    const size_t smem_max = p->transpose ? (size_t)(PM_TR_STAGES + PM_TR_OUT_BUFFERS + L.grid.tstore) *
                                                   PM_MAX_LINES(e, tall) *
                                                   TMA_SWIZZLE_LINE_BYTES +
                                                   TMA_SWIZZLE_PERIOD_128B
                                         : (size_t)PM_COPY_STAGES * PM_COPY_BOX_BYTES + TMA_SWIZZLE_PERIOD_128B;
    if ((st = pm_fit_grid(p, fn, smem_max, sms, diag)) != TMA_OK)
        return st;
    pm_launch_record_make(p, l, L.ld, L.st);
    return kd_ok(diag);
}

extern "C" tma_status tma_permute_plan_tune(tma_permute_plan *p, uint32_t group, tma_l2_promotion l2,
                                            tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_permute_plan_make"));
    if ((unsigned)l2 > (unsigned)TMA_L2_256B)
        return KD_FAIL(diag, PM_L2, tma_arg_i((int)l2));
    if (p->threads) { /* no maps, no tile order: nothing to tune, and nothing changed */
        pm_launch l;
        const tma_status st = pm_launch_for_run(p, &l, diag);
        return st == TMA_OK ? kd_ok(diag) : st;
    }
    pm_launch_record r = kd_record_get<pm_launch_record>(p->launch);
    if (r.head.mark != KD_RECORD_PERMUTE || !kd_same_inputs(r.from, pm_inputs_of(p))) {
        /* a plan changed by hand: planned again from its description, its run left to derive its launch */
        pm_layout L;
        tma_status st = pm_plan(&p->desc, &L, diag);
        if (st == TMA_OK)
            st = pm_encode(p, L.ld, L.st, l2, L.transpose && L.grid.dst_any, diag);
        if (st != TMA_OK)
            return st;
        if (p->transpose)
            p->group = group ? group : p->tiles_n[0];
        return kd_ok(diag);
    }
    const tma_status st = pm_encode(p, r.ld, r.st, l2, p->transpose && r.head.launch.g.dst_any, diag);
    if (st != TMA_OK)
        return st;
    if (p->transpose)
        p->group = r.head.launch.g.group = group ? group : p->tiles_n[0];
    pm_launch_record_make(p, r.head.launch, r.ld, r.st);
    return kd_ok(diag);
}

extern "C" tma_status tma_permute_run(const tma_permute_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_permute_plan_make"));
    pm_launch l;
    tma_status st = pm_launch_for_run(p, &l, diag);
    if (st != TMA_OK)
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    if (l.threads)
        l.threads<<<p->grid, p->block, p->smem, s>>>(l.thr, (const uint8_t *)p->desc.src, (uint8_t *)p->desc.dst,
                                                   p->tiles);
    else if (l.transpose == NULL)
        pm_copy_kernel<<<p->grid, p->block, p->smem, s>>>(p->load_map, p->store_map, l.g, p->tiles, l.stage_bytes);
    else
        l.transpose<<<p->grid, p->block, p->smem, s>>>(p->load_map, p->store_map, l.g, p->tiles,
                                                      (uint8_t *)p->desc.dst);
    st = kd_cuda(diag, cudaGetLastError(), "tma_permute kernel launch (or an earlier unchecked call)");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_permute(const tma_permute_desc *desc, tma_stream stream, tma_diag *diag) {
    tma_permute_plan p;
    tma_status st = tma_permute_plan_make(&p, desc, diag);
    return st == TMA_OK ? tma_permute_run(&p, stream, diag) : st;
}

extern "C" tma_status tma_transpose(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols,
                                    size_t in_pitch, size_t out_pitch, tma_stream stream, tma_diag *diag) {
    const tma_permute_desc d = tma_transpose_desc(elem_bytes, in, out, rows, cols, in_pitch, out_pitch);
    return kd_transpose_restate(tma_permute(&d, stream, diag), diag); /* in the transpose's terms */
}
