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

#include "tma/wgmma.cuh"

/* CL = 1: one block per tile. CL = 2: clusters of two blocks on vertically adjacent tiles (tile rows
 * 2 * i and 2 * i + 1, same tile column) that share B: each block loads its own A box and one half (128
 * rows) of the B tile, multicast into both blocks; a stage is free when the consumers of BOTH blocks
 * have released it (empty[s] counts 16 arrivals, made with cluster-scope arrives).
 * TMA_EPI: the epilogue through shared memory and TMA stores (epilogue_tma), else epilogue_direct.
 * OutT: C's element type, __nv_bfloat16 or float. */
template <int CL, bool TMA_EPI, typename OutT>
__global__ void __launch_bounds__(THREADS, 1)
    gm_kernel(const __grid_constant__ tma_tensor ta, const __grid_constant__ tma_tensor tb,
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
                gm_tile_of(u, groups_m, tiles_n, group_m, &gm, &tn);
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
        uint64_t da0[BK / 16u], db0[BK / 16u];
        gm_stage0_descs(&ta.box, &tb.box, tma_smem_addr(sa), tma_smem_addr(sb), cw, da0, db0);
        uint32_t s = 0, phase = 0;
        for (uint32_t u = cluster_id; u < units; u += clusters) {
            uint32_t gm, tn;
            gm_tile_of(u, groups_m, tiles_n, group_m, &gm, &tn);
            const uint32_t tm = gm * CL + rank; /* may be past the last tile row: loads fill zeros, no store */
            gm_mainloop<CL>(acc, da0, db0, full, empty, nk, s, phase, lane == 0);

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
#define GM_INSTANCES(X)                                                                               \
    X(1, true, __nv_bfloat16) X(1, false, __nv_bfloat16) X(2, true, __nv_bfloat16) X(2, false, __nv_bfloat16)  \
    X(1, true, float) X(1, false, float) X(2, true, float) X(2, false, float)

static size_t out_bytes(tma_gemm_out out) { return out == TMA_GEMM_OUT_F32 ? 4u : 2u; }

/* The argument rules of tma_gemm_plan_make, each with its message. */
static tma_status gm_check_args(const void *a, const void *b, const void *c, tma_gemm_out out, int m, int n, int k,
                                tma_diag *diag) {
    if (out != TMA_GEMM_OUT_BF16 && out != TMA_GEMM_OUT_F32)
        return kd_fail(diag, TMA_ERR_ARG, "out = %d is not a tma_gemm_out: use TMA_GEMM_OUT_BF16 or TMA_GEMM_OUT_F32",
                       (int)out);
    if (m < 0 || n < 0 || k < 0)
        return kd_fail(diag, TMA_ERR_ARG, "M = %d, N = %d, K = %d: sizes must be >= 0", m, n, k);
    const tma_status st = kd_check_bf16_rows(diag, "K", k, "A and B", "pad A and B with zero columns");
    if (st != TMA_OK)
        return st;
    if (k > 0 && (a == NULL || b == NULL))
        return kd_fail(diag, TMA_ERR_NULL_ARG, "%s = NULL with K = %d: pass device addresses of A and B",
                       a == NULL ? "A" : "B", k);
    if (((uintptr_t)a | (uintptr_t)b) % TMA_GLOBAL_ALIGN != 0)
        return kd_fail(diag, TMA_ERR_ARG, "%s = %p is not %u-byte aligned (TMA's address rule): use an aligned "
                       "allocation (cudaMalloc gives 256 bytes)", (uintptr_t)a % TMA_GLOBAL_ALIGN ? "A" : "B",
                       (uintptr_t)a % TMA_GLOBAL_ALIGN ? a : b, TMA_GLOBAL_ALIGN);
    if (m > 0 && n > 0 && c == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "C = NULL with M x N = %d x %d: pass C's device address", m, n);
    if ((uintptr_t)c % out_bytes(out) != 0)
        return kd_fail(diag, TMA_ERR_ARG, "C = %p is not aligned to its %zu-byte elements", c, out_bytes(out));
    return TMA_OK;
}

/* The tensor maps of a plan: A and B for the loads, and C for the TMA-store epilogue where TMA can describe C
 * (row pitch and address multiples of 16 bytes), else the epilogue stores from registers. */
static tma_status gm_make_maps(tma_gemm_plan *p, const void *a, const void *b, tma_diag *diag) {
    const size_t eb = out_bytes(p->out);
    p->epilogue = ((size_t)p->n * eb % TMA_GLOBAL_ALIGN == 0 && (uintptr_t)p->c % TMA_GLOBAL_ALIGN == 0)
                      ? TMA_GEMM_EPILOGUE_TMA_STORE
                      : TMA_GEMM_EPILOGUE_DIRECT;
    tma_tiled_desc da = tma_desc_2d(TMA_DTYPE_BF16, (void *)a, (uint64_t)p->m, (uint64_t)p->k, (uint64_t)p->k * 2u,
                                    BM, BK, TMA_SWIZZLE_128B);
    tma_tiled_desc db = tma_desc_2d(TMA_DTYPE_BF16, (void *)b, (uint64_t)p->n, (uint64_t)p->k, (uint64_t)p->k * 2u,
                                    BN, BK, TMA_SWIZZLE_128B);
    tma_tiled_desc dbh = db;
    dbh.box_dim[1] = BN / 2;
    da.l2_promotion = db.l2_promotion = dbh.l2_promotion = TMA_L2_256B;
    tma_status st = tma_tensor_make(&p->a, &da, diag);
    if (st == TMA_OK)
        st = tma_tensor_make(&p->b, &db, diag);
    if (st == TMA_OK)
        st = tma_tensor_make(&p->b_half, &dbh, diag);
    if (st == TMA_OK && p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE) {
        tma_tiled_desc dc = tma_desc_2d(p->out == TMA_GEMM_OUT_F32 ? TMA_DTYPE_F32 : TMA_DTYPE_BF16, p->c,
                                        (uint64_t)p->m, (uint64_t)p->n, (uint64_t)p->n * eb, EPI_ROWS,
                                        (uint32_t)(EPI_ROW_BYTES / eb), EPI_SWIZZLE);
        st = tma_tensor_make(&p->c_map, &dc, diag);
    }
    return st;
}

extern "C" tma_status tma_gemm_plan_make(tma_gemm_plan *p, const void *a, const void *b, void *c, tma_gemm_out out,
                                         int m, int n, int k, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass the address of a tma_gemm_plan");
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
    if (m == 0 || n == 0 || k == 0)
        return kd_ok(diag); /* nothing to multiply; run() writes zeros when K == 0 */
    if ((st = kd_require_sm90(diag, "tma_gemm", &p->sms)) != TMA_OK || (st = gm_make_maps(p, a, b, diag)) != TMA_OK)
        return st;
    cudaError_t e = cudaSuccess;
#define GM_SET_SMEM_(CL, EPI_TMA, T)                                                                \
    if (e == cudaSuccess)                                                                                 \
        e = cudaFuncSetAttribute(gm_kernel<CL, EPI_TMA, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                 (int)SMEM_BYTES);
    GM_INSTANCES(GM_SET_SMEM_)
#undef GM_SET_SMEM_
    if ((st = kd_cuda(diag, e, "cudaFuncSetAttribute")) != TMA_OK)
        return st;
    /* Clusters of two sharing B where each block has more than one tile. Measured on an H200 (docs/GEMM.md,
     * interleaved timing): within 1% at 4096^3, 4000^3 and 8192^3, +29-36% at 8192 x 8192 x 1000; 5-6%
     * slower at 2048^3, where each block has one tile. */
    const long tiles_m = (m + (long)BM - 1) / (long)BM, tiles_n = (n + (long)BN - 1) / (long)BN;
    p->cluster = tiles_m >= 2 && tiles_m * tiles_n > p->sms ? 2 : 1;
    return kd_ok(diag);
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
        if (cudaOccupancyMaxActiveClusters(&active, gm_kernel<2, true, __nv_bfloat16>, cfg) == cudaSuccess &&
            active > 0)
            clusters = active;
        else
            (void)cudaGetLastError(); /* the query's own error: the estimate p->sms / 2 stands */
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
    return p ? launch_config(p, &cfg, attr) : 0;
}

/* The fields a caller may change, checked before a launch. */
static tma_status gm_check_plan(const tma_gemm_plan *p, tma_diag *diag) {
    if (p->cluster != 1 && p->cluster != 2)
        return kd_fail(diag, TMA_ERR_ARG, "plan.cluster = %d: use 1 (no clusters) or 2 (pairs sharing B)",
                       p->cluster);
    if (p->epilogue != TMA_GEMM_EPILOGUE_TMA_STORE && p->epilogue != TMA_GEMM_EPILOGUE_DIRECT)
        return kd_fail(diag, TMA_ERR_ARG, "plan.epilogue = %d: use TMA_GEMM_EPILOGUE_TMA_STORE or _DIRECT",
                       (int)p->epilogue);
    if (p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && p->c_map.box.tx_bytes == 0)
        return kd_fail(diag, TMA_ERR_ARG, "plan.epilogue = TMA_GEMM_EPILOGUE_TMA_STORE, but TMA cannot describe C "
                       "(N = %d times the element size, or C's address, is not a multiple of 16 bytes): use "
                       "TMA_GEMM_EPILOGUE_DIRECT", p->n);
    if (p->a.box.tx_bytes == 0)
        return kd_fail(diag, TMA_ERR_ARG, "the plan was not made by tma_gemm_plan_make");
    return TMA_OK;
}

extern "C" tma_status tma_gemm_run(const tma_gemm_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_gemm_plan_make");
    if (p->m == 0 || p->n == 0)
        return kd_ok(diag);
    if (p->k == 0)
        return kd_cuda(diag, cudaMemsetAsync(p->c, 0, (size_t)p->m * (size_t)p->n * out_bytes(p->out),
                                             (cudaStream_t)stream), "cudaMemsetAsync of C (K = 0)");
    tma_status st = gm_check_plan(p, diag);
    if (st != TMA_OK)
        return st;
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    launch_config(p, &cfg, attr);
    cfg.stream = (cudaStream_t)stream;
    const uint32_t group = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    const uint32_t no_store = p->diag_no_store ? 1u : 0u;
    const tma_tensor *tb = p->cluster == 2 ? &p->b_half : &p->b;
    const bool f32 = p->out == TMA_GEMM_OUT_F32, tma_epi = p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE;
    cudaError_t e = cudaErrorInvalidValue; /* not kept: the instances cover every case */
#define GM_LAUNCH_(CL, EPI_TMA, T)                                                                  \
    if (p->cluster == CL && tma_epi == EPI_TMA && f32 == (sizeof(T) == 4))                                \
        e = cudaLaunchKernelEx(&cfg, gm_kernel<CL, EPI_TMA, T>, p->a, *tb, p->c_map, (T *)p->c, p->m, p->n, \
                               p->k, group, no_store);
    GM_INSTANCES(GM_LAUNCH_)
#undef GM_LAUNCH_
    st = kd_cuda(diag, e, "tma_gemm kernel launch (cudaLaunchKernelEx)");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_gemm(const void *a, const void *b, void *c, tma_gemm_out out, int m, int n, int k,
                               tma_stream stream, tma_diag *diag) {
    tma_gemm_plan p;
    tma_status st = tma_gemm_plan_make(&p, a, b, c, out, m, n, k, diag);
    return st == TMA_OK ? tma_gemm_run(&p, stream, diag) : st;
}
