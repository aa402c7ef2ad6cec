/* tma::kernels convolution (tma/kernels.h): y = conv2d(x, w), bf16 NHWC forward, as an implicit GEMM on the GEMM's
 * pipeline (gemm_device.cuh: gm_pipeline_kernel). Only the loads differ: ConvOps gathers each stage's A operand (128
 * output pixels x 64 channels of one filter tap) with one im2col TMA load, and its B operand (block_n filters x the
 * same 64 channels of the same tap) with one tiled load of w viewed as {C, S, R, K}; where they go is
 * conv_tiles.h, the maps are made in conv_plan.c. */
#include <string.h>

#include "conv_plan.h"
#include "gemm_device.cuh"
#include "kernel_diag.h"

/* The convolution's operands for gm_pipeline_kernel: tiles of 128 output pixels x TBN output channels. */
template <uint32_t TBN>
struct ConvOps {
    static constexpr uint32_t BN = TBN;
    tma_tensor x, w; /* w: the whole filter tile (no clusters) or the half tile (clusters of two) */
    conv_geom g;
    uint32_t k;      /* output channels */
    __device__ uint32_t rows() const { return g.m; }
    __device__ uint32_t cols() const { return k; }
    __device__ uint32_t k_blocks() const { return g.stages; }
    __device__ const tma_box_info &a_box() const { return x.box; }
    __device__ const tma_box_info &b_box() const { return w.box; }
    __device__ uint32_t tx_bytes(int cl) const { return x.box.tx_bytes + w.box.tx_bytes * (uint32_t)cl; }
    __device__ void prefetch() const {
        tma_prefetch_desc(&x);
        tma_prefetch_desc(&w);
    }
    template <int CL>
    __device__ void load(uint8_t *sa, uint8_t *sb, uint64_t *bar, uint32_t kb, uint32_t tm, uint32_t tn,
                         uint32_t rank) const {
        /* A cluster's second tile row may lie past the last pixel: load the last tile again (nothing is stored). */
        const uint32_t m0 = tm * BM < g.m ? tm * BM : (g.m - 1u) / BM * BM;
        int32_t a[5];
        conv_tile_start(&g, m0, a);
        uint32_t c0, r, s;
        conv_stage(&g, kb, &c0, &r, &s);
        uint16_t off[3];
        conv_tap_offsets(&g, r, s, off);
        a[0] = (int32_t)c0;
        tma_load_im2col<4>(sa, &x, bar, {a[0], a[1], a[2], a[3], 0}, {off[0], off[1], off[2]});
        const int32_t k0 = (int32_t)(tn * TBN + (CL == 2 ? rank * (TBN / 2u) : 0u));
        if (CL == 2)
            tma_load_multicast<4>(sb + rank * (GmShape<TBN>::B_BYTES / 2u), &w, bar,
                                  {(int32_t)c0, (int32_t)s, (int32_t)r, k0, 0}, (uint16_t)0x3);
        else
            tma_load<4>(sb, &w, bar, {(int32_t)c0, (int32_t)s, (int32_t)r, k0, 0});
    }
};

/* Every instance: tile width x cluster x epilogue (y is bf16). */
#define CONV_INSTANCES(X)                                                                                     \
    X(256, 1, true) X(256, 1, false) X(256, 2, true) X(256, 2, false) X(128, 1, true) X(128, 1, false)         \
    X(128, 2, true) X(128, 2, false) X(64, 1, true) X(64, 1, false) X(64, 2, true) X(64, 2, false)

template <uint32_t TBN, int CL, bool EPI_TMA>
static constexpr void (*conv_kernel)(ConvOps<TBN>, tma_tensor, __nv_bfloat16 *, uint32_t, uint32_t, uint32_t) =
    gm_pipeline_kernel<ConvOps<TBN>, CL, EPI_TMA, __nv_bfloat16>;
/* The split-K instance: no clusters, fp32 partial tiles stored into the workspace's slices. */
template <uint32_t TBN>
static constexpr void (*conv_split_kernel)(ConvOps<TBN>, tma_tensor, float *, uint32_t, uint32_t, uint32_t) =
    gm_pipeline_kernel<ConvOps<TBN>, 1, true, float, true>;

/* After a split run: y = the sum of the workspace's `slices` partial tiles (slice k at rows k * slice_rows ..),
 * rounded to bf16. One block per row at a time, four columns per thread where K is a multiple of 4 (a row of y is
 * then 8-byte aligned: y is 16-byte aligned when its map exists, else 2-byte). */
