/* tma-transpose(1)
 *
 * NAME
 *     tma-transpose - matrix transpose through shared memory: three classic kernels and libtma's
 *
 * SYNOPSIS
 *     tma-transpose [--ncu | --ncu-isolated] [--tune] [--reps N]
 *
 * DESCRIPTION
 *     Transposes M x N fp32 and bf16 matrices (row pitch rounded up to 16 bytes, as TMA requires) with
 *       naive         32x32 shared tile, 32x8 threads; the column read is a 32-way bank conflict (fp32)
 *       padded        the same tile with a 33-element pitch
 *       xor-swizzled  the same tile addressed tile[r][c ^ r]
 *       libtma        the transpose as tma_permute's 2-D case (tma_transpose_desc, tma/kernels.h): TMA loads
 *                     of 128B-swizzled boxes (128 bytes x 128 rows) into a 4-stage mbarrier ring,
 *                     conflict-free 16-byte shared reads and writes, a register transpose of 4x4 (fp32) or
 *                     8x8 (bf16) blocks, TMA stores (or 16-byte thread stores where out's pitch is not a
 *                     multiple of 32 bytes: docs/guide/permute.md)
 *     The classic kernels are this sample's own (classic.cu); the libtma ones are the installed library's.
 *     For each size (8192^2, 16384^2 and the ragged 12345 x 6789) and type, every variant is first
 *     verified against a CPU transpose of fresh random data (output poisoned first, every element compared
 *     bitwise); then all are timed with cudaMemcpy device-to-device of the same bytes, in interleaved
 *     rounds after >= 500 ms of warm-up rounds (median of N launches each, CUDA events; common/bench.h).
 *     GB/s counts bytes read plus bytes written. One table is printed last.
 *
 *     Without a CUDA device, or on one that is not Hopper (sm_90), it says so and runs libtma's transpose
 *     pipeline through the CPU model of the copy engine instead (tma_permute_model) on a small ragged
 *     matrix, verifies the result and prints the per-tile facts: descriptors, transaction bytes,
 *     shared-memory bytes, swizzle.
 *
 * OPTIONS
 *     --ncu     run each variant once on 8192^2 (fp32 and bf16), unverified and untimed: for
 *               ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,...
 *     --ncu-isolated
 *               run the libtma kernel once on a matrix of exactly one tile per block (fp32 128 x 4224, bf16
 *               128 x 8448 on 132 SMs), so no TMA copy overlaps a block's shared reads and writes: the
 *               bank-conflict counters then see the kernel's own accesses alone
 *     --tune    after the table, sweep the libtma kernel's tile order (bands of G tile columns) and L2
 *               promotion at 16384^2 and 12345 x 6789, each setting verified before it is timed
 *     --reps N  timed launches per variant (default 20)
 *
 * BUILD AND RUN
 *     cmake -B build && cmake --build build -j && ./build/samples/tma-transpose
 *
 * EXIT STATUS
 *     0 when every variant verified (or the CPU-model pipeline did), 1 otherwise, 2 for bad usage.
 *
 * SEE ALSO
 *     samples/transpose/ (tma-transpose-example: the kernel's API on small data, no timing), docs/guide/permute.md
 *     ("The 2-D transpose"), docs/lab/transpose.md (this benchmark's results)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/bench.h"
#include "../../common/cuda_check.h"
#include "../../common/hopper.h"
#include "classic.h"

/* ------------------------------------------------------------------------------------------------
 * Variants, data, CPU reference
 * ---------------------------------------------------------------------------------------------- */
typedef struct variant {
    const char *name;
    int classic; /* a classic_kind, or -1 for libtma */
} variant;

static const variant variants[] = {
    {"naive", CLASSIC_NAIVE},
    {"padded", CLASSIC_PADDED},
    {"xor-swizzled", CLASSIC_XOR},
    {"libtma", -1},
};
enum { NVARIANTS = sizeof variants / sizeof variants[0], LIBTMA = NVARIANTS - 1 };

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }
static const char *dtype_name(uint32_t e) { return e == 4 ? "fp32" : "bf16"; }

