/* tma-transpose(1)
 *
 * NAME
 *     tma-transpose - matrix transpose through shared memory: three classic kernels and the libtma one
 *
 * SYNOPSIS
 *     tma-transpose [--ncu | --ncu-isolated] [--tune] [--reps N]
 *
 * DESCRIPTION
 *     Transposes M x N fp32 and bf16 matrices (row pitch rounded up to 16 bytes, as TMA requires) with
 *       naive         32x32 shared tile, 32x8 threads; the column read is a 32-way bank conflict (fp32)
 *       padded        the same tile with a 33-element pitch
 *       xor-swizzled  the same tile addressed tile[r][c ^ r]
 *       libtma        TMA loads of 128B-swizzled boxes (128 bytes x 128 rows) into a 4-stage mbarrier ring,
 *                     16-byte conflict-free shared reads and writes addressed through tma_swizzle_elem,
 *                     a register transpose of 4x4 (fp32) or 8x8 (bf16) blocks, TMA stores
 *       libtma-b64    the same with 64-row boxes
 *       libtma-wide   as libtma, but the transposed tile goes to one unswizzled output box of 128 elements
 *                     per row (rows of 128 x elem bytes, so still conflict-free), one TMA store per tile
 *     For each size (8192^2, 16384^2 and the ragged 12345 x 6789) and type, every variant is first
 *     verified against a CPU transpose of fresh random data (output poisoned first, every element compared
 *     bitwise); then all are timed with cudaMemcpy device-to-device of the same bytes, in interleaved
 *     rounds after >= 500 ms of warm-up rounds (median of N launches each, CUDA events; bench.h). GB/s
 *     counts bytes read plus bytes written. One table is printed last.
 *
 *     Without a CUDA device, or on one that is not Hopper (sm_90), it says so and runs the libtma tile
 *     pipeline through libtma's CPU model of the copy engine instead (tma_model_load_tiled -> reads and
 *     writes through tma_swizzle_elem -> tma_model_store_tiled) on a small ragged matrix, verifies the
 *     result and prints the per-tile facts: descriptors, transaction bytes, shared-memory bytes, swizzle.
 *
 * OPTIONS
 *     --ncu     run each variant once on 8192^2 (fp32 and bf16), unverified and untimed: for
 *               ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,...
 *     --ncu-isolated
 *               run the libtma and libtma-wide kernels once on a matrix of exactly one tile per block (fp32 128 x 4224,
 *               bf16 128 x 8448: 132 tiles), so no TMA copy overlaps a block's shared reads and writes:
 *               the bank-conflict counters then see the kernel's own accesses alone
 *     --tune    after the table, sweep the libtma kernel's tile order (bands of G tile columns) and L2
 *               promotion at 16384^2 and 12345 x 6789, each setting verified before it is timed
 *     --reps N  timed launches per variant (default 20)
 *
 * EXIT STATUS
 *     0 when every variant verified (or the CPU-model pipeline did), 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "transpose.h"

#include "bench.h"
#include "cuda_check.h"

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

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

static const char *dtype_name(uint32_t e) { return e == 4 ? "fp32" : "bf16"; }

/* ------------------------------------------------------------------------------------------------
 * No GPU: the tile pipeline on the CPU model.
 * ---------------------------------------------------------------------------------------------- */
static void print_desc(const char *what, const tma_tiled_desc *d) {
    printf("  %s: %s, global dims {%llu, %llu} (dim 0 = columns), row stride %llu B, box {%u, %u}, %s, "
           "%s\n",
           what, tma_dtype_name(d->dtype), (unsigned long long)d->global_dim[0], (unsigned long long)d->global_dim[1],
           (unsigned long long)d->global_stride[0], d->box_dim[0], d->box_dim[1], tma_swizzle_name(d->swizzle),
           d->oob_fill == TMA_OOB_ZERO ? "out-of-bounds loads fill zero" : "NaN fill");
}

