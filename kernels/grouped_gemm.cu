/* tma::kernels grouped GEMM (tma/kernels.h): C_g = A_g * B_g^T for every group g, bf16 in, fp32 accumulate,
 * bf16 out, with each group's tensor maps built on the device.
 *
 * Two kernels per run, in stream order:
 *   1. gg_build_kernel: one warp per group builds the group's three maps (A_g, B_g, C_g) from the host-encoded
 *      templates (the address and the rows: gg_group_edits) in a shared-memory builder, checks them against every
 *      rule those edits can break (the rules of the tensor in global memory, tma_builder_check_tensor, in any build:
 *      the templates passed all the others on the host; a bad group is recorded for tma_grouped_gemm_check and
 *      marked skipped) and publishes them (tensormap.cp_fenceproxy, release) into the plan's map table.
 *   2. gg_kernel: the one pipeline of the GEMMs and the convolution (gm_pipeline_kernel, gemm_device.cuh) on
 *      128 x 256 tiles, no clusters, the TMA-store epilogue, with the grouped GEMM's operands and tile walk
 *      (GroupedOps, below): units number the tiles of group 0, then group 1, ... (grouped_tiles.h).
 * Where TMA cannot read the operands (N or K not a multiple of 8: a row is not a multiple of 16 bytes), one kernel
 * instead: gg_threads_kernel (THE THREAD-LOADED KERNEL, below).
 * A table built once per run, not maps rebuilt in the GEMM's producer when a block moves to another group: there each
 * rebuild stalled the producer ~30 us (docs/lab/grouped_gemm.md "Why a table built once per run"). The maps do not
 * change while the GEMM runs, so no copy can see a map change under it. */
#include <stdio.h>
#include <string.h>

#include <mma.h>

#include "gemm_device.cuh"
#include "grouped_tiles.h"
#include "kernel_diag.h"
#include "kernel_maps.h"
#include "launch_record.h"

#include "tma/tensormap.cuh"

namespace {
/* The GEMM's run-time schedule (GroupedOps::next): every block takes its first unit by its index, then the next
 * untaken one from `taken` (past the grid's first units); the last producer done puts both back to 0 for the next
 * run. In the workspace: zero at plan_make. */
struct gg_counters {
    unsigned long long taken;
    unsigned int done;
};

/* The kernels' parameters (one struct: under the 4 KiB parameter limit). */
struct gg_params {
    tma_tensor tmpl[GG_MAPS];
    tma_tiled_desc desc[GG_MAPS];
    const void *const *a;
    const void *const *b;
    void *const *c;
    const int32_t *m;
    uint32_t groups, n, k;
    tma_tensor *maps; /* groups x GG_MAPS: the map table */
    int32_t *ok;      /* groups: GG_OK_MAPS where the group's maps are valid (or it has no rows), GG_OK_THREADS where
                         the threads compute it after the pipeline (gg_misaligned), 0 where it is skipped (an error
                         recorded) */
    gg_error *error;
    gg_counters *counters; /* the GEMM's schedule: the units taken, the producers done */
};

constexpr uint32_t BUILD_WARPS = 4; /* groups per block of gg_build_kernel */
constexpr int32_t GG_OK_MAPS = 1, GG_OK_THREADS = 2;
} // namespace

/* Whether the thread-loaded kernel can read or write a group's matrix at `ptr`: a device address at a whole element. */
static __device__ bool gg_threads_usable(const void *ptr) { return ptr != NULL && (uintptr_t)ptr % 2u == 0; }

/* GROUPS OFF 16 BYTES: a group of rows whose A_g, B_g and C_g are all usable by the threads (non-NULL, at whole
 * elements) but one of which lies off 16 bytes, which no TMA map may start at (the driver's address rule), is
 * computed by the thread-loaded kernel after the pipeline (gg_threads_kernel with `only`), not refused. */