/* Fresh data every run (seed from the clock, printed; TMA_TRANSPOSE_SEED replays it). */
static uint64_t rng;
static void seed_random(void) {
    const char *env = getenv("TMA_TRANSPOSE_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    printf("data seed %llu (replay with TMA_TRANSPOSE_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
}

static void fill_random(void *p, size_t bytes) {
    uint8_t *b = (uint8_t *)p;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
        uint64_t x = rng * 0x2545F4914F6CDD1Dull;
        memcpy(b + i, &x, 8);
    }
    for (; i < bytes; i++)
        b[i] = (uint8_t)(i * 131u);
}

/* Plain element-by-element transpose (bit copies). */
static void cpu_transpose(uint32_t e, const uint8_t *in, uint8_t *out, uint32_t rows, uint32_t cols, size_t ip,
                          size_t op) {
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            memcpy(out + (size_t)c * op + (size_t)r * e, in + (size_t)r * ip + (size_t)c * e, e);
}

/* Mismatching elements of an out_rows x out_cols output (padding ignored); the first is described in `where`. */
static size_t compare(uint32_t e, const uint8_t *got, const uint8_t *want, uint32_t out_rows, uint32_t out_cols,
                      size_t op, char *where, size_t wherelen) {
    size_t bad = 0;
    for (uint32_t r = 0; r < out_rows; r++)
        for (uint32_t c = 0; c < out_cols; c++) {
            const size_t at = (size_t)r * op + (size_t)c * e;
            if (memcmp(got + at, want + at, e) == 0)
                continue;
            if (bad++ == 0) {
                uint32_t gv = 0, wv = 0;
                memcpy(&gv, got + at, e);
                memcpy(&wv, want + at, e);
                snprintf(where, wherelen, "output (%u, %u): got 0x%0*x, want 0x%0*x", r, c, (int)e * 2, gv,
                         (int)e * 2, wv);
            }
        }
    return bad;
}

/* ------------------------------------------------------------------------------------------------
 * No GPU: libtma's tile pipeline on the CPU model
 * ---------------------------------------------------------------------------------------------- */
static void print_desc(const char *what, const tma_tiled_desc *d) {
    printf("  %s: %s, global dims {%llu, %llu} (dim 0 = columns), row stride %llu B, box {%u, %u}, %s, "
           "%s\n",
           what, tma_dtype_name(d->dtype), (unsigned long long)d->global_dim[0], (unsigned long long)d->global_dim[1],
           (unsigned long long)d->global_stride[0], d->box_dim[0], d->box_dim[1], tma_swizzle_name(d->swizzle),
           d->oob_fill == TMA_OOB_ZERO ? "out-of-bounds loads fill zero" : "NaN fill");
}

static void print_model_facts(uint32_t e, const tma_permute_model_facts *f) {
    print_desc("load map ", &f->load_desc);
    print_desc("store map", &f->store_desc);
    printf("  per load: %zu tx bytes (what the mbarrier expects), %zu shared bytes; per store box: %zu shared "
           "bytes\n",
           f->load_tx_bytes, f->load_smem_bytes, f->store_smem_bytes);
    printf("  %llu tiles, %llu store boxes%s; each thread: %u 16-byte reads, a %ux%u register transpose, %u 16-byte "
           "writes\n",
           (unsigned long long)f->tiles, (unsigned long long)f->stores,
           f->stores ? "" : " (out rows are not 32-byte aligned: the threads store the tiles)", 16 / e, 16 / e,
           16 / e, 16 / e);
}

/* Transpose a small ragged matrix of each type through the permute's CPU-model pipeline and verify it. */
static int cpu_model_demo(void) {
    const uint32_t rows = 333, cols = 201;
    int failed = 0;
    for (uint32_t e = 4; e >= 2; e -= 2) {
        const size_t ip = round16((size_t)cols * e), op = round16((size_t)rows * e);
        uint8_t *in = malloc(rows * ip), *out = malloc(cols * op), *want = malloc(cols * op);
        if (!in || !out || !want) {
            fprintf(stderr, "out of host memory\n");
            return 1;
        }
        fill_random(in, rows * ip);
        memset(out, 0xFF, cols * op), memset(want, 0xFF, cols * op);
        cpu_transpose(e, in, want, rows, cols, ip, op);
        tma_permute_model_facts f;
        tma_diag diag;
        char where[160] = "";
        const tma_permute_desc d = tma_transpose_desc(e, in, out, rows, cols, ip, op);
        tma_status s = tma_permute_model(&d, &f, &diag);
        size_t bad = s == TMA_OK ? compare(e, out, want, cols, rows, op, where, sizeof where) : 1;
        printf("\n%s %u x %u (row pitch %zu B in, %zu B out), libtma tile pipeline on the CPU model:\n",
               dtype_name(e), rows, cols, ip, op);
        if (s != TMA_OK) {
            printf("  FAILED: %s: %s\n", tma_status_name(s), diag.message);
        } else {
            print_model_facts(e, &f);
            printf("  verified against a CPU transpose, bitwise: %s%s%s\n", bad ? "MISMATCH " : "all elements equal",
                   bad ? ": " : "", bad ? where : "");
        }
        failed |= s != TMA_OK || bad != 0;
        free(in), free(out), free(want);
    }
    return failed;
}

/* ------------------------------------------------------------------------------------------------
 * GPU: matrices, prepared launches, verification, timing
 * ---------------------------------------------------------------------------------------------- */

/* One test matrix on both sides: device input and output; on the host the input, the CPU reference and a
 * buffer for results (all three NULL when the matrix is only launched, for ncu). */
typedef struct matrix {
    uint32_t eb, rows, cols;
    size_t ip, op, in_bytes, out_bytes, logical; /* logical: the matrix's bytes, padding excluded */
    void *din, *dout;
    uint8_t *hin, *want, *got;
} matrix;

/* Allocate, fill with fresh random data and compute the reference (or, without one, fill a constant). */
static void matrix_open(matrix *m, uint32_t eb, uint32_t rows, uint32_t cols, int with_reference) {
    memset(m, 0, sizeof *m);
    m->eb = eb, m->rows = rows, m->cols = cols;
    m->ip = round16((size_t)cols * eb), m->op = round16((size_t)rows * eb);
    m->in_bytes = rows * m->ip, m->out_bytes = cols * m->op, m->logical = (size_t)rows * cols * eb;
    CUDA_CHECK(cudaMalloc(&m->din, m->in_bytes));
    CUDA_CHECK(cudaMalloc(&m->dout, m->out_bytes));
    if (!with_reference) {
        CUDA_CHECK(cudaMemset(m->din, 0x3C, m->in_bytes));
        return;
    }
    m->hin = malloc(m->in_bytes), m->want = malloc(m->out_bytes), m->got = malloc(m->out_bytes);
    if (!m->hin || !m->want || !m->got) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    fill_random(m->hin, m->in_bytes);
    CUDA_CHECK(cudaMemcpy(m->din, m->hin, m->in_bytes, cudaMemcpyHostToDevice));
    memset(m->want, 0, m->out_bytes);
    cpu_transpose(eb, m->hin, m->want, rows, cols, m->ip, m->op);
}

static void matrix_close(matrix *m) {
    CUDA_CHECK(cudaFree(m->din));
    CUDA_CHECK(cudaFree(m->dout));
    free(m->hin), free(m->want), free(m->got);
}

/* A variant prepared for one matrix: the libtma plan, or the classic kernel's arguments. A NULL variant is the
 * memcpy of the matrix's bytes. */
typedef struct launch {
    const variant *v;
    const matrix *m;
    tma_permute_plan plan;
} launch;

static void launch_prepare(launch *l, const variant *v, const matrix *m) {
    l->v = v, l->m = m;
    if (v == NULL || v->classic >= 0)
        return;
    tma_diag diag;
    const tma_permute_desc d = tma_transpose_desc(m->eb, m->din, m->dout, m->rows, m->cols, m->ip, m->op);
    if (tma_permute_plan_make(&l->plan, &d, &diag) != TMA_OK) {
        fprintf(stderr, "%s: %s: %s\n", v->name, tma_status_name(diag.status), diag.message);
        exit(1);
    }
}

static void launch_run(const launch *l) {
    const matrix *m = l->m;
    if (l->v == NULL) {
        CUDA_CHECK(cudaMemcpyAsync(m->dout, m->din, m->logical, cudaMemcpyDeviceToDevice, 0));
    } else if (l->v->classic >= 0) {
        CUDA_CHECK(classic_transpose((classic_kind)l->v->classic, m->eb, m->din, m->dout, m->rows, m->cols, m->ip,
                                     m->op, 0));
    } else {
        tma_diag diag;
        if (tma_permute_run(&l->plan, NULL, &diag) != TMA_OK) {
            fprintf(stderr, "%s: %s\n", l->v->name, diag.message);
            exit(1);
        }
    }
}

/* Run once into a poisoned output and compare every element with the reference, bitwise. Returns the number of
 * mismatches; the first is described in `where`. */
static size_t verify(const launch *l, matrix *m, char *where, size_t wherelen) {
    CUDA_CHECK(cudaMemset(m->dout, 0xFF, m->out_bytes)); /* poison: NaN in both types */
    launch_run(l);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(m->got, m->dout, m->out_bytes, cudaMemcpyDeviceToHost));
    return compare(m->eb, m->got, m->want, m->cols, m->rows, m->op, where, wherelen);
}

