/* tma-conv(1)
 *
 * NAME
 *     tma-conv - libtma's implicit-GEMM convolution (tma_conv2d, tma/kernels.h), checked and timed against an
 *     explicit im2col + cuBLAS
 *
 * SYNOPSIS
 *     tma-conv [REPS]
 *     tma-conv --list
 *
 * DESCRIPTION
 *     y = conv2d(x, w): x N x H x W x C, w K x R x S x C, y N x P x Q x K, bf16, fp32 accumulation.
 *     1. Correctness, fresh random data for every shape, y poisoned (NaN) before every run: small shapes against a
 *        double-precision CPU direct convolution; every shape against the explicit im2col (a simple kernel writing
 *        the (N P Q) x (R S C) matrix) + cuBLAS GEMM (cublasGemmEx, bf16 in, fp32 compute, bf16 out). Every element:
 *        |libtma - ref| <= 1e-2 |ref| + 1e-2, NaN never passes.
 *     2. Table (ResNet-50's layers at batch 32, 128 and 1: the 3x3s, a stride-2 3x3, the 1x1s and their stride-2
 *        projections, the 7x7 stem with its 3 channels and padded to 8): TFLOP/s = 2 (N P Q) K (R S C)
 *        over the median of REPS (>= 20) event-timed launches, all timed in interleaved rounds after warm-up
 *        (common/bench.h):
 *          libtma          tma_conv2d as tma_conv2d_plan_make sets it up
 *          tiles           the same tile width with whole tiles (no stream-K or split-K)
 *          im2col+cuBLAS   the explicit im2col kernel then the cuBLAS GEMM: what a convolution costs without
 *                          implicit im2col
 *          cuBLAS GEMM     the cuBLAS GEMM alone on the already expanded matrix (the ceiling an implicit GEMM aims
 *                          at: the same GEMM with nothing to gather)
 *     --list prints the table's rows (name, then N H W C K R S and the strides, paddings and dilations, tab-separated)
 *     for torch_conv.py, which times PyTorch's F.conv2d (cuDNN) on the same rows.
 *     Without a Hopper GPU it checks the kernel's tile pipeline on libtma's CPU model of the copy engine
 *     (tma_conv2d_model) against the fp64 direct convolution on small shapes, and exits.
 *     TMA_CONV_SEED replays the data; TMA_CONV_ONLY=LIST runs the table rows whose name contains LIST or one of its
 *     comma-separated strings (e.g. "b32 28x28x128" or "stem,7x7x512");
 *     TMA_CONV_SWEEP also times every tile (128 pixels by 64, 128 and 256 filters, 192 x 128, and the halo tile
 *     where the row has one) with each schedule (whole tiles, stream-K, split-K where it applies) of each row
 *     (docs/lab/conv.md); TMA_CONV_PLAN=BMxBN,SCHED (BM 128, 192 or halo; SCHED tiles, stream-k or split-k; e.g.
 *     "128x256,split-k" or "halox64,tiles") replaces the default plan's tiles by these in every layer (a diagnostic:
 *     the libtma column is then that plan).
 *
 * BUILD AND RUN
 *     cmake -B build && cmake --build build -j && ./build/samples/tma-conv
 *
 * EXIT STATUS
 *     0 when every check passed, 1 otherwise.
 *
 * SEE ALSO
 *     samples/conv/ (tma-conv-example: the kernel's API on small data, no timing), docs/guide/conv.md,
 *     docs/lab/conv.md (this benchmark's results)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/bench.h"
#include "../common/cublas_check.h"
#include "../../common/cuda_check.h"
#include "../../common/host.h"
#include "../common/device_data.h"
#include "im2col.h"

/* ------------------------------------------------------------------------------------------------
 * Host data and the fp64 reference
 * ---------------------------------------------------------------------------------------------- */
