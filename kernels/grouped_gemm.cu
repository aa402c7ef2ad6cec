/* tma::kernels grouped GEMM (tma/kernels.h): C_g = A_g * B_g^T for every group g, bf16 in, fp32 accumulate,
 * bf16 out, with each group's tensor maps built on the device.
 *
 * Two kernels per run, in stream order:
 *   1. gg_build_kernel: one warp per group builds the group's three maps (A_g, B_g, C_g) from the host-encoded
 *      templates (the address and the rows: gg_group_edits) in a shared-memory builder, checks them against every
 *      rule of rules.h (tma_map_check, in any build; a bad group is recorded for tma_grouped_gemm_check and marked
 *      skipped) and publishes them (tensormap.cp_fenceproxy, release) into the plan's map table in global memory.
 *   2. gg_kernel: the dense GEMM's block (gemm.cu, gemm_device.cuh): warpgroup 0 produces, warpgroups 1 and 2
 *      consume 128 x 256 output tiles with wgmma, a ring of TMA_GEMM_STAGES stages, the TMA-store epilogue; no
 *      clusters. Units number the tiles of group 0, then group 1, ... (grouped_tiles.h); block b takes units b,
 *      b + grid, ..., skipping the groups the build refused. The producer and the consumers walk this schedule
 *      each (gg_next_tile: a few loads of the M_g per change of group), so nothing but the stages passes between
 *      them. The producer acquires a group's maps of A and B before its first load through them; each consumer
 *      warpgroup's store issuer acquires the map of C before its first store.
 * Why a table built once per run, not maps rebuilt in the GEMM's producer when a block moves to another group
 * (measured on an H200, docs/GROUPED_GEMM.md): with the rules checked in a producer held to 40 registers, each
 * rebuild stalled the producer ~30 us (every block rebuilt up to ~70 times a run: a third of the time at 65,536
 * tokens over 128 experts); built once per group by warps with registers to spare, the table costs one small
 * launch. The maps do not change while the GEMM runs, so no copy can see a map change under it. */
#include <stdio.h>
#include <string.h>

#include "gemm_device.cuh"
#include "grouped_tiles.h"
#include "kernel_diag.h"

#include "tma/tensormap.cuh"

namespace {
/* A tile of the schedule. */
struct gg_tile {
    uint32_t group, tm, tn;
    int32_t rows; /* M_g */
};

/* The kernels' parameters (one struct: under the 4 KiB parameter limit). */
struct gg_params {
    tma_tensor tmpl[GG_MAPS];
    tma_tiled_desc desc[GG_MAPS];
    const void *const *a;
    const void *const *b;
    void *const *c;
    const int32_t *m;
    uint32_t groups, n, k, group_m;
    tma_tensor *maps; /* groups x GG_MAPS: the map table */
    int32_t *ok;      /* groups: 1 where the group's maps are valid (or it has no rows) */
    gg_error *error;
};

constexpr uint32_t BUILD_WARPS = 4; /* groups per block of gg_build_kernel */
} // namespace

/* Record the first error of a run (the host reads and clears it). Rare: not inlined, to keep the hot code small. */
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

/* Lane `which` of a gg_build_kernel warp: build map `which` of group g (rows > 0) from its template in the
 * builder and check it (every rule, as the host would); record a violation. @return 1 when the map is valid */
static __device__ int gg_build_map(const gg_params &p, uint32_t g, int32_t rows, uint32_t which, tma_map_builder *b) {
    const void *ptr = which == GG_MAP_A ? p.a[g] : which == GG_MAP_B ? p.b[g] : (const void *)p.c[g];
    tma_builder_from_template(b, &p.tmpl[which], &p.desc[which]);
    tma_map_edit e[2];
    const uint32_t n = gg_group_edits(which, ptr, rows, e);
    for (uint32_t i = 0; i < n; i++)
        tma_builder_edit(b, e[i]);
    tma_violation v;
    if (tma_builder_check(b, &v) == TMA_OK)
        return 1;
    gg_record_violation(p.error, g, which, &v);
    return 0;
}

/* One warp of gg_build_kernel: group g's three maps, built and checked by lanes 0-2 side by side (a single thread
 * doing all three took ~3x as long: the checks are long chains of dependent instructions), then published by the
 * warp (tensormap.cp_fenceproxy is warp-collective) into the map table. A group without rows needs no maps (its
 * pointers may be NULL); a negative M_g is an error. Writes p.ok[g]. */
