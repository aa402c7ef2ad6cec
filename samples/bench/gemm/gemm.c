/* tma-gemm(1)
 *
 * NAME
 *     tma-gemm - libtma's TMA + wgmma bf16 GEMM (tma_gemm, tma/kernels.h), checked and timed against cuBLAS
 *
 * SYNOPSIS
 *     tma-gemm [REPS]
 *     tma-gemm --list
 *
 * DESCRIPTION
 *     C = A * B^T, A (M x K) and B (N x K) bf16 row-major, fp32 accumulation, C bf16 or fp32.
 *     1. Correctness: small shapes against a double-precision CPU product, every shape against cuBLAS
 *        (cublasGemmEx, bf16 in, fp32 compute, C in the same type): relative Frobenius error <= 1e-2 (1e-5 for
 *        fp32 C against fp64), NaN never passes; fresh random data for every shape; outputs poisoned (NaN)
 *        before each run; every variant.
 *     2. Table: cuBLAS and libtma TFLOP/s (2*M*N*K over the median of >= 20 event-timed runs, all GEMMs of a
 *        row in interleaved rounds after warm-up, common/bench.h). The variants, in order of sophistication:
 *          direct-store  the epilogue storing from registers
 *          no-clusters   one block per 128 x 256 tile (whole tiles, no split-K), no multicast, TMA-store epilogue
 *          multicast2    clusters of two blocks sharing B through TMA multicast
 *          libtma        the default tma_gemm_plan_make picks (multicast where every block has > 1 tile,
 *                        128- or 256-wide tiles and split-K's parts: those that keep the most blocks busy)
 *          no-store      the default without the epilogue's stores: a diagnostic of the epilogue's cost
 *     --list prints the timed shapes (M N K and C's type, tab-separated) for torch_gemm.py, which times PyTorch's
 *     torch.mm on the same shapes.
 *     Without a Hopper GPU it says so and exits 0.
 *     TMA_GEMM_SEED replays the data; TMA_GEMM_ONLY="MxNxK" (or "MxNxK fp32") runs one shape, for profiling;
 *     TMA_GEMM_SWEEP times the rasterization group and grid sizes; TMA_GEMM_TRACE how times drift after an
 *     idle second.
 *
 * BUILD AND RUN
 *     cmake -B build && cmake --build build -j && ./build/samples/tma-gemm
 *
 * EXIT STATUS
 *     0 when every check passed, 1 otherwise.
 *
 * SEE ALSO
 *     samples/gemm/ (tma-gemm-example: the kernel's API on small data, no timing), docs/guide/gemm.md,
 *     docs/lab/gemm.md (this benchmark's results)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
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

/* ------------------------------------------------------------------------------------------------
 * CPU reference and error measure
 * ---------------------------------------------------------------------------------------------- */
/* Element i of a C of type out, as a double. */
static double c_elem(const void *c, size_t i, tma_gemm_out out) {
    if (out == TMA_GEMM_OUT_F32) {
        float f;
        memcpy(&f, (const uint8_t *)c + 4 * i, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, (const uint8_t *)c + 2 * i, 2);
    return bf16_to_double(h);
}

/* Relative Frobenius error of c against ref_c (same type) or, where ref is not NULL, against ref.
 * NaN anywhere in c makes it NaN. */
static double rel_frobenius(const void *c, const void *ref_c, const double *ref, size_t n, tma_gemm_out out) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double r = ref ? ref[i] : c_elem(ref_c, i, out);
        double dlt = c_elem(c, i, out) - r;
        num += dlt * dlt;
        den += r * r;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The fp64 product of the device's A and B. */
static double *cpu_product(const void *a, const void *b, int m, int n, int k) {
    uint16_t *ha = host_alloc((size_t)m * k * 2), *hb = host_alloc((size_t)n * k * 2);
    double *ref = host_alloc((size_t)m * n * sizeof(double));
    CUDA_CHECK(cudaMemcpy(ha, a, (size_t)m * k * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hb, b, (size_t)n * k * 2, cudaMemcpyDeviceToHost));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int kk = 0; kk < k; kk++)
                acc += bf16_to_double(ha[(size_t)i * k + kk]) * bf16_to_double(hb[(size_t)j * k + kk]);
            ref[(size_t)i * n + j] = acc;
        }
    free(ha), free(hb);
    return ref;
}