static void bench_launch_fn(void *ctx, int i) { launch_run(((const launch *const *)ctx)[i]); }

/* Median milliseconds of each launch, timed in interleaved rounds (common/bench.h). */
static void time_launches(const launch *const *ls, int n, int reps, float *median_ms) {
    bench_interleaved(bench_launch_fn, (void *)ls, n, reps, median_ms);
}

static double gbs_of(const matrix *m, float ms) { return 2.0 * m->logical / (ms * 1e6); }

/* ------------------------------------------------------------------------------------------------
 * The modes
 * ---------------------------------------------------------------------------------------------- */

/* One table row. */
typedef struct row {
    const char *variant;
    uint32_t e, rows, cols;
    float ms;
    double gbs, pct;
    int ok;
} row;

/* Verify every variant on one matrix, then time the memcpy and the verified ones; append rows to `table`. */
static int measure_matrix(uint32_t eb, uint32_t rows, uint32_t cols, int reps, row *table, int *nt) {
    matrix m;
    matrix_open(&m, eb, rows, cols, 1);
    launch ls[NVARIANTS + 1];
    const launch *timed[NVARIANTS + 1];
    int ntimed = 0, slot[NVARIANTS], failed = 0;
    launch_prepare(&ls[NVARIANTS], NULL, &m); /* the memcpy, timed first */
    timed[ntimed++] = &ls[NVARIANTS];
    for (int v = 0; v < NVARIANTS; v++) {
        char where[160] = "";
        launch_prepare(&ls[v], &variants[v], &m);
        const size_t bad = verify(&ls[v], &m, where, sizeof where);
        slot[v] = bad ? 0 : ntimed;
        if (bad) {
            printf("FAILED: %s %s %ux%u: %zu of %zu elements differ; first: %s\n", variants[v].name, dtype_name(eb),
                   rows, cols, bad, (size_t)rows * cols, where);
            failed = 1;
        } else {
            timed[ntimed++] = &ls[v];
        }
    }
    float ms[NVARIANTS + 1];
    time_launches(timed, ntimed, reps, ms);
    const double copy_gbs = gbs_of(&m, ms[0]);
    table[(*nt)++] = (row){"cudaMemcpy D2D", eb, rows, cols, ms[0], copy_gbs, 100.0, 1};
    for (int v = 0; v < NVARIANTS; v++) {
        row r = {variants[v].name, eb, rows, cols, 0, 0, 0, slot[v] != 0};
        if (slot[v]) {
            r.ms = ms[slot[v]];
            r.gbs = gbs_of(&m, r.ms);
            r.pct = 100.0 * r.gbs / copy_gbs;
        }
        table[(*nt)++] = r;
    }
    matrix_close(&m);
    return failed;
}

