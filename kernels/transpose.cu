/* tma::kernels transpose (tma/kernels.h): TMA loads of 128B-swizzled boxes, conflict-free 16-byte shared
 * reads and writes through the lane map of transpose_tiles.h, TMA stores; a persistent grid.
 * The same tile pipeline runs on the CPU model in transpose_model.c. */
#include <stdio.h>
#include <string.h>

#include "kernel_diag.h"
#include "transpose_regs.cuh"
#include "transpose_tiles.h"

#include "tma/device.cuh"
#include "tma/kernels.h"

/* ------------------------------------------------------------------------------------------------
 * The kernel. E: element bytes (4, 2). BR: input box rows. S: input stages. NB: output buffers.
 *
 * A tile is one input box: W = 128 / E columns (one 128-byte swizzle line per row) x BR rows, loaded by
 * TMA with 128B swizzle; it transposes into BR / W output boxes of W x W, stored by TMA. Persistent grid:
 * block g takes tiles g, g + G, g + 2G, ... (G = gridDim.x), tile t at column band t % tiles_x and row
 * band t / tiles_x (or in bands of `group` tile columns: tr_tile_xy), so the blocks in flight read
 * neighbouring 128-byte segments of the same input rows.
 * One thread per V x V block (blockDim = 64 * BR / W): V 16-byte reads, a register transpose, V 16-byte
 * writes, all conflict-free by the lane map in transpose_tiles.h. Thread 0 is the producer: it keeps S loads
 * in flight and issues the stores.
 * Ragged edges: a load past the tensor fills zeros, a store clips rows at the element and dimension 0 at
 * the 16-byte chunk (the pitch padding absorbs it), so no thread branches on the matrix size.
 * ---------------------------------------------------------------------------------------------- */