static __device__ bool gg_misaligned(const void *a, const void *b, const void *c) {
    return gg_threads_usable(a) && gg_threads_usable(b) && gg_threads_usable(c) &&
           ((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) % TMA_GLOBAL_ALIGN != 0u;
}

/* Record the first error of a run (the host reads and clears it), in the words of the kernels' rows
 * (kernel_rules.h: GROUP_MAP, then the rule beneath it; GROUP_NEGATIVE_ROWS), formatted here on the device by libtma's
 * formatter as the host would. The rows' two values only, not a whole tma_violation: its ten values took
 * gg_build_kernel's stack frame from 880 bytes (the message built piece by piece) to 1,120, the two take it to 928
 * (ptxas -v, CUDA 13.0; 131 registers and no spill in all three). Rare: not inlined, to keep the hot code small. */
static __device__ __noinline__ void gg_record_violation(gg_error *e, uint32_t g, uint32_t which,
                                                        const tma_violation *v) {
    if (atomicCAS(&e->status, 0, (int32_t)tma_violation_status(v)) != 0) /* the rule's status, as the host's */
        return;
    e->group = (int32_t)g;
    const tma_rule_arg args[2] = {tma_arg_u(g), tma_arg_s(gg_map_name(which))};
    kd_rule_format_args(KD_RULE_GROUP_MAP, args, v, e->message, sizeof e->message);
}

static __device__ __noinline__ void gg_record_pointer(gg_error *e, uint32_t g, uint32_t which, const void *ptr,
                                                      int32_t rows) {
    if (atomicCAS(&e->status, 0, (int32_t)kd_rule_status(KD_RULE_GROUP_POINTER)) != 0)
        return;
    e->group = (int32_t)g;
    const tma_rule_arg args[4] = {tma_arg_u(g), tma_arg_s(gg_map_name(which)), tma_arg_x((uint64_t)(uintptr_t)ptr),
                                  tma_arg_i(rows)};
    kd_rule_format_args(KD_RULE_GROUP_POINTER, args, NULL, e->message, sizeof e->message);
}

static __device__ __noinline__ void gg_record_negative_rows(gg_error *e, uint32_t g, int32_t rows) {
    if (atomicCAS(&e->status, 0, (int32_t)kd_rule_status(KD_RULE_GROUP_NEGATIVE_ROWS)) != 0)
        return;
    e->group = (int32_t)g;
    const tma_rule_arg args[2] = {tma_arg_u(g), tma_arg_i(rows)};
    kd_rule_format_args(KD_RULE_GROUP_NEGATIVE_ROWS, args, NULL, e->message, sizeof e->message);
}

/* Lane `which` of a gg_build_kernel warp: build map `which` of group g (rows > 0) from its template in the
 * builder and check it (every rule its edits can break, as the host would word it); record a violation.
 * @return 1 when the map is valid */
static __device__ int gg_build_map(const gg_params &p, uint32_t g, int32_t rows, uint32_t which, tma_map_builder *b) {
    const void *ptr = which == GG_MAP_A ? p.a[g] : which == GG_MAP_B ? p.b[g] : (const void *)p.c[g];
    tma_builder_from_template(b, &p.tmpl[which], &p.desc[which]);
    tma_map_edit e[2];
    const uint32_t n = gg_group_edits(which, ptr, rows, e);
    for (uint32_t i = 0; i < n; i++)
        tma_builder_edit(b, e[i]);
    /* the edits change the address and the rows, so the rules of the tensor in global memory are every rule they can
     * break (the templates passed them all on the host): the whole check was two thirds of the build, mostly its
     * instruction fetches (docs/lab/grouped_gemm.md "A check of what the edits change") */
    tma_violation v;
    if (tma_builder_check_tensor(b, &v) == TMA_OK)
        return 1;
    gg_record_violation(p.error, g, which, &v);
    return 0;
}

/* One warp of gg_build_kernel: group g's three maps, built and checked by lanes 0-2 side by side (a single thread
 * doing all three took ~3x as long: the checks are long chains of dependent instructions), then published by the
 * warp (tensormap.cp_fenceproxy is warp-collective) into the map table. A group without rows needs no maps (its
 * pointers may be NULL); a negative M_g is an error; a group off 16 bytes (gg_misaligned) is left to the threads.
 * Writes p.ok[g]. */
static __device__ void gg_build_group(const gg_params &p, uint32_t g, tma_map_builder (&b)[GG_MAPS]) {
    const uint32_t lane = threadIdx.x % 32u;
    const int32_t rows = p.m[g];
    if (rows <= 0) {
        if (lane == 0) {
            if (rows < 0)
                gg_record_negative_rows(p.error, g, rows);
            p.ok[g] = GG_OK_MAPS;
        }
        return;
    }
    if (gg_misaligned(p.a[g], p.b[g], p.c[g])) { /* the same loads in every lane: the warp takes this branch whole */
        if (lane == 0)
            p.ok[g] = GG_OK_THREADS;
        return;
    }
    const int mine = lane < GG_MAPS ? gg_build_map(p, g, rows, lane, &b[lane]) : 1;
    const bool ok = __all_sync(0xffffffffu, mine);
    if (ok) {
        /* The box facts are the template's: the edits change the address and the rows, which they do not read
         * (tests/test_grouped.c: the edited descriptor is the group's own). Copied, not derived again: deriving
         * them took as long as the check (~3,000 cycles a map, H200). */
        tma_tensor *maps = p.maps + (size_t)g * GG_MAPS;
        if (lane < GG_MAPS) {
            maps[lane].box = p.tmpl[lane].box;
            maps[lane].box.flags &= ~TMA_BOX_TEMPLATE; /* the group's map is a real one */
        }
        __syncwarp(); /* the builders' writes before the copies read them */
        for (uint32_t which = 0; which < GG_MAPS; which++)
            tma_map_publish(&maps[which].map, &b[which].map);
    }
    if (lane == 0)
        p.ok[g] = ok ? GG_OK_MAPS : 0;
}

/* The map table: warp w of block b builds group BUILD_WARPS * b + w. The GEMM, launched with programmatic
 * serialization, may start at once: it waits for this grid's completion before it reads the table. */
/* One block an SM at most (few blocks: one per BUILD_WARPS groups): the registers that lets ptxas take keep the
 * inlined rules check out of local memory (131 registers, no spill; with the default bound, 96 and 148 bytes spilled,
 * CUDA 13.0). */
__global__ void __launch_bounds__(32 * BUILD_WARPS, 1) gg_build_kernel(const __grid_constant__ gg_params p) {
    __shared__ tma_map_builder builders[BUILD_WARPS][GG_MAPS];
    tma_grid_launch_dependents();
    const uint32_t warp = threadIdx.x / 32u, g = blockIdx.x * BUILD_WARPS + warp;
    if (g < p.groups)
        gg_build_group(p, g, builders[warp]);
}

/* The grouped GEMM's operands and tiles for gm_pipeline_kernel (gemm_device.cuh): units number the tiles of group 0,
 * then group 1, ... (gg_locate); block b takes unit b first, then whichever unit is next untaken (gg_counters),
 * skipping the groups the build refused; its consumers follow through the pipeline's tile queue. Taken at run time, not
 * b, b + grid, ... fixed in advance: the blocks that share a B tile (a group's tile rows in one tile column, next to
 * each other in unit order) must load it at about the same time for the L2 to serve all but the first, and with a fixed
 * schedule the blocks drift apart wherever tiles cost unequal times (a group's last tile has fewer rows) or start late
 * (the blocks that waited for the map build's SMs): H100, 128 experts over 65,536 tokens, the GEMM read 11.2 GB from
 * DRAM for 4.8 GB of operands and ran 4.3 ms (docs/lab/grouped_gemm.md "A schedule taken at run time"). Every group's
 * maps are the map table's, built by gg_build_kernel: the producer acquires a group's maps of A and B before its first
 * load through them, each consumer warpgroup's store issuer the map of C before its first store. */
struct GroupedOps {
    static constexpr uint32_t BN = ::BN;
    static constexpr bool C_TRANSPOSED = false;
    static constexpr bool DEPENDENT_LAUNCH = true; /* launched while gg_build_kernel may still run */
    using Sched = gg_sched;                        /* K parts in a short last wave (grouped_tiles.h) */
    static constexpr bool DEVICE_SCHED = true;
    static constexpr uint32_t TAPS = 1u, C_RANK = 2u; /* as GmDenseTiles' */
    gg_params p;
    __device__ GmStoreAt c_at(uint32_t row0) const { return GmStoreAt{{(int32_t)row0, 0, 0}}; }
    __device__ uint32_t rows() const { return 0u; } /* per group: GmTile.rows */
    __device__ uint32_t cols() const { return p.n; }
    __device__ const tma_box_info &a_box() const { return p.tmpl[GG_MAP_A].box; }
    __device__ const tma_box_info &b_box() const { return p.tmpl[GG_MAP_B].box; }
    __device__ uint32_t tx_bytes(int) const { return p.tmpl[GG_MAP_A].box.tx_bytes + p.tmpl[GG_MAP_B].box.tx_bytes; }
    __device__ void prefetch() const {} /* the maps are the table's, group by group */
    __device__ const tma_tensor *map(uint32_t group, uint32_t which) const {
        return &p.maps[(size_t)group * GG_MAPS + which];
    }

    /* The schedule (the producer warp, after the grid before has finished: the M_g are final): every group's tiles,
     * summed by the warp's lanes. */
    __device__ gg_sched device_sched(const gm_sched &) const {
        const uint32_t lane = threadIdx.x % 32u, tiles_n = (p.n + BN - 1u) / BN;
        uint64_t units = 0;
        for (uint32_t g = lane; g < p.groups; g += 32u)
            units += gg_group_units(p.m[g], tiles_n);
        for (uint32_t o = 16u; o > 0u; o /= 2u)
            units += __shfl_xor_sync(0xffffffffu, units, o);
        return gg_sched_make(units, gridDim.x, k_blocks());
    }
    __device__ uint32_t k_blocks() const { return (p.k + BK - 1u) / BK; }

    struct Walk {
        gg_cursor cursor;
        uint64_t u;        /* the current unit */
        uint32_t acquired; /* the group whose maps this thread acquired last */
        uint32_t group_m;
        uint32_t done;     /* an owner was taken: it is this block's last unit */
    };
    template <int CL, uint32_t TBN>
    static __device__ Walk walk(uint32_t, uint32_t, uint32_t group_m, uint32_t, uint32_t) {
        static_assert(CL == 1, "the grouped GEMM runs without clusters");
        Walk w;
        w.cursor.group = 0u, w.cursor.first = 0u;
        w.u = ~0ull; /* none taken yet: next() takes blockIdx.x first */
        w.acquired = 0xffffffffu;
        w.group_m = group_m;
        w.done = 0u;
        return w;
    }
    /* This block's next unit whose group has valid maps (else recorded by gg_build_kernel: the group's tiles are
     * skipped): a whole tile, or a K part of a tile of the short last wave (gg_take_of; seg->unit is then its
     * partial-tile slot, or an owner's first helper's). An owner is the block's last unit: its fixup reads its helpers'
     * partial tiles into the stages, which no later unit's loads may fill. The producer's thread alone. */
    template <bool SPLIT, int CL>
    __device__ bool next(Walk &w, const gg_sched &s, gm_segment *seg, GmTile *t) const {
        const uint32_t tiles_n = (p.n + BN - 1u) / BN;
        while (!w.done) {
            const int by_index = gg_first_by_index(&s, gridDim.x), own = by_index && w.u == ~0ull;
            w.u = gg_unit_taken(blockIdx.x, gridDim.x, by_index, own,
                                own ? 0ull : atomicAdd(&p.counters->taken, 1ull));
            if (w.u >= gg_sched_takes(&s))
                return false;
            const gg_take take = gg_take_of(&s, w.u);
            if (take.tile < w.cursor.first) /* an owner after a helper of a later tile: the walk starts again */
                w.cursor.group = 0u, w.cursor.first = 0u;
            if (!gg_locate(&w.cursor, take.tile, p.m, p.groups, tiles_n, w.group_m, &t->group, &t->tm, &t->tn))
                return false;
            w.done = take.role == GG_OWNER;
            if (p.ok[t->group] != GG_OK_MAPS) /* skipped, or left to the threads: every part of its tiles alike */
                continue;
            t->first = t->tm * BM;
            t->rows = (uint32_t)p.m[t->group];
            t->row0 = gg_box_row(t->first, t->rows);
            seg->unit = take.slot, seg->kb0 = take.kb0, seg->kb1 = take.kb1;
            return true;
        }
        return false;
    }
    /* Stream-K's fixup of the last wave's K parts (gg_take_of): the slots the schedule gave. */
    template <int CL>
    __device__ uint32_t partial_slot(const gm_segment &seg, uint32_t) const { return seg.unit; }
    template <int CL>
    __device__ GmHelpers partial_helpers(const gg_sched &s, const gm_segment &seg, uint32_t) const {
        return GmHelpers{seg.unit, s.parts - 1u, 1u};
    }
    /* Every producer has taken its last unit (past the end) before it counts itself done, so the last one done may put
     * the counters back for the next run (stream order: no run starts before this one has ended). */
    __device__ void finish(Walk &) const {
        __threadfence(); /* this block's takes before its count */
        if (atomicAdd(&p.counters->done, 1u) == gridDim.x - 1u) {
            __threadfence();
            p.counters->taken = 0ull;
            p.counters->done = 0u;
        }
    }
    __device__ void enter_loads(Walk &w, const GmTile &t) const {
        if (t.group != w.acquired) {
            tma_map_acquire(&map(t.group, GG_MAP_A)->map); /* this run's maps, not a cached older one */
            tma_map_acquire(&map(t.group, GG_MAP_B)->map);
        }
        w.acquired = t.group;
    }
    template <int CL>
    __device__ void load(uint8_t *sa, uint8_t *sb, uint64_t *bar, uint32_t kb, const GmTile &t, uint32_t) const {
        tma_load_2d(sa, map(t.group, GG_MAP_A), bar, (int32_t)(kb * BK), (int32_t)t.row0);
        tma_load_2d(sb, map(t.group, GG_MAP_B), bar, (int32_t)(kb * BK), (int32_t)(t.tn * BN));
    }
    __device__ const tma_tensor *c_map(Walk &w, const GmTile &t, const tma_tensor *, bool issuer) const {
        const tma_tensor *tc = map(t.group, GG_MAP_C);
        if (issuer && t.group != w.acquired)
            tma_map_acquire(&tc->map);
        w.acquired = t.group;
        return tc;
    }
};

/* The GEMM of the grouped GEMM: the one pipeline, 128 x 256 tiles, no clusters, the TMA-store epilogue, stream-K's
 * fixup for the K parts of a short last wave. */
static constexpr void (*gg_kernel)(GroupedOps, tma_tensor, __nv_bfloat16 *, uint32_t, uint32_t, gm_sched,
                                   GmPartials) =
    gm_pipeline_kernel<GroupedOps, 1, true, __nv_bfloat16, GM_SCHED_STREAM_K>;

/* ---------------------------------------------------------------------------------------------
 * THE THREAD-LOADED KERNEL, for what TMA cannot read: N or K not a multiple of 8 (a row of A_g, B_g or C_g is then
 * not a multiple of 16 bytes, TMA's stride rule), so no map of the groups exists. Tiles of GT_BM x GT_BN outputs,
 * numbered as the pipeline's units are (group 0's first, grouped_tiles.h's order); block b takes tiles b, b + grid,
 * ... Its threads load A_g's and B_g's elements of each K step into shared memory (zeros past the group's rows and
 * past K), its eight warps multiply them with wmma (16 x 16 x 16 bf16, fp32 accumulate: 32 x 64 outputs a warp),
 * and each output is stored clipped to M_g x N. Any N, K and element-aligned addresses; slower than the TMA pipeline
 * (docs/lab/grouped_gemm.md "Any N and K"). It validates the groups as gg_build_kernel does: a negative M_g, or for
 * M_g > 0 a NULL or odd pointer, is recorded for tma_grouped_gemm_check and the group skipped. Its instance ONLY runs
 * after the pipeline for the groups the map build left to it (GROUPS OFF 16 BYTES, above), already validated.
 * ------------------------------------------------------------------------------------------- */
constexpr uint32_t GT_BM = 128, GT_BN = 128, GT_BK = 32, GT_THREADS = 256;
constexpr uint32_t GT_LD = GT_BK + 8;     /* a staged row: 40 elements (80 bytes; wmma wants a multiple of 8) */
/* The default grid: two blocks an SM (128 registers a thread). Measured (H100, docs/lab/grouped_gemm.md "Any N and
 * K"): 93-94 TFLOP/s so; 79-81 with the next step's loads in flight during this step's products (218 registers, one
 * block an SM). */
constexpr uint32_t GT_BLOCKS_PER_SM = 2;

struct gg_threads_args {
    const void *const *a;
    const void *const *b;
    void *const *c;
    const int32_t *m;
    uint32_t groups, n, k;
    gg_error *error;
    const int32_t *only; /* NULL: every group (plan.thread_loads); else, after the pipeline, the groups with only[g] ==
                            GG_OK_THREADS (GROUPS OFF 16 BYTES), which the map build has validated */
};

/* Whether group g has work the kernel does: rows, and every pointer usable; else 0 rows (a fault is recorded by
 * gg_threads_validate). */
template <bool ONLY>
static __device__ uint32_t gg_threads_rows(const gg_threads_args &p, uint32_t g) {
    const int32_t rows = p.m[g];
    if (rows <= 0 || (ONLY && p.only[g] != GG_OK_THREADS))
        return 0;
    return gg_threads_usable(p.a[g]) && gg_threads_usable(p.b[g]) && gg_threads_usable(p.c[g]) ? (uint32_t)rows : 0u;
}

static __device__ void gg_threads_validate(const gg_threads_args &p) {
    for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < p.groups; g += gridDim.x * blockDim.x) {
        const int32_t rows = p.m[g];
        if (rows < 0) {
            gg_record_negative_rows(p.error, g, rows);
            continue;
        }
        const void *ptr[GG_MAPS] = {p.a[g], p.b[g], p.c[g]};
        for (uint32_t which = 0; rows > 0 && which < GG_MAPS; which++)
            if (!gg_threads_usable(ptr[which])) {
                gg_record_pointer(p.error, g, which, ptr[which], rows);
                break;
            }
    }
}

