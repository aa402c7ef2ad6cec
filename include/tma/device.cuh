/* libtma device API (CUDA, sm_90): one small named function per PTX instruction that TMA kernels use.
 *
 * Kernels include this header and contain no raw asm. A tensor travels as a tma_tensor (the encoded
 * CUtensorMap plus the box facts the kernel must keep in step with it, built on the host by
 * tma_tensor_make from the same tma_tiled_desc), passed as a `const __grid_constant__` parameter:
 *
 *     __global__ void k(const __grid_constant__ tma_tensor a) {
 *         __shared__ alignas(128) uint8_t tile[...];
 *         __shared__ uint64_t bar;
 *         if (threadIdx.x == 0) { tma_mbar_init(&bar, 1); tma_fence_mbar_init(); }
 *         __syncthreads();
 *         if (threadIdx.x == 0) { tma_mbar_expect_box(&bar, &a); tma_load_2d(tile, &a, &bar, x, y); }
 *         tma_mbar_wait(&bar, 0);
 *         ...
 *
 * CHECKED MODE. Compile with -DTMA_CHECKED and, before each copy, the device functions verify what the
 * hardware would otherwise punish with "misaligned address" or "illegal instruction": shared-memory
 * destination 128-byte aligned, coord[0] * elem a multiple of 16 bytes, no negative coordinate in a
 * store, no store through a load-only map (TMA_BOX_LOAD_ONLY: two coordinates reach the same bytes), no copy
 * through a template map (TMA_BOX_TEMPLATE), the copy's rank equal to the map's, the copy's mode (tiled or
 * im2col) the map's, and for im2col loads a start inside the bounding box and offsets in range. They are the host's rules
 * (tma_rules_copy, tma/detail/rules.h) with the host's messages: a violation prints the status, the message, the
 * block and the thread, then traps. Without TMA_CHECKED those checks are not compiled at all.
 *
 * ARCHITECTURES. The instructions here need sm_90 (TMA, mbarrier try_wait, clusters). In a build for several
 * architectures (-gencode for sm_80 and sm_90a, say) this header still compiles: for targets below sm_90 every
 * function traps instead (TMA_DEVICE_ARCH_OK is 0 there), so a kernel must only take its TMA path on sm_90.
 *
 * BOUNDED WAITS. tma_mbar_wait never spins forever: after TMA_WAIT_TIMEOUT_NS (default 2 s) it prints
 * the barrier, phase, block and thread and traps (tma_mbar_wait_quiet: the same without the message, for
 * wgmma pipelines). The clock is read only after 1024 failed polls, so a wait that succeeds costs nothing
 * extra.
 */
#ifndef TMA_DEVICE_CUH
#define TMA_DEVICE_CUH

#include <stdint.h>
#include <stdio.h>

#include "tma/detail/rules.h" /* checked mode: the predicates and the formatter (not API) */
#include "tma/rules.h"
#include "tma/swizzle.h"
#include "tma/tensor.h"

#ifndef TMA_WAIT_TIMEOUT_NS
#define TMA_WAIT_TIMEOUT_NS 2000000000ull
#endif

#define TMA_DEV static __device__ __forceinline__

/* 1 where this compilation pass targets sm_90 or newer (and in the host pass); 0 below sm_90. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define TMA_DEVICE_ARCH_OK 0
#define TMA_PTX(...) __trap() /* below sm_90: no TMA; a kernel must not reach this (see ARCHITECTURES) */
#else
#define TMA_DEVICE_ARCH_OK 1
#define TMA_PTX(...) asm volatile(__VA_ARGS__)
#endif

/* Instructions of the arch-specific sm_90a target only (wgmma, setmaxnreg, tensormap.replace): in any other
 * device pass of a multi-architecture build they trap instead. */
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TMA_PTX_SM90A(...) __trap()
#else
#define TMA_PTX_SM90A(...) asm volatile(__VA_ARGS__)
#endif

/* Said at compile time, not found at run time as "illegal instruction": a file whose device passes all target
 * architectures below sm_90 (nvcc without -arch builds sm_75 in CUDA 13 and sm_52 in CUDA 12; or -arch=sm_80) gets
 * kernels whose every TMA instruction is a trap. nvcc lists every architecture of the build in each pass
 * (__CUDA_ARCH_LIST__, CUDA 11.5 on), so the sm_80 pass of a build that also targets sm_90a stays quiet: there the
 * kernel is expected to take its TMA path only where TMA_DEVICE_ARCH_OK is 1 (see ARCHITECTURES). Without the list
 * (another compiler) every pass below sm_90 warns. -DTMA_NO_ARCH_WARNING silences it. TMA_ARCH_LIST_HAS_SM90_
 * reads up to 16 architectures. */
#define TMA_ARCH_ANY_SM90_(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, ...)                                       \
    ((a) >= 900 || (b) >= 900 || (c) >= 900 || (d) >= 900 || (e) >= 900 || (f) >= 900 || (g) >= 900 || (h) >= 900 || \
     (i) >= 900 || (j) >= 900 || (k) >= 900 || (l) >= 900 || (m) >= 900 || (n) >= 900 || (o) >= 900 || (p) >= 900)
