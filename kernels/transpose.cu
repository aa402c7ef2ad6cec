/* Transpose kernels (see transpose.h): three classic shared-memory baselines and the libtma kernel. */
#include "transpose.h"

#include <stdio.h>
#include <string.h>

#include "tma/device.cuh"

/* ------------------------------------------------------------------------------------------------
 * Baselines: one 32 x 32 tile per block of 32 x 8 threads. T is a same-size bit container.
 * MODE 0: tile[32][32]; the column read tile[tx][j] has a 32-element (128-byte for fp32) stride, so
 *         all 32 lanes of a warp hit the same bank: 32-way conflict (fp32).
 * MODE 1: tile[32][33]; the odd pitch spreads a column over all banks.
 * MODE 2: tile[r][c ^ r]; the XOR permutes each row so a column touches every bank once.
 * ---------------------------------------------------------------------------------------------- */
template <typename T, int MODE>
__global__ void __launch_bounds__(256) tr_smem_kernel(const T *__restrict__ in, T *__restrict__ out, uint32_t rows,
                                                     uint32_t cols, size_t ip, size_t op) {
    __shared__ T tile[32][MODE == 1 ? 33 : 32];
    const uint32_t tx = threadIdx.x, x = blockIdx.x * 32u + tx, y0 = blockIdx.y * 32u;
    for (uint32_t j = threadIdx.y; j < 32u; j += 8u) {
        uint32_t y = y0 + j;
        if (x < cols && y < rows)
            tile[j][MODE == 2 ? (tx ^ j) : tx] = in[(size_t)y * ip + x];
    }
    __syncthreads();
    const uint32_t ox = y0 + tx; /* output column = input row */
    for (uint32_t j = threadIdx.y; j < 32u; j += 8u) {
        uint32_t oy = blockIdx.x * 32u + j; /* output row = input column */
        if (ox < rows && oy < cols)
            out[(size_t)oy * op + ox] = tile[tx][MODE == 2 ? (j ^ tx) : j];
    }
}

/* ------------------------------------------------------------------------------------------------
 * libtma kernel. E: element bytes (4, 2). BR: input box rows. S: input stages. NB: output buffers.
 *
 * A tile is one input box: W = 128 / E columns (one 128-byte swizzle line per row) x BR rows, loaded by
 * TMA with 128B swizzle; it transposes into BR / W output boxes of W x W, stored by TMA. Persistent grid:
 * block g takes tiles g, g + G, g + 2G, ... (G = gridDim.x), tile t at column band t % tiles_x and row
 * band t / tiles_x (or in bands of `group` tile columns: tr_tile_xy), so the blocks in flight read
 * neighbouring 128-byte segments of the same input rows.
 * One thread per V x V block (blockDim = 64 * BR / W): V 16-byte reads, a register transpose, V 16-byte
 * writes, all conflict-free by the lane map in transpose.h. Thread 0 is the producer: it keeps S loads
 * in flight and issues the stores.
 * Ragged edges: a load past the tensor fills zeros, a store clips rows at the element and dimension 0 at
 * the 16-byte chunk (the pitch padding absorbs it), so no thread branches on the matrix size.
 * ---------------------------------------------------------------------------------------------- */
/* fp32: a 4 x 4 transpose is a renaming of 16 registers. */
static __device__ __forceinline__ void tr_transpose_regs(const uint4 (&a)[4], uint4 (&o)[4]) {
    o[0] = make_uint4(a[0].x, a[1].x, a[2].x, a[3].x);
    o[1] = make_uint4(a[0].y, a[1].y, a[2].y, a[3].y);
    o[2] = make_uint4(a[0].z, a[1].z, a[2].z, a[3].z);
    o[3] = make_uint4(a[0].w, a[1].w, a[2].w, a[3].w);
}

static __device__ __forceinline__ uint32_t tr_word(const uint4 &a, int w) {
    return w == 0 ? a.x : w == 1 ? a.y : w == 2 ? a.z : a.w;
}