/* A thread's elements of one K step of a tile into the staged tile `to` (rows GT_LD apart): rows r0 .. r0 + GT_BM
 * of a row-major matrix of `rows` rows of k elements, columns k0 .. k0 + GT_BK, element e = threadIdx.x + i
 * GT_THREADS at (e / GT_BK, e % GT_BK): consecutive threads take consecutive columns (a row may start at any even
 * address: element by element); zeros past its rows and past k. */
constexpr uint32_t GT_PER_THREAD = GT_BM * GT_BK / GT_THREADS;
static __device__ __forceinline__ void gg_threads_stage(uint16_t *to, const uint16_t *from, uint32_t rows, uint32_t k,
                                                        uint32_t r0, uint32_t k0) {
#pragma unroll
    for (uint32_t i = 0; i < GT_PER_THREAD; i++) {
        const uint32_t e = threadIdx.x + i * GT_THREADS, r = e / GT_BK, col = e % GT_BK;
        const bool inside = r0 + r < rows && k0 + col < k;
        to[r * GT_LD + col] = inside ? __ldg(from + (size_t)(r0 + r) * k + k0 + col) : (uint16_t)0;
    }
}

/* ONLY: the instance launched after the pipeline for the groups off 16 bytes (p.only; GROUPS OFF 16 BYTES), compiled
 * apart: the test of p.only in the one instance cost ptxas an 8-byte spill (CUDA 13.0). */