static uint16_t random_bf16(uint64_t *state) { /* uniform in [-1, 1), as bf16 (exact: 8 bits of mantissa) */
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    const float f = (float)(int)((*state >> 40) & 0xFFu) / 128.f - 1.f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static long out_rows(const tma_conv2d_shape *sh) {
    int p, q;
    tma_conv2d_out_size(sh, &p, &q);
    return (long)sh->n * p * q;
}

/* The fp64 direct convolution of host x, w: ref[(n P + p) Q + q][k]. */
static double *direct_conv(const tma_conv2d_shape *sh, const uint16_t *x, const uint16_t *w) {
    int P, Q;
    tma_conv2d_out_size(sh, &P, &Q);
    double *ref = host_alloc(sizeof(double) * (size_t)out_rows(sh) * sh->k);
    for (int n = 0; n < sh->n; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < sh->k; k++) {
                    double acc = 0;
                    for (int r = 0; r < sh->r; r++)
                        for (int s = 0; s < sh->s; s++) {
                            const int h = p * sh->stride_h - sh->pad_h + r * sh->dilation_h;
                            const int ww = q * sh->stride_w - sh->pad_w + s * sh->dilation_w;
                            if (h < 0 || h >= sh->h || ww < 0 || ww >= sh->w)
                                continue;
                            const uint16_t *xp = x + (((size_t)n * sh->h + h) * sh->w + ww) * sh->c;
                            const uint16_t *wp = w + (((size_t)k * sh->r + r) * sh->s + s) * sh->c;
                            for (int c = 0; c < sh->c; c++)
                                acc += bf16_to_double(xp[c]) * bf16_to_double(wp[c]);
                        }
                    ref[(((size_t)n * P + p) * Q + q) * sh->k + k] = acc;
                }
    return ref;
}

/* Every element of y (bf16) against the fp64 reference: bad unless finite and within 1e-2 |ref| + 1e-2. */
static long count_bad(const uint16_t *y, const double *ref, size_t n, double *max_err) {
    long bad = 0;
    *max_err = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs(bf16_to_double(y[i]) - ref[i]);
        if (!(d <= 1e-2 * fabs(ref[i]) + 1e-2)) /* NaN fails */
            bad++;
        if (d > *max_err || d != d)
            *max_err = d;
    }
    return bad;
}

static void print_shape(const tma_conv2d_shape *sh) {
    printf("N %d H %d W %d C %d K %d R %d S %d stride %d,%d pad %d,%d dil %d,%d", sh->n, sh->h, sh->w, sh->c, sh->k,
           sh->r, sh->s, sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w, sh->dilation_h, sh->dilation_w);
}

/* Small and ragged shapes, checked against the fp64 direct convolution. */
static const tma_conv2d_shape small_shapes[] = {
    {2, 7, 9, 24, 40, 3, 3, 1, 1, 1, 1, 1, 1},     /* channels and filters below one block */
    {1, 10, 13, 72, 136, 5, 3, 2, 1, 2, 1, 1, 2},   /* stride 2 x 1, dilation 1 x 2, a partial channel block */
    {3, 5, 6, 8, 8, 1, 1, 1, 1, 0, 0, 1, 1},        /* 1x1, C = K = 8 */
    {2, 9, 11, 16, 13, 3, 3, 1, 1, 1, 1, 1, 1},     /* K * 2 not a multiple of 16: the direct epilogue */
    {1, 12, 12, 200, 300, 3, 3, 3, 3, 2, 2, 2, 2},  /* stride 3, dilation 2, 4 channel blocks, K > 256 */
    {4, 8, 8, 64, 64, 3, 3, 1, 1, 0, 0, 1, 1},      /* no padding */
    {1, 6, 5, 32, 96, 3, 3, 1, 1, -1, 2, 1, 1},     /* negative padding (cropping) in h */
    {2, 30, 30, 3, 64, 7, 7, 2, 2, 3, 3, 1, 1},     /* 3 channels: packed, the taps of a filter row side by side */
    {1, 9, 11, 100, 24, 3, 3, 1, 1, 1, 1, 1, 1},    /* 100 channels: packed, padded to 104 */
};
enum { NSMALL = sizeof small_shapes / sizeof small_shapes[0] };

