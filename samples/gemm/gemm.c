/* tma-gemm: the libtma TMA + wgmma bf16 GEMM (kernels/gemm.h), checked and timed against cuBLAS.
 *
 *   1. CPU self-check (no GPU needed): the kernel's wgmma descriptors (tma_wgmma_desc_box) designate, for
 *      every (m, k) of every K step, the element the CPU model of the copy engine wrote for the kernel's
 *      A box (128 rows x 64 bf16, 128B swizzle), both consumer halves; and the epilogue's box addressing
 *      stores, through the model of a TMA store, every element where C wants it, without bank conflicts.
 *   2. Without a Hopper GPU: says so and exits 0.
 *   3. Correctness: small shapes against a double-precision CPU product, every shape against cuBLAS
 *      (cublasGemmEx, bf16 in, fp32 compute, C in the same type, bf16 or fp32): relative Frobenius error
 *      <= 1e-2 (1e-5 for fp32 C against fp64), NaN never passes; fresh random data for every shape; outputs
 *      poisoned (NaN) before each run; every variant.
 *   4. Table: cuBLAS and libtma TFLOP/s (2*M*N*K over the median of >= 20 event-timed runs, all GEMMs of a
 *      row in interleaved rounds after warm-up, bench.h): libtma's default (TMA-store epilogue, clusters of
 *      two where every block has more than one tile), the default with clusters of 1 and of 2, with the
 *      epilogue storing from registers, and a diagnostic run without the epilogue's stores.
 * Exit status: 0 when every check passed. Usage: tma-gemm [reps] */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench.h"
#include "cuda_check.h"
#include "gemm.h"
#include "tma/tma.h"
#include "tma/wgmma.h"

#define CB(call)                                                                                    \
    do {                                                                                            \
        cublasStatus_t s_ = (call);                                                                 \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_);   \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static double bf16_to_double(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* 1. The descriptor self-check through the CPU model. Returns the number of mismatches. */
static long cpu_selfcheck(void) {
    enum { R = TMA_GEMM_BM, KD = 200, BASE = 2048 };
    static uint16_t g[R * KD];
    static uint8_t smem[64 * 1024];
    uint64_t x = 12345;
    for (int i = 0; i < R * KD; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        g[i] = (uint16_t)(x >> 48) | 1u;
    }
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, g, R, KD, KD * 2, TMA_GEMM_BM, TMA_GEMM_BK, TMA_SWIZZLE_128B);
    tma_box_info box = tma_box_info_of(&d);
    long bad = 0;
    for (int32_t k0 = 0; k0 < KD; k0 += TMA_GEMM_BK) { /* the last box is ragged: zero fill */
        int32_t c[5] = {k0, 0, 0, 0, 0};
        memset(smem, 0xA5, sizeof smem);
        if (tma_model_load_tiled(&d, c, smem, sizeof smem, BASE) != TMA_OK)
            return -1;
        for (uint32_t half = 0; half < 2; half++)
            for (uint32_t kk = 0; kk < TMA_GEMM_BK / 16u; kk++) {
                uint64_t desc = tma_wgmma_desc_box(&box, BASE + half * 64u * box.row_pitch, kk * 16u);
                for (uint32_t m = 0; m < 64; m++)
                    for (uint32_t k = 0; k < 16; k++) {
                        uint32_t addr = tma_wgmma_kmajor_addr(desc, 2, m, k);
                        uint32_t gr = half * 64u + m, gc = (uint32_t)k0 + kk * 16u + k;
                        uint16_t want = gc < KD ? g[gr * KD + gc] : 0, got;
                        memcpy(&got, smem + addr, 2);
                        bad += got != want;
                    }
            }
    }
    /* The kernel derives stage 0's descriptors once and moves them by whole boxes (tma_wgmma_desc_advance):
     * the same descriptor as deriving each stage's afresh, for every stage, K step, and box (A and B,
     * 64 x 128/256 with 128B swizzle in 4 stages). */
    for (uint32_t rows = TMA_GEMM_BM; rows <= TMA_GEMM_BN; rows *= 2) {
        tma_tiled_desc dd = tma_desc_2d(TMA_DTYPE_BF16, g, R, KD, KD * 2, rows, TMA_GEMM_BK, TMA_SWIZZLE_128B);
        tma_box_info bx = tma_box_info_of(&dd);
        const uint32_t tile = rows * TMA_GEMM_BK * 2u, base = 1024u + 64u * bx.row_pitch;
        for (uint32_t k = 0; k < TMA_GEMM_BK; k += 16)
            for (uint32_t st_i = 0; st_i < TMA_GEMM_STAGES; st_i++)
                bad += tma_wgmma_desc_box(&bx, base + st_i * tile, k) !=
                       tma_wgmma_desc_advance(tma_wgmma_desc_box(&bx, base, k), st_i * tile);
    }
    return bad;
}