template <bool ONLY>
__global__ void __launch_bounds__(GT_THREADS, GT_BLOCKS_PER_SM) gg_threads_kernel(const gg_threads_args p) {
    using namespace nvcuda;
    __shared__ __align__(32) uint16_t sa[GT_BM * GT_LD], sb[GT_BN * GT_LD];
    __shared__ __align__(32) float scratch[GT_THREADS / 32u][16 * 16];
    if (ONLY) { /* after the pipeline: nothing to do unless some group was left to the threads */
        int any = 0;
        for (uint32_t g = threadIdx.x; g < p.groups; g += blockDim.x)
            any |= p.only[g] == GG_OK_THREADS;
        if (!__syncthreads_or(any))
            return;
    } else {
        gg_threads_validate(p);
    }
    const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u, wm = warp % 4u, wn = warp / 4u;
    const uint32_t tiles_n = (p.n + GT_BN - 1u) / GT_BN;
    uint32_t g = 0;
    uint64_t first = 0; /* group g's first tile */
    for (uint64_t t = blockIdx.x;; t += gridDim.x) {
        uint32_t rows = 0;
        for (; g < p.groups; g++) { /* the group of tile t: every block walks forward, in the same order */
            rows = gg_threads_rows<ONLY>(p, g);
            const uint64_t tiles = (uint64_t)(rows + GT_BM - 1u) / GT_BM * tiles_n;
            if (t < first + tiles)
                break;
            first += tiles;
        }
        if (g >= p.groups)
            break;
        const uint32_t tm = (uint32_t)((t - first) / tiles_n), tn = (uint32_t)((t - first) % tiles_n);
        const uint16_t *a = (const uint16_t *)p.a[g], *b = (const uint16_t *)p.b[g];
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][4];
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                wmma::fill_fragment(acc[i][j], 0.f);
        for (uint32_t k0 = 0; k0 < p.k; k0 += GT_BK) {
            gg_threads_stage(sa, a, rows, p.k, tm * GT_BM, k0);
            gg_threads_stage(sb, b, p.n, p.k, tn * GT_BN, k0);
            __syncthreads();
#pragma unroll
            for (uint32_t kk = 0; kk < GT_BK; kk += 16u) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb[4];
#pragma unroll
                for (int i = 0; i < 2; i++)
                    wmma::load_matrix_sync(fa[i], (const __nv_bfloat16 *)sa + (wm * 32u + i * 16u) * GT_LD + kk,
                                           GT_LD);
#pragma unroll
                for (int j = 0; j < 4; j++) /* B_g's rows are the product's columns: B^T column-major */
                    wmma::load_matrix_sync(fb[j], (const __nv_bfloat16 *)sb + (wn * 64u + j * 16u) * GT_LD + kk,
                                           GT_LD);
#pragma unroll
                for (int i = 0; i < 2; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
            __syncthreads(); /* every warp has read the step before the next overwrites it */
        }
        __nv_bfloat16 *c = (__nv_bfloat16 *)p.c[g];
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                wmma::store_matrix_sync(scratch[warp], acc[i][j], 16, wmma::mem_row_major);
                __syncwarp();
                for (uint32_t e = lane; e < 256u; e += 32u) {
                    const uint32_t row = tm * GT_BM + wm * 32u + i * 16u + e / 16u;
                    const uint32_t col = tn * GT_BN + wn * 64u + j * 16u + e % 16u;
                    if (row < rows && col < p.n)
                        c[(size_t)row * p.n + col] = __float2bfloat16_rn(scratch[warp][e]);
                }
                __syncwarp(); /* the lanes have read the scratch before the next fragment */
            }
    }
}