/* ------------------------------------------------------------------------------------------------
 * One problem: device buffers, cuBLAS, the variants
 * ---------------------------------------------------------------------------------------------- */
typedef struct problem {
    cublasHandle_t h;
    void *a, *b, *c, *cref; /* cref: cuBLAS's C */
    int m, n, k;
    tma_gemm_out out;
    size_t c_bytes;
} problem;

static void problem_open(problem *g, cublasHandle_t h, int m, int n, int k, tma_gemm_out out, uint64_t seed) {
    memset(g, 0, sizeof *g);
    g->h = h, g->m = m, g->n = n, g->k = k, g->out = out;
    g->c_bytes = (size_t)m * n * (out == TMA_GEMM_OUT_F32 ? 4u : 2u);
    CUDA_CHECK(cudaMalloc(&g->a, (size_t)m * k * 2 + 16));
    CUDA_CHECK(cudaMalloc(&g->b, (size_t)n * k * 2 + 16));
    CUDA_CHECK(cudaMalloc(&g->c, g->c_bytes));
    CUDA_CHECK(cudaMalloc(&g->cref, g->c_bytes));
    CUDA_CHECK(fill_random_bf16(g->a, (size_t)m * k, seed * 0x9E3779B97F4A7C15ull + 0x1000u, 0));
    CUDA_CHECK(fill_random_bf16(g->b, (size_t)n * k, seed * 0x9E3779B97F4A7C15ull + 0x2000u, 0));
}

static void problem_close(problem *g) {
    CUDA_CHECK(cudaFree(g->a));
    CUDA_CHECK(cudaFree(g->b));
    CUDA_CHECK(cudaFree(g->c));
    CUDA_CHECK(cudaFree(g->cref));
}