/* 1b. The epilogue's box addressing (tma_gemm_epi_offset), for both C types, through the CPU model of a
 * TMA store: a box written where the kernel writes each (row, col), stored at a ragged corner of C with C's
 * map, must put every element at C[row0 + row][col0 + col] inside C and write nothing else; and each of the
 * kernel's 4-byte warp stores into the box (tma_gemm_epi_store_col for fp32) must touch 32 different banks.
 * Returns the number of mismatches. */
static long cpu_epilogue_check(void) {
    enum { ROWS = TMA_GEMM_EPI_ROWS, M = 100, ROW0 = 64, COL0_BYTES = 128, N_BYTES = 144 };
    static uint8_t box[ROWS * TMA_GEMM_EPI_ROW_BYTES], c[M * N_BYTES];
    long bad = 0;
    for (uint32_t eb = 2; eb <= 4; eb += 2) {
        const uint32_t cols = TMA_GEMM_EPI_ROW_BYTES / eb, n = N_BYTES / eb, col0 = COL0_BYTES / eb;
        tma_tiled_desc d = tma_desc_2d(eb == 2 ? TMA_DTYPE_BF16 : TMA_DTYPE_F32, c, M, n, N_BYTES, ROWS, cols,
                                       TMA_GEMM_EPI_SWIZZLE);
        for (uint32_t r = 0; r < ROWS; r++)
            for (uint32_t col = 0; col < cols; col++) {
                const uint32_t v = r * cols + col + 1u;
                memcpy(box + tma_gemm_epi_offset(r, col, eb), &v, eb);
            }
        memset(c, 0xFF, sizeof c);
        int32_t coord[5] = {(int32_t)col0, ROW0, 0, 0, 0};
        if (tma_model_store_tiled(&d, coord, box, sizeof box, 0) != TMA_OK)
            return -1;
        for (uint32_t i = 0; i < M; i++)
            for (uint32_t j = 0; j < n; j++) {
                const int inside = i >= ROW0 && j >= col0;
                uint32_t want = inside ? (i - ROW0) * cols + (j - col0) + 1u : 0xFFFFFFFFu, got = 0xFFFFFFFFu;
                memcpy(&got, c + i * N_BYTES + j * eb, eb);
                if (eb == 2)
                    want &= 0xFFFFu, got &= 0xFFFFu;
                bad += got != want;
            }
        for (uint32_t warp = 0; warp < 4; warp++) /* each of the kernel's 4-byte warp stores: 32 banks */
            for (uint32_t jj = 0; jj < cols / 8u; jj++)
                for (uint32_t h = 0; h < 2; h++)
                    for (uint32_t st = 0; st < eb / 2u; st++) {
                        uint32_t banks = 0;
                        for (uint32_t lane = 0; lane < 32; lane++) {
                            const uint32_t row = 16u * warp + lane / 4u + 8u * h, col = 8u * jj + 2u * (lane % 4u);
                            const uint32_t cw = eb == 2 ? col : tma_gemm_epi_store_col(st, row, col);
                            banks |= 1u << (tma_gemm_epi_offset(row, cw, eb) / 4u % 32u);
                        }
                        bad += banks != 0xFFFFFFFFu;
                    }
    }
    return bad;
}

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

/* One problem: device buffers, the cuBLAS handle and C's type. */
typedef struct gemm_args {
    cublasHandle_t h;
    const void *a, *b;
    void *c;
    int m, n, k;
    tma_gemm_out out;
} gemm_args;