template <int E, int BR, int S, int NB, bool WIDE>
__global__ void __launch_bounds__(64 * BR / (128 / E)) tr_tma_kernel(const __grid_constant__ tma_tensor tin,
                                                                     const __grid_constant__ tma_tensor tout,
                                                                     uint32_t tiles_x, uint32_t tiles_y, uint32_t group,
                                                                     uint32_t rows) {
    constexpr uint32_t V = 16 / E;      /* elements per 16-byte chunk */
    constexpr uint32_t W = 128 / E;     /* tile width = sub-tile side, elements */
    constexpr uint32_t SUB = BR / W;    /* output boxes per tile */
    constexpr uint32_t TILE = BR * 128; /* bytes of one box in shared memory */
    static_assert(BR % W == 0 && BR <= 256, "BR: a multiple of 128 / E, at most 256 (TMA box limit)");
    constexpr tma_swizzle SW = TMA_SWIZZLE_128B;

    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t full[S];
    /* 1024-byte aligned: every tile starts the swizzle pattern at phase 0, which the lane map's
     * conflict-freedom assumes (the addresses themselves come from the helper either way). */
    uint8_t *base = dyn + ((1024u - tma_smem_addr(dyn) % 1024u) % 1024u);
    uint8_t *in_buf = base, *out_buf = base + S * TILE;
    const uint32_t tid = threadIdx.x, G = gridDim.x, ntiles = tiles_x * tiles_y;

    if (tid == 0) {
        tma_prefetch_desc(&tin);
        tma_prefetch_desc(&tout);
        for (int s = 0; s < S; s++)
            tma_mbar_init(&full[s], 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (tid == 0)
        for (uint32_t s = 0; s < (uint32_t)S; s++) {
            uint32_t t = blockIdx.x + s * G;
            if (t < ntiles) {
                uint32_t tx, ty;
                tr_tile_xy(t, tiles_x, tiles_y, group, &tx, &ty);
                tma_mbar_expect_box(&full[s], &tin);
                tma_load_2d(in_buf + s * TILE, &tin, &full[s], (int32_t)(tx * W), (int32_t)(ty * BR));
            }
        }

    /* This thread's block: sub-tile q, rows k*V.., chunk c (transpose_tiles.h, THE LANE MAP). */
    const uint32_t q = tid / 64u;
    uint32_t k, c;
    tr_lane_block(tid % 64u, &k, &c);

    for (uint32_t it = 0;; it++) {
        const uint32_t t = blockIdx.x + it * G;
        if (t >= ntiles)
            break;
        const uint32_t s = it % S;
        uint8_t *in = in_buf + s * TILE, *out = out_buf + (it % NB) * TILE;
        tma_mbar_wait(&full[s], (it / S) & 1u);

        const uint32_t in_a = tma_smem_addr(in), out_a = tma_smem_addr(out) + (WIDE ? 0u : q * W * 128u);
        uint4 a[V], o[V];
#pragma unroll
        for (uint32_t i = 0; i < V; i++)
            a[i] = *(const uint4 *)__cvta_shared_to_generic(tma_swizzle_elem(SW, in_a, 128, E, q * W + k * V + i, c * V));
        tr_regs<E>::run(a, o);
#pragma unroll
        for (uint32_t j = 0; j < V; j++) {
            /* WIDE: one unswizzled W x BR output box, rows BR * E bytes (a multiple of 128), so chunk
             * q * 8 + k of any row sits in bank group k: conflict-free too, and one store per tile. */
            const uint32_t addr = WIDE ? tma_swizzle_elem(TMA_SWIZZLE_NONE, out_a, BR * E, E, c * V + j, q * W + k * V)
                                       : tma_swizzle_elem(SW, out_a, 128, E, c * V + j, k * V);
            *(uint4 *)__cvta_shared_to_generic(addr) = o[j];
        }

        tma_fence_proxy_async(); /* this thread's shared writes -> visible to the store's (async proxy) reads */
        if (tid == 0)
            /* Stores issued so far are done reading their buffers: with NB buffers, the next iteration's
             * buffer was last read by the store of iteration it + 1 - NB, and at most NB - 2 newer groups
             * may still be reading. */
            tma_store_wait_read<NB - 2>();
        __syncthreads(); /* all of stage s read, all of `out` written */
        if (tid == 0) {
            uint32_t tx, ty;
            tr_tile_xy(t, tiles_x, tiles_y, group, &tx, &ty);
            if (WIDE) {
                tma_store_2d(&tout, out, (int32_t)(ty * BR), (int32_t)(tx * W));
            } else {
#pragma unroll
                for (uint32_t sq = 0; sq < SUB; sq++) {
                    uint32_t ocol = ty * BR + sq * W; /* output column = input row */
                    if (ocol < rows)                  /* a box wholly past the end is skipped, not issued */
                        tma_store_2d(&tout, out + sq * W * 128u, (int32_t)ocol, (int32_t)(tx * W));
                }
            }
            tma_store_commit();
            const uint32_t tn = blockIdx.x + (it + S) * G; /* refill stage s */
            if (tn < ntiles) {
                uint32_t nx, ny;
                tr_tile_xy(tn, tiles_x, tiles_y, group, &nx, &ny);
                tma_mbar_expect_box(&full[s], &tin);
                tma_load_2d(in, &tin, &full[s], (int32_t)(nx * W), (int32_t)(ny * BR));
            }
        }
    }
    if (tid == 0)
        tma_store_wait<0>(); /* shared memory must outlive the stores' reads; writes complete before exit */
}

/* ------------------------------------------------------------------------------------------------
 * Host side: plan, tune, run
 * ---------------------------------------------------------------------------------------------- */
struct tr_config {
    const void *fn;
    uint32_t box_rows, stages, nbuf;
};

template <int E, int BR, int S, int NB, bool WIDE = false>
static tr_config tr_cfg(void) {
    return tr_config{(const void *)tr_tma_kernel<E, BR, S, NB, WIDE>, BR, S, NB};
}

/* Pipeline depth of the 128-row kinds: input stages and output buffers (at least 2; with NB buffers a store
 * may still be reading NB - 2 of them while the next tile is written). Compile-time knobs for experiments
 * (-DTR_STAGES=3 -DTR_OUT_BUFFERS=3). Measured on an H200, one session, the WIDE kind at 16384^2 (fp32 / bf16
 * % of memcpy): 4+2 90.1 / 90.1, 3+3 88.6 / 89.8, 4+3 90.5 / 91.2, 2+2 88.8 / 91.2, 6+2 88.4 / 89.2 (run-to-run
 * spread about 1 point). 4+3 = 112 KiB: one block per SM. */
#ifndef TR_STAGES
#define TR_STAGES 4
#endif
#ifndef TR_OUT_BUFFERS
#define TR_OUT_BUFFERS 3
#endif

/* fp32 BR=128: (TR_STAGES + TR_OUT_BUFFERS) x 16 KiB; BR=64: (4 + 3) x 8 KiB, four blocks per SM. bf16 boxes
 * have the same bytes per row (128), so the same shared footprints. */
static tr_config tr_config_of(tma_transpose_kind kind, uint32_t e) {
    if (kind == TMA_TRANSPOSE_SWIZZLED)
        return e == 4 ? tr_cfg<4, 128, TR_STAGES, TR_OUT_BUFFERS>() : tr_cfg<2, 128, TR_STAGES, TR_OUT_BUFFERS>();
    if (kind == TMA_TRANSPOSE_WIDE)
        return e == 4 ? tr_cfg<4, 128, TR_STAGES, TR_OUT_BUFFERS, true>()
                      : tr_cfg<2, 128, TR_STAGES, TR_OUT_BUFFERS, true>();
    return e == 4 ? tr_cfg<4, 64, 4, 3>() : tr_cfg<2, 64, 4, 3>();
}

/* Defaults, from the tune sweeps on an H200 (docs/TRANSPOSE.md): 256-byte L2 promotion won at 16384^2 in both
 * types; bands of 4 to 16 tile columns beat row-major order by 1-3 points there and by up to 8 on the ragged
 * fp32 matrix. */
#define TR_DEFAULT_GROUP 8u
#define TR_DEFAULT_L2 TMA_L2_256B

/* Prefix diag's message (when there is one) with which map it is about. */
static tma_status tr_which_map(tma_status st, const char *which, tma_diag *diag) {
    if (st != TMA_OK && diag) {
        char m[sizeof diag->message];
        snprintf(m, sizeof m, "%s map: %s", which, diag->message);
        memcpy(diag->message, m, sizeof m);
    }
    return st;
}

static tma_status tr_encode(tma_transpose_plan *p, tma_l2_promotion l2, tma_diag *diag) {
    const uint32_t w = tr_box_cols(p->elem_bytes);
    const tma_dtype dt = p->elem_bytes == 4 ? TMA_DTYPE_F32 : TMA_DTYPE_BF16;
    tma_tiled_desc din = tma_desc_2d(dt, (void *)p->in, p->rows, p->cols, p->in_pitch, p->box_rows, w,
                                     TMA_SWIZZLE_128B);
    tma_tiled_desc dout = p->kind == TMA_TRANSPOSE_WIDE
                              ? tma_desc_2d(dt, p->out, p->cols, p->rows, p->out_pitch, w, p->box_rows, TMA_SWIZZLE_NONE)
                              : tma_desc_2d(dt, p->out, p->cols, p->rows, p->out_pitch, w, w, TMA_SWIZZLE_128B);
    din.l2_promotion = dout.l2_promotion = l2;
    tma_status st = tr_which_map(tma_tensor_make(&p->in_map, &din, diag), "input", diag);
    if (st == TMA_OK)
        st = tr_which_map(tma_tensor_make(&p->out_map, &dout, diag), "output", diag);
    if (st == TMA_OK)
        p->l2 = l2;
    return st;
}

extern "C" tma_status tma_transpose_plan_tune(tma_transpose_plan *p, uint32_t group, tma_l2_promotion l2,
                                              tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_transpose_plan_make");
    if ((unsigned)l2 > (unsigned)TMA_L2_256B)
        return kd_fail(diag, TMA_ERR_ARG, "l2 = %d is not an L2 promotion: use TMA_L2_NONE .. TMA_L2_256B", (int)l2);
    p->group = group ? group : p->tiles_x;
    return tr_encode(p, l2, diag);
}

/* The argument rules of tma_transpose_plan_make, each with its message. */
static tma_status tr_check_args(tma_transpose_kind kind, uint32_t e, const void *in, const void *out, uint32_t rows,
                                uint32_t cols, size_t in_pitch, size_t out_pitch, tma_diag *diag) {
    if ((unsigned)kind >= (unsigned)TMA_TRANSPOSE_KIND_COUNT_)
        return kd_fail(diag, TMA_ERR_ARG, "kind = %d is not a tma_transpose_kind: use TMA_TRANSPOSE_SWIZZLED (0), "
                       "_SWIZZLED_64 (1) or _WIDE (2)", (int)kind);
    if (e != 2 && e != 4)
        return kd_fail(diag, TMA_ERR_ARG, "elem_bytes = %u: the transpose moves 2- or 4-byte elements", e);
    if (in == NULL || out == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "%s = NULL: pass device addresses of the input and the output",
                       in == NULL ? "in" : "out");
    if (rows == 0 || cols == 0)
        return kd_fail(diag, TMA_ERR_ARG, "rows = %u, cols = %u: both must be at least 1", rows, cols);
    const char *const pitch_fix = "use a pitch of at least the row, rounded up to a multiple of 16 bytes";
    if (in_pitch < (size_t)cols * e)
        return kd_fail(diag, TMA_ERR_ARG, "in_pitch = %zu bytes does not hold an input row of %zu bytes: %s",
                       in_pitch, (size_t)cols * e, pitch_fix);
    if (out_pitch < (size_t)rows * e)
        return kd_fail(diag, TMA_ERR_ARG, "out_pitch = %zu bytes does not hold an output row of %zu bytes: %s",
                       out_pitch, (size_t)rows * e, pitch_fix);
    return TMA_OK; /* pitch and address alignment: the tensor maps' own rules (tr_encode) */
}

extern "C" tma_status tma_transpose_plan_make(tma_transpose_plan *p, tma_transpose_kind kind, uint32_t elem_bytes,
                                              const void *in, void *out, uint32_t rows, uint32_t cols,
                                              size_t in_pitch, size_t out_pitch, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass the address of a tma_transpose_plan");
    memset(p, 0, sizeof *p);
    tma_status st = tr_check_args(kind, elem_bytes, in, out, rows, cols, in_pitch, out_pitch, diag);
    int sms = 0;
    if (st == TMA_OK)
        st = kd_require_sm90(diag, "tma_transpose", &sms);
    if (st != TMA_OK)
        return st;
    const tr_config cfg = tr_config_of(kind, elem_bytes);
    const uint32_t w = tr_box_cols(elem_bytes);
    p->kind = kind, p->elem_bytes = elem_bytes, p->rows = rows, p->cols = cols;
    p->in = in, p->out = out, p->in_pitch = in_pitch, p->out_pitch = out_pitch;
    p->box_rows = cfg.box_rows;
    p->tiles_x = (cols + w - 1) / w, p->tiles_y = (rows + cfg.box_rows - 1) / cfg.box_rows;
    p->group = TR_DEFAULT_GROUP;
    if ((st = tr_encode(p, TR_DEFAULT_L2, diag)) != TMA_OK)
        return st;
    /* The kernel addresses shared memory with compile-time constants; the maps' box facts must agree. */
    const uint32_t out_pitch_smem = kind == TMA_TRANSPOSE_WIDE ? cfg.box_rows * elem_bytes : 128u;
    if (p->in_map.box.swizzle != TMA_SWIZZLE_128B || p->in_map.box.row_pitch != 128u ||
        p->out_map.box.row_pitch != out_pitch_smem || p->in_map.box.smem_bytes != cfg.box_rows * 128u ||
        p->out_map.box.smem_bytes != (kind == TMA_TRANSPOSE_WIDE ? cfg.box_rows * 128u : w * 128u))
        return kd_fail(diag, TMA_ERR_UNSUPPORTED, "tma_transpose: the tensor maps disagree with the kernel's "
                                                  "shared-memory layout (a libtma defect: please report it)");
    p->smem = (size_t)(cfg.stages + cfg.nbuf) * cfg.box_rows * 128u + 1024u; /* + alignment slack */
    p->block = 64u * cfg.box_rows / w;
    int per_sm = 0;
    if ((st = kd_cuda(diag, cudaFuncSetAttribute(cfg.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p->smem),
                      "cudaFuncSetAttribute")) != TMA_OK ||
        (st = kd_cuda(diag, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cfg.fn, (int)p->block, p->smem),
                      "cudaOccupancyMaxActiveBlocksPerMultiprocessor")) != TMA_OK)
        return st;
    if (per_sm < 1)
        return kd_fail(diag, TMA_ERR_CUDA, "tma_transpose: the kernel does not fit on a multiprocessor");
    const uint64_t ntiles = (uint64_t)p->tiles_x * p->tiles_y, g = (uint64_t)sms * (uint64_t)per_sm;
    p->grid = (uint32_t)(ntiles < g ? ntiles : g);
    return kd_ok(diag);
}

template <int E>
static void tr_launch(const tma_transpose_plan *p, cudaStream_t st) {
    const uint32_t g = p->group;
    if (p->kind == TMA_TRANSPOSE_SWIZZLED)
        tr_tma_kernel<E, 128, TR_STAGES, TR_OUT_BUFFERS, false>
            <<<p->grid, p->block, p->smem, st>>>(p->in_map, p->out_map, p->tiles_x, p->tiles_y, g, p->rows);
    else if (p->kind == TMA_TRANSPOSE_WIDE)
        tr_tma_kernel<E, 128, TR_STAGES, TR_OUT_BUFFERS, true>
            <<<p->grid, p->block, p->smem, st>>>(p->in_map, p->out_map, p->tiles_x, p->tiles_y, g, p->rows);
    else
        tr_tma_kernel<E, 64, 4, 3, false>
            <<<p->grid, p->block, p->smem, st>>>(p->in_map, p->out_map, p->tiles_x, p->tiles_y, g, p->rows);
}

extern "C" tma_status tma_transpose_run(const tma_transpose_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_transpose_plan_make");
    if (p->grid == 0 || p->group == 0 || (p->elem_bytes != 2 && p->elem_bytes != 4) ||
        (unsigned)p->kind >= (unsigned)TMA_TRANSPOSE_KIND_COUNT_)
        return kd_fail(diag, TMA_ERR_ARG, "tma_transpose_run: the plan was not made by tma_transpose_plan_make, or "
                                          "its fields were changed (use tma_transpose_plan_tune)");
    if (p->elem_bytes == 4)
        tr_launch<4>(p, (cudaStream_t)stream);
    else
        tr_launch<2>(p, (cudaStream_t)stream);
    tma_status st = kd_cuda(diag, cudaGetLastError(), "tma_transpose kernel launch (or an earlier unchecked call)");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_transpose(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols,
                                    size_t in_pitch, size_t out_pitch, tma_stream stream, tma_diag *diag) {
    tma_transpose_plan p;
    tma_status st = tma_transpose_plan_make(&p, TMA_TRANSPOSE_SWIZZLED, elem_bytes, in, out, rows, cols, in_pitch,
                                            out_pitch, diag);
    return st == TMA_OK ? tma_transpose_run(&p, stream, diag) : st;
}