/* Without a GPU: the kernel's tile pipeline on the CPU model, against the fp64 reference. */
static int check_model(uint64_t seed) {
    int failures = 0;
    for (int i = 0; i < NSMALL; i++) {
        const tma_conv2d_shape *sh = &small_shapes[i];
        const size_t nx = (size_t)sh->n * sh->h * sh->w * sh->c, nw = (size_t)sh->k * sh->r * sh->s * sh->c;
        const size_t ny = (size_t)out_rows(sh) * sh->k;
        uint16_t *x = aligned_alloc(1024, (nx * 2 + 1023) / 1024 * 1024);
        uint16_t *w = aligned_alloc(1024, (nw * 2 + 1023) / 1024 * 1024);
        uint16_t *y = host_alloc(ny * 2);
        if (!x || !w) {
            fprintf(stderr, "out of host memory\n");
            exit(1);
        }
        uint64_t st = seed + (uint64_t)i;
        for (size_t j = 0; j < nx; j++)
            x[j] = random_bf16(&st);
        for (size_t j = 0; j < nw; j++)
            w[j] = random_bf16(&st);
        memset(y, 0xFF, ny * 2); /* poison: NaN */
        tma_diag d;
        const tma_status s = tma_conv2d_model(sh, x, w, y, &d);
        double *ref = direct_conv(sh, x, w), err = 0;
        const long bad = s == TMA_OK ? count_bad(y, ref, ny, &err) : (long)ny;
        printf("model ");
        print_shape(sh);
        if (s != TMA_OK)
            printf(": %s: %s FAIL\n", tma_status_name(s), d.message);
        else
            printf(": vs fp64 direct max |diff| %.3e, %ld bad of %zu %s\n", err, bad, ny, bad ? "FAIL" : "ok");
        failures += bad != 0;
        free(ref), free(x), free(w), free(y);
    }
    return failures;
}

/* ------------------------------------------------------------------------------------------------
 * One convolution on the GPU: buffers, the libtma plan, the baseline
 * ---------------------------------------------------------------------------------------------- */
typedef struct problem {
    cublasHandle_t h;
    tma_conv2d_shape sh;
    int p, q;
    long m, kg;       /* GEMM rows (N P Q) and depth (R S C) */
    long kgp;         /* the baseline's depth: R S C rounded up to 8 (explicit_im2col_cols) */
    void *x, *w, *y;  /* libtma */
    void *wp;         /* the baseline's filters: w, or w's rows padded to kgp (C not a multiple of 8) */
    void *a, *yref;   /* the explicit im2col matrix and the baseline's y */
    size_t y_bytes;
    tma_conv2d_plan plan, other; /* the default, and the same width with whole tiles */
} problem;

/* A tile as the table names it: pixels x filters, or "halo" x filters (TMA_CONV2D_HALO). */
static const char *tile_name(int block_m, int block_n, char *buf, size_t size) {
    if (block_m == TMA_CONV2D_HALO)
        snprintf(buf, size, "halox%d", block_n);
    else
        snprintf(buf, size, "%dx%d", block_m, block_n);
    return buf;
}

/* TMA_CONV_PLAN=BMxBN,SCHED: the plan's tiles and schedule replaced (a diagnostic; exits on a refusal). BM: 128, 192
 * or halo. */
static void plan_override(tma_conv2d_plan *p) {
    const char *env = getenv("TMA_CONV_PLAN");
    if (!env)
        return;
    int bm = 0, bn = 0;
    char sched[16] = "";
    if (sscanf(env, "halox%d,%15s", &bn, sched) == 2)
        bm = TMA_CONV2D_HALO;
    else if (sscanf(env, "%dx%d,%15s", &bm, &bn, sched) != 3) {
        fprintf(stderr, "TMA_CONV_PLAN=%s: expected BMxBN,SCHED (e.g. 128x256,split-k or halox64,tiles)\n", env);
        exit(1);
    }
    const tma_conv2d_schedule s = !strcmp(sched, "tiles")      ? TMA_CONV2D_SCHEDULE_TILES
                                  : !strcmp(sched, "stream-k") ? TMA_CONV2D_SCHEDULE_STREAM_K
                                  : !strcmp(sched, "split-k")  ? TMA_CONV2D_SCHEDULE_SPLIT_K
                                                               : TMA_CONV2D_SCHEDULE_AUTO;
    tma_diag d;
    if (s == TMA_CONV2D_SCHEDULE_AUTO || tma_conv2d_plan_tiles(p, bm, bn, s, &d) != TMA_OK) {
        fprintf(stderr, "TMA_CONV_PLAN=%s: %s\n", env,
                s == TMA_CONV2D_SCHEDULE_AUTO ? "SCHED is tiles, stream-k or split-k" : d.message);
        exit(1);
    }
}