static int cpu_model_demo(void) {
    const uint32_t rows = 333, cols = 201;
    int failed = 0;
    for (uint32_t e = 4; e >= 2; e -= 2) {
        size_t ip = round16((size_t)cols * e), op = round16((size_t)rows * e);
        uint8_t *in = malloc(rows * ip), *out = malloc(cols * op), *want = malloc(cols * op);
        if (!in || !out || !want) {
            fprintf(stderr, "out of host memory\n");
            return 1;
        }
        fill_random(in, rows * ip);
        memset(out, 0xFF, cols * op), memset(want, 0xFF, cols * op);
        tr_reference(e, in, want, rows, cols, ip, op);
        tr_tile_facts f;
        char err[512], where[160] = "";
        uint32_t box_rows = 128;
        tma_status s = tr_model_transpose(e, in, out, rows, cols, ip, op, box_rows, &f, err, sizeof err);
        size_t bad = s == TMA_OK ? tr_compare(e, out, want, cols, rows, op, where, sizeof where) : 1;
        printf("\n%s %u x %u (row pitch %zu B in, %zu B out), libtma tile pipeline on the CPU model:\n",
               dtype_name(e), rows, cols, ip, op);
        if (s != TMA_OK) {
            printf("  FAILED: %s\n", err);
        } else {
            print_desc("load map ", &f.din);
            print_desc("store map", &f.dout);
            printf("  per load: %zu tx bytes (what the mbarrier expects), %zu shared bytes; per store: %zu bytes "
                   "from %zu shared bytes\n",
                   f.in_tx_bytes, f.in_smem_bytes, f.out_tx_bytes, f.out_smem_bytes);
            printf("  %u tiles, %u stores (%u per full tile); each thread: %u 16-byte reads, a %ux%u register "
                   "transpose, %u 16-byte writes\n",
                   f.tiles, f.stores, box_rows / tr_box_cols(e), 16 / e, 16 / e, 16 / e, 16 / e);
            printf("  verified against a CPU transpose, bitwise: %s%s%s\n", bad ? "MISMATCH " : "all elements equal",
                   bad ? ": " : "", bad ? where : "");
        }
        failed |= s != TMA_OK || bad != 0;
        free(in), free(out), free(want);
    }
    return failed;
}

/* ------------------------------------------------------------------------------------------------
 * GPU benchmark
 * ---------------------------------------------------------------------------------------------- */
typedef struct row {
    const char *variant;
    uint32_t e, rows, cols;
    float ms;
    double gbs, pct;
    int ok;
} row;

/* One test matrix on both sides: device input and output; on the host the input, the CPU reference and
 * a buffer for results (all three NULL when the matrix is only launched, for ncu). */
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
    tr_reference(eb, m->hin, m->want, rows, cols, m->ip, m->op);
}

static void matrix_close(matrix *m) {
    CUDA_CHECK(cudaFree(m->din));
    CUDA_CHECK(cudaFree(m->dout));
    free(m->hin), free(m->want), free(m->got);
}

/* Run the plan once into a poisoned output and compare every element with the reference, bitwise.
 * Returns the number of mismatches; the first is described in `where`. */