/* 16-bit: an 8 x 8 transpose; output j word w = element j of rows 2w (low half) and 2w+1 (high half).
 * __byte_perm selector 0x5410 takes both low halves, 0x7632 both high halves (one PRMT each). */
static __device__ __forceinline__ void tr_transpose_regs(const uint4 (&a)[8], uint4 (&o)[8]) {
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
        uint32_t w[4];
#pragma unroll
        for (int q = 0; q < 4; q++)
            w[q] = __byte_perm(tr_word(a[2 * q], j >> 1), tr_word(a[2 * q + 1], j >> 1), sel);
        o[j] = make_uint4(w[0], w[1], w[2], w[3]);
    }
}

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

    /* This thread's block: sub-tile q, rows k*V.., chunk c (transpose.h, THE LANE MAP). */
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
        tr_transpose_regs(a, o);
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
 * Launchers
 * ---------------------------------------------------------------------------------------------- */
extern "C" const char *tr_variant_name(tr_variant v) {
    switch (v) {
    case TR_NAIVE: return "naive";
    case TR_PADDED: return "padded";
    case TR_SWIZZLED: return "xor-swizzled";
    case TR_TMA: return "libtma";
    case TR_TMA_B64: return "libtma-b64";
    case TR_TMA_WIDE: return "libtma-wide";
    default: return "?";
    }
}

struct tr_tma_cfg {
    const void *fn;
    uint32_t box_rows, stages, nbuf;
};

template <int E, int BR, int S, int NB, bool WIDE = false>
static tr_tma_cfg tr_cfg(void) {
    return tr_tma_cfg{(const void *)tr_tma_kernel<E, BR, S, NB, WIDE>, BR, S, NB};
}

/* Pipeline depth of the 128-row variants: input stages and output buffers (at least 2; with NB buffers a
 * store may still be reading NB - 2 of them while the next tile is written). Compile-time knobs for
 * experiments (-DTR_STAGES=3 -DTR_OUT_BUFFERS=3). Measured on an H200, one session, libtma-wide at 16384^2
 * (fp32 / bf16 % of memcpy): 4+2 90.1 / 90.1, 3+3 88.6 / 89.8, 4+3 90.5 / 91.2, 2+2 88.8 / 91.2,
 * 6+2 88.4 / 89.2 (run-to-run spread about 1 point). 4+3 = 112 KiB: one block per SM. */
#ifndef TR_STAGES
#define TR_STAGES 4
#endif
#ifndef TR_OUT_BUFFERS
#define TR_OUT_BUFFERS 3
#endif

static tr_tma_cfg tr_tma_config(tr_variant v, uint32_t e) {
    /* fp32 BR=128: (TR_STAGES + TR_OUT_BUFFERS) x 16 KiB; BR=64: (4 + 3) x 8 KiB, four blocks per SM.
     * bf16 boxes have the same bytes per row (128), so the same shared footprints. */
    if (v == TR_TMA)
        return e == 4 ? tr_cfg<4, 128, TR_STAGES, TR_OUT_BUFFERS>() : tr_cfg<2, 128, TR_STAGES, TR_OUT_BUFFERS>();
    if (v == TR_TMA_WIDE)
        return e == 4 ? tr_cfg<4, 128, TR_STAGES, TR_OUT_BUFFERS, true>()
                      : tr_cfg<2, 128, TR_STAGES, TR_OUT_BUFFERS, true>();
    return e == 4 ? tr_cfg<4, 64, 4, 3>() : tr_cfg<2, 64, 4, 3>();
}

static cudaError_t tr_fail(char *err, size_t errlen, cudaError_t e, const char *fmt, const char *what) {
    if (err)
        snprintf(err, errlen, fmt, what);
    return e;
}

/* Defaults, from the --tune sweeps on an H200 (docs/TRANSPOSE.md): 256-byte L2 promotion won at 16384^2 in
 * both types; bands of 4 to 16 tile columns beat row-major order by 1-3 points there and by up to 8 on
 * the ragged fp32 matrix. */