static void problem_open(problem *g, cublasHandle_t h, const tma_conv2d_shape *sh, uint64_t seed) {
    memset(g, 0, sizeof *g);
    g->h = h;
    g->sh = *sh;
    tma_conv2d_out_size(sh, &g->p, &g->q);
    g->m = out_rows(sh);
    g->kg = (long)sh->r * sh->s * sh->c;
    g->kgp = explicit_im2col_cols(sh);
    const size_t nx = (size_t)sh->n * sh->h * sh->w * sh->c, nw = (size_t)sh->k * g->kg;
    g->y_bytes = (size_t)g->m * sh->k * 2;
    CUDA_CHECK(cudaMalloc(&g->x, nx * 2));
    CUDA_CHECK(cudaMalloc(&g->w, nw * 2));
    CUDA_CHECK(cudaMalloc(&g->y, g->y_bytes));
    CUDA_CHECK(cudaMalloc(&g->yref, g->y_bytes));
    CUDA_CHECK(cudaMalloc(&g->a, (size_t)g->m * g->kgp * 2));
    CUDA_CHECK(fill_random_bf16(g->x, nx, seed * 0x9E3779B97F4A7C15ull + 0x1000u, 0));
    CUDA_CHECK(fill_random_bf16(g->w, nw, seed * 0x9E3779B97F4A7C15ull + 0x2000u, 0));
    g->wp = g->w;
    if (g->kgp != g->kg) { /* the baseline's filters padded as its im2col rows are, once */
        CUDA_CHECK(cudaMalloc(&g->wp, (size_t)sh->k * g->kgp * 2));
        CUDA_CHECK(cudaMemset(g->wp, 0, (size_t)sh->k * g->kgp * 2));
        CUDA_CHECK(cudaMemcpy2D(g->wp, (size_t)g->kgp * 2, g->w, (size_t)g->kg * 2, (size_t)g->kg * 2, (size_t)sh->k,
                                cudaMemcpyDeviceToDevice));
    }
    tma_diag d;
    if (tma_conv2d_plan_make(&g->plan, sh, g->x, g->w, g->y, &d) != TMA_OK) {
        fprintf(stderr, "tma_conv2d_plan_make: %s: %s\n", tma_status_name(d.status), d.message);
        exit(1);
    }
    plan_override(&g->plan);
    g->other = g->plan;
    g->other.workspace = NULL; /* its own (none): the default's stays the default's */
    if (tma_conv2d_plan_tiles(&g->other, g->plan.block_m, g->plan.block_n, TMA_CONV2D_SCHEDULE_TILES, &d) != TMA_OK) {
        fprintf(stderr, "tma_conv2d_plan_tiles: %s\n", d.message);
        exit(1);
    }
}

static const char *schedule_name(const tma_conv2d_plan *p) {
    return p->schedule == TMA_CONV2D_SCHEDULE_STREAM_K  ? "stream-K"
           : p->schedule == TMA_CONV2D_SCHEDULE_SPLIT_K ? "split-K"
                                                        : "tiles";
}

static void problem_close(problem *g) {
    tma_diag d;
    if (tma_conv2d_plan_free(&g->plan, &d) != TMA_OK) {
        fprintf(stderr, "tma_conv2d_plan_free: %s\n", d.message);
        exit(1);
    }
    CUDA_CHECK(cudaFree(g->x));
    CUDA_CHECK(cudaFree(g->w));
    CUDA_CHECK(cudaFree(g->y));
    CUDA_CHECK(cudaFree(g->yref));
    CUDA_CHECK(cudaFree(g->a));
    if (g->wp != g->w)
        CUDA_CHECK(cudaFree(g->wp));
}

static void run_plan(const tma_conv2d_plan *p) {
    tma_diag d;
    if (tma_conv2d_run(p, NULL, &d) != TMA_OK) {
        fprintf(stderr, "tma_conv2d_run: %s: %s\n", tma_status_name(d.status), d.message);
        exit(1);
    }
}