__global__ void conv_workspace_to_y(const float *__restrict__ ws, size_t pitch, uint32_t slices, uint32_t slice_rows,
                                    __nv_bfloat16 *__restrict__ y, uint32_t m, uint32_t k, bool vec4) {
    const size_t slice = (size_t)slice_rows * (pitch / 4u); /* floats between two slices */
    for (uint32_t row = blockIdx.x; row < m; row += gridDim.x) {
        const float *w = ws + (size_t)row * (pitch / 4u);
        __nv_bfloat16 *out = y + (size_t)row * k;
        if (vec4) {
            for (uint32_t c = threadIdx.x * 4u; c < k; c += blockDim.x * 4u) {
                float4 v = *(const float4 *)(w + c);
                for (uint32_t j = 1; j < slices; j++) {
                    const float4 t = *(const float4 *)(w + j * slice + c);
                    v.x += t.x, v.y += t.y, v.z += t.z, v.w += t.w;
                }
                __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
                uint2 packed;
                memcpy(&packed.x, &lo, 4);
                memcpy(&packed.y, &hi, 4);
                *(uint2 *)(out + c) = packed;
            }
        } else {
            for (uint32_t c = threadIdx.x; c < k; c += blockDim.x) {
                float v = w[c];
                for (uint32_t j = 1; j < slices; j++)
                    v += w[j * slice + c];
                out[c] = __float2bfloat16_rn(v);
            }
        }
    }
}

static size_t conv_smem(int block_n) {
    return block_n == 256 ? GmShape<256>::SMEM_BYTES : block_n == 128 ? GmShape<128>::SMEM_BYTES
                                                                      : GmShape<64>::SMEM_BYTES;
}

/* Allow every instance of tile width bn its dynamic shared memory. */
static cudaError_t conv_set_smem(int bn) {
    cudaError_t e = cudaSuccess;
#define CONV_SET_SMEM_(BN_, CL, EPI)                                                                      \
    if (e == cudaSuccess && BN_ == bn)                                                                    \
        e = cudaFuncSetAttribute(conv_kernel<BN_, CL, EPI>, cudaFuncAttributeMaxDynamicSharedMemorySize,  \
                                 (int)GmShape<BN_>::SMEM_BYTES);
    CONV_INSTANCES(CONV_SET_SMEM_)
#undef CONV_SET_SMEM_
    const void *split = bn == 256   ? (const void *)conv_split_kernel<256>
                        : bn == 128 ? (const void *)conv_split_kernel<128>
                                    : (const void *)conv_split_kernel<64>;
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(split, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)conv_smem(bn));
    return e;
}

static long conv_tiles_m(const tma_conv2d_plan *p) {
    return ((long)p->shape.n * p->p * p->q + (long)BM - 1) / (long)BM;
}
static long conv_tiles_n(const tma_conv2d_plan *p) { return (p->shape.k + (long)p->block_n - 1) / p->block_n; }

/* The plan's tiles, fitted to the sweep of docs/CONV.md (H200, ResNet-50's 3x3 layers at batch 32 and 128: every
 * width 64/128/256 x splits 1-8, interleaved timing). Among the widths that pad K the least (widest first):
 *  - where even the widest gives fewer tiles than a quarter of the multiprocessors (b32 7x7x512: 26), split K with
 *    that width, as many splits as keep every unit on its own multiprocessor, each at least 8 stages long: 26 us
 *    against 56 unsplit (a split costs a fixed ~7-12 us: the partial tiles written out and summed by a second launch);
 *  - otherwise no split, and the widest width whose tiles fill at least half of the multiprocessors (b32 14x14x256:
 *    128-wide, 98 tiles, 27 us against 32 for 49 tiles of 256), else the narrowest. */