static size_t verify_plan(const tr_plan *p, matrix *m, char *where, size_t wherelen) {
    CUDA_CHECK(cudaMemset(m->dout, 0xFF, m->out_bytes)); /* poison: NaN in both types */
    CUDA_CHECK(tr_plan_run(p, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(m->got, m->dout, m->out_bytes, cudaMemcpyDeviceToHost));
    return tr_compare(m->eb, m->got, m->want, m->cols, m->rows, m->op, where, wherelen);
}

/* bench_launch for one matrix: launch i runs plans[i], or cudaMemcpy D2D of the matrix's bytes where
 * plans[i] is NULL. */
typedef struct transpose_row {
    const matrix *m;
    const tr_plan *const *plans;
} transpose_row;

static void launch_transpose(void *ctx, int i) {
    const transpose_row *tr = ctx;
    if (tr->plans[i])
        CUDA_CHECK(tr_plan_run(tr->plans[i], 0));
    else
        CUDA_CHECK(cudaMemcpyAsync(tr->m->dout, tr->m->din, tr->m->logical, cudaMemcpyDeviceToDevice, 0));
}

/* Median milliseconds of each launch (plans[i], or the memcpy where NULL) in interleaved rounds (bench.h). */
static void time_row(const matrix *m, const tr_plan *const *plans, int n, int reps, float *median_ms) {
    transpose_row tr = {m, plans};
    bench_interleaved(launch_transpose, &tr, n, reps, median_ms);
}

static int run_isolated(void) {
    for (int wide = 0; wide < 2; wide++)
    for (uint32_t eb = 4; eb >= 2; eb -= 2) {
        const uint32_t rows = 128, cols = 132 * tr_box_cols(eb);
        const size_t ip = round16((size_t)cols * eb), op = round16((size_t)rows * eb);
        void *din, *dout;
        CUDA_CHECK(cudaMalloc(&din, rows * ip));
        CUDA_CHECK(cudaMalloc(&dout, cols * op));
        CUDA_CHECK(cudaMemset(din, 0x3C, rows * ip));
        tr_plan plan;
        char err[512];
        if (tr_plan_make(&plan, wide ? TR_TMA_WIDE : TR_TMA, eb, din, dout, rows, cols, ip, op, err, sizeof err) !=
            cudaSuccess) {
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, err);
            return 1;
        }
        CUDA_CHECK(tr_plan_run(&plan, 0));
        CUDA_CHECK(cudaDeviceSynchronize());
        printf("ran %s %s %ux%u once: %u tiles on %u blocks\n", tr_variant_name(plan.variant), dtype_name(eb), rows, cols,
               plan.tiles_x * plan.tiles_y, plan.grid.x);
        CUDA_CHECK(cudaFree(din));
        CUDA_CHECK(cudaFree(dout));
    }
    return 0;
}

/* Sweep the libtma kernel's tile order and L2 promotion; every setting verified, then all timed together
 * with the memcpy in interleaved rounds. */