static void cublas_gemm(const problem *g, void *c) {
    const float one = 1.f, zero = 0.f;
    /* row-major C = A B^T is column-major C^T (n x m) = B (n x k, op T of its k x n view) * A^T (k x m) */
    CB(cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->n, g->m, g->k, &one, g->b, CUDA_R_16BF, g->k, g->a,
                    CUDA_R_16BF, g->k, &zero, c, g->out == TMA_GEMM_OUT_F32 ? CUDA_R_32F : CUDA_R_16BF, g->n,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* The variants checked and timed; the default (as tma_gemm_plan_make sets it) last. */
typedef struct variant {
    const char *name;
    int cluster; /* 0: the plan's default; 1 or 2: tma_gemm_plan.cluster */
    int direct;  /* 1: TMA_GEMM_EPILOGUE_DIRECT; 0: the plan's default epilogue */
} variant;
enum { NVARIANTS = 4, DEFAULT_VARIANT = NVARIANTS - 1 };
static const variant variants[NVARIANTS] = {
    {"direct-store", 0, 1},
    {"no-clusters", 1, 0},
    {"multicast2", 2, 0},
    {"libtma", 0, 0},
};

/* A plan set to variant v (the defaults taken from `def`, as tma_gemm_plan_make made it). */
static tma_gemm_plan variant_plan(const tma_gemm_plan *def, int v) {
    tma_gemm_plan p = *def;
    if (variants[v].cluster) /* whole 128 x 256 tiles: split-K and 128-wide tiles only in the default */
        p.cluster = variants[v].cluster, p.split_parts = 0, p.block_n = 256;
    if (variants[v].direct)
        p.epilogue = TMA_GEMM_EPILOGUE_DIRECT;
    return p;
}

static tma_gemm_plan make_plan(const problem *g) {
    tma_gemm_plan p;
    tma_diag d;
    if (tma_gemm_plan_make(&p, g->a, g->b, g->c, g->out, g->m, g->n, g->k, &d) != TMA_OK) {
        fprintf(stderr, "tma_gemm_plan_make: %s: %s\n", tma_status_name(d.status), d.message);
        exit(1);
    }
    return p;
}

static void run_plan(const tma_gemm_plan *p) {
    tma_diag d;
    if (tma_gemm_run(p, NULL, &d) != TMA_OK) {
        fprintf(stderr, "tma_gemm_run: %s: %s\n", tma_status_name(d.status), d.message);
        exit(1);
    }
}

/* bench_launch over a row of GEMMs: launch i runs plans[i], or cuBLAS where plans[i] is NULL. */
typedef struct gemm_row {
    const problem *g;
    const tma_gemm_plan *const *plans;
} gemm_row;

static void launch_gemm(void *ctx, int i) {
    const gemm_row *row = ctx;
    if (row->plans[i])
        run_plan(row->plans[i]);
    else
        cublas_gemm(row->g, row->g->c);
}

static void time_interleaved(const problem *g, const tma_gemm_plan *const *plans, int n, int reps, float *median_ms) {
    gemm_row row = {g, plans};
    bench_interleaved(launch_gemm, &row, n, reps, median_ms);
}

static double tflops(const problem *g, float ms) { return 2.0 * g->m * g->n * (double)g->k / (ms * 1e-3) / 1e12; }

/* ------------------------------------------------------------------------------------------------
 * Checks
 * ---------------------------------------------------------------------------------------------- */
typedef struct shape {
    int m, n, k;
    tma_gemm_out out;
    int cpu_ref, timed;
} shape;

static const char *type_name(tma_gemm_out out) { return out == TMA_GEMM_OUT_F32 ? "fp32" : "bf16"; }

/* Every variant against cuBLAS's C (poisoned output first). The default runs last: its C stays in hc.
 * Returns 1 when all pass; *worst gets the largest error. */
static int check_variants(const problem *g, const tma_gemm_plan *plan, void *hc, const void *hr, double *worst) {
    const size_t nc = (size_t)g->m * g->n;
    int ok = 1;
    *worst = 0;
    for (int v = 0; v < NVARIANTS; v++) {
        const tma_gemm_plan pv = variant_plan(plan, v);
        CUDA_CHECK(cudaMemset(g->c, 0xFF, g->c_bytes)); /* poison: all-ones bf16 and fp32 are NaN */
        run_plan(&pv);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(hc, g->c, g->c_bytes, cudaMemcpyDeviceToHost));
        const double ev = rel_frobenius(hc, hr, NULL, nc, g->out);
        const int okv = ev <= 1e-2; /* NaN fails */
        printf("%s%5d x %5d x %5d %s C %-12s (clusters of %d, %s epilogue): vs cuBLAS rel. Frobenius error %.3e %s",
               v ? "\n" : "", g->m, g->n, g->k, type_name(g->out), variants[v].name, pv.cluster,
               pv.epilogue == TMA_GEMM_EPILOGUE_TMA_STORE ? "TMA-store" : "direct", ev, okv ? "ok" : "FAIL");
        ok = ok && okv;
        *worst = ev > *worst || ev != ev ? ev : *worst;
    }
    return ok;
}

/* The default's C (in hc) and cuBLAS's (hr) against an fp64 CPU product. Returns 1 when it passes. */
static int check_against_cpu(const problem *g, const void *hc, const void *hr) {
    const size_t nc = (size_t)g->m * g->n;
    double *ref = cpu_product(g->a, g->b, g->m, g->n, g->k);
    const double e64 = rel_frobenius(hc, NULL, ref, nc, g->out), eb64 = rel_frobenius(hr, NULL, ref, nc, g->out);
    /* bf16 C: rounding alone gives ~1.6e-3; fp32 C: only the fp32 accumulation differs from fp64 */
    const int ok = e64 <= (g->out == TMA_GEMM_OUT_F32 ? 1e-5 : 1e-2);
    printf("; vs CPU fp64 %.3e %s (cuBLAS vs fp64 %.3e)", e64, ok ? "ok" : "FAIL", eb64);
    free(ref);
    return ok;
}

/* ------------------------------------------------------------------------------------------------
 * Timing
 * ---------------------------------------------------------------------------------------------- */

/* One table row, each column by name. */
typedef struct result {
    char name[48];
    double cublas, libtma, no_clusters, multicast2, direct_store, no_store; /* TFLOP/s */
    int clusters, split, split_n;        /* what the default chose: cluster, split-K parts and tile width */
    double max_err;
} result;

/* cuBLAS, the variants and the default without stores, timed in interleaved rounds. */
static result time_shape(const problem *g, const tma_gemm_plan *plan, int reps, double max_err) {
    enum { NO_STORE = NVARIANTS, NTIMED = NVARIANTS + 2 };
    tma_gemm_plan vp[NVARIANTS + 1];
    const tma_gemm_plan *order[NTIMED] = {NULL}; /* order[0]: cuBLAS */
    for (int v = 0; v <= NVARIANTS; v++) {
        vp[v] = variant_plan(plan, v < NVARIANTS ? v : DEFAULT_VARIANT);
        vp[v].diag_no_store = v == NO_STORE;
        order[v + 1] = &vp[v];
    }
    float ms[NTIMED];
    time_interleaved(g, order, NTIMED, reps, ms);
    result r = {.cublas = tflops(g, ms[0]),
                .direct_store = tflops(g, ms[1 + 0]),
                .no_clusters = tflops(g, ms[1 + 1]),
                .multicast2 = tflops(g, ms[1 + 2]),
                .libtma = tflops(g, ms[1 + DEFAULT_VARIANT]),
                .no_store = tflops(g, ms[1 + NO_STORE]),
                .clusters = vp[DEFAULT_VARIANT].cluster,
                .split = vp[DEFAULT_VARIANT].split_parts,
                .split_n = vp[DEFAULT_VARIANT].block_n,
                .max_err = max_err};
    snprintf(r.name, sizeof r.name, "%dx%dx%d %s", g->m, g->n, g->k, type_name(g->out));
    printf("  grid: %d blocks (no clusters), %d blocks (clusters of 2)\n", tma_gemm_grid(&vp[1]),
           tma_gemm_grid(&vp[2]));
    return r;
}

/* TMA_GEMM_TRACE (diagnostic): after the card has idled for a second, 300 back-to-back launches of cuBLAS,
 * then (after another second) of the default plan; prints TFLOP/s of single launches along the way and the
 * GPU time elapsed, to show how long the clock takes to settle under this load. */
static void trace_after_idle(const problem *g, const tma_gemm_plan *p) {
    static const int at[] = {0, 1, 2, 5, 10, 20, 50, 100, 150, 200, 250, 299};
    const tma_gemm_plan *plans[2] = {NULL, p};
    gemm_row row = {g, plans};
    for (int which = 0; which < 2; which++) {
        struct timespec idle = {1, 0};
        nanosleep(&idle, NULL);
        printf("  trace %dx%dx%d %s after 1 s idle:", g->m, g->n, g->k, which ? "libtma" : "cuBLAS");
        float total = 0;
        for (int i = 0, j = 0; i < 300; i++) {
            const float t = bench_once(launch_gemm, &row, which);
            total += t;
            if (i == at[j]) {
                printf(" #%d %.0f TF/s @%.0f ms%s", i, tflops(g, t), total, at[j] == 299 ? "\n" : ",");
                j++;
            }
        }
    }
}

/* TMA_GEMM_SWEEP (diagnostic): the rasterization group and the clusters' grid size, each timed alone. */
static void sweep(const problem *g, const tma_gemm_plan *plan, int reps) {
    tma_gemm_plan sp = *plan;
    const tma_gemm_plan *one = &sp;
    float t;
    for (int cl = 1; cl <= 2; cl++)
        for (int gm = 8; gm <= 32; gm *= 2) {
            sp.cluster = cl;
            sp.group_m = gm;
            time_interleaved(g, &one, 1, reps, &t);
            printf("  sweep %dx%dx%d cluster %d group_m %2d: %.1f TFLOP/s\n", g->m, g->n, g->k, cl, gm, tflops(g, t));
        }
    sp.group_m = TMA_GEMM_GROUP_M;
    const int grids[] = {0, 132, 128, 120, 66};
    for (int gi = 0; gi < 5; gi++) { /* clusters of 2: is the co-resident estimate the limit? */
        sp.cluster = 2;
        sp.grid_blocks = grids[gi];
        time_interleaved(g, &one, 1, reps, &t);
        printf("  sweep %dx%dx%d cluster 2 grid_blocks %3d (launches %d): %.1f TFLOP/s\n", g->m, g->n, g->k,
               grids[gi], tma_gemm_grid(&sp), tflops(g, t));
    }
}

/* ------------------------------------------------------------------------------------------------
 * One shape: check, then time
 * ---------------------------------------------------------------------------------------------- */

/* Checks every variant on one shape and, where sh->timed and every check passed, times it into *r (r->name
 * empty otherwise). Returns 1 when every check passed. */
static int run_shape(cublasHandle_t h, const shape *sh, uint64_t seed, int reps, result *r) {
    problem g;
    problem_open(&g, h, sh->m, sh->n, sh->k, sh->out, seed);
    tma_gemm_plan plan = make_plan(&g); /* its variants below are copies: they share its packed inputs */
    CUDA_CHECK(cudaMemset(g.cref, 0xFF, g.c_bytes));
    cublas_gemm(&g, g.cref);
    void *hc = host_alloc(g.c_bytes), *hr = host_alloc(g.c_bytes);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hr, g.cref, g.c_bytes, cudaMemcpyDeviceToHost));
    double err = 0;
    int ok = check_variants(&g, &plan, hc, hr, &err);
    if (sh->cpu_ref)
        ok = check_against_cpu(&g, hc, hr) && ok;
    printf("\n");
    r->name[0] = '\0';
    if (sh->timed && ok) {
        *r = time_shape(&g, &plan, reps, err);
        if (getenv("TMA_GEMM_SWEEP") && sh->k >= 4096)
            sweep(&g, &plan, reps);
        if (getenv("TMA_GEMM_TRACE"))
            trace_after_idle(&g, &plan);
    }
    free(hc), free(hr);
    tma_diag d;
    if (tma_gemm_plan_free(&plan, &d) != TMA_OK) {
        fprintf(stderr, "tma_gemm_plan_free: %s\n", d.message);
        exit(1);
    }
    problem_close(&g);
    return ok;
}