/* y = a * w^T: row-major (M x KGP) times (K x KGP)^T, i.e. column-major y^T (K x M) = w^T' * a. */
static void cublas_gemm(const problem *g, void *y) {
    const float one = 1.f, zero = 0.f;
    CB(cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->sh.k, (int)g->m, (int)g->kgp, &one, g->wp, CUDA_R_16BF,
                    (int)g->kgp, g->a, CUDA_R_16BF, (int)g->kgp, &zero, y, CUDA_R_16BF, g->sh.k, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT));
}

static void run_im2col(const problem *g) { CUDA_CHECK(explicit_im2col(g->x, g->a, &g->sh, g->p, g->q, 0)); }

enum { T_LIBTMA, T_TILES, T_IM2COL_CUBLAS, T_CUBLAS, NTIMED };

static void launch(void *ctx, int which) {
    const problem *g = ctx;
    switch (which) {
    case T_LIBTMA: run_plan(&g->plan); break;
    case T_TILES: run_plan(&g->other); break;
    case T_IM2COL_CUBLAS: run_im2col(g), cublas_gemm(g, g->yref); break;
    default: cublas_gemm(g, g->yref); break;
    }
}

/* libtma (its plan, and the same width with whole tiles) against the baseline, every element; small shapes also
 * against fp64.
 * @return 1 when every check passed */
