/* tma::kernels grouped GEMM (tma/kernels.h): C_g = A_g * B_g^T for every group g, bf16 in, fp32 accumulate,
 * bf16 out, with each group's tensor maps built on the device.
 *
 * The block is the dense GEMM's (gemm.cu, gemm_device.cuh): warpgroup 0 produces, warpgroups 1 and 2 consume
 * 128 x 256 output tiles with wgmma, a ring of TMA_GEMM_STAGES stages, the TMA-store epilogue. No clusters.
 * What differs:
 *   - Work: units number the tiles of group 0, then group 1, ... (grouped_tiles.h); block b takes units b,
 *     b + grid, ... Only the producer warp walks the schedule (reading the M_g from device memory); it leaves
 *     each tile's coordinates, its rows and its map slot with the tile's first stage (stage_info), and a "done"
 *     entry after the last, so the consumers follow without reading the M_g themselves.
 *   - Maps: when the producer moves to another group it builds the three maps of that group from the templates
 *     (the kernel's parameters) in a shared-memory builder: the address and the rows (gg_group_edits); the device
 *     check (tma_map_check: every rule of rules.h, in any build) refuses a bad group, which is skipped and
 *     recorded (tma_grouped_gemm_check); then the warp publishes the maps (tensormap.cp_fenceproxy, release) into
 *     the next of the block's TMA_GROUPED_GEMM_SLOTS slots in global memory. The producer acquires the maps of A
 *     and B before its loads; each consumer warpgroup's store issuer acquires the map of C before its first store
 *     through it (it learns of the slot through the full barrier, which orders the publish before).
 *   - Slot reuse. A slot is rebuilt only after the copies through its old maps have completed:
 *     the producer rebuilds a slot right after waiting for the stage of the new tile's first k-block to be
 *     free. At that moment the consumers have released the stage of the k-block STAGES before, so they are in
 *     the main loop of tile c >= t - STAGES (every tile has >= 1 k-block), after the epilogue of c - 1 was
 *     issued; at each tile's epilogue a store issuer first waits until at most the previous tile's stores
 *     (GG_EPI_BOXES groups) are pending, or none when it has nothing to store, so the stores of tiles <= c - 3
 *     have completed, and the loads of tiles < c were consumed. A slot changes at most once per tile, so the
 *     slot rebuilt for tile t was last used by a tile <= t - SLOTS <= t - STAGES - 3 <= c - 3 when
 *     SLOTS >= STAGES + 3 (8 >= 7): its copies are done. */
#include <stdio.h>
#include <string.h>

#include "gemm_device.cuh"
#include "grouped_tiles.h"
#include "kernel_diag.h"

#include "tma/tensormap.cuh"

namespace {
constexpr uint32_t SLOTS = TMA_GROUPED_GEMM_SLOTS;
static_assert(SLOTS >= STAGES + 3u, "the slot-reuse bound above");
constexpr uint32_t GG_EPI_BOXES = BN * 2u / EPI_ROW_BYTES; /* bf16 C: epilogue stores per warpgroup and tile */

/* The maps of one group: A, B, C (each 256 bytes, 128-aligned). */
struct gg_slot {
    tma_tensor map[GG_MAPS];
};

/* What the producer leaves with a tile's first stage. */
struct gg_stage_info {
    uint32_t tm, tn, slot, done;
    int32_t rows; /* M_g */
};

/* The kernel's parameters (one struct: under the 4 KiB parameter limit). */
struct gg_params {
    tma_tensor tmpl[GG_MAPS];
    tma_tiled_desc desc[GG_MAPS];
    const void *const *a;
    const void *const *b;
    void *const *c;
    const int32_t *m;
    uint32_t groups, n, k, group_m, update_every_tile;
    gg_slot *slots;  /* gridDim.x * SLOTS */
    gg_error *error;
};
} // namespace

/* Record the first error of a run (the host reads and clears it). Lane 0 of the producer; rare. */
static __device__ __noinline__ void gg_record_violation(gg_error *e, uint32_t g, uint32_t which,
                                                        const tma_violation *v) {
    if (atomicCAS(&e->status, 0, (int32_t)tma_rule_status((tma_rule)v->rule)) != 0)
        return;
    e->group = (int32_t)g;
    gg_format_violation(e->message, sizeof e->message, g, which, v);
}

