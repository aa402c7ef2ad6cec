/* tma-grouped-gemm(1)
 *
 * NAME
 *     tma-grouped-gemm - libtma's grouped GEMM (tma_grouped_gemm, tma/kernels.h) on mixture-of-experts shapes,
 *     checked and timed against cuBLAS
 *
 * SYNOPSIS
 *     tma-grouped-gemm [REPS]
 *     tma-grouped-gemm --list
 *
 * DESCRIPTION
 *     C_g = A_g * B_g^T for G experts: the tokens routed to expert g (A_g, M_g x K, rows of one token buffer),
 *     the expert's weights (B_g, N x K, an allocation of its own), its output (C_g, M_g x N); bf16 in, fp32
 *     accumulation, bf16 out. Tokens are routed unevenly (seeded; about one expert in eight gets none).
 *     1. Correctness: two small problems against a CPU fp64 product (every element within bf16 rounding; the
 *        second with N and K off multiples of 8, the thread-loaded kernel); every
 *        shape against cuBLAS grouped (every element within one bf16 step of it), outputs poisoned with NaN
 *        first, NaN never passing; the device reports no invalid group.
 *     2. Table: TFLOP/s (2 * tokens * N * K over the median of REPS event-timed runs, every column of a row timed
 *        in interleaved rounds after warm-up, common/bench.h) of libtma grouped, cuBLAS grouped
 *        (cublasGemmGroupedBatchedEx), one cublasGemmEx per expert, and libtma's dense tma_gemm on the same total
 *        work (all tokens times expert 0's weights); and the share of libtma's time spent building the maps on
 *        the device: its time against the GEMM alone on the maps of the previous run (diag_skip_build); and the
 *        map update alone (replace, release, acquire), timed by a microbenchmark (map_update_bench.cu).
 *     Without a Hopper GPU it says so and exits 0. TMA_GROUPED_SEED replays the data (each shape's routing and
 *     values depend on the seed and the shape's place in the table only); TMA_GROUPED_ONLY="G tokens N K" runs one
 *     shape.
 *     --list prints the table's shapes, one a line, tab-separated: G, tokens, N, K and the M_g (comma-separated) that
 *     TMA_GROUPED_SEED routes (it must be set), and exits; no GPU needed. samples/bench/grouped_gemm/
 *     torch_grouped.py reads it to time PyTorch on the same groups.
 *
 * BUILD AND RUN
 *     cmake -B build && cmake --build build -j && ./build/samples/tma-grouped-gemm
 *
 * EXIT STATUS
 *     0 when every check passed, 1 otherwise.
 *
 * SEE ALSO
 *     samples/grouped_gemm/ (tma-grouped-gemm-example: the kernel's API on small data, no timing),
 *     docs/guide/grouped_gemm.md, docs/lab/grouped_gemm.md (this benchmark's results)
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
#include "map_update_bench.h"

#if CUBLAS_VERSION >= 120500
#define HAVE_CUBLAS_GROUPED 1 /* cublasGemmGroupedBatchedEx: CUDA 12.5 and later */
#else
#define HAVE_CUBLAS_GROUPED 0
#endif

enum { MAX_G = 128 };