static void print_table(const row *table, int nt, int reps, int failed) {
    printf("\nAll variants verified bitwise against a CPU transpose before timing: %s\n", failed ? "NO" : "yes");
    printf("Median of %d launches each (CUDA events), the memcpy and every variant of a size timed in interleaved "
           "rounds after >= %.0f ms of warm-up rounds; GB/s = (bytes read + bytes written) / time.\n\n",
           reps, BENCH_WARMUP_MS);
    printf("%-15s %-5s %-13s %10s %9s %9s\n", "variant", "dtype", "size", "time (ms)", "GB/s", "% memcpy");
    for (int i = 0; i < nt; i++) {
        char size[32];
        snprintf(size, sizeof size, "%ux%u", table[i].rows, table[i].cols);
        if (table[i].ok)
            printf("%-15s %-5s %-13s %10.3f %9.0f %8.1f%%\n", table[i].variant, dtype_name(table[i].e), size,
                   table[i].ms, table[i].gbs, table[i].pct);
        else
            printf("%-15s %-5s %-13s %10s %9s %9s\n", table[i].variant, dtype_name(table[i].e), size, "WRONG", "-",
                   "-");
    }
}

/* --ncu: every variant once on 8192^2, for the profiler. */
static int run_for_ncu(void) {
    for (uint32_t eb = 4; eb >= 2; eb -= 2) {
        matrix m;
        matrix_open(&m, eb, 8192, 8192, 0);
        for (int v = 0; v < NVARIANTS; v++) {
            launch l;
            launch_prepare(&l, &variants[v], &m);
            launch_run(&l);
            CUDA_CHECK(cudaDeviceSynchronize());
            printf("ran %s %s %ux%u once\n", variants[v].name, dtype_name(eb), m.rows, m.cols);
        }
        matrix_close(&m);
    }
    return 0;
}