static int run_tune(int reps) {
    static const uint32_t sizes[][2] = {{16384, 16384}, {12345, 6789}};
    static const uint32_t groups[] = {0, 4, 8, 16};
    static const tma_l2_promotion l2s[] = {TMA_L2_128B, TMA_L2_256B};
    static const tr_variant vs[] = {TR_TMA, TR_TMA_WIDE};
    static const char *l2n[] = {"none", "64B", "128B", "256B"};
    enum { NSET = 2 * 4 * 2 };
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
            tr_plan plans[NSET];
            const tr_plan *timed[NSET + 1] = {NULL}; /* the memcpy first, then the verified settings */
            int ntimed = 1, setting_of[NSET + 1];
            for (int i = 0; i < NSET; i++) {
                const int vi = i / 8, gi = i / 2 % 4, li = i % 2;
                char err[512], where[160] = "";
                if (tr_plan_make(&plans[i], vs[vi], eb, m.din, m.dout, m.rows, m.cols, m.ip, m.op, err, sizeof err) !=
                        cudaSuccess ||
                    tr_plan_tune(&plans[i], groups[gi], l2s[li], err, sizeof err) != cudaSuccess) {
                    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, err);
                    return 1;
                }
                if (verify_plan(&plans[i], &m, where, sizeof where)) {
                    printf("%-12s %-5s %-13s %4u %5s WRONG: %s\n", tr_variant_name(vs[vi]), dtype_name(eb), size,
                           groups[gi], l2n[l2s[li]], where);
                    failed = 1;
                    continue;
                }
                setting_of[ntimed] = i;
                timed[ntimed++] = &plans[i];
            }
            float ms[NSET + 1];
            time_row(&m, timed, ntimed, reps, ms);
            const double copy_gbs = 2.0 * m.logical / (ms[0] * 1e6);
            printf("%-12s %-5s %-13s %4s %5s %10.3f %9.0f %8.1f%%\n", "memcpy", dtype_name(eb), size, "-", "-", ms[0],
                   copy_gbs, 100.0);
            for (int t = 1; t < ntimed; t++) {
                const int i = setting_of[t], vi = i / 8, gi = i / 2 % 4, li = i % 2;
                const double gbs = 2.0 * m.logical / (ms[t] * 1e6);
                printf("%-12s %-5s %-13s %4u %5s %10.3f %9.0f %8.1f%%\n", tr_variant_name(vs[vi]), dtype_name(eb), size,
                       groups[gi], l2n[l2s[li]], ms[t], gbs, 100.0 * gbs / copy_gbs);
            }
            matrix_close(&m);
        }
    return failed;
}

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
    if (reps < 1)
        reps = 1;
    seed_random();

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    struct cudaDeviceProp prop;
    if (e != cudaSuccess || ndev == 0) {
        printf("No CUDA GPU here (%s): the kernels cannot run. Running the same tile pipeline through libtma's CPU "
               "model of the copy engine instead.\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "no device found");
        return cpu_model_demo();
    }
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) {
        printf("Device 0 is %s (sm_%d%d), not Hopper (sm_90): TMA kernels need sm_90. Running the same tile "
               "pipeline through libtma's CPU model of the copy engine instead.\n",
               prop.name, prop.major, prop.minor);
        return cpu_model_demo();
    }
    CUDA_CHECK(cudaSetDevice(0));
    printf("GPU: %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);

    if (isolated)
        return run_isolated();

    static const uint32_t sizes[][2] = {{8192, 8192}, {16384, 16384}, {12345, 6789}};
    const int nsizes = ncu ? 1 : 3;
    row table[96];
    int nt = 0, failed = 0;

    for (uint32_t eb = 4; eb >= 2; eb -= 2)
        for (int si = 0; si < nsizes; si++) {
            matrix m;
            matrix_open(&m, eb, sizes[si][0], sizes[si][1], !ncu);
            if (ncu) {
                for (int v = 0; v < TR_VARIANT_COUNT; v++) {
                    tr_plan plan;
                    char err[512];
                    if (tr_plan_make(&plan, (tr_variant)v, eb, m.din, m.dout, m.rows, m.cols, m.ip, m.op, err,
                                     sizeof err) != cudaSuccess) {
                        fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, tr_variant_name((tr_variant)v), err);
                        return 1;
                    }
                    CUDA_CHECK(tr_plan_run(&plan, 0));
                    CUDA_CHECK(cudaDeviceSynchronize());
                    printf("ran %s %s %ux%u once\n", tr_variant_name((tr_variant)v), dtype_name(eb), m.rows, m.cols);
                }
                matrix_close(&m);
                continue;
            }
            /* every variant verified first; then the memcpy and the verified ones timed in interleaved rounds */
            tr_plan plans[TR_VARIANT_COUNT];
            const tr_plan *timed[TR_VARIANT_COUNT + 1] = {NULL};
            int ntimed = 1, slot[TR_VARIANT_COUNT]; /* slot[v]: v's index in timed, 0 if it failed */
            for (int v = 0; v < TR_VARIANT_COUNT; v++) {
                char err[512], where[160] = "";
                if (tr_plan_make(&plans[v], (tr_variant)v, eb, m.din, m.dout, m.rows, m.cols, m.ip, m.op, err,
                                 sizeof err) != cudaSuccess) {
                    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, tr_variant_name((tr_variant)v), err);
                    return 1;
                }
                size_t bad = verify_plan(&plans[v], &m, where, sizeof where);
                slot[v] = 0;
                if (bad) {
                    printf("FAILED: %s %s %ux%u: %zu of %zu elements differ; first: %s\n",
                           tr_variant_name((tr_variant)v), dtype_name(eb), m.rows, m.cols, bad,
                           (size_t)m.rows * m.cols, where);
                    failed = 1;
                } else {
                    slot[v] = ntimed;
                    timed[ntimed++] = &plans[v];
                }
            }
            float ms[TR_VARIANT_COUNT + 1];
            time_row(&m, timed, ntimed, reps, ms);
            const double copy_gbs = 2.0 * m.logical / (ms[0] * 1e6);
            table[nt++] = (row){"cudaMemcpy D2D", eb, m.rows, m.cols, ms[0], copy_gbs, 100.0, 1};
            for (int v = 0; v < TR_VARIANT_COUNT; v++) {
                row r = {tr_variant_name((tr_variant)v), eb, m.rows, m.cols, 0, 0, 0, slot[v] != 0};
                if (slot[v]) {
                    r.ms = ms[slot[v]];
                    r.gbs = 2.0 * m.logical / (r.ms * 1e6);
                    r.pct = 100.0 * r.gbs / copy_gbs;
                }
                table[nt++] = r;
            }
            matrix_close(&m);
        }
    if (ncu)
        return 0;

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
    if (tune)
        failed |= run_tune(reps);
    return failed;
}