static void conv_default_tiles(const tma_conv2d_plan *p, int *block_n, int *splits) {
    const long tiles_m = conv_tiles_m(p), k = p->shape.k;
    int widths[3], n = 0;
    long least = -1;
    for (int bn = 256; bn >= 64; bn /= 2) { /* the widths that pad K the least, widest first */
        const long padded = (k + bn - 1) / bn * bn;
        if (least < 0 || padded < least)
            least = padded, n = 0;
        if (padded == least)
            widths[n++] = bn;
    }
    const long widest_tiles = tiles_m * ((k + widths[0] - 1) / widths[0]);
    *block_n = widths[n - 1];
    *splits = 1;
    if (4 * widest_tiles < p->sms) {
        const long by_sms = p->sms / widest_tiles, by_stages = p->stages / 8;
        *block_n = widths[0];
        *splits = (int)(by_sms < by_stages ? by_sms : by_stages);
        *splits = *splits > 1 ? *splits : 1;
        return;
    }
    for (int i = 0; i < n; i++)
        if (2 * tiles_m * ((k + widths[i] - 1) / widths[i]) >= p->sms) {
            *block_n = widths[i];
            return;
        }
}

/* The split-K workspace of a plan: fp32 partial sums, rows padded to 16 bytes (TMA's stride rule), and its map. */
static tma_status conv_make_workspace(tma_conv2d_plan *p, tma_diag *diag) {
    /* split_k slices of whole tiles: a tile's rows past the last pixel land inside its own slice */
    const size_t rows = (size_t)p->split_k * (size_t)conv_tiles_m(p) * BM;
    p->workspace_pitch = ((size_t)p->shape.k * 4u + 15u) / 16u * 16u;
    tma_status st = kd_cuda(diag, cudaMalloc(&p->workspace, rows * p->workspace_pitch),
                            "cudaMalloc of the split-K workspace");
    if (st != TMA_OK)
        return st;
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F32, p->workspace, rows, (uint64_t)p->shape.k, p->workspace_pitch,
                                   EPI_ROWS, EPI_ROW_BYTES / 4u, EPI_SWIZZLE);
    return tma_tensor_make(&p->workspace_map, &d, diag);
}

extern "C" tma_status tma_conv2d_plan_tiles(tma_conv2d_plan *p, int block_n, int splits, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_conv2d_plan_make");
    conv_descs d;
    conv_geom g;
    int bn = block_n;
    tma_status st = conv_prepare(&p->shape, p->x, p->w, p->y, &d, &g, &bn, diag);
    if (st != TMA_OK)
        return st;
    p->stages = (int)g.stages;
    if (block_n == 0 || splits == 0) {
        int def_bn, def_splits;
        conv_default_tiles(p, &def_bn, &def_splits);
        if (block_n == 0 && def_bn != bn) {
            bn = def_bn;
            if ((st = conv_prepare(&p->shape, p->x, p->w, p->y, &d, &g, &bn, diag)) != TMA_OK)
                return st;
        }
        splits = splits == 0 ? (block_n == 0 || block_n == def_bn ? def_splits : 1) : splits;
    }
    if (splits < 0 || splits > (int)g.stages)
        return kd_fail(diag, TMA_ERR_ARG, "splits = %d: split the %u stages of a tile (filter taps x 64-channel "
                       "blocks) into 1 .. %u parts (0: the plan's choice)", splits, g.stages, g.stages);
    if ((st = tma_conv2d_plan_free(p, diag)) != TMA_OK || (st = tma_tensor_make(&p->w_map, &d.w, diag)) != TMA_OK ||
        (st = tma_tensor_make(&p->w_half, &d.w_half, diag)) != TMA_OK ||
        (st = kd_cuda(diag, conv_set_smem(bn), "cudaFuncSetAttribute")) != TMA_OK)
        return st;
    p->block_n = bn;
    p->smem = conv_smem(bn);
    p->split_k = splits;
    if (p->split_k > 1 && (st = conv_make_workspace(p, diag)) != TMA_OK) {
        tma_conv2d_plan_free(p, NULL);
        return st;
    }
    return kd_ok(diag);
}

extern "C" tma_status tma_conv2d_plan_free(tma_conv2d_plan *p, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL");
    cudaError_t e = cudaSuccess;
    if (p->workspace)
        e = cudaFree(p->workspace);
    p->workspace = NULL;
    p->workspace_pitch = 0;
    memset(&p->workspace_map, 0, sizeof p->workspace_map);
    p->split_k = 1;
    return e == cudaSuccess ? kd_ok(diag) : kd_cuda(diag, e, "cudaFree of the split-K workspace");
}