static int check_problem(problem *g, int fp64) {
    CUDA_CHECK(cudaMemset(g->yref, 0xFF, g->y_bytes));
    CUDA_CHECK(cudaMemset(g->a, 0xFF, (size_t)g->m * g->kgp * 2));
    run_im2col(g);
    cublas_gemm(g, g->yref);
    int ok = 1;
    for (int v = 0; v < 2; v++) {
        CUDA_CHECK(cudaMemset(g->y, 0xFF, g->y_bytes)); /* poison: all-ones bf16 is NaN */
        run_plan(v ? &g->other : &g->plan);
        CUDA_CHECK(cudaDeviceSynchronize());
        compare_result cr;
        CUDA_CHECK(compare_bf16(g->y, g->yref, (size_t)g->m * g->sh.k, 1e-2f, 1e-2f, &cr));
        const tma_conv2d_plan *pv = v ? &g->other : &g->plan;
        char name[16];
        printf("  tile %s, %s: vs im2col + cuBLAS: %llu bad, max |diff| %.3e %s\n",
               tile_name(pv->block_m, pv->block_n, name, sizeof name), schedule_name(pv), cr.bad, cr.max_abs_diff,
               cr.bad ? "FAIL" : "ok");
        ok = ok && cr.bad == 0;
    }
    if (fp64) {
        const size_t nx = (size_t)g->sh.n * g->sh.h * g->sh.w * g->sh.c, nw = (size_t)g->sh.k * g->kg;
        const size_t ny = (size_t)g->m * g->sh.k;
        uint16_t *x = host_alloc(nx * 2), *w = host_alloc(nw * 2), *y = host_alloc(ny * 2), *yr = host_alloc(ny * 2);
        CUDA_CHECK(cudaMemcpy(x, g->x, nx * 2, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(w, g->w, nw * 2, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(y, g->y, ny * 2, cudaMemcpyDeviceToHost)); /* the last run: whole tiles */
        CUDA_CHECK(cudaMemcpy(yr, g->yref, ny * 2, cudaMemcpyDeviceToHost));
        double *ref = direct_conv(&g->sh, x, w), err, err_ref;
        const long bad = count_bad(y, ref, ny, &err), bad_ref = count_bad(yr, ref, ny, &err_ref);
        printf("  vs fp64 direct: libtma %ld bad, max |diff| %.3e %s (im2col + cuBLAS: %ld bad, %.3e)\n", bad, err,
               bad ? "FAIL" : "ok", bad_ref, err_ref);
        ok = ok && bad == 0;
        free(ref), free(x), free(w), free(y), free(yr);
    }
    return ok;
}

/* ------------------------------------------------------------------------------------------------
 * The table
 * ---------------------------------------------------------------------------------------------- */
typedef struct layer {
    const char *name;
    tma_conv2d_shape sh;
} layer;

/* ResNet-50's convolutions at batch 32 and 128 (and 1): the 3x3s (stride 1, pad 1, K = C), the stride-2 3x3 of its stage 2
 * (56x56x128 -> 28x28x128), the bottlenecks' 1x1s (reduce and expand, stride 1) and the stride-2 1x1 projections,
 * and the 7x7 stride-2 stem on 224 x 224 images, with its 3 channels (x and w packed first, the taps of a filter row
 * side by side: kernels/conv_tiles.h) and with them padded to 8 by the caller (read as they are). Names: "bN HxWxC"
 * for the 3x3s; "bN 1x1 HxW C->K" and "bN 1x1 s2 ..." for the 1x1s; "bN stem 224x224 C->64 7x7 s2". */
#define ONE_BY_ONE(b, hw, c, k) {"b" #b " 1x1 " #hw "x" #hw " " #c "->" #k, {b, hw, hw, c, k, 1, 1, 1, 1, 0, 0, 1, 1}}
#define PROJECTION(b, hw, c, k)                                                                                     \
    {"b" #b " 1x1 s2 " #hw "x" #hw " " #c "->" #k, {b, hw, hw, c, k, 1, 1, 2, 2, 0, 0, 1, 1}}
#define RESNET50_1X1(b)                                                                                              \
    ONE_BY_ONE(b, 56, 64, 64), ONE_BY_ONE(b, 56, 64, 256), ONE_BY_ONE(b, 56, 256, 64), ONE_BY_ONE(b, 56, 256, 128),  \
    ONE_BY_ONE(b, 28, 128, 512), ONE_BY_ONE(b, 28, 512, 128), ONE_BY_ONE(b, 14, 256, 1024),                        \
    ONE_BY_ONE(b, 14, 1024, 256), ONE_BY_ONE(b, 7, 512, 2048), ONE_BY_ONE(b, 7, 2048, 512),                        \
    PROJECTION(b, 56, 256, 512), PROJECTION(b, 28, 512, 1024), PROJECTION(b, 14, 1024, 2048)
#define THREE_BY_THREE(b, hw, c) {"b" #b " " #hw "x" #hw "x" #c, {b, hw, hw, c, c, 3, 3, 1, 1, 1, 1, 1, 1}}
#define RESNET50_3X3(b)                                                                                              \
    THREE_BY_THREE(b, 56, 64), THREE_BY_THREE(b, 28, 128), THREE_BY_THREE(b, 14, 256), THREE_BY_THREE(b, 7, 512),    \
    {"b" #b " 56x56x128 s2", {b, 56, 56, 128, 128, 3, 3, 2, 2, 1, 1, 1, 1}}
#define STEM(b, c) {"b" #b " stem 224x224 " #c "->64 7x7 s2", {b, 224, 224, c, 64, 7, 7, 2, 2, 3, 3, 1, 1}}
static const layer layers[] = {
    RESNET50_3X3(32),
    RESNET50_3X3(128),
    RESNET50_1X1(32),
    RESNET50_1X1(128),
    RESNET50_3X3(1),
    RESNET50_1X1(1),
    STEM(1, 8), STEM(32, 8), STEM(128, 8), STEM(1, 3), STEM(32, 3), STEM(128, 3),
};
enum { NLAYERS = sizeof layers / sizeof layers[0] };

/* TMA_CONV_SWEEP (diagnostic): the default plan with each tile and schedule, checked, then timed in interleaved
 * rounds. */
enum { SWEEP_MAX = 24 };
typedef struct sweep_ctx {
    tma_conv2d_plan plans[SWEEP_MAX];
    int n;
} sweep_ctx;

static void launch_sweep(void *ctx, int which) { run_plan(&((sweep_ctx *)ctx)->plans[which]); }

static void sweep_tiles(problem *g, int reps) {
    static const tma_conv2d_schedule schedules[] = {TMA_CONV2D_SCHEDULE_TILES, TMA_CONV2D_SCHEDULE_STREAM_K,
                                                    TMA_CONV2D_SCHEDULE_SPLIT_K};
    sweep_ctx sc;
    sc.n = 0;
    tma_diag d;
    static const int tiles[][2] = {{128, 64}, {128, 128}, {128, 256}, {192, 128}, {TMA_CONV2D_HALO, 64}};
    char name[16];
    for (int t = 0; t < 5; t++)
        for (int i = 0; i < 3 && sc.n < SWEEP_MAX; i++) {
            const int bm = tiles[t][0], bn = tiles[t][1];
            tma_conv2d_plan *p = &sc.plans[sc.n];
            *p = g->plan;
            p->workspace = NULL;
            p->cluster = 1;
            p->epilogue = bm == TMA_CONV2D_HALO ? TMA_GEMM_EPILOGUE_TMA_STORE : p->epilogue;
            const tma_status st = tma_conv2d_plan_tiles(p, bm, bn, schedules[i], &d);
            if (st == TMA_ERR_ARG && (schedules[i] == TMA_CONV2D_SCHEDULE_SPLIT_K || bm == TMA_CONV2D_HALO))
                continue; /* split-K does not apply to this tile (too many tiles, or 64 wide); the halo tile runs
                             whole tiles, on shapes that have one */
            if (st != TMA_OK) {
                fprintf(stderr, "tma_conv2d_plan_tiles %s %d: %s\n", tile_name(bm, bn, name, sizeof name),
                        (int)schedules[i], d.message);
                exit(1);
            }
            sc.n++;
            CUDA_CHECK(cudaMemset(g->y, 0xFF, g->y_bytes));
            run_plan(p);
            CUDA_CHECK(cudaDeviceSynchronize());
            compare_result cr;
            CUDA_CHECK(compare_bf16(g->y, g->yref, (size_t)g->m * g->sh.k, 1e-2f, 1e-2f, &cr));
            if (cr.bad) {
                printf("  sweep tile %s %s: %llu bad FAIL\n", tile_name(bm, bn, name, sizeof name), schedule_name(p),
                       cr.bad);
                exit(1);
            }
        }
    float ms[SWEEP_MAX];
    bench_interleaved(launch_sweep, &sc, sc.n, reps, ms);
    printf("  sweep:");
    for (int i = 0; i < sc.n; i++) {
        printf(" %s %s %.1f us (%.0f TF/s)%s", tile_name(sc.plans[i].block_m, sc.plans[i].block_n, name, sizeof name),
               schedule_name(&sc.plans[i]), ms[i] * 1e3,
               2.0 * (double)g->m * g->sh.k * (double)g->kg * 1e-9 / ms[i], i + 1 < sc.n ? "," : "\n");
        sc.plans[i].packed = NULL; /* the default plan's packed inputs, shared by its copies: problem_close frees them */
        if (tma_conv2d_plan_free(&sc.plans[i], &d) != TMA_OK) { /* the copy's own stream-K workspace */
            fprintf(stderr, "tma_conv2d_plan_free (sweep): %s\n", d.message);
            exit(1);
        }
    }
}

typedef struct row {
    const char *name;
    double ms[NTIMED];
    double gflop;
    int cluster, block_m, block_n;
    const char *schedule;
} row;

static void print_table(const char *gpu, int reps, const row *rs, int n, int failures) {
    printf("\n%s (TFLOP/s = 2 (N P Q) K (R S C) / median of %d launches each, CUDA events, all four of a row timed in "
           "interleaved rounds after >= %.0f ms of warm-up rounds; libtma = tma_conv2d's default plan (clusters = its "
           "choice, tile = output pixels x output channels per tile, sched = how its blocks share the tiles); tiles = the same "
           "tile with whole tiles (no stream-K or split-K); im2col+cuBLAS = the explicit "
           "im2col kernel then cublasGemmEx; cuBLAS GEMM = cublasGemmEx alone on the expanded matrix)\n",
           gpu, reps, BENCH_WARMUP_MS);
    printf("%-30s %6s %3s %7s %8s %9s %9s %9s %9s %9s %9s %10s %10s\n", "layer", "GFLOP", "cl", "tile", "sched",
           "libtma us", "libtma TF", "tiles TF", "i2c+cB TF", "cuBLAS TF", "cuBLAS us", "% cuBLAS", "x i2c+cB");
    for (int i = 0; i < n; i++) {
        const row *r = &rs[i];
        /* GFLOP / ms = TFLOP/s */
        char tile[16];
        tile_name(r->block_m, r->block_n, tile, sizeof tile);
        printf("%-30s %6.2f %3d %7s %8s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f%% %9.2fx\n", r->name, r->gflop,
               r->cluster, tile, r->schedule, r->ms[0] * 1e3, r->gflop / r->ms[0], r->gflop / r->ms[1],
               r->gflop / r->ms[2], r->gflop / r->ms[3], r->ms[3] * 1e3, 100.0 * r->ms[3] / r->ms[0],
               r->ms[2] / r->ms[0]);
    }
    printf("%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
}

/* TMA_CONV_ONLY: rows whose name contains `only` or one of its comma-separated strings. */
static int selected(const char *name, const char *only) {
    if (only == NULL)
        return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", only);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (*tok && strstr(name, tok))
            return 1;
    return 0;
}

/* --list: the table's rows for torch_conv.py, one a line: name, then N H W C K R S stride_h stride_w pad_h pad_w
 * dilation_h dilation_w, tab-separated. */
static void list_layers(void) {
    for (int i = 0; i < NLAYERS; i++) {
        const tma_conv2d_shape *sh = &layers[i].sh;
        printf("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", layers[i].name, sh->n, sh->h, sh->w,
               sh->c, sh->k, sh->r, sh->s, sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w, sh->dilation_h,
               sh->dilation_w);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--list")) {
        list_layers();
        return 0;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    reps = reps < 20 ? 20 : reps;
    const char *seed_env = getenv("TMA_CONV_SEED");
    const uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    printf("data seed %llu (replay with TMA_CONV_SEED=%llu)\n", (unsigned long long)seed, (unsigned long long)seed);
    int ndev = 0;
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
        printf("no Hopper (sm_90) GPU here (%s): checking the kernel's tile pipeline on the CPU model instead\n",
               e != cudaSuccess ? cudaGetErrorString(e) : ndev == 0 ? "no device" : "device is not sm_90");
        const int failures = check_model(seed);
        printf("%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
        return failures ? 1 : 0;
    }
    printf("GPU: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    cublasHandle_t h;
    CB(cublasCreate(&h));
    int failures = 0;
    const char *only = getenv("TMA_CONV_ONLY");
    if (!only)
        for (int i = 0; i < NSMALL; i++) {
            problem g;
            problem_open(&g, h, &small_shapes[i], seed + 1000u + (uint64_t)i);
            print_shape(&small_shapes[i]);
            char name[16];
            printf(" (tile %s):\n", tile_name(g.plan.block_m, g.plan.block_n, name, sizeof name));
            failures += !check_problem(&g, 1);
            problem_close(&g);
        }
    row rows[NLAYERS];
    int nrows = 0;
    for (int i = 0; i < NLAYERS; i++) {
        if (!selected(layers[i].name, only))
            continue;
        problem g;
        problem_open(&g, h, &layers[i].sh, seed + (uint64_t)i * 7919u);
        printf("%s: ", layers[i].name);
        print_shape(&layers[i].sh);
        printf("\n");
        const int ok = check_problem(&g, 0);
        failures += !ok;
        if (ok) {
            row *r = &rows[nrows++];
            float ms[NTIMED];
            bench_interleaved(launch, &g, NTIMED, reps, ms);
            r->name = layers[i].name;
            for (int t = 0; t < NTIMED; t++)
                r->ms[t] = ms[t];
            r->gflop = 2.0 * (double)g.m * g.sh.k * (double)g.kg * 1e-9;
            r->cluster = g.plan.cluster;
            r->block_m = g.plan.block_m;
            r->block_n = g.plan.block_n;
            r->schedule = schedule_name(&g.plan);
            if (getenv("TMA_CONV_SWEEP"))
                sweep_tiles(&g, reps);
        }
        problem_close(&g);
    }
    CB(cublasDestroy(h));
    print_table(prop.name, reps, rows, nrows, failures);
    return failures ? 1 : 0;
}