static __device__ void gg_build_group(const gg_params &p, uint32_t g, tma_map_builder (&b)[GG_MAPS]) {
    const uint32_t lane = threadIdx.x % 32u;
    const int32_t rows = p.m[g];
    if (rows <= 0) {
        if (lane == 0) {
            if (rows < 0)
                gg_record_negative_rows(p.error, g, rows);
            p.ok[g] = 1;
        }
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
        p.ok[g] = ok ? 1 : 0;
}

/* The map table: warp w of block b builds group BUILD_WARPS * b + w. The GEMM, launched with programmatic
 * serialization, may start at once: it waits for this grid's completion before it reads the table. */
__global__ void __launch_bounds__(32 * BUILD_WARPS) gg_build_kernel(const __grid_constant__ gg_params p) {
    __shared__ tma_map_builder builders[BUILD_WARPS][GG_MAPS];
    tma_grid_launch_dependents();
    const uint32_t warp = threadIdx.x / 32u, g = blockIdx.x * BUILD_WARPS + warp;
    if (g < p.groups)
        gg_build_group(p, g, builders[warp]);
}

/* This block's next tile whose group has valid maps, from unit *u on (units *u, *u + gridDim.x, ...; *u is left at
 * the tile's unit). The producer and the consumers walk the same schedule with their own cursors. @return false
 * past the last tile */
static __device__ bool gg_next_tile(const gg_params &p, gg_cursor *c, uint64_t *u, uint32_t tiles_n, gg_tile *t) {
    for (;; *u += gridDim.x) {
        if (!gg_locate(c, *u, p.m, p.groups, tiles_n, p.group_m, &t->group, &t->tm, &t->tn))
            return false;
        if (p.ok[t->group]) { /* else recorded by gg_build_kernel: the group's tiles are skipped */
            t->rows = p.m[t->group];
            return true;
        }
    }
}

/* The producer warp: load the stages of this block's tiles through each group's maps. */
static __device__ void gg_produce(const gg_params &p, uint8_t *sa, uint8_t *sb, uint64_t *full, uint64_t *empty) {
    const uint32_t lane = threadIdx.x % 32u;
    const uint32_t tiles_n = (p.n + BN - 1u) / BN, nk = (p.k + BK - 1u) / BK;
    const uint32_t tx = p.tmpl[GG_MAP_A].box.tx_bytes + p.tmpl[GG_MAP_B].box.tx_bytes; /* every group's box */
    gg_cursor cursor = {0u, 0u};
    gg_tile t;
    uint32_t s = 0, phase = 0, acquired = 0xffffffffu;
    for (uint64_t u = blockIdx.x; gg_next_tile(p, &cursor, &u, tiles_n, &t); u += gridDim.x) {
        const tma_tensor *ta = &p.maps[(size_t)t.group * GG_MAPS + GG_MAP_A], *tb = ta + (GG_MAP_B - GG_MAP_A);
        if (lane == 0 && t.group != acquired) {
            tma_map_acquire(&ta->map); /* built by gg_build_kernel: this run's maps, not a cached older one */
            tma_map_acquire(&tb->map);
        }
        acquired = t.group;
        for (uint32_t kb = 0; kb < nk; kb++) {
            tma_mbar_wait_quiet(&empty[s], phase ^ 1u); /* a fresh barrier passes parity 1 at once */
            if (lane == 0) {
                tma_mbar_arrive_expect_tx(&full[s], tx);
                tma_load_2d(sa + s * A_BYTES, ta, &full[s], (int32_t)(kb * BK), (int32_t)(t.tm * BM));
                tma_load_2d(sb + s * B_BYTES, tb, &full[s], (int32_t)(kb * BK), (int32_t)(t.tn * BN));
            }
            if (++s == STAGES) {
                s = 0;
                phase ^= 1u;
            }
        }
    }
}

/* A consumer warpgroup (cw = 0, 1: rows 64 * cw of each tile): the same tiles, in the same order. */
static __device__ void gg_consume(const gg_params &p, uint8_t *sa, uint8_t *sb, uint8_t *se, uint64_t *full,
                                  uint64_t *empty, uint32_t cw) {
    const uint32_t lane = threadIdx.x % 32u, nk = (p.k + BK - 1u) / BK, tiles_n = (p.n + BN - 1u) / BN;
    const bool issuer = threadIdx.x % 128u == 0; /* issues this warpgroup's epilogue stores */
    float acc[128];
    uint64_t da0, db0;
    gm_stage0_descs(&p.tmpl[GG_MAP_A].box, &p.tmpl[GG_MAP_B].box, tma_smem_addr(sa), tma_smem_addr(sb), cw, &da0,
                    &db0);
    gg_cursor cursor = {0u, 0u};
    gg_tile t;
    uint32_t s = 0, phase = 0, acquired = 0xffffffffu;
    uint32_t epi_next_buf = 0; /* epi_first_buf's: 128 x 256 bf16 tiles are 4 boxes, so it stays 0 */
    for (uint64_t u = blockIdx.x; gg_next_tile(p, &cursor, &u, tiles_n, &t); u += gridDim.x) {
        gm_mainloop<1>(acc, da0, db0, full, empty, nk, s, phase, lane == 0);
        const uint32_t row0 = t.tm * BM + cw * 64u;
        if (row0 >= (uint32_t)t.rows)
            continue; /* all of this warpgroup's rows are past M_g (uniform in the warpgroup) */
        const tma_tensor *tc = &p.maps[(size_t)t.group * GG_MAPS + GG_MAP_C];
        if (issuer && t.group != acquired)
            tma_map_acquire(&tc->map);
        acquired = t.group;
        epilogue_tma<__nv_bfloat16>(acc, tc, se + cw * EPI_BUFS * EPI_BYTES, row0, t.tn * BN, 1u + cw, issuer,
                                    false, epi_next_buf);
    }
    if (issuer)
        tma_store_wait<0>(); /* the block's shared memory stays until the last store has read it */
}

__global__ void __launch_bounds__(THREADS, 1) gg_kernel(const __grid_constant__ gg_params p) {
    extern __shared__ uint8_t dyn[];
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
    /* Launched while gg_build_kernel may still run: nothing in global memory is read before this (the M_g and the
     * pointers may come from a kernel before it, the maps from it). */
    tma_grid_dependency_wait();
    __syncthreads();
    if (wg == 0) {
        tma_setmaxnreg_dec<40>();
        if (threadIdx.x < 32u)
            gg_produce(p, sa, sb, full, empty);
    } else {
        tma_setmaxnreg_inc<232>();
        gg_consume(p, sa, sb, se, full, empty, wg - 1u);
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

/* The workspace: the map table (groups x GG_MAPS maps), the groups' ok flags, the error record. */
static size_t gg_table_bytes(int groups) { return (size_t)groups * GG_MAPS * sizeof(tma_tensor); }
static size_t gg_ok_bytes(int groups) { return ((size_t)groups * sizeof(int32_t) + 255u) / 256u * 256u; }
static size_t gg_workspace_bytes(int groups) { return gg_table_bytes(groups) + gg_ok_bytes(groups) + sizeof(gg_error); }

static int32_t *gg_ok_flags(const tma_grouped_gemm_plan *p) {
    return (int32_t *)((uint8_t *)p->workspace + gg_table_bytes(p->groups));
}

static gg_error *gg_error_record(const tma_grouped_gemm_plan *p) {
    return (gg_error *)((uint8_t *)p->workspace + gg_table_bytes(p->groups) + gg_ok_bytes(p->groups));
}

/* The argument rules of tma_grouped_gemm_plan_make, each with its message. */
static tma_status gg_check_args(int groups, int n, int k, const void *const *a, const void *const *b, void *const *c,
                                const int32_t *m, tma_diag *diag) {
    if (groups < 0 || n < 0 || k < 0)
        return kd_fail(diag, TMA_ERR_ARG, "groups = %d, N = %d, K = %d: counts and sizes must be >= 0", groups, n, k);
    tma_status st = kd_check_bf16_rows(diag, "K", k, "each A_g and B_g", "pad them with zero columns");
    if (st == TMA_OK)
        st = kd_check_bf16_rows(diag, "N", n, "each C_g", "pad B_g with zero rows; the epilogue stores C_g by TMA");
    if (st != TMA_OK)
        return st;
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
    p->workspace_bytes = gg_workspace_bytes(groups);
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
    params.maps = (tma_tensor *)p->workspace;
    params.ok = gg_ok_flags(p);
    params.error = gg_error_record(p);
    if (!p->diag_skip_build) {
        gg_build_kernel<<<((uint32_t)p->groups + BUILD_WARPS - 1u) / BUILD_WARPS, 32 * BUILD_WARPS, 0, s>>>(params);
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
    cfg.gridDim = dim3((unsigned)blocks, 1, 1);
    cfg.blockDim = dim3(THREADS, 1, 1);
    cfg.dynamicSmemBytes = p->smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    st = kd_cuda(diag, cudaLaunchKernelEx(&cfg, gg_kernel, params), "tma_grouped_gemm kernel launch");
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