/* --ncu-isolated: the libtma kernel once, on exactly one tile per block. */
static int run_isolated(void) {
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (uint32_t eb = 4; eb >= 2; eb -= 2) {
        matrix m;
        matrix_open(&m, eb, 128, (uint32_t)sms * (128u / eb), 0);
        launch l;
        launch_prepare(&l, &variants[LIBTMA], &m);
        launch_run(&l);
        CUDA_CHECK(cudaDeviceSynchronize());
        printf("ran %s %s %ux%u once: %llu tiles on %u blocks\n", variants[LIBTMA].name, dtype_name(eb), m.rows,
               m.cols, (unsigned long long)l.plan.tiles, l.plan.grid);
        matrix_close(&m);
    }
    return 0;
}

/* --tune: the libtma kernel's tile order and L2 promotion; every setting verified, then all timed together with
 * the memcpy in interleaved rounds. */
static int run_tune(int reps) {
    static const uint32_t sizes[][2] = {{16384, 16384}, {12345, 6789}};
    static const uint32_t groups[] = {0, 4, 8, 16};
    static const tma_l2_promotion l2s[] = {TMA_L2_128B, TMA_L2_256B};
    static const char *l2n[] = {"none", "64B", "128B", "256B"};
    enum { NSET = 4 * 2 };
    int failed = 0;
    printf("\nTune: libtma, tile order (G = 0: row-major, else bands of G tile columns) x L2 promotion\n");
    printf("%-12s %-5s %-13s %4s %5s %10s %9s %9s\n", "variant", "dtype", "size", "G", "L2", "time (ms)", "GB/s",
           "% memcpy");
    for (uint32_t eb = 4; eb >= 2; eb -= 2)
        for (int si = 0; si < 2; si++) {
            matrix m;
            matrix_open(&m, eb, sizes[si][0], sizes[si][1], 1);
            char size[32];
            snprintf(size, sizeof size, "%ux%u", m.rows, m.cols);
            launch ls[NSET + 1];
            const launch *timed[NSET + 1];
            int ntimed = 0, setting_of[NSET + 1];
            launch_prepare(&ls[NSET], NULL, &m);
            timed[ntimed++] = &ls[NSET];
            for (int i = 0; i < NSET; i++) {
                const uint32_t g = groups[i / 2];
                const tma_l2_promotion l2 = l2s[i % 2];
                char where[160] = "";
                tma_diag diag;
                launch_prepare(&ls[i], &variants[LIBTMA], &m);
                if (tma_permute_plan_tune(&ls[i].plan, g, l2, &diag) != TMA_OK) {
                    fprintf(stderr, "libtma: %s\n", diag.message);
                    return 1;
                }
                if (verify(&ls[i], &m, where, sizeof where)) {
                    printf("%-12s %-5s %-13s %4u %5s WRONG: %s\n", "libtma", dtype_name(eb), size, g, l2n[l2], where);
                    failed = 1;
                    continue;
                }
                setting_of[ntimed] = i;
                timed[ntimed++] = &ls[i];
            }
            float ms[NSET + 1];
            time_launches(timed, ntimed, reps, ms);
            const double copy_gbs = gbs_of(&m, ms[0]);
            printf("%-12s %-5s %-13s %4s %5s %10.3f %9.0f %8.1f%%\n", "memcpy", dtype_name(eb), size, "-", "-", ms[0],
                   copy_gbs, 100.0);
            for (int t = 1; t < ntimed; t++) {
                const int i = setting_of[t];
                printf("%-12s %-5s %-13s %4u %5s %10.3f %9.0f %8.1f%%\n", "libtma", dtype_name(eb), size,
                       groups[i / 2], l2n[l2s[i % 2]], ms[t], gbs_of(&m, ms[t]), 100.0 * gbs_of(&m, ms[t]) / copy_gbs);
            }
            matrix_close(&m);
        }
    return failed;
}