#define TMA_ARCH_LIST_HAS_SM90_(...) TMA_ARCH_ANY_SM90_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900 && !defined(TMA_NO_ARCH_WARNING)
#if !defined(__CUDA_ARCH_LIST__) || !TMA_ARCH_LIST_HAS_SM90_(__CUDA_ARCH_LIST__)
#warning "libtma: no device pass of this file targets sm_90 or newer, so every TMA instruction of tma/device.cuh \
compiles to a trap (\"illegal instruction\" at run time). Compile with -arch=sm_90a (CMake: CUDA_ARCHITECTURES 90a; \
nvcc's default is older). A multi-architecture build takes its TMA path where TMA_DEVICE_ARCH_OK is 1; \
-DTMA_NO_ARCH_WARNING silences this."
#endif
#endif

/* ---------------------------------------------------------------------------------------------
 * Addresses
 * ------------------------------------------------------------------------------------------- */

/** 32-bit shared-memory address of a generic pointer into shared memory (what PTX .shared operands take). */
TMA_DEV uint32_t tma_smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* ---------------------------------------------------------------------------------------------
 * Checked mode
 * ------------------------------------------------------------------------------------------- */

/** Print a violation as the host would word it (its status and message), with the block and the thread. The cold
 *  path of checked mode, and for kernels that check with tma_builder_check and want to say why. */
static __device__ __noinline__ void tma_print_violation(const tma_violation *v) {
    char msg[TMA_DIAG_MESSAGE_BYTES];
    tma_violation_format(v, msg, sizeof msg);
    printf("libtma checked mode: block (%d,%d,%d) thread %d: %s: %s\n", blockIdx.x, blockIdx.y, blockIdx.z,
           threadIdx.x, tma_rule_status_name(tma_violation_status(v)), msg);
}

#ifdef TMA_CHECKED
/* The cold path: the rule's message, formatted on the device exactly as the host formats it, then a trap. */
static __device__ __noinline__ void tma_checked_fail_(const tma_violation *v) {
    tma_print_violation(v);
    __trap();
}
#endif

/** %cluster_nctarank: the number of blocks in this block's cluster (1 without a cluster launch). */
TMA_DEV uint32_t tma_cluster_blocks(void);

/* The per-copy rules of the hardware (tma_rules_copy; tma_rules_reduce for a reduce-store, reduce = its
 * tma_reduce, -1 otherwise), checked in TMA_CHECKED builds. */
TMA_DEV void tma_check_copy_(const tma_tensor *t, const void *smem, int rank, const int32_t *c, bool store,
                             int reduce = -1) {
#ifdef TMA_CHECKED
    tma_violation v;
    tma_rule_sink s = tma_rule_sink_make(&v, 1);
    const tma_copy_facts f = tma_rule_copy_facts_of_box(&t->box);
    if ((t->box.flags & TMA_BOX_IM2COL) != 0u) {
        TMA_VIOLATE(&s, MAP_IS_IM2COL, tma_arg_s(store ? "store" : "load"), tma_arg_u((uint32_t)rank));
        tma_checked_fail_(&v);
    }
    if (tma_rules_copy(&f, (uint32_t)rank, c, tma_smem_addr(smem), store, &s) != TMA_OK)
        tma_checked_fail_(&v);
    if (reduce >= 0 && tma_rules_reduce((tma_dtype)t->box.dtype, (tma_reduce)reduce, 1, &s) != TMA_OK)
        tma_checked_fail_(&v);
#else
    (void)t, (void)smem, (void)rank, (void)c, (void)store, (void)reduce;
#endif
}

/* The rules of a 1-D bulk copy (tma_rules_bulk) and of a multicast's mask (tma_rules_multicast; mask < 0: not a
 * multicast), checked in TMA_CHECKED builds. smem = NULL for a prefetch. */
TMA_DEV void tma_check_bulk_(const char *what, const void *global, const void *smem, uint32_t bytes, int mask = -1) {
#ifdef TMA_CHECKED
    tma_violation v;
    tma_rule_sink s = tma_rule_sink_make(&v, 1);
    if (tma_rules_bulk(what, (uint64_t)(uintptr_t)global, smem ? tma_smem_addr(smem) : ~0u, bytes, &s) != TMA_OK)
        tma_checked_fail_(&v);
    if (mask >= 0 && tma_rules_multicast(what, (uint32_t)mask, tma_cluster_blocks(), &s) != TMA_OK)
        tma_checked_fail_(&v);
#else
    (void)what, (void)global, (void)smem, (void)bytes, (void)mask;
#endif
}

/* Checked mode for a tiled multicast load: the mask against the cluster. */
TMA_DEV void tma_check_multicast_(uint32_t mask) {
#ifdef TMA_CHECKED
    tma_violation v;
    tma_rule_sink s = tma_rule_sink_make(&v, 1);
    if (tma_rules_multicast("load", mask, tma_cluster_blocks(), &s) != TMA_OK)
        tma_checked_fail_(&v);
#else
    (void)mask;
#endif
}

/* ---------------------------------------------------------------------------------------------
 * mbarrier
 * ------------------------------------------------------------------------------------------- */

/** mbarrier.init: `count` arrivals complete a phase. One thread, before any use. */
TMA_DEV void tma_mbar_init(uint64_t *bar, uint32_t count) {
    TMA_PTX("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(tma_smem_addr(bar)), "r"(count) : "memory");
}

/** fence.mbarrier_init: makes initialised barriers visible to the copy engine (and the cluster). */
TMA_DEV void tma_fence_mbar_init(void) { TMA_PTX("fence.mbarrier_init.release.cluster;" ::: "memory"); }

/** fence.proxy.async.shared::cta: orders this thread's ordinary shared-memory writes before later
 *  copy-engine (async proxy) reads - needed before a TMA store of data the threads just wrote. */
TMA_DEV void tma_fence_proxy_async(void) { TMA_PTX("fence.proxy.async.shared::cta;" ::: "memory"); }

/** bar.sync id, threads: a named barrier among `threads` threads (a multiple of 32) of the block, id 1..15
 *  (0 is __syncthreads's). Lets one warpgroup synchronise without stopping the others, e.g. before one of
 *  its threads issues a TMA store of what the warpgroup just wrote. */
TMA_DEV void tma_named_barrier_sync(uint32_t id, uint32_t threads) {
    TMA_PTX("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/** mbarrier.arrive: one arrival; returns the barrier state (unused by most callers). */
TMA_DEV uint64_t tma_mbar_arrive(uint64_t *bar) {
    uint64_t state = 0;
    TMA_PTX("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(tma_smem_addr(bar)) : "memory");
    return state;
}

/** mbarrier.arrive.expect_tx: one arrival that also announces `bytes` of copy-engine transactions. */
TMA_DEV void tma_mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    TMA_PTX("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tma_smem_addr(bar)), "r"(bytes)
                 : "memory");
}

/** Arrive and expect the bytes of `boxes` boxes of tensor t: the count comes from the descriptor. */
TMA_DEV void tma_mbar_expect_box(uint64_t *bar, const tma_tensor *t, uint32_t boxes = 1) {
    tma_mbar_arrive_expect_tx(bar, t->box.tx_bytes * boxes);
}

/** mbarrier.try_wait.parity: true once the phase with parity `phase` has completed. May suspend the
 *  thread for a short, hardware-chosen time before answering false. */
TMA_DEV bool tma_mbar_try_wait(uint64_t *bar, uint32_t phase) {
    uint32_t done = 0;
    TMA_PTX("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(tma_smem_addr(bar)), "r"(phase & 1u)
                 : "memory");
    return done != 0;
}

TMA_DEV uint64_t tma_globaltimer_ns(void) {
    uint64_t t = 0;
    TMA_PTX("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* The one polling loop behind both waits: true once the phase completed, false after
 * TMA_WAIT_TIMEOUT_NS (the clock is read only after 1024 failed polls), with the time waited. */
TMA_DEV bool tma_mbar_poll_bounded_(uint64_t *bar, uint32_t phase, uint64_t *waited_ns) {
    uint64_t start = 0;
    for (uint32_t polls = 0;; polls++) {
        if (tma_mbar_try_wait(bar, phase))
            return true;
        if (polls % 1024u == 1023u) {
            uint64_t now = tma_globaltimer_ns();
            if (start == 0)
                start = now;
            else if (now - start > TMA_WAIT_TIMEOUT_NS) {
                *waited_ns = now - start;
                return false;
            }
        }
    }
}

/** Wait for the phase with parity `phase`; bounded (see BOUNDED WAITS above): a timeout prints the
 *  barrier, phase, block and thread, then traps. */
TMA_DEV void tma_mbar_wait(uint64_t *bar, uint32_t phase) {
    uint64_t waited = 0;
    if (tma_mbar_poll_bounded_(bar, phase, &waited))
        return;
    printf("libtma: mbarrier wait timed out after %llu ms: block (%d,%d,%d) thread %d, barrier at "
           "shared 0x%x, phase parity %u. Usual causes: expect-tx bytes that differ from what the "
           "copies deliver (use tma_mbar_expect_box), a copy that was never issued, or too few "
           "arrivals\n",
           (unsigned long long)(waited / 1000000u), blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
           tma_smem_addr(bar), phase & 1u);
    __trap();
}

/** tma_mbar_wait without the message: the same bound, then a trap. For wgmma pipelines: a printf (a call)
 *  between a wgmma issue and its wait makes ptxas serialize every wgmma (warning C7510, CUDA 13.0). */
TMA_DEV void tma_mbar_wait_quiet(uint64_t *bar, uint32_t phase) {
    uint64_t waited = 0;
    if (!tma_mbar_poll_bounded_(bar, phase, &waited))
        __trap(); /* a hang turned into an error: expect-tx bytes or arrivals do not match */
}

/* ---------------------------------------------------------------------------------------------
 * Thread-block clusters (TMA multicast pipelines)
 * ------------------------------------------------------------------------------------------- */

/** %cluster_ctarank: this block's rank inside its cluster. */
TMA_DEV uint32_t tma_cluster_ctarank(void) {
    uint32_t r = 0;
    TMA_PTX("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

TMA_DEV uint32_t tma_cluster_blocks(void) {
    uint32_t n = 1;
    TMA_PTX("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    return n;
}

/** barrier.cluster.arrive.release: this thread arrives at the cluster barrier (all threads of every block
 *  of the cluster must arrive before a wait returns). */
TMA_DEV void tma_cluster_arrive(void) { TMA_PTX("barrier.cluster.arrive.release;" ::: "memory"); }

/** barrier.cluster.wait.acquire: wait for the cluster barrier's current phase. */
TMA_DEV void tma_cluster_wait(void) { TMA_PTX("barrier.cluster.wait.acquire;" ::: "memory"); }

/** mapa.shared::cluster: where this block's shared-memory byte `p` lies in the block of cluster rank `cta`, as a
 *  shared::cluster address (for tma_ld_cluster_f4). A block's window is contiguous: the address plus n is byte
 *  p + n there. */
TMA_DEV uint32_t tma_cluster_addr(const void *p, uint32_t cta) {
    uint32_t r = 0;
    TMA_PTX("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(tma_smem_addr(p)), "r"(cta));
    return r;
}

/** ld.shared::cluster.v4.f32: 16 bytes at a shared::cluster address (distributed shared memory: any block of the
 *  cluster, this one included). Order it after the other block's writes with a cluster barrier. */
TMA_DEV float4 tma_ld_cluster_f4(uint32_t addr) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    TMA_PTX("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr)
            : "memory");
    return v;
}

/** griddepcontrol.launch_dependents: a kernel launched after this one with programmatic stream serialization
 *  (cudaLaunchAttributeProgrammaticStreamSerialization) may start now; it still waits in tma_grid_dependency_wait
 *  for this grid's completion before it reads what this grid writes. */
TMA_DEV void tma_grid_launch_dependents(void) { TMA_PTX("griddepcontrol.launch_dependents;" ::: "memory"); }

/** griddepcontrol.wait: wait until the grids this one depends on (launched before it in the stream) have completed
 *  and their memory is visible. Without programmatic serialization it returns at once. */
TMA_DEV void tma_grid_dependency_wait(void) { TMA_PTX("griddepcontrol.wait;" ::: "memory"); }

/** mapa + mbarrier.arrive.shared::cluster: one arrival on the barrier at the same shared offset as `bar`
 *  in the block of cluster rank `cta` (this block's own rank included), with the instruction's default
 *  semantics (release at CTA scope). Enough to hand a stage back to a peer's producer once this thread's
 *  reads of it are complete (for wgmma: after the wgmma wait that covers them).
 *  Measured (SASS, CUDA 13.0, sm_90a): the explicit `.release.cluster` form compiled to MEMBAR.ALL.CTA +
 *  MEMBAR.ALL.GPU before every arrive, and made the GEMM's multicast variant run at about half speed. */
TMA_DEV void tma_mbar_arrive_cluster(uint64_t *bar, uint32_t cta) {
    TMA_PTX("{\n\t.reg .b32 remote;\n\t"
            "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
            "mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}" ::"r"(tma_smem_addr(bar)),
            "r"(cta)
            : "memory");
}

/* ---------------------------------------------------------------------------------------------
 * Copies. Coordinates are operands %0..%4 in every instruction below, so one string per rank serves
 * all of them; unused coordinates are passed and ignored.
 * ------------------------------------------------------------------------------------------- */

#define TMA_COORDS_1 "{%0}"
#define TMA_COORDS_2 "{%0, %1}"
#define TMA_COORDS_3 "{%0, %1, %2}"
#define TMA_COORDS_4 "{%0, %1, %2, %3}"
#define TMA_COORDS_5 "{%0, %1, %2, %3, %4}"
#define TMA_COORD_OPERANDS(c) "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])

/* Calls STMT(N) with N the literal rank 1..5 equal to `rank` (a compile-time constant in every caller). */
#define TMA_FOR_RANK(rank, STMT)                                                                    \
    do {                                                                                            \
        switch (rank) {                                                                             \
        case 1: STMT(1); break;                                                                     \
        case 2: STMT(2); break;                                                                     \
        case 3: STMT(3); break;                                                                     \
        case 4: STMT(4); break;                                                                     \
        default: STMT(5); break;                                                                    \
        }                                                                                           \
    } while (0)

/** cp.async.bulk.tensor (global -> shared, tile mode): load the box at coordinates c into smem; completion
 *  is signalled as transaction bytes on `bar`. Rank is a template argument so each call is one instruction. */
template <int Rank>
TMA_DEV void tma_load(void *smem, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5]) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
    tma_check_copy_(t, smem, Rank, c, false);
#define TMA_LOAD_(N)                                                                                \
    TMA_PTX("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%5], [%6, " \
                 TMA_COORDS_##N "], [%7];" ::TMA_COORD_OPERANDS(c),                                 \
                 "r"(tma_smem_addr(smem)), "l"(&t->map), "r"(tma_smem_addr(bar))                    \
                 : "memory")
    TMA_FOR_RANK(Rank, TMA_LOAD_);
#undef TMA_LOAD_
}

/** createpolicy: an L2 policy for the *_hint loads: keep the data (evict_last) or let it go first. */
TMA_DEV uint64_t tma_l2_policy_evict_last(void) {
    uint64_t p = 0;
    TMA_PTX("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
TMA_DEV uint64_t tma_l2_policy_evict_first(void) {
    uint64_t p = 0;
    TMA_PTX("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}

/** The same load with an L2 cache-policy hint (a 64-bit policy from createpolicy). */
template <int Rank>
TMA_DEV void tma_load_hint(void *smem, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5], uint64_t policy) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
    tma_check_copy_(t, smem, Rank, c, false);
#define TMA_LOAD_HINT_(N)                                                                           \
    TMA_PTX("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint" \
                 " [%5], [%6, " TMA_COORDS_##N "], [%7], %8;" ::TMA_COORD_OPERANDS(c),              \
                 "r"(tma_smem_addr(smem)), "l"(&t->map), "r"(tma_smem_addr(bar)), "l"(policy)       \
                 : "memory")
    TMA_FOR_RANK(Rank, TMA_LOAD_HINT_);
#undef TMA_LOAD_HINT_
}

/** The same load, multicast: the box lands at the same shared offset (and signals the barrier at the same
 *  offset) in every CTA of the cluster whose bit is set in cta_mask. */
template <int Rank>
TMA_DEV void tma_load_multicast(void *smem, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5],
                                uint16_t cta_mask) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
    tma_check_copy_(t, smem, Rank, c, false);
    tma_check_multicast_(cta_mask);
#define TMA_LOAD_MC_(N)                                                                             \
    TMA_PTX("cp.async.bulk.tensor." #N "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster" \
                 " [%5], [%6, " TMA_COORDS_##N "], [%7], %8;" ::TMA_COORD_OPERANDS(c),              \
                 "r"(tma_smem_addr(smem)), "l"(&t->map), "r"(tma_smem_addr(bar)), "h"(cta_mask)     \
                 : "memory")
    TMA_FOR_RANK(Rank, TMA_LOAD_MC_);
#undef TMA_LOAD_MC_
}

/* ---------------------------------------------------------------------------------------------
 * im2col loads (cp.async.bulk.tensor ... .im2col): through a map made by tma_tensor_make_im2col. Coordinates
 * {c, w, (h, (d,)) n} start the walk (the spatial ones inside the map's bounding box); the rank - 2 offsets
 * (innermost first) shift every fetched pixel. The bytes are the map's box facts (tma_mbar_expect_box).
 * ------------------------------------------------------------------------------------------- */

/* The per-copy rules of an im2col load (tma_rules_im2col_copy), checked in TMA_CHECKED builds. */
TMA_DEV void tma_check_im2col_(const tma_tensor *t, const void *smem, int rank, const int32_t *c,
                               const uint16_t *off) {
#ifdef TMA_CHECKED
    tma_violation v;
    tma_rule_sink s = tma_rule_sink_make(&v, 1);
    if ((t->box.flags & TMA_BOX_IM2COL) == 0u) {
        TMA_VIOLATE(&s, MAP_NOT_IM2COL, tma_arg_u(0));
        tma_checked_fail_(&v);
    }
    const tma_im2col_facts f = tma_rule_im2col_facts_of_box(&t->box);
    if (tma_rules_im2col_copy(&f, (uint32_t)rank, c, off, tma_smem_addr(smem), &s) != TMA_OK)
        tma_checked_fail_(&v);
#else
    (void)t, (void)smem, (void)rank, (void)c, (void)off;
#endif
}

#define TMA_IM2COL_OFFSETS_3 "{%8}"
#define TMA_IM2COL_OFFSETS_4 "{%8, %9}"
#define TMA_IM2COL_OFFSETS_5 "{%8, %9, %10}"
#define TMA_IM2COL_OFFSET_OPERANDS(o) "h"(o[0]), "h"(o[1]), "h"(o[2])

/* Calls STMT(N) with N the literal im2col rank 3..5 equal to `rank`. */
#define TMA_FOR_IM2COL_RANK(rank, STMT)                                                             \
    do {                                                                                            \
        switch (rank) {                                                                             \
        case 3: STMT(3); break;                                                                     \
        case 4: STMT(4); break;                                                                     \
        default: STMT(5); break;                                                                    \
        }                                                                                           \
    } while (0)

/** cp.async.bulk.tensor (global -> shared, im2col mode): gather the map's pixels_per_column pixels of
 *  channels_per_pixel channels into smem, starting the walk at c, each pixel shifted by the offsets off[0 ..
 *  Rank - 3]; completion as transaction bytes on `bar`. */
template <int Rank>
TMA_DEV void tma_load_im2col(void *smem, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5],
                             const uint16_t (&off)[3]) {
    static_assert(Rank >= 3 && Rank <= 5, "im2col rank is 3..5");
    tma_check_im2col_(t, smem, Rank, c, off);
#define TMA_LOAD_IM2COL_(N)                                                                         \
    TMA_PTX("cp.async.bulk.tensor." #N "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%5], [%6, " \
            TMA_COORDS_##N "], [%7], " TMA_IM2COL_OFFSETS_##N ";" ::TMA_COORD_OPERANDS(c),          \
            "r"(tma_smem_addr(smem)), "l"(&t->map), "r"(tma_smem_addr(bar)), TMA_IM2COL_OFFSET_OPERANDS(off) \
            : "memory")
    TMA_FOR_IM2COL_RANK(Rank, TMA_LOAD_IM2COL_);
#undef TMA_LOAD_IM2COL_
}

/** The same im2col load with an L2 cache-policy hint (tma_l2_policy_*). */
template <int Rank>
TMA_DEV void tma_load_im2col_hint(void *smem, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5],
                                  const uint16_t (&off)[3], uint64_t policy) {
    static_assert(Rank >= 3 && Rank <= 5, "im2col rank is 3..5");
    tma_check_im2col_(t, smem, Rank, c, off);
#define TMA_LOAD_IM2COL_HINT_(N)                                                                    \
    TMA_PTX("cp.async.bulk.tensor." #N "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.L2::cache_hint" \
            " [%5], [%6, " TMA_COORDS_##N "], [%7], " TMA_IM2COL_OFFSETS_##N ", %11;" ::TMA_COORD_OPERANDS(c), \
            "r"(tma_smem_addr(smem)), "l"(&t->map), "r"(tma_smem_addr(bar)), TMA_IM2COL_OFFSET_OPERANDS(off), \
            "l"(policy)                                                                             \
            : "memory")
    TMA_FOR_IM2COL_RANK(Rank, TMA_LOAD_IM2COL_HINT_);
#undef TMA_LOAD_IM2COL_HINT_
}

/** The same im2col load, multicast to every block of the cluster whose bit is set in cta_mask (same shared
 *  offset, barrier at the same offset). */
template <int Rank>
TMA_DEV void tma_load_im2col_multicast(void *smem, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5],
                                       const uint16_t (&off)[3], uint16_t cta_mask) {
    static_assert(Rank >= 3 && Rank <= 5, "im2col rank is 3..5");
    tma_check_im2col_(t, smem, Rank, c, off);
    tma_check_multicast_(cta_mask);
#define TMA_LOAD_IM2COL_MC_(N)                                                                      \
    TMA_PTX("cp.async.bulk.tensor." #N "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster" \
            " [%5], [%6, " TMA_COORDS_##N "], [%7], " TMA_IM2COL_OFFSETS_##N ", %11;" ::TMA_COORD_OPERANDS(c), \
            "r"(tma_smem_addr(smem)), "l"(&t->map), "r"(tma_smem_addr(bar)), TMA_IM2COL_OFFSET_OPERANDS(off), \
            "h"(cta_mask)                                                                           \
            : "memory")
    TMA_FOR_IM2COL_RANK(Rank, TMA_LOAD_IM2COL_MC_);
#undef TMA_LOAD_IM2COL_MC_
}

/** Rank-named forms: {c, w, n} with offset ow; {c, w, h, n} with {ow, oh}; {c, w, h, d, n} with {ow, oh, od}. */
TMA_DEV void tma_load_im2col_3d(void *smem, const tma_tensor *t, uint64_t *bar, int32_t c, int32_t w, int32_t n,
                                uint16_t ow) {
    const int32_t co[5] = {c, w, n, 0, 0};
    const uint16_t o[3] = {ow, 0, 0};
    tma_load_im2col<3>(smem, t, bar, co, o);
}
TMA_DEV void tma_load_im2col_4d(void *smem, const tma_tensor *t, uint64_t *bar, int32_t c, int32_t w, int32_t h,
                                int32_t n, uint16_t ow, uint16_t oh) {
    const int32_t co[5] = {c, w, h, n, 0};
    const uint16_t o[3] = {ow, oh, 0};
    tma_load_im2col<4>(smem, t, bar, co, o);
}
TMA_DEV void tma_load_im2col_5d(void *smem, const tma_tensor *t, uint64_t *bar, int32_t c, int32_t w, int32_t h,
                                int32_t d, int32_t n, uint16_t ow, uint16_t oh, uint16_t od) {
    const int32_t co[5] = {c, w, h, d, n};
    const uint16_t o[3] = {ow, oh, od};
    tma_load_im2col<5>(smem, t, bar, co, o);
}

/** cp.async.bulk.tensor (shared -> global, tile mode, bulk group): store the box in smem at coordinates c.
 *  Threads that wrote smem with ordinary stores call tma_fence_proxy_async() before the barrier that
 *  precedes this. Complete the group with tma_store_commit() and tma_store_wait*(). */
template <int Rank>
TMA_DEV void tma_store(const tma_tensor *t, const void *smem, const int32_t (&c)[5]) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
    tma_check_copy_(t, smem, Rank, c, true);
#define TMA_STORE_(N)                                                                               \
    TMA_PTX("cp.async.bulk.tensor." #N "d.global.shared::cta.tile.bulk_group [%5, " TMA_COORDS_##N "], [%6];" \
                 ::TMA_COORD_OPERANDS(c), "l"(&t->map), "r"(tma_smem_addr(smem))                    \
                 : "memory")
    TMA_FOR_RANK(Rank, TMA_STORE_);
#undef TMA_STORE_
}

/** The same store with an L2 cache-policy hint (a 64-bit policy from createpolicy: tma_l2_policy_*), the
 *  .L2::cache_hint form (PTX ISA 8.0, sm_90). The bytes written are tma_store's; the hint only says how long L2
 *  should keep them (tma_permute stores output it never reads again with evict_first, docs/guide/permute.md). */
template <int Rank>
TMA_DEV void tma_store_hint(const tma_tensor *t, const void *smem, const int32_t (&c)[5], uint64_t policy) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
    tma_check_copy_(t, smem, Rank, c, true);
#define TMA_STORE_HINT_(N)                                                                          \
    TMA_PTX("cp.async.bulk.tensor." #N "d.global.shared::cta.tile.bulk_group.L2::cache_hint [%5, " TMA_COORDS_##N \
            "], [%6], %7;" ::TMA_COORD_OPERANDS(c), "l"(&t->map), "r"(tma_smem_addr(smem)), "l"(policy)       \
            : "memory")
    TMA_FOR_RANK(Rank, TMA_STORE_HINT_);
#undef TMA_STORE_HINT_
}

/** cp.reduce.async.bulk.tensor: like tma_store, but combines each element with global memory by Op; the
 *  element type comes from the map. Which reductions a map's type has is a measured rule (TMA_REDUCE_FORMS in
 *  tma/rules.h: f32 has add only, for instance; anything else raises "illegal instruction"): checked mode
 *  refuses the rest with a message, and tma_model_reduce_tiled models exactly these. */
template <int Rank, tma_reduce Op>
TMA_DEV void tma_reduce_store(const tma_tensor *t, const void *smem, const int32_t (&c)[5]) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
    static_assert((unsigned)Op < (unsigned)TMA_REDUCE_COUNT_, "Op is a tma_reduce");
    tma_check_copy_(t, smem, Rank, c, true, (int)Op);
#define TMA_REDUCE_(N, OP)                                                                          \
    TMA_PTX("cp.reduce.async.bulk.tensor." #N "d.global.shared::cta." OP ".tile.bulk_group [%5, "  \
                 TMA_COORDS_##N "], [%6];" ::TMA_COORD_OPERANDS(c), "l"(&t->map), "r"(tma_smem_addr(smem)) \
                 : "memory")
#define TMA_REDUCE_ADD_(N) TMA_REDUCE_(N, "add")
#define TMA_REDUCE_MIN_(N) TMA_REDUCE_(N, "min")
#define TMA_REDUCE_MAX_(N) TMA_REDUCE_(N, "max")
#define TMA_REDUCE_INC_(N) TMA_REDUCE_(N, "inc")
#define TMA_REDUCE_DEC_(N) TMA_REDUCE_(N, "dec")
#define TMA_REDUCE_AND_(N) TMA_REDUCE_(N, "and")
#define TMA_REDUCE_OR_(N) TMA_REDUCE_(N, "or")
#define TMA_REDUCE_XOR_(N) TMA_REDUCE_(N, "xor")
    if constexpr (Op == TMA_REDUCE_ADD)
        TMA_FOR_RANK(Rank, TMA_REDUCE_ADD_);
    else if constexpr (Op == TMA_REDUCE_MIN)
        TMA_FOR_RANK(Rank, TMA_REDUCE_MIN_);
    else if constexpr (Op == TMA_REDUCE_MAX)
        TMA_FOR_RANK(Rank, TMA_REDUCE_MAX_);
    else if constexpr (Op == TMA_REDUCE_INC)
        TMA_FOR_RANK(Rank, TMA_REDUCE_INC_);
    else if constexpr (Op == TMA_REDUCE_DEC)
        TMA_FOR_RANK(Rank, TMA_REDUCE_DEC_);
    else if constexpr (Op == TMA_REDUCE_AND)
        TMA_FOR_RANK(Rank, TMA_REDUCE_AND_);
    else if constexpr (Op == TMA_REDUCE_OR)
        TMA_FOR_RANK(Rank, TMA_REDUCE_OR_);
    else
        TMA_FOR_RANK(Rank, TMA_REDUCE_XOR_);
#undef TMA_REDUCE_ADD_
#undef TMA_REDUCE_MIN_
#undef TMA_REDUCE_MAX_
#undef TMA_REDUCE_INC_
#undef TMA_REDUCE_DEC_
#undef TMA_REDUCE_AND_
#undef TMA_REDUCE_OR_
#undef TMA_REDUCE_XOR_
#undef TMA_REDUCE_
}

/** cp.async.bulk.commit_group: close the bulk group of this thread's stores issued so far. */
TMA_DEV void tma_store_commit(void) { TMA_PTX("cp.async.bulk.commit_group;" ::: "memory"); }

/** cp.async.bulk.wait_group N: wait until at most N of this thread's bulk groups are pending
 *  (their writes to global memory done). */
template <int N = 0>
TMA_DEV void tma_store_wait(void) {
    TMA_PTX("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

/** cp.async.bulk.wait_group.read N: wait until at most N groups still read their shared memory (the
 *  source buffers of the others may be overwritten; their global writes may still be in flight). */
template <int N = 0>
TMA_DEV void tma_store_wait_read(void) {
    TMA_PTX("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/** cp.async.bulk.prefetch.tensor: bring the box at c into L2, no shared memory involved. */
template <int Rank>
TMA_DEV void tma_prefetch(const tma_tensor *t, const int32_t (&c)[5]) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
#define TMA_PREFETCH_(N)                                                                            \
    TMA_PTX("cp.async.bulk.prefetch.tensor." #N "d.L2.global.tile [%5, " TMA_COORDS_##N "];"   \
                 ::TMA_COORD_OPERANDS(c), "l"(&t->map)                                              \
                 : "memory")
    TMA_FOR_RANK(Rank, TMA_PREFETCH_);
#undef TMA_PREFETCH_
}

/** prefetch.tensormap: fetch the descriptor itself ahead of the first copy. */
TMA_DEV void tma_prefetch_desc(const tma_tensor *t) {
    TMA_PTX("prefetch.tensormap [%0];" ::"l"(&t->map) : "memory");
}

/* ---------------------------------------------------------------------------------------------
 * 1-D bulk copies: no tensor map, a byte count and two addresses. Size, global and shared addresses are
 * multiples of 16 bytes (tma_rules_bulk: checked in TMA_CHECKED builds; nothing else bounds-checks them).
 * Loads complete as transaction bytes on an mbarrier (expect exactly `bytes`); stores and reduces belong to
 * this thread's bulk group (tma_store_commit, tma_store_wait*), like tiled stores.
 * ------------------------------------------------------------------------------------------- */

/** cp.async.bulk global -> shared: copy `bytes` bytes from global memory to smem; the barrier receives them. */
TMA_DEV void tma_bulk_load(void *smem, const void *global, uint32_t bytes, uint64_t *bar) {
    tma_check_bulk_("load", global, smem, bytes);
    TMA_PTX("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                tma_smem_addr(smem)),
            "l"(global), "r"(bytes), "r"(tma_smem_addr(bar))
            : "memory");
}

/** The same load, multicast: the bytes land at smem's offset, and arrive on the barrier at bar's offset, in every
 *  block of the cluster whose bit (cluster rank) is set in cta_mask. Each receiver expects its share:
 *  tma_multicast_rx_bytes (tma/rules.h). */
TMA_DEV void tma_bulk_load_multicast(void *smem, const void *global, uint32_t bytes, uint64_t *bar,
                                     uint16_t cta_mask) {
    tma_check_bulk_("load", global, smem, bytes, cta_mask);
    TMA_PTX("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, "
            "[%3], %4;" ::"r"(tma_smem_addr(smem)),
            "l"(global), "r"(bytes), "r"(tma_smem_addr(bar)), "h"(cta_mask)
            : "memory");
}

/** cp.async.bulk shared -> global (bulk group): copy `bytes` bytes of smem to global memory. Threads that wrote
 *  smem with ordinary stores call tma_fence_proxy_async() before the barrier that precedes this. */
TMA_DEV void tma_bulk_store(void *global, const void *smem, uint32_t bytes) {
    tma_check_bulk_("store", global, smem, bytes);
    TMA_PTX("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(global), "r"(tma_smem_addr(smem)),
            "r"(bytes)
            : "memory");
}

/* One instruction per (type, reduction) pair of TMA_REDUCE_FORMS that has a 1-D form. */
#define TMA_REDUCE_PTX_ADD "add"
#define TMA_REDUCE_PTX_MIN "min"
#define TMA_REDUCE_PTX_MAX "max"
#define TMA_REDUCE_PTX_INC "inc"
#define TMA_REDUCE_PTX_DEC "dec"
#define TMA_REDUCE_PTX_AND "and"
#define TMA_REDUCE_PTX_OR "or"
#define TMA_REDUCE_PTX_XOR "xor"
template <tma_dtype Type, tma_reduce Op>
struct tma_bulk_reduce_form_ {
    static constexpr bool exists = false;
};
#define TMA_BULK_REDUCE_FORM_(T, O, BULK, TILED, CLUSTER)                                           \
    template <>                                                                                     \
    struct tma_bulk_reduce_form_<TMA_DTYPE_##T, TMA_REDUCE_##O> {                                   \
        static constexpr bool exists = sizeof(BULK) > 1;                                            \
        static __device__ __forceinline__ void issue(void *global, uint32_t smem, uint32_t bytes) { \
            if constexpr (sizeof(BULK) > 1)                                                         \
                TMA_PTX("cp.reduce.async.bulk.global.shared::cta.bulk_group." TMA_REDUCE_PTX_##O "." BULK           \
                        " [%0], [%1], %2;" ::"l"(global), "r"(smem), "r"(bytes) : "memory");        \
        }                                                                                           \
    };
TMA_REDUCE_FORMS(TMA_BULK_REDUCE_FORM_)
#undef TMA_BULK_REDUCE_FORM_

/** cp.reduce.async.bulk shared -> global (bulk group): global[i] = Op(global[i], smem[i]) for the `bytes / size of
 *  Type` elements. The pairs that exist are TMA_REDUCE_FORMS's (a missing one does not compile);
 *  tma_model_bulk_reduce models each. */
template <tma_dtype Type, tma_reduce Op>
TMA_DEV void tma_bulk_reduce(void *global, const void *smem, uint32_t bytes) {
    static_assert(tma_bulk_reduce_form_<Type, Op>::exists,
                  "cp.reduce.async.bulk has no such (type, reduction): see TMA_REDUCE_FORMS in tma/rules.h");
    tma_check_bulk_("reduce", global, smem, bytes);
    tma_bulk_reduce_form_<Type, Op>::issue(global, tma_smem_addr(smem), bytes);
}

/* ---- into a cluster peer's shared memory (distributed shared memory) ---- */

/* The shared::cluster address of `local`'s offset in the block of cluster rank `cta`. */
TMA_DEV uint32_t tma_cluster_addr_(const void *local, uint32_t cta) {
    uint32_t remote = 0;
    TMA_PTX("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(tma_smem_addr(local)), "r"(cta));
    return remote;
}

TMA_DEV void tma_check_bulk_cluster_(const char *what, const void *dst, const void *src, uint32_t bytes, uint32_t cta) {
#ifdef TMA_CHECKED
    tma_violation v;
    tma_rule_sink s = tma_rule_sink_make(&v, 1);
    if (tma_rules_bulk_cluster(what, tma_smem_addr(dst), tma_smem_addr(src), bytes, cta, tma_cluster_blocks(), &s) !=
        TMA_OK)
        tma_checked_fail_(&v);
#else
    (void)what, (void)dst, (void)src, (void)bytes, (void)cta;
#endif
}

/** cp.async.bulk.shared::cluster.shared::cta: copy `bytes` bytes of this block's smem `src` into the block of cluster
 *  rank `cta`, at the offset `dst` has here; the barrier at `bar`'s offset in that block receives the bytes (it
 *  expects them, tma_multicast_rx_bytes-style; this block's barriers see nothing). `src` must stay unchanged until
 *  the receiver's phase completes: the instruction has no completion for the sender. */
TMA_DEV void tma_bulk_copy_cluster(void *dst, const void *src, uint32_t bytes, uint64_t *bar, uint32_t cta) {
    tma_check_bulk_cluster_("copy", dst, src, bytes, cta);
    TMA_PTX("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                tma_cluster_addr_(dst, cta)),
            "r"(tma_smem_addr(src)), "r"(bytes), "r"(tma_cluster_addr_(bar, cta))
            : "memory");
}

template <tma_dtype Type, tma_reduce Op>
struct tma_cluster_reduce_form_ {
    static constexpr bool exists = false;
};
#define TMA_CLUSTER_REDUCE_FORM_(T, O, BULK, TILED, CLUSTER)                                        \
    template <>                                                                                     \
    struct tma_cluster_reduce_form_<TMA_DTYPE_##T, TMA_REDUCE_##O> {                                \
        static constexpr bool exists = sizeof(CLUSTER) > 1;                                         \
        static __device__ __forceinline__ void issue(uint32_t dst, uint32_t src, uint32_t bytes, uint32_t bar) { \
            if constexpr (sizeof(CLUSTER) > 1)                                                      \
                TMA_PTX("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes." \
                        TMA_REDUCE_PTX_##O "." CLUSTER " [%0], [%1], %2, [%3];" ::"r"(dst), "r"(src), "r"(bytes), \
                        "r"(bar) : "memory");                                                       \
        }                                                                                           \
    };
TMA_REDUCE_FORMS(TMA_CLUSTER_REDUCE_FORM_)
#undef TMA_CLUSTER_REDUCE_FORM_

/** cp.reduce.async.bulk.shared::cluster.shared::cta: like tma_bulk_copy_cluster, but each element of the destination
 *  becomes Op(destination, source). The pairs that exist are TMA_REDUCE_FORMS's CLUSTER column (integers only);
 *  tma_model_bulk_reduce_cluster models each. */
template <tma_dtype Type, tma_reduce Op>
TMA_DEV void tma_bulk_reduce_cluster(void *dst, const void *src, uint32_t bytes, uint64_t *bar, uint32_t cta) {
    static_assert(tma_cluster_reduce_form_<Type, Op>::exists,
                  "cp.reduce.async.bulk.shared::cluster has no such (type, reduction): see TMA_REDUCE_FORMS");
    tma_check_bulk_cluster_("reduce", dst, src, bytes, cta);
    tma_cluster_reduce_form_<Type, Op>::issue(tma_cluster_addr_(dst, cta), tma_smem_addr(src), bytes,
                                              tma_cluster_addr_(bar, cta));
}

/** cp.async.bulk.prefetch.L2: bring `bytes` bytes at global into L2; nothing else changes. */
TMA_DEV void tma_bulk_prefetch_l2(const void *global, uint32_t bytes) {
    tma_check_bulk_("prefetch", global, nullptr, bytes);
    TMA_PTX("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(global), "r"(bytes) : "memory");
}

/* Named forms for the common ranks, so kernels read like the algorithm. */
TMA_DEV void tma_load_1d(void *smem, const tma_tensor *t, uint64_t *bar, int32_t x) {
    tma_load<1>(smem, t, bar, {x, 0, 0, 0, 0});
}
TMA_DEV void tma_load_2d(void *smem, const tma_tensor *t, uint64_t *bar, int32_t x, int32_t y) {
    tma_load<2>(smem, t, bar, {x, y, 0, 0, 0});
}
TMA_DEV void tma_load_3d(void *smem, const tma_tensor *t, uint64_t *bar, int32_t x, int32_t y, int32_t z) {
    tma_load<3>(smem, t, bar, {x, y, z, 0, 0});
}
TMA_DEV void tma_store_1d(const tma_tensor *t, const void *smem, int32_t x) { tma_store<1>(t, smem, {x, 0, 0, 0, 0}); }
TMA_DEV void tma_store_2d(const tma_tensor *t, const void *smem, int32_t x, int32_t y) {
    tma_store<2>(t, smem, {x, y, 0, 0, 0});
}
TMA_DEV void tma_store_3d(const tma_tensor *t, const void *smem, int32_t x, int32_t y, int32_t z) {
    tma_store<3>(t, smem, {x, y, z, 0, 0});
}

/** Shared-memory address of element (row, col) of the box of tensor t that TMA wrote at `tile`. */
TMA_DEV uint32_t tma_box_elem_addr(const tma_tensor *t, const void *tile, uint32_t row, uint32_t col) {
    return tma_swizzle_elem((tma_swizzle)t->box.swizzle, tma_smem_addr(tile), t->box.row_pitch, t->box.elem_bytes,
                            row, col);
}

/** Pointer to element (row, col) of the box of tensor t that TMA wrote at `tile` (a generic pointer into
 *  shared memory, 128-byte aligned): the swizzled address, as a T*. */
template <typename T>
TMA_DEV T *tma_box_elem(const tma_tensor *t, void *tile, uint32_t row, uint32_t col) {
    return (T *)((uint8_t *)tile + (tma_box_elem_addr(t, tile, row, col) - tma_smem_addr(tile)));
}

#endif /* TMA_DEVICE_CUH */