static __device__ __noinline__ void gg_record_negative_rows(gg_error *e, uint32_t g, int32_t rows) {
    if (atomicCAS(&e->status, 0, (int32_t)TMA_ERR_ARG) != 0)
        return;
    e->group = (int32_t)g;
    gg_format_negative_rows(e->message, sizeof e->message, g, rows);
}

/* Lane 0 of the producer: build group g's map from template tmpl / desc for its matrix at ptr with `rows` rows in
 * the builder, and check it (every rule, as the host would); record a violation. Not inlined: the rules need more
 * registers than the producer keeps. @return 1 when the map is valid */
static __device__ __noinline__ int gg_build_map(const tma_tensor *tmpl, const tma_tiled_desc *desc, uint32_t which,
                                                const void *ptr, uint32_t g, int32_t rows, tma_map_builder *b,
                                                gg_error *error) {
    tma_builder_from_template(b, tmpl, desc);
    tma_map_edit e[2];
    const uint32_t n = gg_group_edits(which, ptr, rows, e);
    for (uint32_t i = 0; i < n; i++)
        tma_builder_edit(b, e[i]);
    tma_violation v;
    if (tma_builder_check(b, &v) == TMA_OK)
        return 1;
    gg_record_violation(error, g, which, &v);
    return 0;
}

/* The producer warp: build group g's three maps in the builder, check them, publish them into slot. Every lane
 * calls it; the same answer on every lane: whether the group's maps are valid (published). */
static __device__ bool gg_publish_group(const gg_params &p, uint32_t g, int32_t rows, gg_slot *slot,
                                        tma_map_builder *b, uint32_t lane) {
    for (uint32_t which = 0; which < GG_MAPS; which++) {
        int ok = 0;
        if (lane == 0) {
            const void *ptr = which == GG_MAP_A ? p.a[g] : which == GG_MAP_B ? p.b[g] : (const void *)p.c[g];
            ok = gg_build_map(&p.tmpl[which], &p.desc[which], which, ptr, g, rows, b, p.error);
        }
        if (!__shfl_sync(0xffffffffu, ok, 0))
            return false;
        tma_builder_publish(b, &slot->map[which]); /* warp-collective; reads the builder before it returns */
        __syncwarp();
    }
    if (lane == 0) {
        tma_map_acquire(&slot->map[GG_MAP_A].map);
        tma_map_acquire(&slot->map[GG_MAP_B].map);
    }
    return true;
}

/* Block 0 reports a negative M_g (such a group has no tiles, so no block meets it). */
static __device__ void gg_check_rows(const gg_params &p) {
    for (uint32_t g = 0; g < p.groups; g++)
        if (p.m[g] < 0)
            gg_record_negative_rows(p.error, g, p.m[g]);
}