static int have_hopper(void) { return sample_have_hopper("libtma's transpose pipeline through the CPU model of the copy engine"); }

int main(int argc, char **argv) {
    int ncu = 0, reps = 20, tune = 0, isolated = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ncu"))
            ncu = 1;
        else if (!strcmp(argv[i], "--ncu-isolated"))
            isolated = 1;
        else if (!strcmp(argv[i], "--tune"))
            tune = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--ncu | --ncu-isolated] [--tune] [--reps N]\n", argv[0]);
            return 2;
        }
    }
    reps = reps < 1 ? 1 : reps;
    seed_random();
    if (!have_hopper())
        return cpu_model_demo();
    if (isolated)
        return run_isolated();
    if (ncu)
        return run_for_ncu();

    static const uint32_t sizes[][2] = {{8192, 8192}, {16384, 16384}, {12345, 6789}};
    row table[2 * 3 * (NVARIANTS + 1)];
    int nt = 0, failed = 0;
    for (uint32_t eb = 4; eb >= 2; eb -= 2)
        for (int si = 0; si < 3; si++)
            failed |= measure_matrix(eb, sizes[si][0], sizes[si][1], reps, table, &nt);
    print_table(table, nt, reps, failed);
    if (tune)
        failed |= run_tune(reps);
    return failed;
}