static void print_results(const char *gpu, int reps, const result *rs, int n, int failures) {
    printf("\n%s (TFLOP/s = 2*M*N*K / median of %d runs each, CUDA events, all GEMMs of a row timed in interleaved "
           "rounds after >= %.0f ms of warm-up rounds; libtma = the default: TMA-store epilogue where C's row pitch "
           "is a multiple of 16 bytes, clusters of 2 sharing B by multicast where every block has more than one tile "
           "(clusters = what it chose), the tiles' width and split-K's parts that keep the most blocks busy (tiles = "
           "parts x the tiles' columns, 1 for whole tiles); "
           "no-clusters / multicast2 = whole 128 x 256 tiles with clusters of 1 / 2; direct-st. = "
           "the default with the epilogue storing from registers; no-store = the default without the epilogue's "
           "stores, diagnostic; cuBLAS writes C in the same type)\n",
           gpu, reps, BENCH_WARMUP_MS);
    printf("%-20s %11s %11s %9s %8s %5s %11s %11s %11s %9s %9s\n", "M x N x K, C", "cuBLAS TF/s", "libtma TF/s",
           "% cuBLAS", "clusters", "tiles", "no-clusters", "multicast2", "direct-st.", "no-store", "max err");
    for (int i = 0; i < n; i++) {
        char split[16];
        snprintf(split, sizeof split, "%dx%d", rs[i].split ? rs[i].split : 1, rs[i].split_n);
        printf("%-20s %11.1f %11.1f %8.1f%% %8d %5s %11.1f %11.1f %11.1f %9.1f %9.2e\n", rs[i].name, rs[i].cublas,
               rs[i].libtma, 100.0 * rs[i].libtma / rs[i].cublas, rs[i].clusters, split, rs[i].no_clusters,
               rs[i].multicast2, rs[i].direct_store, rs[i].no_store, rs[i].max_err);
    }
    printf("%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
}

/* Whether a shape is the one TMA_GEMM_ONLY names (every shape when it is not set). */
static int selected(const shape *sh, const char *only) {
    if (!only)
        return 1;
    char nm[64];
    snprintf(nm, sizeof nm, "%dx%dx%d%s", sh->m, sh->n, sh->k, sh->out == TMA_GEMM_OUT_F32 ? " fp32" : "");
    return strcmp(nm, only) == 0;
}

#define BF TMA_GEMM_OUT_BF16
#define F32 TMA_GEMM_OUT_F32
/* The shapes: small checked ones, then the timed table (large squares, a short K, fp32 C, and small M). */
static const shape shapes[] = {
    {256, 256, 256, BF, 1, 0},    {1000, 777, 200, BF, 1, 0},   {129, 300, 72, BF, 1, 0},
    {333, 1000, 1032, BF, 1, 0},  {333, 1000, 1032, F32, 1, 0}, {1000, 777, 200, F32, 1, 0},
    {2048, 2048, 2048, BF, 0, 1}, {4096, 4096, 4096, BF, 0, 1}, {8192, 8192, 8192, BF, 0, 1},
    {4000, 4000, 4000, BF, 0, 1}, {8192, 8192, 1000, BF, 0, 1}, {4096, 4096, 4096, F32, 0, 1},
    {8192, 8192, 8192, F32, 0, 1},
    /* small M (decoding, inference batches) and other thin shapes: split-K and 128-wide tiles */
    {1, 4096, 4096, BF, 0, 1},    {8, 4096, 4096, BF, 0, 1},    {16, 4096, 4096, BF, 0, 1},
    {64, 4096, 4096, BF, 0, 1},   {128, 4096, 4096, BF, 0, 1},  {256, 4096, 4096, BF, 0, 1},
    {512, 4096, 4096, BF, 0, 1},  {1, 8192, 8192, BF, 0, 1},    {16, 8192, 8192, BF, 0, 1},
    {64, 8192, 8192, BF, 0, 1},   {128, 8192, 8192, BF, 0, 1},  {256, 8192, 8192, BF, 0, 1},
    {512, 8192, 8192, BF, 0, 1},  {384, 4096, 4096, BF, 0, 1},  {1024, 4096, 4096, BF, 0, 1},
    {1000, 1000, 1000, BF, 0, 1}, {4096, 256, 4096, BF, 0, 1},
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };
#undef BF
#undef F32

/* --list: the timed shapes for torch_gemm.py, one a line: M N K and C's type, tab-separated. */
static void list_shapes(void) {
    for (int s = 0; s < NSHAPES; s++)
        if (shapes[s].timed)
            printf("%d\t%d\t%d\t%s\n", shapes[s].m, shapes[s].n, shapes[s].k, type_name(shapes[s].out));
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--list")) {
        list_shapes();
        return 0;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    reps = reps < 20 ? 20 : reps;
    int ndev = 0;
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
        printf("no Hopper (sm_90) GPU here (%s): the GEMM cannot run\n",
               e != cudaSuccess ? cudaGetErrorString(e) : ndev == 0 ? "no device" : "device is not sm_90");
        return 0;
    }
    printf("GPU: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    cublasHandle_t h;
    CB(cublasCreate(&h));
    /* Fresh data every run; TMA_GEMM_SEED replays one. */
    const char *seed_env = getenv("TMA_GEMM_SEED");
    const uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    printf("data seed %llu (replay with TMA_GEMM_SEED=%llu)\n", (unsigned long long)seed, (unsigned long long)seed);

    result results[NSHAPES];
    int nresults = 0, failures = 0;
    const char *only = getenv("TMA_GEMM_ONLY");
    for (int s = 0; s < NSHAPES; s++) {
        if (!selected(&shapes[s], only))
            continue;
        failures += !run_shape(h, &shapes[s], seed + (uint64_t)s * 7919u, reps, &results[nresults]);
        if (results[nresults].name[0])
            nresults++;
    }
    CB(cublasDestroy(h));
    print_results(prop.name, reps, results, nresults, failures);
    return failures ? 1 : 0;
}