static void cublas_gemm(const gemm_args *g, void *c) {
    const float one = 1.f, zero = 0.f;
    /* row-major C = A B^T is column-major C^T (n x m) = B (n x k, op T of its k x n view) * A^T (k x m) */
    CB(cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->n, g->m, g->k, &one, g->b, CUDA_R_16BF, g->k, g->a,
                    CUDA_R_16BF, g->k, &zero, c, g->out == TMA_GEMM_OUT_F32 ? CUDA_R_32F : CUDA_R_16BF, g->n,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* bench_launch for a row of GEMMs: launch i runs plans[i], or cuBLAS where plans[i] is NULL. */
typedef struct gemm_row {
    const gemm_args *g;
    const tma_gemm_plan *const *plans;
} gemm_row;

static void launch_gemm(void *ctx, int i) {
    const gemm_row *row = ctx;
    if (row->plans[i])
        CUDA_CHECK(tma_gemm_run(row->plans[i], 0));
    else
        cublas_gemm(row->g, row->g->c);
}

/* Median milliseconds of each of n GEMMs (plans[i], or cuBLAS where plans[i] is NULL), timed in
 * interleaved rounds after warm-up (bench.h: why). */
static void time_interleaved(const gemm_args *g, const tma_gemm_plan *const *plans, int n, int reps,
                             float *median_ms) {
    gemm_row row = {g, plans};
    bench_interleaved(launch_gemm, &row, n, reps, median_ms);
}

static double tflops(const gemm_args *g, float ms) { return 2.0 * g->m * g->n * (double)g->k / (ms * 1e-3) / 1e12; }

/* TMA_GEMM_TRACE (diagnostic): after the card has idled for a second, 300 back-to-back launches of cuBLAS,
 * then (after another second) of the default plan; prints TFLOP/s of single launches along the way and the
 * GPU time elapsed, to show how long the clock takes to settle under this load. */
static void trace_after_idle(const gemm_args *g, const tma_gemm_plan *p) {
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
static void sweep(const gemm_args *g, const tma_gemm_plan *plan, int reps) {
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

/* The kernel variants checked and timed; the default (as tma_gemm_plan_make sets it) last. */
typedef struct variant {
    const char *name;
    int cluster; /* 0: the plan's default; 1 or 2: tma_gemm_plan.cluster */
    int direct;  /* 1: TMA_GEMM_EPILOGUE_DIRECT; 0: the plan's default epilogue */
} variant;
enum { NVARIANTS = 4 };
static const variant variants[NVARIANTS] = {
    {"direct-store", 0, 1}, /* the epilogue from registers (the previous design), for comparison */
    {"no-clusters", 1, 0},  /* one block per tile, no multicast */
    {"multicast2", 2, 0},   /* clusters of two sharing B through TMA multicast */
    {"libtma", 0, 0},       /* the default */
};

/* A plan set to variant v (the defaults taken from `def`, as tma_gemm_plan_make made it). */
static tma_gemm_plan variant_plan(const tma_gemm_plan *def, int v) {
    tma_gemm_plan p = *def;
    if (variants[v].cluster)
        p.cluster = variants[v].cluster;
    if (variants[v].direct)
        p.epilogue = TMA_GEMM_EPILOGUE_DIRECT;
    return p;
}

typedef struct shape {
    int m, n, k;
    tma_gemm_out out;
    int cpu_ref, timed;
} shape;

/* Checks every variant on one shape against cuBLAS (and a CPU fp64 product where sh.cpu_ref) on fresh
 * random data, then, where sh.timed, times cuBLAS and the variants and appends a row to `table`.
 * Returns 1 when every check passed. */
static int run_shape(cublasHandle_t h, const shape *sh, uint64_t seed, int reps, char *table, size_t table_size) {
    const size_t eb = sh->out == TMA_GEMM_OUT_F32 ? 4u : 2u;
    const size_t na = (size_t)sh->m * sh->k, nb = (size_t)sh->n * sh->k, nc = (size_t)sh->m * sh->n;
    void *a, *b, *c, *cref;
    CUDA_CHECK(cudaMalloc(&a, na * 2 + 16));
    CUDA_CHECK(cudaMalloc(&b, nb * 2 + 16));
    CUDA_CHECK(cudaMalloc(&c, nc * eb));
    CUDA_CHECK(cudaMalloc(&cref, nc * eb));
    CUDA_CHECK(tma_gemm_fill_random_bf16(a, na, seed * 0x9E3779B97F4A7C15ull + 0x1000u, 0));
    CUDA_CHECK(tma_gemm_fill_random_bf16(b, nb, seed * 0x9E3779B97F4A7C15ull + 0x2000u, 0));
    CUDA_CHECK(cudaMemset(cref, 0xFF, nc * eb)); /* poison: all-ones bf16 and fp32 are NaN */
    const gemm_args g = {h, a, b, c, sh->m, sh->n, sh->k, sh->out};
    tma_gemm_plan plan;
    CUDA_CHECK(tma_gemm_plan_make_out(&plan, a, b, c, sh->out, sh->m, sh->n, sh->k));
    cublas_gemm(&g, cref);
    void *hc = malloc(nc * eb), *hr = malloc(nc * eb);
    if (!hc || !hr) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hr, cref, nc * eb, cudaMemcpyDeviceToHost));
    const char *type = sh->out == TMA_GEMM_OUT_F32 ? "fp32" : "bf16";
    /* every variant, the default last: its output stays in hc for the CPU comparison */
    double err = 0;
    int ok = 1;
    for (int v = 0; v < NVARIANTS; v++) {
        const tma_gemm_plan pv = variant_plan(&plan, v);
        CUDA_CHECK(cudaMemset(c, 0xFF, nc * eb)); /* poison */
        CUDA_CHECK(tma_gemm_run(&pv, 0));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(hc, c, nc * eb, cudaMemcpyDeviceToHost));
        double ev = rel_frobenius(hc, hr, NULL, nc, sh->out);
        int okv = ev <= 1e-2; /* NaN fails */
        printf("%s%5d x %5d x %5d %s C %-12s (clusters of %d, %s epilogue): vs cuBLAS rel. Frobenius error %.3e %s",
               v ? "\n" : "", sh->m, sh->n, sh->k, type, variants[v].name, pv.cluster,
               pv.epilogue == TMA_GEMM_EPILOGUE_TMA_STORE ? "TMA-store" : "direct", ev, okv ? "ok" : "FAIL");
        ok = ok && okv;
        err = ev > err || ev != ev ? ev : err;
    }
    if (sh->cpu_ref) {
        uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2);
        double *ref = malloc(nc * sizeof(double));
        if (!ha || !hb || !ref) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        CUDA_CHECK(cudaMemcpy(ha, a, na * 2, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(hb, b, nb * 2, cudaMemcpyDeviceToHost));
        for (int i = 0; i < sh->m; i++)
            for (int j = 0; j < sh->n; j++) {
                double acc = 0;
                for (int k = 0; k < sh->k; k++)
                    acc += bf16_to_double(ha[(size_t)i * sh->k + k]) * bf16_to_double(hb[(size_t)j * sh->k + k]);
                ref[(size_t)i * sh->n + j] = acc;
            }
        double e64 = rel_frobenius(hc, NULL, ref, nc, sh->out), eb64 = rel_frobenius(hr, NULL, ref, nc, sh->out);
        /* bf16 C: rounding alone gives ~1.6e-3; fp32 C: only the fp32 accumulation differs from fp64 */
        int ok64 = e64 <= (sh->out == TMA_GEMM_OUT_F32 ? 1e-5 : 1e-2);
        printf("; vs CPU fp64 %.3e %s (cuBLAS vs fp64 %.3e)", e64, ok64 ? "ok" : "FAIL", eb64);
        ok = ok && ok64;
        free(ha), free(hb), free(ref);
    }
    printf("\n");
    if (sh->timed && ok) {
        /* cuBLAS, the variants, then the default without stores: timed in interleaved rounds */
        tma_gemm_plan vp[NVARIANTS + 1];
        const tma_gemm_plan *order[NVARIANTS + 2] = {NULL};
        for (int v = 0; v <= NVARIANTS; v++) {
            vp[v] = variant_plan(&plan, v < NVARIANTS ? v : NVARIANTS - 1);
            vp[v].diag_no_store = v == NVARIANTS;
            order[v + 1] = &vp[v];
        }
        float ms[NVARIANTS + 2];
        time_interleaved(&g, order, NVARIANTS + 2, reps, ms);
        double f[NVARIANTS + 2]; /* cuBLAS, the variants, the default without stores */
        for (int v = 0; v < NVARIANTS + 2; v++)
            f[v] = tflops(&g, ms[v]);
        char name[64];
        snprintf(name, sizeof name, "%dx%dx%d %s", sh->m, sh->n, sh->k, type);
        size_t tl = strlen(table);
        snprintf(table + tl, table_size - tl, "%-20s %11.1f %11.1f %8.1f%% %8d %11.1f %11.1f %11.1f %9.1f %9.2e\n",
                 name, f[0], f[4], 100.0 * f[4] / f[0], vp[NVARIANTS - 1].cluster, f[2], f[3], f[1], f[5], err);
        printf("  grid: %d blocks (no clusters), %d blocks (clusters of 2)\n", tma_gemm_grid(&vp[1]),
               tma_gemm_grid(&vp[2]));
        if (getenv("TMA_GEMM_SWEEP") && sh->k >= 4096)
            sweep(&g, &plan, reps);
        if (getenv("TMA_GEMM_TRACE")) /* how launch times drift after the card idles */
            trace_after_idle(&g, &plan);
    }
    free(hc), free(hr);
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(c));
    CUDA_CHECK(cudaFree(cref));
    return ok;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    if (reps < 20)
        reps = 20;
    long bad = cpu_selfcheck();
    printf("CPU self-check: wgmma descriptors vs the copy-engine model (128B, 128x64 bf16 boxes, ragged K): %s "
           "(%ld mismatches)\n",
           bad == 0 ? "ok" : "FAILED", bad);
    if (bad != 0)
        return 1;
    bad = cpu_epilogue_check();
    printf("CPU self-check: epilogue box addressing (bf16 and fp32) vs the model of a TMA store, and bank "
           "wavefronts: %s (%ld mismatches)\n",
           bad == 0 ? "ok" : "FAILED", bad);
    if (bad != 0)
        return 1;

    int ndev = 0;
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
        printf("no Hopper (sm_90) GPU here (%s): CPU checks only, GEMM not run\n",
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

    const tma_gemm_out BF = TMA_GEMM_OUT_BF16, F32 = TMA_GEMM_OUT_F32;
    const shape shapes[] = {
        {256, 256, 256, BF, 1, 0},    {1000, 777, 200, BF, 1, 0},   {129, 300, 72, BF, 1, 0},
        {333, 1000, 1032, BF, 1, 0},  {333, 1000, 1032, F32, 1, 0}, {1000, 777, 200, F32, 1, 0},
        {2048, 2048, 2048, BF, 0, 1}, {4096, 4096, 4096, BF, 0, 1}, {8192, 8192, 8192, BF, 0, 1},
        {4000, 4000, 4000, BF, 0, 1}, {8192, 8192, 1000, BF, 0, 1}, {4096, 4096, 4096, F32, 0, 1},
        {8192, 8192, 8192, F32, 0, 1},
    };
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    char table[4096];
    snprintf(table, sizeof table, "%-20s %11s %11s %9s %8s %11s %11s %11s %9s %9s\n", "M x N x K, C",
             "cuBLAS TF/s", "libtma TF/s", "% cuBLAS", "clusters", "no-clusters", "multicast2", "direct-st.",
             "no-store", "max err");
    int failures = 0;
    const char *only = getenv("TMA_GEMM_ONLY"); /* "MxNxK" or "MxNxK fp32": that shape alone (for profiling) */
    for (int s = 0; s < nshapes; s++) {
        const shape *sh = &shapes[s];
        if (only) {
            char nm[64];
            snprintf(nm, sizeof nm, "%dx%dx%d%s", sh->m, sh->n, sh->k, sh->out == F32 ? " fp32" : "");
            if (strcmp(nm, only) != 0)
                continue;
        }
        failures += !run_shape(h, sh, seed + (uint64_t)s * 7919u, reps, table, sizeof table);
    }
    CB(cublasDestroy(h));
    printf("\n%s (TFLOP/s = 2*M*N*K / median of %d runs each, CUDA events, all GEMMs of a row timed in interleaved "
           "rounds after >= %.0f ms of warm-up rounds; libtma = the default: TMA-store epilogue where C's row "
           "pitch is a multiple of 16 bytes, clusters of 2 sharing B by multicast where every block has more "
           "than one tile (clusters = what it chose); no-clusters / multicast2 = the default with clusters of "
           "1 / 2; direct-st. = the default with the epilogue storing from registers; no-store = the default "
           "without the epilogue's stores, diagnostic; cuBLAS writes C in the same type)\n%s",
           prop.name, reps, BENCH_WARMUP_MS, table);
    printf("%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