/* K == 0: every C_g is zero. Blocks stride over the groups, threads over a group's elements. A_g and B_g hold no
 * element and are not read (NULL is fine); a negative M_g, or a C_g with rows that the threads cannot write (NULL, off
 * a whole element), is recorded as the other kernels record it and that group is skipped. */
__global__ void gg_zero_kernel(void *const *c, const int32_t *m, uint32_t groups, uint32_t n, gg_error *error) {
    for (uint32_t g = blockIdx.x; g < groups; g += gridDim.x) {
        const int32_t rows = m[g];
        if (rows > 0 && !gg_threads_usable(c[g])) {
            if (threadIdx.x == 0)
                gg_record_pointer(error, g, GG_MAP_C, c[g], rows);
            continue;
        }
        if (rows < 0 && threadIdx.x == 0)
            gg_record_negative_rows(error, g, rows);
        const size_t count = rows > 0 ? (size_t)rows * n : 0u;
        __nv_bfloat16 *cg = (__nv_bfloat16 *)c[g];
        for (size_t i = threadIdx.x; i < count; i += blockDim.x)
            cg[i] = __float2bfloat16_rn(0.f);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Host
 * ------------------------------------------------------------------------------------------- */

/* The workspace: the map table (groups x GG_MAPS maps), the groups' ok flags, the error record, the schedule's
 * counters, then the last wave's partial tiles (GmPartials: a slot of BM x BN fp32 per block a grid can have, as
 * many as the helpers of a short last wave at most, gg_sched_make; two flags each) where the pipeline runs. */
static size_t gg_table_bytes(int groups) { return (size_t)groups * GG_MAPS * sizeof(tma_tensor); }
static size_t gg_ok_bytes(int groups) { return ((size_t)groups * sizeof(int32_t) + 255u) / 256u * 256u; }
static size_t gg_error_bytes() { return (sizeof(gg_error) + 15u) / 16u * 16u; }
static size_t gg_partials_offset(int groups) {
    return (gg_table_bytes(groups) + gg_ok_bytes(groups) + gg_error_bytes() + sizeof(gg_counters) + 255u) / 256u *
           256u;
}
static size_t gg_slots_bytes(const tma_grouped_gemm_plan *p) {
    return p->thread_loads || p->k == 0 ? 0u : (size_t)p->sms * BM * BN * sizeof(float);
}
static size_t gg_workspace_bytes(const tma_grouped_gemm_plan *p) {
    const size_t flags = p->thread_loads || p->k == 0 ? 0u : (size_t)p->sms * 2u * sizeof(uint32_t);
    return gg_partials_offset(p->groups) + gg_slots_bytes(p) + flags;
}
static GmPartials gg_partials_of(const tma_grouped_gemm_plan *p) {
    uint8_t *at = (uint8_t *)p->workspace + gg_partials_offset(p->groups);
    return GmPartials{(float4 *)at, (uint32_t *)(at + gg_slots_bytes(p))};
}

static int32_t *gg_ok_flags(const tma_grouped_gemm_plan *p) {
    return (int32_t *)((uint8_t *)p->workspace + gg_table_bytes(p->groups));
}

static gg_error *gg_error_record(const tma_grouped_gemm_plan *p) {
    return (gg_error *)((uint8_t *)p->workspace + gg_table_bytes(p->groups) + gg_ok_bytes(p->groups));
}

static gg_counters *gg_counters_of(const tma_grouped_gemm_plan *p) {
    return (gg_counters *)((uint8_t *)gg_error_record(p) + gg_error_bytes());
}

/* The argument rules of tma_grouped_gemm_plan_make, each with its message. */
static tma_status gg_check_args(int groups, int n, int k, const void *const *a, const void *const *b, void *const *c,
                                const int32_t *m, tma_diag *diag) {
    if (groups < 0 || n < 0 || k < 0)
        return KD_FAIL(diag, GROUPED_SIZES, tma_arg_i(groups), tma_arg_i(n), tma_arg_i(k));
    if (groups > 0 && (c == NULL || m == NULL || (k > 0 && (a == NULL || b == NULL))))
        return KD_FAIL(diag, GROUPED_NULL, tma_arg_s(m == NULL ? "m" : c == NULL ? "c" : a == NULL ? "a" : "b"),
                       tma_arg_i(groups));
    return TMA_OK;
}

/* ---------------------------------------------------------------------------------------------
 * The launch record (tma_launch_record): the grids and the band height, made by tma_grouped_gemm_plan_make and
 * tma_grouped_gemm_plan_tune from the plan's fields (gg_inputs), taken as it is by run while they stay as they were.
 * ------------------------------------------------------------------------------------------- */

/* The plan fields a record is made from. */
struct gg_inputs {
    uint64_t a, b, c, m, groups, n, k, sms, grid_blocks, group_m, workspace, smem;
};

struct gg_launch {
    uint32_t blocks;       /* the GEMM's persistent grid (and the zero fill's, K == 0) */
    uint32_t build_blocks; /* gg_build_kernel's grid: BUILD_WARPS groups a block */
    uint32_t group_m;      /* the kernel's group_m argument */
};

struct gg_launch_record {
    uint32_t mark; /* KD_RECORD_GROUPED */
    gg_launch launch;
    gg_inputs from;
};
static_assert(sizeof(gg_launch_record) <= sizeof(tma_launch_record), "the record fits tma_launch_record");

static gg_inputs gg_inputs_of(const tma_grouped_gemm_plan *p) {
    gg_inputs in;
    in.a = (uint64_t)(uintptr_t)p->a, in.b = (uint64_t)(uintptr_t)p->b, in.c = (uint64_t)(uintptr_t)p->c;
    in.m = (uint64_t)(uintptr_t)p->m, in.groups = (uint64_t)p->groups, in.n = (uint64_t)p->n, in.k = (uint64_t)p->k;
    in.sms = (uint64_t)p->sms, in.grid_blocks = (uint64_t)p->grid_blocks, in.group_m = (uint64_t)p->group_m;
    in.workspace = (uint64_t)(uintptr_t)p->workspace, in.smem = (uint64_t)p->smem;
    return in;
}

/* The fields a caller may change, checked before a launch is derived. */
static tma_status gg_check_plan(const tma_grouped_gemm_plan *p, tma_diag *diag) {
    if (p->workspace == NULL)
        return KD_FAIL(diag, GROUPED_NO_WORKSPACE, tma_arg_u(0));
    if (p->grid_blocks < 0 || p->grid_blocks > p->sms)
        return KD_FAIL(diag, GROUPED_GRID, tma_arg_i(p->grid_blocks), tma_arg_i(p->sms));
    if (p->group_m < 0)
        return KD_FAIL(diag, GROUPED_GROUP_M, tma_arg_i(p->group_m));
    return TMA_OK;
}

/* Whether TMA cannot read the operands (N or K not a multiple of 8: rows off 16-byte multiples): the thread-loaded
 * kernel's plan. */
static bool gg_thread_loads(int n, int k) { return ((size_t)n * 2u | (size_t)k * 2u) % TMA_GLOBAL_ALIGN != 0; }

static gg_launch gg_launch_of(const tma_grouped_gemm_plan *p) {
    gg_launch l;
    l.blocks = (uint32_t)(p->grid_blocks > 0 ? p->grid_blocks : p->sms * (p->thread_loads ? GT_BLOCKS_PER_SM : 1));
    l.build_blocks = ((uint32_t)p->groups + BUILD_WARPS - 1u) / BUILD_WARPS;
    l.group_m = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    return l;
}

static void gg_launch_record_make(tma_grouped_gemm_plan *p) {
    kd_record_make<gg_launch_record>(p->launch, KD_RECORD_GROUPED, gg_launch_of(p), gg_inputs_of(p));
}

/* The launch run makes: the record where the plan's fields are those it was made from; else every field checked and
 * the launch derived again. */
static tma_status gg_launch_for_run(const tma_grouped_gemm_plan *p, gg_launch *l, tma_diag *diag) {
    if (kd_record_launch<gg_launch_record>(p->launch, KD_RECORD_GROUPED, gg_inputs_of(p), l))
        return TMA_OK;
    const tma_status st = gg_check_plan(p, diag);
    if (st == TMA_OK)
        *l = gg_launch_of(p);
    return st;
}

/* The kernels' arguments: the plan's maps and arrays, and where the workspace keeps the table, the flags and the
 * error record. */
static gg_params gg_params_of(const tma_grouped_gemm_plan *p) {
    gg_params params;
    memset(&params, 0, sizeof params);
    for (int i = 0; i < GG_MAPS; i++) {
        params.tmpl[i] = p->tmpl[i];
        params.desc[i] = p->desc[i];
    }
    params.a = p->a, params.b = p->b, params.c = p->c, params.m = p->m;
    params.groups = (uint32_t)p->groups, params.n = (uint32_t)p->n, params.k = (uint32_t)p->k;
    params.maps = (tma_tensor *)p->workspace;
    params.ok = gg_ok_flags(p);
    params.error = gg_error_record(p);
    params.counters = gg_counters_of(p);
    return params;
}

/* The template maps: their descriptors checked once through the rules, then encoded without a second check. */
static tma_status gg_make_templates(tma_grouped_gemm_plan *p, tma_diag *diag) {
    gg_template_descs((uint32_t)p->n, (uint32_t)p->k, p->desc);
    for (int i = 0; i < GG_MAPS; i++) {
        tma_violation why;
        static const char *const map[GG_MAPS] = {"the template map of A_g", "the template map of B_g",
                                                 "the template map of C_g"};
        static const char *const from[GG_MAPS] = {"K: boxes of 64 K x 128 rows", "N and K: boxes of 64 K x 256 rows",
                                                  "N: the epilogue's boxes"};
        tma_status st = tma_rule_check_tiled(&p->desc[i], &why) != TMA_OK
                            ? KD_FAIL_CAUSE(diag, &why, MAP_REFUSED, tma_arg_s(map[i]), tma_arg_s(from[i]))
                            : tma_tensor_make_prechecked_(&p->tmpl[i], &p->desc[i], diag);
        if (st != TMA_OK)
            return st;
    }
    return TMA_OK;
}

/* ---------------------------------------------------------------------------------------------
 * The C API
 * ------------------------------------------------------------------------------------------- */

extern "C" tma_status tma_grouped_gemm_plan_make(tma_grouped_gemm_plan *p, int groups, int n, int k,
                                                 const void *const *a, const void *const *b, void *const *c,
                                                 const int32_t *m, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("the address of a tma_grouped_gemm_plan"));
    memset(p, 0, sizeof *p);
    tma_status st = gg_check_args(groups, n, k, a, b, c, m, diag);
    if (st != TMA_OK)
        return st;
    p->a = a, p->b = b, p->c = c, p->m = m;
    p->groups = groups, p->n = n, p->k = k;
    p->group_m = TMA_GEMM_GROUP_M;
    p->thread_loads = gg_thread_loads(n, k) ? 1 : 0;
    p->smem = p->thread_loads ? 0u : SMEM_BYTES;
    if (groups == 0 || n == 0)
        return kd_ok(diag); /* nothing to compute */
    if ((st = kd_require_sm90(diag, "tma_grouped_gemm", &p->sms)) != TMA_OK)
        return st;
    if (k > 0 && !p->thread_loads) {
        if ((st = gg_make_templates(p, diag)) != TMA_OK)
            return st;
        if ((st = kd_cuda(diag, cudaFuncSetAttribute(gg_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     (int)SMEM_BYTES),
                          "cudaFuncSetAttribute")) != TMA_OK)
            return st;
    }
    p->workspace_bytes = gg_workspace_bytes(p);
    if ((st = kd_cuda(diag, cudaMalloc(&p->workspace, p->workspace_bytes), "cudaMalloc of the workspace")) != TMA_OK)
        return st;
    st = kd_cuda(diag, cudaMemset(p->workspace, 0, p->workspace_bytes), "cudaMemset of the workspace");
    if (st != TMA_OK) {
        cudaFree(p->workspace);
        p->workspace = NULL;
        return st;
    }
    gg_launch_record_make(p);
    return kd_ok(diag);
}

extern "C" tma_status tma_grouped_gemm_plan_tune(tma_grouped_gemm_plan *p, int grid_blocks, int group_m,
                                                 tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_grouped_gemm_plan_make"));
    tma_grouped_gemm_plan q = *p;
    q.grid_blocks = grid_blocks, q.group_m = group_m;
    if (q.groups == 0 || q.n == 0) { /* nothing to launch: nothing to check the values against */
        *p = q;
        return kd_ok(diag);
    }
    const tma_status st = gg_check_plan(&q, diag);
    if (st != TMA_OK)
        return st;
    gg_launch_record_make(&q);
    *p = q;
    return kd_ok(diag);
}

extern "C" tma_status tma_grouped_gemm_run(const tma_grouped_gemm_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_grouped_gemm_plan_make"));
    if (p->groups == 0 || p->n == 0)
        return kd_ok(diag);
    gg_launch l;
    tma_status st = gg_launch_for_run(p, &l, diag);
    if (st != TMA_OK)
        return st;
    const cudaStream_t s = (cudaStream_t)stream;
    if (p->k == 0) {
        gg_zero_kernel<<<l.blocks, 256, 0, s>>>(p->c, p->m, (uint32_t)p->groups, (uint32_t)p->n, gg_error_record(p));
        st = kd_cuda(diag, cudaGetLastError(), "tma_grouped_gemm zero-fill launch (K = 0)");
        return st == TMA_OK ? kd_ok(diag) : st;
    }
    if (p->thread_loads) {
        const gg_threads_args args = {p->a, p->b, p->c, p->m, (uint32_t)p->groups, (uint32_t)p->n, (uint32_t)p->k,
                                      gg_error_record(p), NULL};
        gg_threads_kernel<false><<<l.blocks, GT_THREADS, 0, s>>>(args);
        st = kd_cuda(diag, cudaGetLastError(), "tma_grouped_gemm thread-loaded kernel launch");
        return st == TMA_OK ? kd_ok(diag) : st;
    }
    const gg_params params = gg_params_of(p);
    if (!p->diag_skip_build) {
        gg_build_kernel<<<l.build_blocks, 32 * BUILD_WARPS, 0, s>>>(params);
        if ((st = kd_cuda(diag, cudaGetLastError(), "tma_grouped_gemm map-building launch")) != TMA_OK)
            return st;
    }
    /* Programmatic serialization: the GEMM's blocks start while the maps are built and wait for them in the
     * kernel (tma_grid_dependency_wait), instead of after a launch gap. */
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = p->diag_skip_build ? 0 : 1;
    cfg.gridDim = dim3(l.blocks, 1, 1);
    cfg.blockDim = dim3(THREADS, 1, 1);
    cfg.dynamicSmemBytes = p->smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    GroupedOps ops;
    ops.p = params;
    tma_tensor no_c; /* every tile's C map is its group's */
    memset(&no_c, 0, sizeof no_c);
    gm_sched sched; /* the walk is the grouped GEMM's own (GroupedOps::next); a tile's stages tell a K part */
    memset(&sched, 0, sizeof sched);
    sched.nk = ((uint32_t)p->k + BK - 1u) / BK;
    st = kd_cuda(diag, cudaLaunchKernelEx(&cfg, gg_kernel, ops, no_c, (__nv_bfloat16 *)NULL, l.group_m, 0u, sched,
                                          gg_partials_of(p)),
                 "tma_grouped_gemm kernel launch");
    if (st != TMA_OK)
        return st;
    /* GROUPS OFF 16 BYTES: the groups the build left to the threads (each block returns at once where there are
     * none). Programmatic serialization: the GEMM lets it start as soon as it has waited for the build (the flags
     * are written then), and its blocks take the SMs the GEMM's blocks leave; it reads nothing the GEMM writes and
     * writes only the C_g the GEMM skips. docs/lab/grouped_gemm.md "Groups off 16 bytes, computed". */
    const gg_threads_args only = {p->a, p->b, p->c, p->m, (uint32_t)p->groups, (uint32_t)p->n, (uint32_t)p->k,
                                  gg_error_record(p), gg_ok_flags(p)};
    cudaLaunchConfig_t after;
    memset(&after, 0, sizeof after);
    after.gridDim = dim3((uint32_t)p->sms * GT_BLOCKS_PER_SM, 1, 1);
    after.blockDim = dim3(GT_THREADS, 1, 1);
    after.stream = s;
    cudaLaunchAttribute serial[1];
    serial[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    serial[0].val.programmaticStreamSerializationAllowed = 1;
    after.attrs = serial;
    after.numAttrs = 1;
    st = kd_cuda(diag, cudaLaunchKernelEx(&after, gg_threads_kernel<true>, only),
                 "tma_grouped_gemm launch of the groups off 16 bytes");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_grouped_gemm_check(const tma_grouped_gemm_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return KD_FAIL(diag, PLAN_NULL, tma_arg_s("a plan made by tma_grouped_gemm_plan_make"));
    if (p->workspace == NULL)
        return kd_ok(diag); /* nothing was ever run on the device */
    const cudaStream_t s = (cudaStream_t)stream;
    gg_error e;
    tma_status st = kd_cuda(diag, cudaMemcpyAsync(&e, gg_error_record(p), sizeof e, cudaMemcpyDeviceToHost, s),
                            "cudaMemcpyAsync of the error record");
    if (st == TMA_OK)
        st = kd_cuda(diag, cudaStreamSynchronize(s), "cudaStreamSynchronize");
    if (st == TMA_OK && e.status != 0)
        st = kd_cuda(diag, cudaMemsetAsync(gg_error_record(p), 0, sizeof e, s), "cudaMemsetAsync of the error record");
    if (st != TMA_OK)
        return st;
    if (e.status == 0)
        return kd_ok(diag);
    e.message[sizeof e.message - 1] = '\0';
    return kd_relay(diag, (tma_status)e.status, e.message); /* formatted on the device by the same rows */
}

extern "C" tma_status tma_grouped_gemm_plan_free(tma_grouped_gemm_plan *p, tma_diag *diag) {
    if (p == NULL || p->workspace == NULL)
        return kd_ok(diag);
    const cudaError_t e = cudaFree(p->workspace);
    p->workspace = NULL;
    const tma_status st = kd_cuda(diag, e, "cudaFree of the workspace");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_grouped_gemm(int groups, int n, int k, const void *const *a, const void *const *b,
                                       void *const *c, const int32_t *m, tma_stream stream, tma_diag *diag) {
    tma_grouped_gemm_plan p;
    tma_status st = tma_grouped_gemm_plan_make(&p, groups, n, k, a, b, c, m, diag);
    if (st == TMA_OK)
        st = tma_grouped_gemm_run(&p, stream, diag);
    if (st == TMA_OK)
        st = tma_grouped_gemm_check(&p, stream, diag);
    tma_diag ignored;
    const tma_status freed = tma_grouped_gemm_plan_free(&p, st == TMA_OK ? diag : &ignored);
    return st != TMA_OK ? st : freed;
}