/* The producer warp: walk this block's units, rebuild maps at each change of group, load the stages. */
static __device__ void gg_produce(const gg_params &p, uint8_t *sa, uint8_t *sb, uint64_t *full, uint64_t *empty,
                                  gg_stage_info *info, tma_map_builder *builder) {
    const uint32_t lane = threadIdx.x % 32u;
    const uint32_t tiles_n = (p.n + BN - 1u) / BN, nk = (p.k + BK - 1u) / BK;
    gg_slot *slots = p.slots + (size_t)blockIdx.x * SLOTS;
    if (blockIdx.x == 0 && lane == 0)
        gg_check_rows(p);
    gg_cursor cursor = {0u, 0u};
    const uint32_t tx = p.tmpl[GG_MAP_A].box.tx_bytes + p.tmpl[GG_MAP_B].box.tx_bytes; /* the box never changes */
    uint32_t s = 0, phase = 0, slot = SLOTS - 1u;
    uint32_t built = 0xffffffffu; /* the group whose maps the current slot holds */
    bool valid = false;
    for (uint64_t u = blockIdx.x;; u += gridDim.x) {
        uint32_t g, tm, tn;
        if (!gg_locate(&cursor, u, p.m, p.groups, tiles_n, p.group_m, &g, &tm, &tn))
            break;
        const int32_t rows = p.m[g];
        tma_mbar_wait_quiet(&empty[s], phase ^ 1u); /* a fresh barrier passes parity 1 at once */
        if (g != built || p.update_every_tile) {   /* the slot-reuse bound: after this wait (see the top) */
            built = g;
            slot = (slot + 1u) % SLOTS;
            valid = gg_publish_group(p, g, rows, &slots[slot], builder, lane);
        }
        if (!valid)
            continue; /* recorded; the group's tiles are skipped */
        const tma_tensor *ta = &slots[slot].map[GG_MAP_A], *tb = &slots[slot].map[GG_MAP_B];
        for (uint32_t kb = 0; kb < nk; kb++) {
            if (kb > 0)
                tma_mbar_wait_quiet(&empty[s], phase ^ 1u);
            if (lane == 0) {
                if (kb == 0)
                    info[s] = gg_stage_info{tm, tn, slot, 0u, rows};
                tma_mbar_arrive_expect_tx(&full[s], tx);
                tma_load_2d(sa + s * A_BYTES, ta, &full[s], (int32_t)(kb * BK), (int32_t)(tm * BM));
                tma_load_2d(sb + s * B_BYTES, tb, &full[s], (int32_t)(kb * BK), (int32_t)(tn * BN));
            }
            if (++s == STAGES) {
                s = 0;
                phase ^= 1u;
            }
        }
    }
    tma_mbar_wait_quiet(&empty[s], phase ^ 1u);
    if (lane == 0) {
        info[s] = gg_stage_info{0u, 0u, 0u, 1u, 0};
        tma_mbar_arrive(&full[s]); /* no bytes: completes the phase; the consumers read "done" */
    }
}

/* A consumer warpgroup (cw = 0, 1: rows 64 * cw of each tile): follow the producer's tiles to "done". */
static __device__ void gg_consume(const gg_params &p, uint8_t *sa, uint8_t *sb, uint8_t *se, uint64_t *full,
                                  uint64_t *empty, const gg_stage_info *info, uint32_t cw) {
    const uint32_t lane = threadIdx.x % 32u, nk = (p.k + BK - 1u) / BK;
    const bool issuer = threadIdx.x % 128u == 0; /* issues this warpgroup's epilogue stores */
    const gg_slot *slots = p.slots + (size_t)blockIdx.x * SLOTS;
    float acc[128];
    uint64_t da0[BK / 16u], db0[BK / 16u];
    gm_stage0_descs(&p.tmpl[GG_MAP_A].box, &p.tmpl[GG_MAP_B].box, tma_smem_addr(sa), tma_smem_addr(sb), cw, da0,
                    db0);
    uint32_t s = 0, phase = 0, acquired = 0xffffffffu;
    for (;;) {
        tma_mbar_wait_quiet(&full[s], phase);
        const gg_stage_info t = info[s];
        if (t.done)
            break;
        gm_mainloop<1>(acc, da0, db0, full, empty, nk, s, phase, lane == 0, true);
        const uint32_t row0 = t.tm * BM + cw * 64u;
        const bool stores = row0 < (uint32_t)t.rows; /* uniform in the warpgroup */
        if (issuer) { /* the slot-reuse bound (see the top): older tiles' stores complete */
            if (stores)
                tma_store_wait<GG_EPI_BOXES>();
            else
                tma_store_wait<0>();
        }
        if (!stores)
            continue; /* all of this warpgroup's rows are past M_g */
        const tma_tensor *tc = &slots[t.slot].map[GG_MAP_C];
        if (issuer && t.slot != acquired)
            tma_map_acquire(&tc->map);
        acquired = t.slot;
        epilogue_tma<__nv_bfloat16>(acc, tc, se + cw * EPI_BUFS * EPI_BYTES, row0, t.tn * BN, 1u + cw, issuer,
                                    false);
    }
    if (issuer)
        tma_store_wait<0>(); /* the block's shared memory stays until the last store has read it */
}