#define TR_DEFAULT_GROUP 8u
#define TR_DEFAULT_L2 TMA_L2_256B

static cudaError_t tr_encode(tr_plan *p, tma_l2_promotion l2, char *err, size_t errlen) {
    const uint32_t w = tr_box_cols(p->elem_bytes);
    const tma_dtype dt = p->elem_bytes == 4 ? TMA_DTYPE_F32 : TMA_DTYPE_BF16;
    tma_tiled_desc din = tma_desc_2d(dt, (void *)p->in, p->rows, p->cols, p->in_pitch, p->box_rows, w, TMA_SWIZZLE_128B);
    tma_tiled_desc dout = p->variant == TR_TMA_WIDE
                              ? tma_desc_2d(dt, p->out, p->cols, p->rows, p->out_pitch, w, p->box_rows, TMA_SWIZZLE_NONE)
                              : tma_desc_2d(dt, p->out, p->cols, p->rows, p->out_pitch, w, w, TMA_SWIZZLE_128B);
    din.l2_promotion = dout.l2_promotion = l2;
    tma_diag diag;
    if (tma_tensor_make(&p->tin, &din, &diag) != TMA_OK)
        return tr_fail(err, errlen, cudaErrorInvalidValue, "input tensor map: %s", diag.message);
    if (tma_tensor_make(&p->tout, &dout, &diag) != TMA_OK)
        return tr_fail(err, errlen, cudaErrorInvalidValue, "output tensor map: %s", diag.message);
    p->l2 = l2;
    return cudaSuccess;
}

extern "C" cudaError_t tr_plan_tune(tr_plan *p, uint32_t group, tma_l2_promotion l2, char *err, size_t errlen) {
    if (p->variant < TR_TMA)
        return tr_fail(err, errlen, cudaErrorInvalidValue, "%s", "tr_plan_tune: TMA variants only");
    p->group = group;
    return tr_encode(p, l2, err, errlen);
}

extern "C" cudaError_t tr_plan_make(tr_plan *p, tr_variant v, uint32_t elem_bytes, const void *in, void *out,
                                    uint32_t rows, uint32_t cols, size_t in_pitch, size_t out_pitch, char *err,
                                    size_t errlen) {
    memset(p, 0, sizeof *p);
    if ((elem_bytes != 4 && elem_bytes != 2) || (int)v >= (int)TR_VARIANT_COUNT || rows == 0 || cols == 0 ||
        in_pitch % 16 || out_pitch % 16 || in_pitch < (size_t)cols * elem_bytes || out_pitch < (size_t)rows * elem_bytes)
        return tr_fail(err, errlen, cudaErrorInvalidValue, "%s", "tr_plan_make: bad arguments");
    p->variant = v, p->elem_bytes = elem_bytes, p->rows = rows, p->cols = cols;
    p->in_pitch = in_pitch, p->out_pitch = out_pitch, p->in = in, p->out = out;
    if (v < TR_TMA) {
        p->grid = dim3((cols + 31) / 32, (rows + 31) / 32), p->block = dim3(32, 8);
        if (p->grid.y > 65535)
            return tr_fail(err, errlen, cudaErrorInvalidValue, "%s", "tr_plan_make: more than 65535 x 32 rows");
        return cudaSuccess;
    }
    const tr_tma_cfg cfg = tr_tma_config(v, elem_bytes);
    const uint32_t w = tr_box_cols(elem_bytes);
    p->box_rows = cfg.box_rows;
    cudaError_t e = tr_encode(p, TR_DEFAULT_L2, err, errlen);
    if (e != cudaSuccess)
        return e;
    p->group = TR_DEFAULT_GROUP;
    /* The kernel addresses shared memory with these constants; the maps must agree. */
    const uint32_t out_pitch_smem = v == TR_TMA_WIDE ? cfg.box_rows * elem_bytes : 128u;
    if (p->tin.box.swizzle != TMA_SWIZZLE_128B || p->tin.box.row_pitch != 128 || p->tout.box.row_pitch != out_pitch_smem ||
        p->tin.box.smem_bytes != cfg.box_rows * 128u ||
        p->tout.box.smem_bytes != (v == TR_TMA_WIDE ? cfg.box_rows * 128u : w * 128u))
        return tr_fail(err, errlen, cudaErrorInvalidValue, "%s", "tensor maps disagree with the kernel's layout");
    p->tiles_x = (cols + w - 1) / w, p->tiles_y = (rows + cfg.box_rows - 1) / cfg.box_rows;
    p->smem = (size_t)(cfg.stages + cfg.nbuf) * cfg.box_rows * 128u + 1024u; /* + alignment slack */
    p->block = dim3(64u * cfg.box_rows / w);
    e = cudaFuncSetAttribute(cfg.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p->smem);
    if (e != cudaSuccess)
        return tr_fail(err, errlen, e, "cudaFuncSetAttribute: %s", cudaGetErrorString(e));
    int dev = 0, sms = 0, per_sm = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cfg.fn, (int)p->block.x, p->smem)) != cudaSuccess)
        return tr_fail(err, errlen, e, "occupancy query: %s", cudaGetErrorString(e));
    if (per_sm < 1)
        return tr_fail(err, errlen, cudaErrorInvalidConfiguration, "%s", "kernel does not fit on an SM");
    uint64_t ntiles = (uint64_t)p->tiles_x * p->tiles_y, g = (uint64_t)sms * (uint64_t)per_sm;
    p->grid = dim3((unsigned)(ntiles < g ? ntiles : g));
    return cudaSuccess;
}