extern "C" tma_status tma_conv2d_plan_make(tma_conv2d_plan *p, const tma_conv2d_shape *shape, const void *x,
                                           const void *w, void *y, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass the address of a tma_conv2d_plan");
    memset(p, 0, sizeof *p);
    if (x == NULL || w == NULL || y == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "%s = NULL: pass device addresses of x, w and y",
                       x == NULL ? "x" : w == NULL ? "w" : "y");
    conv_descs d;
    conv_geom g;
    int bn = 0;
    tma_status st = conv_prepare(shape, x, w, y, &d, &g, &bn, diag);
    if (st != TMA_OK)
        return st;
    p->shape = *shape;
    tma_conv2d_out_size(shape, &p->p, &p->q);
    p->x = x, p->w = w, p->y = y;
    p->group_m = TMA_GEMM_GROUP_M;
    p->epilogue = d.y_tma ? TMA_GEMM_EPILOGUE_TMA_STORE : TMA_GEMM_EPILOGUE_DIRECT;
    /* No clusters: measured on an H200 (docs/CONV.md), clusters of two sharing the filter tile were 3-11% slower on
     * every ResNet-50 layer, the GEMM's rule (pairs where blocks have several tiles) notwithstanding. */
    p->cluster = 1;
    p->split_k = 1;
    if ((st = kd_require_sm90(diag, "tma_conv2d", &p->sms)) != TMA_OK ||
        (st = tma_tensor_make_im2col(&p->x_map, &d.x, diag)) != TMA_OK ||
        (d.y_tma && (st = tma_tensor_make(&p->y_map, &d.y, diag)) != TMA_OK))
        return st;
    return tma_conv2d_plan_tiles(p, 0, 0, diag);
}

/* The fields a caller may change, checked before a launch. */
static tma_status conv_check_plan(const tma_conv2d_plan *p, tma_diag *diag) {
    if (p->x_map.box.tx_bytes == 0 || (p->block_n != 256 && p->block_n != 128 && p->block_n != 64))
        return kd_fail(diag, TMA_ERR_ARG, "the plan was not made by tma_conv2d_plan_make");
    if (p->cluster != 1 && p->cluster != 2)
        return kd_fail(diag, TMA_ERR_ARG, "plan.cluster = %d: use 1 (no clusters) or 2 (pairs sharing the filters)",
                       p->cluster);
    if (p->epilogue != TMA_GEMM_EPILOGUE_TMA_STORE && p->epilogue != TMA_GEMM_EPILOGUE_DIRECT)
        return kd_fail(diag, TMA_ERR_ARG, "plan.epilogue = %d: use TMA_GEMM_EPILOGUE_TMA_STORE or _DIRECT",
                       (int)p->epilogue);
    if (p->split_k < 1 || (p->split_k > 1 && (p->workspace == NULL || p->workspace_map.box.tx_bytes == 0)))
        return kd_fail(diag, TMA_ERR_ARG, "plan.split_k = %d without its workspace: change it with "
                       "tma_conv2d_plan_tiles", p->split_k);
    if (p->split_k > 1 && p->cluster != 1)
        return kd_fail(diag, TMA_ERR_ARG, "plan.cluster = %d with split_k = %d: a split run uses no clusters",
                       p->cluster, p->split_k);
    if (p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE && p->y_map.box.tx_bytes == 0)
        return kd_fail(diag, TMA_ERR_ARG, "plan.epilogue = TMA_GEMM_EPILOGUE_TMA_STORE, but TMA cannot describe y "
                       "(K = %d times 2 bytes, or y's address, is not a multiple of 16): use TMA_GEMM_EPILOGUE_DIRECT",
                       p->shape.k);
    return TMA_OK;
}

/* The kernel arguments of a plan (the plan keeps the shape, checked when it was made; conv_geom is private). */
template <uint32_t TBN>
static ConvOps<TBN> conv_ops(const tma_conv2d_plan *p) {
    ConvOps<TBN> ops;
    ops.g = conv_geom_of(&p->shape);
    ops.x = p->x_map;
    ops.w = p->cluster == 2 ? p->w_half : p->w_map;
    ops.k = (uint32_t)p->shape.k;
    return ops;
}

/* A split run: the split kernel storing each split's partial tiles into its slice of the workspace, then y = their
 * sum. */