static void *device_array(const void *host, size_t bytes) {
    void *d;
    CUDA_CHECK(cudaMalloc(&d, bytes ? bytes : 1));
    if (bytes)
        CUDA_CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* ------------------------------------------------------------------------------------------------
 * Routing: how many tokens each expert gets
 * ---------------------------------------------------------------------------------------------- */
static uint64_t rng_next(uint64_t *s) {
    uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* tokens over `groups` experts: weights u^3 (u uniform in (0.05, 1]), groups / 8 experts at zero, the counts
 * rounded down and the remainder given to the largest fractions. */
static void route(int groups, int tokens, uint64_t seed, int32_t *m) {
    double w[MAX_G], frac[MAX_G], sum = 0;
    uint64_t s = seed;
    for (int g = 0; g < groups; g++) {
        const double u = 0.05 + 0.95 * (double)(rng_next(&s) >> 11) / 9007199254740992.0;
        w[g] = u * u * u;
    }
    for (int e = 0; e < groups / 8; e++)
        w[rng_next(&s) % (uint64_t)groups] = 0;
    for (int g = 0; g < groups; g++)
        sum += w[g];
    int given = 0;
    for (int g = 0; g < groups; g++) {
        const double share = tokens * w[g] / sum;
        m[g] = (int32_t)floor(share);
        frac[g] = share - m[g];
        given += m[g];
    }
    for (; given < tokens; given++) {
        int best = 0;
        for (int g = 1; g < groups; g++)
            best = frac[g] > frac[best] ? g : best;
        m[best]++;
        frac[best] = -1;
    }
}

/* The table's shapes: every G of GROUPS over every count of TOKENS, for each (N, K) of NK; shape i's data seed is the
 * run's plus 7919 i, whichever shapes a run times. */
static const int GROUPS[] = {8, 32, 128}, TOKENS[] = {4096, 16384, 65536}, NK[][2] = {{4096, 4096}, {7168, 2048},
                                                                                    {2048, 7168}};
enum { SHAPES = 27 };
static void shape_of(int i, int *groups, int *tokens, int *n, int *k) {
    *groups = GROUPS[i % 3], *tokens = TOKENS[i / 3 % 3], *n = NK[i / 9][0], *k = NK[i / 9][1];
}
static uint64_t shape_seed(uint64_t seed, int i) { return seed + 7919u * (uint64_t)i; }

/* --list: the shapes and their routing under TMA_GROUPED_SEED. */
static int list_shapes(void) {
    const char *seed_env = getenv("TMA_GROUPED_SEED");
    if (!seed_env) {
        fprintf(stderr, "tma-grouped-gemm --list: set TMA_GROUPED_SEED (the routing depends on it)\n");
        return 2;
    }
    const uint64_t seed = strtoull(seed_env, NULL, 0);
    for (int i = 0; i < SHAPES; i++) {
        int g, t, n, k;
        int32_t m[MAX_G];
        shape_of(i, &g, &t, &n, &k);
        route(g, t, shape_seed(seed, i), m);
        printf("%d\t%d\t%d\t%d\t", g, t, n, k);
        for (int j = 0; j < g; j++)
            printf("%s%d", j ? "," : "", (int)m[j]);
        printf("\n");
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * One layer: the experts' buffers, the pointer arrays, the plans
 * ---------------------------------------------------------------------------------------------- */
typedef struct layer {
    int groups, tokens, n, k;
    int32_t m[MAX_G];
    size_t first_row[MAX_G];         /* expert g's rows start here in the token buffer */
    uint8_t *a_all, *c_all, *c_ref;  /* tokens x K, tokens x N (libtma), tokens x N (cuBLAS) */
    void *b[MAX_G];                  /* one N x K allocation per expert */
    const void **d_a, **d_b;         /* device arrays, every expert (libtma) */
    void **d_c;
    int32_t *d_m;
    int ne;                          /* experts with tokens: cuBLAS's groups */
    int ne_idx[MAX_G];
    const void **d_ne_a, **d_ne_b;   /* device arrays of those experts (cuBLAS grouped) */
    void **d_ne_c;
    cublasHandle_t h;
    tma_grouped_gemm_plan plan, reuse; /* reuse: the GEMM alone, on the map table of the previous run */
    tma_gemm_plan dense;
} layer;

static void layer_open(layer *L, cublasHandle_t h, int groups, int tokens, int n, int k, uint64_t seed) {
    memset(L, 0, sizeof *L);
    L->h = h, L->groups = groups, L->tokens = tokens, L->n = n, L->k = k;
    route(groups, tokens, seed, L->m);
    for (int g = 0, row = 0; g < groups; row += L->m[g], g++)
        L->first_row[g] = (size_t)row;
    CUDA_CHECK(cudaMalloc((void **)&L->a_all, (size_t)tokens * k * 2));
    CUDA_CHECK(cudaMalloc((void **)&L->c_all, (size_t)tokens * n * 2));
    CUDA_CHECK(cudaMalloc((void **)&L->c_ref, (size_t)tokens * n * 2));
    CUDA_CHECK(fill_random_bf16(L->a_all, (size_t)tokens * k, seed ^ 0xA11u, 0));
    const void *pa[MAX_G], *pb[MAX_G], *ne_a[MAX_G], *ne_b[MAX_G];
    void *pc[MAX_G], *ne_c[MAX_G];
    for (int g = 0; g < groups; g++) {
        CUDA_CHECK(cudaMalloc(&L->b[g], (size_t)n * k * 2));
        CUDA_CHECK(fill_random_bf16(L->b[g], (size_t)n * k, seed ^ (0xB000u + (uint64_t)g), 0));
        const size_t r = L->first_row[g];
        pa[g] = L->a_all + r * (size_t)k * 2;
        pb[g] = L->b[g];
        pc[g] = L->c_all + r * (size_t)n * 2;
        if (L->m[g] > 0) {
            L->ne_idx[L->ne] = g;
            ne_a[L->ne] = pa[g], ne_b[L->ne] = pb[g], ne_c[L->ne] = L->c_ref + r * (size_t)n * 2;
            L->ne++;
        }
    }
    L->d_a = device_array(pa, sizeof(void *) * groups);
    L->d_b = device_array(pb, sizeof(void *) * groups);
    L->d_c = device_array(pc, sizeof(void *) * groups);
    L->d_m = device_array(L->m, sizeof(int32_t) * groups);
    L->d_ne_a = device_array(ne_a, sizeof(void *) * L->ne);
    L->d_ne_b = device_array(ne_b, sizeof(void *) * L->ne);
    L->d_ne_c = device_array(ne_c, sizeof(void *) * L->ne);
    tma_diag d;
    if (tma_grouped_gemm_plan_make(&L->plan, groups, n, k, L->d_a, L->d_b, (void *const *)L->d_c, L->d_m, &d) !=
            TMA_OK ||
        tma_gemm_plan_make(&L->dense, L->a_all, L->b[0], L->c_all, TMA_GEMM_OUT_BF16, tokens, n, k, &d) != TMA_OK) {
        fprintf(stderr, "plan: %s: %s\n", tma_status_name(d.status), d.message);
        exit(1);
    }
    L->reuse = L->plan; /* the same workspace: its map table */
    L->reuse.diag_skip_build = 1;
}

static void layer_close(layer *L) {
    tma_diag d;
    if (tma_grouped_gemm_plan_free(&L->plan, &d) != TMA_OK) {
        fprintf(stderr, "plan_free: %s\n", d.message);
        exit(1);
    }
    void *all[] = {L->a_all, L->c_all, L->c_ref, L->d_a, L->d_b, L->d_c, L->d_m, L->d_ne_a, L->d_ne_b, L->d_ne_c};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CUDA_CHECK(cudaFree(all[i]));
    for (int g = 0; g < L->groups; g++)
        CUDA_CHECK(cudaFree(L->b[g]));
}

/* ------------------------------------------------------------------------------------------------
 * The launches
 * ---------------------------------------------------------------------------------------------- */
static void run_grouped(const tma_grouped_gemm_plan *p) {
    tma_diag d;
    if (tma_grouped_gemm_run(p, NULL, &d) != TMA_OK) {
        fprintf(stderr, "tma_grouped_gemm_run: %s: %s\n", tma_status_name(d.status), d.message);
        exit(1);
    }
}

/* Row-major C_g = A_g B_g^T is column-major C_g^T (N x M_g) = B_g (op T of its K x N view) * A_g^T (K x M_g). */
static void cublas_grouped(const layer *L) {
#if HAVE_CUBLAS_GROUPED
    cublasOperation_t ta[MAX_G], tb[MAX_G];
    int mm[MAX_G], nn[MAX_G], kk[MAX_G], lda[MAX_G], ldb[MAX_G], ldc[MAX_G], size[MAX_G];
    float alpha[MAX_G], beta[MAX_G];
    for (int i = 0; i < L->ne; i++) {
        ta[i] = CUBLAS_OP_T, tb[i] = CUBLAS_OP_N;
        mm[i] = L->n, nn[i] = L->m[L->ne_idx[i]], kk[i] = L->k;
        lda[i] = L->k, ldb[i] = L->k, ldc[i] = L->n, size[i] = 1;
        alpha[i] = 1.f, beta[i] = 0.f;
    }
    CB(cublasGemmGroupedBatchedEx(L->h, ta, tb, mm, nn, kk, alpha, L->d_ne_b, CUDA_R_16BF, lda, L->d_ne_a,
                                  CUDA_R_16BF, ldb, beta, L->d_ne_c, CUDA_R_16BF, ldc, L->ne, size,
                                  CUBLAS_COMPUTE_32F));
#else
    (void)L;
#endif
}

/* One cublasGemmEx per expert with tokens, into C_ref. */
static void cublas_per_group(const layer *L) {
    const float one = 1.f, zero = 0.f;
    for (int i = 0; i < L->ne; i++) {
        const int g = L->ne_idx[i];
        const size_t r = L->first_row[g];
        CB(cublasGemmEx(L->h, CUBLAS_OP_T, CUBLAS_OP_N, L->n, L->m[g], L->k, &one, L->b[g], CUDA_R_16BF, L->k,
                        L->a_all + r * (size_t)L->k * 2, CUDA_R_16BF, L->k, &zero, L->c_ref + r * (size_t)L->n * 2,
                        CUDA_R_16BF, L->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
}

enum { RUN_LIBTMA, RUN_CUBLAS_GROUPED, RUN_CUBLAS_PER_GROUP, RUN_DENSE, RUN_GEMM_ONLY, NRUNS };

static void launch(void *ctx, int which) {
    const layer *L = ctx;
    tma_diag d;
    switch (which) {
    case RUN_LIBTMA: run_grouped(&L->plan); break;
    case RUN_CUBLAS_GROUPED: cublas_grouped(L); break;
    case RUN_CUBLAS_PER_GROUP: cublas_per_group(L); break;
    case RUN_DENSE:
        if (tma_gemm_run(&L->dense, NULL, &d) != TMA_OK) {
            fprintf(stderr, "tma_gemm_run: %s\n", d.message);
            exit(1);
        }
        break;
    default: run_grouped(&L->reuse); break; /* after a default run: the table is this layer's */
    }
}

/* ------------------------------------------------------------------------------------------------
 * Checks
 * ---------------------------------------------------------------------------------------------- */
static int device_reported_nothing(const tma_grouped_gemm_plan *p, const char *what) {
    tma_diag d;
    const tma_status st = tma_grouped_gemm_check(p, NULL, &d);
    if (st != TMA_OK)
        printf("  %s: the device reported %s: %s\n", what, tma_status_name(st), d.message);
    return st == TMA_OK;
}

/* libtma (the default, then the GEMM alone on the table the default built) against cuBLAS grouped (or per group without it): every
 * element within one bf16 step (2^-7 relative) plus 1e-3. */
static int check_against_cublas(layer *L) {
    const size_t n = (size_t)L->tokens * L->n, bytes = n * 2;
    CUDA_CHECK(cudaMemset(L->c_ref, 0xFF, bytes));
    if (HAVE_CUBLAS_GROUPED)
        cublas_grouped(L);
    else
        cublas_per_group(L);
    int ok = 1;
    for (int v = 0; v < 2; v++) {
        CUDA_CHECK(cudaMemset(L->c_all, 0xFF, bytes)); /* all-ones bf16 is NaN */
        run_grouped(v ? &L->reuse : &L->plan);
        CUDA_CHECK(cudaDeviceSynchronize());
        ok = device_reported_nothing(&L->plan, "libtma") && ok;
        compare_result r;
        CUDA_CHECK(compare_bf16(L->c_all, L->c_ref, n, 1.f / 128.f, 1e-3f, &r));
        if (r.bad) {
            printf("  %s: %llu of %zu elements differ from cuBLAS (first at %llu); max |diff| %.3g\n",
                   v ? "GEMM on the previous run's maps" : "libtma", r.bad, n, r.first, r.max_abs_diff);
            ok = 0;
        }
    }
    return ok;
}

/* A small layer against a CPU fp64 product, every element: |got - ref| <= 2^-8 |ref| + 2^-20 sum |a b|. */
static int check_against_cpu(cublasHandle_t h, uint64_t seed, int n, int k) {
    layer L;
    layer_open(&L, h, 8, 1000, n, k, seed);
    const size_t na = (size_t)L.tokens * L.k, nc = (size_t)L.tokens * L.n;
    CUDA_CHECK(cudaMemset(L.c_all, 0xFF, nc * 2));
    run_grouped(&L.plan);
    CUDA_CHECK(cudaDeviceSynchronize());
    int ok = device_reported_nothing(&L.plan, "libtma");
    uint16_t *a = host_alloc(na * 2), *c = host_alloc(nc * 2), *b = host_alloc((size_t)L.n * L.k * 2);
    CUDA_CHECK(cudaMemcpy(a, L.a_all, na * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(c, L.c_all, nc * 2, cudaMemcpyDeviceToHost));
    long bad = 0;
    size_t row = 0;
    for (int g = 0; g < L.groups; g++) {
        CUDA_CHECK(cudaMemcpy(b, L.b[g], (size_t)L.n * L.k * 2, cudaMemcpyDeviceToHost));
        for (int r = 0; r < L.m[g]; r++, row++)
            for (int j = 0; j < L.n; j++) {
                double ref = 0, mag = 0;
                for (int kk = 0; kk < L.k; kk++) {
                    const double t = bf16_to_double(a[row * L.k + kk]) * bf16_to_double(b[(size_t)j * L.k + kk]);
                    ref += t;
                    mag += fabs(t);
                }
                const double v = bf16_to_double(c[row * L.n + j]);
                if (!(fabs(v - ref) <= ldexp(fabs(ref), -8) + ldexp(mag, -20)) && bad++ == 0)
                    printf("  CPU check: expert %d row %d col %d: %.6g, fp64 %.6g\n", g, r, j, v, ref);
            }
    }
    printf("small layer (8 experts, 1000 tokens, N %d, K %d%s) against a CPU fp64 product: %s (%ld of %zu elements "
           "off)\n", n, k, L.plan.thread_loads ? ", thread-loaded kernel" : "", bad == 0 && ok ? "ok" : "FAIL", bad, nc);
    free(a), free(b), free(c);
    layer_close(&L);
    return bad == 0 && ok;
}

/* ------------------------------------------------------------------------------------------------
 * The table
 * ---------------------------------------------------------------------------------------------- */
typedef struct result {
    int groups, tokens, n, k, min_m, max_m, empty;
    double libtma, cublas_grouped, per_group, dense; /* TFLOP/s */
    double ms, gemm_only_ms;                         /* libtma: the run, the GEMM alone on built maps */
} result;

/* The microbenchmark of one map update (map_update_bench.cu), on a template like the grouped GEMM's A_g. */
static double update_ns_per_map; /* replace x 2 + release copy + acquire, with the template copy */

static void time_map_update(void) {
    void *base;
    CUDA_CHECK(cudaMalloc(&base, 4096));
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, base, 1, 4096, 8192, TMA_GEMM_BM, TMA_GEMM_BK, TMA_SWIZZLE_128B);
    tma_tensor t;
    tma_diag diag;
    if (tma_tensor_make(&t, &d, &diag) != TMA_OK) {
        fprintf(stderr, "template: %s\n", diag.message);
        exit(1);
    }
    double check_ns;
    int refused;
    CUDA_CHECK(map_update_bench(&t, &d, base, 1000, &update_ns_per_map, &check_ns, &refused));
    printf("device-side map update, one warp, 1000 rounds (the template into a builder, address and rows replaced, "
           "release copy, acquire): %.0f ns a map; the rules check of a map: %.0f ns (%d refused)\n",
           update_ns_per_map, check_ns, refused);
    CUDA_CHECK(cudaFree(base));
}

static result time_layer(layer *L, int reps) {
    float ms[NRUNS];
    bench_interleaved(launch, L, NRUNS, reps, ms);
    const double flops = 2.0 * L->tokens * (double)L->n * L->k;
    result r = {L->groups, L->tokens, L->n, L->k, 1 << 30, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int g = 0; g < L->groups; g++) {
        r.min_m = L->m[g] < r.min_m ? L->m[g] : r.min_m;
        r.max_m = L->m[g] > r.max_m ? L->m[g] : r.max_m;
        r.empty += L->m[g] == 0;
    }
    r.libtma = flops / (ms[RUN_LIBTMA] * 1e-3) / 1e12;
    r.cublas_grouped = HAVE_CUBLAS_GROUPED ? flops / (ms[RUN_CUBLAS_GROUPED] * 1e-3) / 1e12 : 0;
    r.per_group = flops / (ms[RUN_CUBLAS_PER_GROUP] * 1e-3) / 1e12;
    r.dense = flops / (ms[RUN_DENSE] * 1e-3) / 1e12;
    r.ms = ms[RUN_LIBTMA], r.gemm_only_ms = ms[RUN_GEMM_ONLY];
    return r;
}

static void print_results(const char *gpu, int reps, const result *rs, int n, int failures) {
    printf("\n%s: TFLOP/s = 2 * tokens * N * K / the median of %d runs, CUDA events, every column of a row timed in "
           "interleaved rounds after >= %.0f ms of warm-up. cuBLAS-g = cublasGemmGroupedBatchedEx over the experts "
           "with tokens; per-exp. = one cublasGemmEx each; dense = libtma's tma_gemm on tokens x N x K (the same "
           "work, one expert's weights); maps = the share of libtma's time (ms) not spent when the GEMM runs alone "
           "on the maps the previous run built (gemm ms): the cost of building them on the device (the check and the "
           "launch included); upd = three map updates (a group's, as the microbenchmark above times them; the groups "
           "build side by side) against the run's time\n",
           gpu, reps, BENCH_WARMUP_MS);
    printf("%-4s %6s %5s %5s %11s %6s %9s %9s %8s %9s %8s %8s %8s %8s %8s %7s\n", "G", "tokens", "N", "K",
           "M_g min-max", "empty", "libtma", "cuBLAS-g", "vs cB-g", "per-exp.", "dense", "vs dense", "ms",
           "gemm ms", "maps", "upd");
    for (int i = 0; i < n; i++) {
        const result *r = &rs[i];
        char mm[24];
        snprintf(mm, sizeof mm, "%d-%d", r->min_m, r->max_m);
        printf("%-4d %6d %5d %5d %11s %6d %9.1f %9.1f %7.1f%% %9.1f %8.1f %7.1f%% %8.3f %8.3f %7.2f%% %6.2f%%\n",
               r->groups, r->tokens, r->n, r->k, mm, r->empty, r->libtma, r->cublas_grouped,
               r->cublas_grouped > 0 ? 100.0 * r->libtma / r->cublas_grouped : 0.0, r->per_group, r->dense,
               100.0 * r->libtma / r->dense, r->ms, r->gemm_only_ms, 100.0 * (r->ms - r->gemm_only_ms) / r->ms,
               100.0 * 3.0 * update_ns_per_map / (r->ms * 1e6));
    }
    printf("%s\n", failures ? "SOME CHECKS FAILED" : "all checks passed");
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--list") == 0)
        return list_shapes();
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    reps = reps < 10 ? 10 : reps;
    int ndev = 0;
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
        printf("no Hopper (sm_90) GPU here (%s): the grouped GEMM cannot run\n",
               e != cudaSuccess ? cudaGetErrorString(e) : ndev == 0 ? "no device" : "device is not sm_90");
        return 0;
    }
    printf("GPU: %s, %d SMs, L2 %d MiB%s\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
           HAVE_CUBLAS_GROUPED ? "" : " (cuBLAS older than 12.5: no grouped GEMM to compare with)");
    cublasHandle_t h;
    CB(cublasCreate(&h));
    const char *seed_env = getenv("TMA_GROUPED_SEED");
    const uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    printf("data seed %llu (replay with TMA_GROUPED_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    int failures = !check_against_cpu(h, seed, 512, 264);
    failures += !check_against_cpu(h, seed + 1u, 500, 263); /* rows off 16 bytes: the thread-loaded kernel */
    time_map_update();
    const char *only = getenv("TMA_GROUPED_ONLY");
    result results[SHAPES];
    int nresults = 0;
    for (int i = 0; i < SHAPES; i++) {
        int g, t, n, k;
        shape_of(i, &g, &t, &n, &k);
        char name[64];
        snprintf(name, sizeof name, "%d %d %d %d", g, t, n, k);
        if (only && strcmp(only, name) != 0)
            continue;
        layer L;
        layer_open(&L, h, g, t, n, k, shape_seed(seed, i));
        const int ok = check_against_cublas(&L);
        printf("G %3d, %5d tokens, N %d, K %d: libtma against cuBLAS %s\n", g, t, n, k, ok ? "ok" : "FAIL");
        failures += !ok;
        if (ok)
            results[nresults++] = time_layer(&L, reps);
        layer_close(&L);
    }
    CB(cublasDestroy(h));
    print_results(prop.name, reps, results, nresults, failures);
    return failures ? 1 : 0;
}