template <typename T>
static void tr_launch_smem(const tr_plan *p, cudaStream_t st) {
    const T *in = (const T *)p->in;
    T *out = (T *)p->out;
    size_t ip = p->in_pitch / sizeof(T), op = p->out_pitch / sizeof(T);
    switch (p->variant) {
    case TR_NAIVE: tr_smem_kernel<T, 0><<<p->grid, p->block, 0, st>>>(in, out, p->rows, p->cols, ip, op); break;
    case TR_PADDED: tr_smem_kernel<T, 1><<<p->grid, p->block, 0, st>>>(in, out, p->rows, p->cols, ip, op); break;
    default: tr_smem_kernel<T, 2><<<p->grid, p->block, 0, st>>>(in, out, p->rows, p->cols, ip, op); break;
    }
}

template <int E>
static void tr_launch_tma(const tr_plan *p, cudaStream_t st) {
    const uint32_t g = p->group ? p->group : p->tiles_x;
    if (p->variant == TR_TMA)
        tr_tma_kernel<E, 128, TR_STAGES, TR_OUT_BUFFERS, false>
            <<<p->grid, p->block, p->smem, st>>>(p->tin, p->tout, p->tiles_x, p->tiles_y, g, p->rows);
    else if (p->variant == TR_TMA_WIDE)
        tr_tma_kernel<E, 128, TR_STAGES, TR_OUT_BUFFERS, true>
            <<<p->grid, p->block, p->smem, st>>>(p->tin, p->tout, p->tiles_x, p->tiles_y, g, p->rows);
    else
        tr_tma_kernel<E, 64, 4, 3, false><<<p->grid, p->block, p->smem, st>>>(p->tin, p->tout, p->tiles_x, p->tiles_y, g, p->rows);
}

extern "C" cudaError_t tr_plan_run(const tr_plan *p, cudaStream_t stream) {
    if (p->variant < TR_TMA) {
        if (p->elem_bytes == 4)
            tr_launch_smem<uint32_t>(p, stream);
        else
            tr_launch_smem<uint16_t>(p, stream);
    } else if (p->elem_bytes == 4) {
        tr_launch_tma<4>(p, stream);
    } else {
        tr_launch_tma<2>(p, stream);
    }
    return cudaGetLastError();
}