__global__ void __launch_bounds__(THREADS, 1) gg_kernel(const __grid_constant__ gg_params p) {
    extern __shared__ uint8_t dyn[];
    __shared__ tma_map_builder builder;
    __shared__ gg_stage_info info[STAGES];
    uint8_t *base = dyn + ((1024u - tma_smem_addr(dyn) % 1024u) % 1024u);
    uint8_t *sa = base;
    uint8_t *sb = base + STAGES * A_BYTES;
    uint8_t *se = sb + STAGES * B_BYTES;
    uint64_t *full = (uint64_t *)(se + 2u * EPI_BUFS * EPI_BYTES);
    uint64_t *empty = full + STAGES;
    const uint32_t wg = threadIdx.x / 128u;
    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < STAGES; s++) {
            tma_mbar_init(&full[s], 1);
            tma_mbar_init(&empty[s], CONSUMER_WARPS);
        }
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (wg == 0) {
        tma_setmaxnreg_dec<40>();
        if (threadIdx.x < 32u)
            gg_produce(p, sa, sb, full, empty, info, &builder);
    } else {
        tma_setmaxnreg_inc<232>();
        gg_consume(p, sa, sb, se, full, empty, info, wg - 1u);
    }
}

/* K == 0: every C_g is zero. Blocks stride over the groups, threads over a group's elements. */
__global__ void gg_zero_kernel(void *const *c, const int32_t *m, uint32_t groups, uint32_t n) {
    for (uint32_t g = blockIdx.x; g < groups; g += gridDim.x) {
        const size_t count = m[g] > 0 ? (size_t)m[g] * n : 0u;
        __nv_bfloat16 *cg = (__nv_bfloat16 *)c[g];
        for (size_t i = threadIdx.x; i < count; i += blockDim.x)
            cg[i] = __float2bfloat16_rn(0.f);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Host
 * ------------------------------------------------------------------------------------------- */

static size_t gg_workspace_bytes(int sms) { return (size_t)sms * SLOTS * sizeof(gg_slot) + sizeof(gg_error); }

static gg_error *gg_error_record(const tma_grouped_gemm_plan *p) {
    return (gg_error *)((uint8_t *)p->workspace + p->workspace_bytes - sizeof(gg_error));
}

/* The argument rules of tma_grouped_gemm_plan_make, each with its message. */
static tma_status gg_check_args(int groups, int n, int k, const void *const *a, const void *const *b, void *const *c,
                                const int32_t *m, tma_diag *diag) {
    if (groups < 0 || n < 0 || k < 0)
        return kd_fail(diag, TMA_ERR_ARG, "groups = %d, N = %d, K = %d: counts and sizes must be >= 0", groups, n, k);
    if ((size_t)k * 2u % TMA_GLOBAL_ALIGN != 0)
        return kd_fail(diag, TMA_ERR_ARG,
                       "K = %d: the rows of each A_g and B_g (K bf16 = %zu bytes) must be a multiple of %u bytes, "
                       "TMA's stride rule: use a K that is a multiple of 8 (pad with zero columns)",
                       k, (size_t)k * 2u, TMA_GLOBAL_ALIGN);
    if ((size_t)n * 2u % TMA_GLOBAL_ALIGN != 0)
        return kd_fail(diag, TMA_ERR_ARG,
                       "N = %d: the rows of each C_g (N bf16 = %zu bytes) must be a multiple of %u bytes, TMA's "
                       "stride rule for the epilogue's stores: use an N that is a multiple of 8 (pad B_g with zero "
                       "rows)",
                       n, (size_t)n * 2u, TMA_GLOBAL_ALIGN);
    if (groups > 0 && (c == NULL || m == NULL || (k > 0 && (a == NULL || b == NULL))))
        return kd_fail(diag, TMA_ERR_NULL_ARG,
                       "%s = NULL with %d groups: pass a device array of %d entries (pointers, or the M_g)",
                       m == NULL ? "m" : c == NULL ? "c" : a == NULL ? "a" : "b", groups, groups);
    return TMA_OK;
}

extern "C" tma_status tma_grouped_gemm_plan_make(tma_grouped_gemm_plan *p, int groups, int n, int k,
                                                 const void *const *a, const void *const *b, void *const *c,
                                                 const int32_t *m, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass the address of a tma_grouped_gemm_plan");
    memset(p, 0, sizeof *p);
    tma_status st = gg_check_args(groups, n, k, a, b, c, m, diag);
    if (st != TMA_OK)
        return st;
    p->a = a, p->b = b, p->c = c, p->m = m;
    p->groups = groups, p->n = n, p->k = k;
    p->group_m = TMA_GEMM_GROUP_M;
    p->smem = SMEM_BYTES;
    if (groups == 0 || n == 0)
        return kd_ok(diag); /* nothing to compute */
    if ((st = kd_require_sm90(diag, "tma_grouped_gemm", &p->sms)) != TMA_OK)
        return st;
    if (k > 0) {
        gg_template_descs((uint32_t)n, (uint32_t)k, p->desc);
        for (int i = 0; i < GG_MAPS && st == TMA_OK; i++)
            st = tma_tensor_make(&p->tmpl[i], &p->desc[i], diag);
        if (st != TMA_OK)
            return st;
        if ((st = kd_cuda(diag, cudaFuncSetAttribute(gg_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     (int)SMEM_BYTES),
                          "cudaFuncSetAttribute")) != TMA_OK)
            return st;
    }
    p->workspace_bytes = gg_workspace_bytes(p->sms);
    if ((st = kd_cuda(diag, cudaMalloc(&p->workspace, p->workspace_bytes), "cudaMalloc of the workspace")) != TMA_OK)
        return st;
    st = kd_cuda(diag, cudaMemset(p->workspace, 0, p->workspace_bytes), "cudaMemset of the workspace");
    if (st != TMA_OK) {
        cudaFree(p->workspace);
        p->workspace = NULL;
        return st;
    }
    return kd_ok(diag);
}

/* The fields a caller may change, checked before a launch. */
static tma_status gg_check_plan(const tma_grouped_gemm_plan *p, tma_diag *diag) {
    if (p->workspace == NULL)
        return kd_fail(diag, TMA_ERR_ARG, "the plan has no workspace: make it with tma_grouped_gemm_plan_make (and "
                                          "do not run it after tma_grouped_gemm_plan_free)");
    if (p->grid_blocks < 0 || p->grid_blocks > p->sms)
        return kd_fail(diag, TMA_ERR_ARG, "plan.grid_blocks = %d: use 0 (one block per multiprocessor) or 1 .. %d",
                       p->grid_blocks, p->sms);
    if (p->group_m < 0)
        return kd_fail(diag, TMA_ERR_ARG, "plan.group_m = %d: use 0 (the default) or a positive band height",
                       p->group_m);
    return TMA_OK;
}

extern "C" tma_status tma_grouped_gemm_run(const tma_grouped_gemm_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_grouped_gemm_plan_make");
    if (p->groups == 0 || p->n == 0)
        return kd_ok(diag);
    tma_status st = gg_check_plan(p, diag);
    if (st != TMA_OK)
        return st;
    const cudaStream_t s = (cudaStream_t)stream;
    const int blocks = p->grid_blocks > 0 ? p->grid_blocks : p->sms;
    if (p->k == 0) {
        gg_zero_kernel<<<blocks, 256, 0, s>>>(p->c, p->m, (uint32_t)p->groups, (uint32_t)p->n);
        st = kd_cuda(diag, cudaGetLastError(), "tma_grouped_gemm zero-fill launch (K = 0)");
        return st == TMA_OK ? kd_ok(diag) : st;
    }
    gg_params params;
    memset(&params, 0, sizeof params);
    for (int i = 0; i < GG_MAPS; i++) {
        params.tmpl[i] = p->tmpl[i];
        params.desc[i] = p->desc[i];
    }
    params.a = p->a, params.b = p->b, params.c = p->c, params.m = p->m;
    params.groups = (uint32_t)p->groups, params.n = (uint32_t)p->n, params.k = (uint32_t)p->k;
    params.group_m = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    params.update_every_tile = p->diag_update_every_tile ? 1u : 0u;
    params.slots = (gg_slot *)p->workspace;
    params.error = gg_error_record(p);
    gg_kernel<<<blocks, THREADS, p->smem, s>>>(params);
    st = kd_cuda(diag, cudaGetLastError(), "tma_grouped_gemm kernel launch");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_grouped_gemm_check(const tma_grouped_gemm_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_grouped_gemm_plan_make");
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
    return kd_fail(diag, (tma_status)e.status, "%s", e.message);
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