static tma_status conv_run_split(const tma_conv2d_plan *p, cudaStream_t stream, tma_diag *diag) {
    const uint32_t m = (uint32_t)((size_t)p->shape.n * p->p * p->q), k = (uint32_t)p->shape.k;
    tma_status st;
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    gm_launch_config(conv_tiles_m(p), conv_tiles_n(p), 1, p->sms, p->grid_blocks, p->smem, NULL, &cfg, attr,
                     p->split_k);
    cfg.stream = stream;
    const uint32_t group = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    const uint32_t splits = (uint32_t)p->split_k;
    cudaError_t e = cudaErrorInvalidValue;
    if (p->block_n == 256)
        e = cudaLaunchKernelEx(&cfg, conv_split_kernel<256>, conv_ops<256>(p), p->workspace_map, (float *)NULL, group,
                               0u, splits);
    else if (p->block_n == 128)
        e = cudaLaunchKernelEx(&cfg, conv_split_kernel<128>, conv_ops<128>(p), p->workspace_map, (float *)NULL, group,
                               0u, splits);
    else
        e = cudaLaunchKernelEx(&cfg, conv_split_kernel<64>, conv_ops<64>(p), p->workspace_map, (float *)NULL, group,
                               0u, splits);
    if ((st = kd_cuda(diag, e, "tma_conv2d split kernel launch (cudaLaunchKernelEx)")) != TMA_OK)
        return st;
    const bool vec4 = k % 4u == 0 && (uintptr_t)p->y % 8u == 0;
    const uint32_t threads = vec4 ? (k / 4u < 128u ? 32u : 128u) : 128u;
    const uint32_t blocks = m < (uint32_t)p->sms * 16u ? m : (uint32_t)p->sms * 16u;
    conv_workspace_to_y<<<blocks, threads, 0, stream>>>((const float *)p->workspace, p->workspace_pitch,
                                                        (uint32_t)p->split_k, (uint32_t)(conv_tiles_m(p) * BM),
                                                        (__nv_bfloat16 *)p->y, m, k, vec4);
    st = kd_cuda(diag, cudaGetLastError(), "conv_workspace_to_y launch");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_conv2d_run(const tma_conv2d_plan *p, tma_stream stream, tma_diag *diag) {
    if (p == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "plan = NULL: pass a plan made by tma_conv2d_plan_make");
    tma_status st = conv_check_plan(p, diag);
    if (st != TMA_OK)
        return st;
    if (p->split_k > 1)
        return conv_run_split(p, (cudaStream_t)stream, diag);
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[1];
    const void *probe = p->block_n == 256   ? (const void *)conv_kernel<256, 2, true>
                        : p->block_n == 128 ? (const void *)conv_kernel<128, 2, true>
                                            : (const void *)conv_kernel<64, 2, true>;
    gm_launch_config(conv_tiles_m(p), conv_tiles_n(p), p->cluster, p->sms, p->grid_blocks, p->smem, probe, &cfg,
                     attr);
    cfg.stream = (cudaStream_t)stream;
    const uint32_t group = p->group_m > 0 ? (uint32_t)p->group_m : TMA_GEMM_GROUP_M;
    const bool tma_epi = p->epilogue == TMA_GEMM_EPILOGUE_TMA_STORE;
    cudaError_t e = cudaErrorInvalidValue; /* not kept: the instances cover every case */
#define CONV_LAUNCH_(BN_, CL, EPI)                                                                        \
    if (p->block_n == BN_ && p->cluster == CL && tma_epi == EPI)                                          \
        e = cudaLaunchKernelEx(&cfg, conv_kernel<BN_, CL, EPI>, conv_ops<BN_>(p), p->y_map,               \
                               (__nv_bfloat16 *)p->y, group, 0u, 1u);
    CONV_INSTANCES(CONV_LAUNCH_)
#undef CONV_LAUNCH_
    st = kd_cuda(diag, e, "tma_conv2d kernel launch (cudaLaunchKernelEx)");
    return st == TMA_OK ? kd_ok(diag) : st;
}

extern "C" tma_status tma_conv2d(const tma_conv2d_shape *shape, const void *x, const void *w, void *y,
                                 tma_stream stream, tma_diag *diag) {
    tma_conv2d_plan p;
    tma_status st = tma_conv2d_plan_make(&p, shape, x, w, y, diag);
    if (st == TMA_OK)
        st = tma_conv2d_plan_tiles(&p, p.block_n, 1, diag); /* no workspace: the launch may outlive this call */
    return st == TMA_OK ? tma_conv2d_run(&p, stream, diag) : st;
}
