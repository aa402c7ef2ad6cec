/* The grouped GEMM (tma_grouped_gemm, tma/kernels.h) on the GPU against a double-precision CPU product:
 *   random_groups - random problems: 1-24 groups with M_g of 0, 1-127 (under one tile), and up to 700 rows, N and K
 *                   multiples of 8 that are and are not multiples of the tiles, and one problem in three any N and K
 *                   (the thread-loaded kernel) with A_g and B_g 2 bytes off 16; with the default grid, with 1-5
 *                   blocks (each crosses many groups), after the same plan and arrays ran another problem (the
 *                   map table rebuilt in place: no stale map may be used), and with other band heights. Every
 *                   element of every C_g within bf16 rounding of the reference (|got - ref| <= 2^-8 |ref| +
 *                   2^-20 sum |a b|), NaN never passing (C_g poisoned with NaN first), the 64 bytes after each C_g
 *                   unchanged; the device reported no error.
 *   bad_groups    - a group whose A_g is misaligned, whose B_g is NULL, whose C_g is misaligned, or whose M_g is
 *                   negative: tma_grouped_gemm_check names that group and the rule in the host's words, its C_g is
 *                   untouched, every other group is right; the same under the thread-loaded kernel (N and K not
 *                   multiples of 8) with an odd A_g, a NULL B_g and a negative M_g.
 *   each_run_its_own_status - one plan through four runs whose group changes between them (good, B_g NULL, A_g off
 *                   16 bytes, good again): every run reports, skips and computes by its own groups, never by an
 *                   earlier run's map or flag; with the default grid and with one block.
 *   k_zero        - K = 0 writes zeros into every C_g.
 *   k_zero_bad_groups - K = 0 with a NULL or odd C_g or a negative M_g: that group reported and untouched, the rest
 *                   zeros; NULL A_g and B_g accepted.
 *   refused       - NULL arrays and out-of-range plan fields are refused with a message; N or K not a multiple of 8
 *                   is taken (the thread-loaded kernel).
 * Random data, seeded; TMA_TEST_SEED replays. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "gpu_common.h"
#include "tma/kernels.h"

enum { MAX_G = 24, GUARD = 64 };

/* One grouped problem, on the host and the device. */
typedef struct problem {
    int groups, n, k;
    int32_t m[MAX_G];
    uint16_t *a[MAX_G], *b[MAX_G];   /* host copies */
    void *da[MAX_G], *db[MAX_G];     /* A_g and B_g as given to the kernel (maybe 2 bytes into their allocations) */
    void *a_alloc[MAX_G], *b_alloc[MAX_G];
    uint8_t *dc[MAX_G];              /* C_g's allocation: C_g, then GUARD bytes */
    size_t c_bytes[MAX_G];
    const void **arr_a, **arr_b;     /* the device pointer arrays */
    void **arr_c;
    int32_t *arr_m;
} problem;

static void random_bf16(uint16_t *h, size_t n) {
    for (size_t i = 0; i < n; i++)
        h[i] = to_bf16((float)((int)rnd_in(0, 2000) - 1000) / 1000.0f);
}

/* Every C_g and the GUARD bytes after it set to 0xFF (bf16 NaN), before a run. */
static void poison_c(const problem *p) {
    for (int g = 0; g < p->groups; g++)
        CUDA_OK(cudaMemset(p->dc[g], 0xFF, p->c_bytes[g] + GUARD));
}

/* odd: A_g and B_g 2 bytes into their allocations (off 16 bytes: the thread-loaded kernel only). */
static void problem_make_at(problem *p, int groups, int n, int k, const int32_t *m, int odd) {
    memset(p, 0, sizeof *p);
    p->groups = groups, p->n = n, p->k = k;
    for (int g = 0; g < groups; g++) {
        p->m[g] = m[g];
        const size_t rows = m[g] > 0 ? (size_t)m[g] : 0u;
        p->a[g] = malloc(rows * k * 2 + 2);
        p->b[g] = malloc((size_t)n * k * 2 + 2);
        cr_assert(p->a[g] && p->b[g], "out of host memory");
        random_bf16(p->a[g], rows * k);
        random_bf16(p->b[g], (size_t)n * k);
        CUDA_OK(cudaMalloc(&p->a_alloc[g], rows * k * 2 + 16));
        CUDA_OK(cudaMalloc(&p->b_alloc[g], (size_t)n * k * 2 + 16));
        p->da[g] = (uint8_t *)p->a_alloc[g] + (odd ? 2 : 0);
        p->db[g] = (uint8_t *)p->b_alloc[g] + (odd ? 2 : 0);
        CUDA_OK(cudaMemcpy(p->da[g], p->a[g], rows * k * 2, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(p->db[g], p->b[g], (size_t)n * k * 2, cudaMemcpyHostToDevice));
        p->c_bytes[g] = rows * n * 2;
        CUDA_OK(cudaMalloc((void **)&p->dc[g], p->c_bytes[g] + GUARD));
    }
    poison_c(p);
    CUDA_OK(cudaMalloc((void **)&p->arr_a, sizeof(void *) * MAX_G));
    CUDA_OK(cudaMalloc((void **)&p->arr_b, sizeof(void *) * MAX_G));
    CUDA_OK(cudaMalloc((void **)&p->arr_c, sizeof(void *) * MAX_G));
    CUDA_OK(cudaMalloc((void **)&p->arr_m, sizeof(int32_t) * MAX_G));
}

static void problem_make(problem *p, int groups, int n, int k, const int32_t *m) {
    problem_make_at(p, groups, n, k, m, 0);
}

/* src's pointers and M_g into the arrays of dst, which the kernel reads. */
static void problem_upload_to(const problem *src, const problem *dst) {
    CUDA_OK(cudaMemcpy(dst->arr_a, src->da, sizeof(void *) * src->groups, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dst->arr_b, src->db, sizeof(void *) * src->groups, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dst->arr_c, src->dc, sizeof(void *) * src->groups, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dst->arr_m, src->m, sizeof(int32_t) * src->groups, cudaMemcpyHostToDevice));
}

/* The arrays as the kernel reads them (after any change of the pointers or the M_g). */
static void problem_upload(problem *p) { problem_upload_to(p, p); }

static void problem_free(problem *p) {
    for (int g = 0; g < p->groups; g++) {
        free(p->a[g]), free(p->b[g]);
        CUDA_OK(cudaFree(p->a_alloc[g]));
        CUDA_OK(cudaFree(p->b_alloc[g]));
        CUDA_OK(cudaFree(p->dc[g]));
    }
    CUDA_OK(cudaFree(p->arr_a));
    CUDA_OK(cudaFree(p->arr_b));
    CUDA_OK(cudaFree(p->arr_c));
    CUDA_OK(cudaFree(p->arr_m));
}

/* Group g's C against the reference, every element; the guard after it unchanged. skip: C_g must be untouched. */
static void check_group(const problem *p, int g, int untouched, const char *what) {
    const size_t bytes = p->c_bytes[g] + GUARD;
    uint8_t *got = malloc(bytes + 1);
    cr_assert(got != NULL);
    CUDA_OK(cudaMemcpy(got, p->dc[g], bytes, cudaMemcpyDeviceToHost));
    for (size_t i = p->c_bytes[g]; i < bytes; i++)
        cr_assert_eq(got[i], 0xFF, "%s: group %d: byte %zu after C_g was written", what, g, i - p->c_bytes[g]);
    if (untouched) {
        for (size_t i = 0; i < p->c_bytes[g]; i++)
            cr_assert_eq(got[i], 0xFF, "%s: group %d was skipped but its C_g byte %zu changed", what, g, i);
        free(got);
        return;
    }
    const int rows = p->m[g] > 0 ? p->m[g] : 0, n = p->n, k = p->k;
    double *arow = malloc(sizeof(double) * (k + 1));
    cr_assert(arow != NULL);
    for (int r = 0; r < rows; r++) {
        for (int kk = 0; kk < k; kk++)
            arow[kk] = bf16d(p->a[g][(size_t)r * k + kk]);
        for (int col = 0; col < n; col++) {
            const uint16_t *brow = p->b[g] + (size_t)col * k;
            double ref = 0, mag = 0;
            for (int kk = 0; kk < k; kk++) {
                const double t = arow[kk] * bf16d(brow[kk]);
                ref += t;
                mag += fabs(t);
            }
            uint16_t h;
            memcpy(&h, got + ((size_t)r * n + col) * 2, 2);
            const double v = bf16d(h), tol = ldexp(fabs(ref), -8) + ldexp(mag, -20);
            cr_assert(isfinite(v) && fabs(v - ref) <= tol,
                      "%s: group %d (M_g %d, N %d, K %d) C[%d][%d] = %.6g, reference %.6g (tolerance %.3g)", what, g,
                      p->m[g], n, k, r, col, v, ref, tol);
        }
    }
    free(arow);
    free(got);
}

static tma_grouped_gemm_plan make_plan(const problem *p) {
    tma_grouped_gemm_plan plan;
    tma_diag diag;
    const tma_status st = tma_grouped_gemm_plan_make(&plan, p->groups, p->n, p->k, (const void *const *)p->arr_a,
                                                     (const void *const *)p->arr_b, (void *const *)p->arr_c,
                                                     p->arr_m, &diag);
    cr_assert_eq(st, TMA_OK, "plan_make: %s: %s", tma_status_name(st), diag.message);
    return plan;
}

static tma_status run_and_check(tma_grouped_gemm_plan *plan, tma_diag *diag) {
    tma_status st = tma_grouped_gemm_run(plan, NULL, diag);
    cr_assert_eq(st, TMA_OK, "run: %s: %s", tma_status_name(st), diag->message);
    CUDA_OK(cudaDeviceSynchronize());
    return tma_grouped_gemm_check(plan, NULL, diag);
}

/* Random row counts: empty, under one tile, and up to `max_rows`. */
static void random_rows(int32_t *m, int groups, int max_rows) {
    for (int g = 0; g < groups; g++) {
        const int kind = (int)rnd_in(0, 5);
        m[g] = kind == 0 ? 0 : kind == 1 ? (int32_t)rnd_in(1, 127) : (int32_t)rnd_in(1, max_rows);
    }
}

Test(gpu_grouped, random_groups, .timeout = 600) {
    require_sm90();
    seed_rng("gpu_grouped.random_groups");
    const int configs = config_count(12);
    long elements = 0, groups_done = 0;
    for (int cfg = 0; cfg < configs; cfg++) {
        problem p;
        int32_t m[MAX_G];
        const int groups = (int)rnd_in(1, MAX_G);
        random_rows(m, groups, 700);
        const int any = cfg % 3 == 2; /* any N and K: the thread-loaded kernel, A_g and B_g off 16 bytes */
        const int n = any ? (int)rnd_in(1, 640) : 8 * (int)rnd_in(1, 80);
        const int k = any ? (int)rnd_in(1, 480) : 8 * (int)rnd_in(1, 60);
        problem_make_at(&p, groups, n, k, m, any && (n % 8 || k % 8));
        problem_upload(&p);
        tma_grouped_gemm_plan plan = make_plan(&p);
        const int variant = cfg % 4;
        char what[160];
        if (variant == 1)
            plan.grid_blocks = (int)rnd_in(1, 5);
        else if (variant == 2) { /* the plan first runs another problem through the same arrays */
            problem q;
            int32_t mq[MAX_G];
            random_rows(mq, groups, 700);
            problem_make_at(&q, groups, n, k, mq, any && (n % 8 || k % 8));
            problem_upload_to(&q, &p);
            tma_diag dq;
            const tma_status sq = run_and_check(&plan, &dq);
            cr_assert_eq(sq, TMA_OK, "config %d, first problem: %s: %s", cfg, tma_status_name(sq), dq.message);
            for (int g = 0; g < groups; g++)
                check_group(&q, g, 0, "first problem through the same arrays");
            problem_free(&q);
            problem_upload(&p);
        }
        else if (variant == 3) { /* by hand (run checks it and derives the launch) or through the tune function */
            tma_diag dt;
            const int band = (int)rnd_in(1, 8);
            if (cfg % 8 == 3)
                plan.group_m = band;
            else
                cr_assert_eq(tma_grouped_gemm_plan_tune(&plan, plan.grid_blocks, band, &dt), TMA_OK, "tune: %s",
                             dt.message);
        }
        cr_assert_eq(plan.thread_loads, n % 8 != 0 || k % 8 != 0, "config %d: thread_loads %d for N %d, K %d", cfg,
                     plan.thread_loads, n, k);
        snprintf(what, sizeof what, "config %d (%d groups, N %d, K %d, %s%s)", cfg, groups, n, k,
                 plan.thread_loads ? "thread loads, " : "",
                 variant == 0   ? "default"
                 : variant == 1 ? "few blocks"
                 : variant == 2 ? "second problem through the same arrays: maps rebuilt"
                                : "band height changed");
        tma_diag diag;
        const tma_status st = run_and_check(&plan, &diag);
        cr_assert_eq(st, TMA_OK, "%s: the device reported %s: %s", what, tma_status_name(st), diag.message);
        for (int g = 0; g < groups; g++) {
            check_group(&p, g, 0, what);
            elements += (long)(m[g] > 0 ? m[g] : 0) * n;
        }
        groups_done += groups;
        cr_assert_eq(tma_grouped_gemm_plan_free(&plan, &diag), TMA_OK, "%s", diag.message);
        problem_free(&p);
    }
    cr_log_info("grouped GEMM: %d problems, %ld groups, %ld elements of C, every one within bf16 rounding of the "
                "fp64 reference",
                configs, groups_done, elements);
}

/* Run a plan with one bad group: the device reports it (status `want`, "group <bad>: ..." with `expect` in the
 * message), the check clears the record, its C_g is untouched and every other group is right; the plan is freed. */
static void expect_one_bad_group(const problem *p, tma_grouped_gemm_plan *plan, int bad, tma_status want,
                                 const char *expect, const char *kind) {
    tma_diag diag;
    const tma_status st = run_and_check(plan, &diag);
    char group[32];
    snprintf(group, sizeof group, "group %d: ", bad);
    cr_assert_eq(st, want, "%s: status %s: %s", kind, tma_status_name(st), diag.message);
    cr_assert(strncmp(diag.message, group, strlen(group)) == 0 && strstr(diag.message, expect) != NULL,
              "%s in group %d: message: %s", kind, bad, diag.message);
    cr_log_info("bad group (%s): %s", kind, diag.message);
    cr_assert_eq(tma_grouped_gemm_check(plan, NULL, &diag), TMA_OK, "the error record was not cleared");
    for (int g = 0; g < p->groups; g++)
        check_group(p, g, g == bad, kind);
    cr_assert_eq(tma_grouped_gemm_plan_free(plan, &diag), TMA_OK, "%s", diag.message);
}

/* The same under the thread-loaded kernel (N = 137, K = 71): an odd A_g, a NULL B_g, a negative M_g. */
Test(gpu_grouped, bad_groups_thread_loads, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_grouped.bad_groups_thread_loads");
    const char *kinds[] = {"A_g at an odd address", "B_g NULL", "M_g negative"};
    const char *expect[] = {"A_g = 0x", "B_g = 0x0 with", "M_g = -5 rows is negative"};
    for (int kind = 0; kind < 3; kind++) {
        problem p;
        int32_t m[6] = {200, 130, 64, 300, 1, 129};
        problem_make(&p, 6, 137, 71, m);
        const int bad = (int)rnd_in(0, 5);
        void *keep_a = p.da[bad], *keep_b = p.db[bad];
        if (kind == 0)
            p.da[bad] = (uint8_t *)p.da[bad] + 1;
        else if (kind == 1)
            p.db[bad] = NULL;
        else
            p.m[bad] = -5;
        problem_upload(&p);
        p.da[bad] = keep_a, p.db[bad] = keep_b;
        if (kind == 2)
            p.m[bad] = m[bad];
        tma_grouped_gemm_plan plan = make_plan(&p);
        cr_assert_eq(plan.thread_loads, 1, "N = 137, K = 71: the thread-loaded kernel");
        expect_one_bad_group(&p, &plan, bad, TMA_ERR_ARG, expect[kind], kinds[kind]);
        problem_free(&p);
    }
}

/* Groups whose A_g or B_g lies off 16 bytes (at a whole element) under the pipeline (N and K multiples of 8): no TMA
 * map may start there, and the thread-loaded kernel computes them after the pipeline; every group right, no error. */
Test(gpu_grouped, groups_off_16_bytes, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_grouped.groups_off_16_bytes");
    for (int trial = 0; trial < 3; trial++) {
        problem p;
        int32_t m[6] = {200, 130, 64, 300, 1, 129};
        problem_make(&p, 6, 136, 72, m);
        int shifted = 0;
        for (int g = 0; g < p.groups; g++) {
            const int what = (int)rnd_in(0, 2); /* 0: as it is, 1: A_g 8 bytes in, 2: B_g 2 bytes in */
            if (what == 0 || (trial == 0 && g > 0))
                continue;
            uint8_t *base = what == 1 ? (uint8_t *)p.a_alloc[g] : (uint8_t *)p.b_alloc[g];
            uint8_t *at = base + (what == 1 ? 8 : 2);
            const size_t bytes = what == 1 ? (size_t)p.m[g] * p.k * 2 : (size_t)p.n * p.k * 2;
            CUDA_OK(cudaMemcpy(at, what == 1 ? (void *)p.a[g] : (void *)p.b[g], bytes, cudaMemcpyHostToDevice));
            if (what == 1)
                p.da[g] = at;
            else
                p.db[g] = at;
            shifted++;
        }
        if (shifted == 0) { /* at least one */
            CUDA_OK(cudaMemcpy((uint8_t *)p.a_alloc[0] + 8, p.a[0], (size_t)p.m[0] * p.k * 2, cudaMemcpyHostToDevice));
            p.da[0] = (uint8_t *)p.a_alloc[0] + 8;
        }
        problem_upload(&p);
        tma_grouped_gemm_plan plan = make_plan(&p);
        cr_assert_eq(plan.thread_loads, 0, "N = 136, K = 72: the pipeline");
        tma_diag diag;
        for (int run = 0; run < 2; run++) {
            const tma_status st = run_and_check(&plan, &diag);
            cr_assert_eq(st, TMA_OK, "trial %d run %d: %s: %s", trial, run, tma_status_name(st), diag.message);
            for (int g = 0; g < p.groups; g++)
                check_group(&p, g, 0, "groups off 16 bytes");
            poison_c(&p); /* again for the second run */
        }
        cr_assert_eq(tma_grouped_gemm_plan_free(&plan, &diag), TMA_OK, "%s", diag.message);
        problem_free(&p);
    }
}

/* One plan through runs whose groups change between them: each run computes, skips and reports by its own groups
 * (the map build rewrites every group's flag and maps each run), never by an earlier run's. All groups good; then group
 * `bad`'s B_g NULL (reported and skipped, its C_g untouched: the flag or map of the run before would compute it through
 * that run's map); then its A_g 8 bytes off 16 (the threads compute it); then all good again (the flag of the run before
 * would skip it). With the default grid and with one block. */
Test(gpu_grouped, each_run_its_own_status, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_grouped.each_run_its_own_status");
    for (int one_block = 0; one_block <= 1; one_block++) {
        problem p;
        int32_t m[6] = {200, 130, 64, 300, 1, 129};
        problem_make(&p, 6, 136, 72, m);
        const int bad = (int)rnd_in(0, 5);
        void *const keep_a = p.da[bad], *const keep_b = p.db[bad];
        const size_t a_bytes = (size_t)p.m[bad] * p.k * 2;
        tma_grouped_gemm_plan plan = make_plan(&p);
        tma_diag diag;
        if (one_block)
            cr_assert_eq(tma_grouped_gemm_plan_tune(&plan, 1, 0, &diag), TMA_OK, "%s", diag.message);
        static const char *const runs[] = {"all good", "B_g NULL", "A_g off 16 bytes", "all good again"};
        for (int run = 0; run < 4; run++) {
            p.da[bad] = keep_a;
            if (run == 2) {
                p.da[bad] = (uint8_t *)p.a_alloc[bad] + 8;
                CUDA_OK(cudaMemcpy(p.da[bad], p.a[bad], a_bytes, cudaMemcpyHostToDevice));
            } else if (run == 3) {
                CUDA_OK(cudaMemcpy(p.da[bad], p.a[bad], a_bytes, cudaMemcpyHostToDevice));
            }
            p.db[bad] = run == 1 ? NULL : keep_b;
            problem_upload(&p);
            p.db[bad] = keep_b;
            char what[96];
            snprintf(what, sizeof what, "%s, run %d (%s, group %d)", one_block ? "one block" : "default grid", run,
                     runs[run], bad);
            const tma_status st = run_and_check(&plan, &diag);
            if (run == 1) {
                char group[32];
                snprintf(group, sizeof group, "group %d: ", bad);
                cr_assert_eq(st, TMA_ERR_GLOBAL_ADDRESS_NULL, "%s: status %s: %s", what, tma_status_name(st),
                             diag.message);
                cr_assert(strncmp(diag.message, group, strlen(group)) == 0, "%s: message: %s", what, diag.message);
            } else {
                cr_assert_eq(st, TMA_OK, "%s: %s: %s", what, tma_status_name(st), diag.message);
            }
            for (int g = 0; g < p.groups; g++)
                check_group(&p, g, run == 1 && g == bad, what);
            poison_c(&p); /* again for the next run */
        }
        cr_assert_eq(tma_grouped_gemm_plan_free(&plan, &diag), TMA_OK, "%s", diag.message);
        p.da[bad] = keep_a;
        problem_free(&p);
    }
}

/* One bad group among good ones: reported with its number and the rule, skipped, the others right. */
Test(gpu_grouped, bad_groups, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_grouped.bad_groups");
    const char *kinds[] = {"A_g at an odd address", "B_g NULL", "C_g at an odd address", "M_g negative"};
    const char *expect[] = {"the map of A_g: global_address = 0x", "the map of B_g: global_address = NULL",
                            "the map of C_g: global_address = 0x", "M_g = -5 rows is negative"};
    const tma_status status[] = {TMA_ERR_GLOBAL_ADDRESS_ALIGN, TMA_ERR_GLOBAL_ADDRESS_NULL,
                                 TMA_ERR_GLOBAL_ADDRESS_ALIGN, TMA_ERR_ARG};
    for (int kind = 0; kind < 4; kind++) {
        problem p;
        int32_t m[6] = {200, 130, 64, 300, 1, 129};
        problem_make(&p, 6, 136, 72, m);
        const int bad = (int)rnd_in(0, 5);
        void *keep_a = p.da[bad], *keep_b = p.db[bad];
        uint8_t *keep_c = p.dc[bad];
        if (kind == 0)
            p.da[bad] = (uint8_t *)p.da[bad] + 1;
        else if (kind == 1)
            p.db[bad] = NULL;
        else if (kind == 2)
            p.dc[bad] = p.dc[bad] + 1;
        else
            p.m[bad] = -5;
        problem_upload(&p);
        p.da[bad] = keep_a, p.db[bad] = keep_b, p.dc[bad] = keep_c;
        if (kind == 3)
            p.m[bad] = m[bad]; /* the allocation's size for the checks below */
        tma_grouped_gemm_plan plan = make_plan(&p);
        expect_one_bad_group(&p, &plan, bad, status[kind], expect[kind], kinds[kind]);
        problem_free(&p);
    }
}

Test(gpu_grouped, k_zero) {
    require_sm90();
    seed_rng("gpu_grouped.k_zero");
    problem p;
    int32_t m[4] = {3, 0, 200, 129};
    problem_make(&p, 4, 64, 0, m);
    problem_upload(&p);
    tma_diag diag;
    const tma_status st = tma_grouped_gemm(4, 64, 0, (const void *const *)p.arr_a, (const void *const *)p.arr_b,
                                           (void *const *)p.arr_c, p.arr_m, NULL, &diag);
    cr_assert_eq(st, TMA_OK, "%s: %s", tma_status_name(st), diag.message);
    for (int g = 0; g < 4; g++) {
        uint8_t *got = malloc(p.c_bytes[g] + GUARD + 1);
        CUDA_OK(cudaMemcpy(got, p.dc[g], p.c_bytes[g] + GUARD, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < p.c_bytes[g]; i++)
            cr_assert_eq(got[i], 0, "group %d byte %zu: K = 0 must give zeros", g, i);
        for (size_t i = 0; i < GUARD; i++)
            cr_assert_eq(got[p.c_bytes[g] + i], 0xFF, "group %d: guard byte %zu written", g, i);
        free(got);
    }
    problem_free(&p);
}

/* K = 0 with one bad group (C_g NULL, C_g at an odd address, M_g negative) and every A_g and B_g NULL (they hold no
 * element): the bad group reported in the other kernels' words and left untouched, every other C_g zeros. */
Test(gpu_grouped, k_zero_bad_groups) {
    require_sm90();
    seed_rng("gpu_grouped.k_zero_bad_groups");
    const char *kinds[] = {"C_g NULL", "C_g at an odd address", "M_g negative"};
    const char *expect[] = {"C_g = 0x0 with", "C_g = 0x", "M_g = -5 rows is negative"};
    for (int kind = 0; kind < 3; kind++) {
        problem p;
        int32_t m[5] = {3, 0, 200, 129, 64};
        problem_make(&p, 5, 64, 0, m);
        static const int with_rows[4] = {0, 2, 3, 4}; /* a group without rows may have any C_g */
        const int bad = kind < 2 ? with_rows[rnd_in(0, 3)] : (int)rnd_in(0, 4);
        uint8_t *keep_c = p.dc[bad];
        void *keep_a[5], *keep_b[5];
        for (int g = 0; g < 5; g++)
            keep_a[g] = p.da[g], keep_b[g] = p.db[g], p.da[g] = NULL, p.db[g] = NULL;
        if (kind == 0)
            p.dc[bad] = NULL;
        else if (kind == 1)
            p.dc[bad] = p.dc[bad] + 1;
        else
            p.m[bad] = -5;
        problem_upload(&p);
        p.dc[bad] = keep_c;
        for (int g = 0; g < 5; g++)
            p.da[g] = keep_a[g], p.db[g] = keep_b[g];
        if (kind == 2)
            p.m[bad] = m[bad];
        tma_grouped_gemm_plan plan = make_plan(&p);
        expect_one_bad_group(&p, &plan, bad, TMA_ERR_ARG, expect[kind], kinds[kind]);
        problem_free(&p);
    }
}

Test(gpu_grouped, refused) {
    require_sm90();
    tma_grouped_gemm_plan plan;
    tma_diag diag;
    void *arr;
    CUDA_OK(cudaMalloc(&arr, 256));
    const void *const *a = (const void *const *)arr;
    void *const *c = (void *const *)arr;
    const int32_t *m = (const int32_t *)arr;
    /* N or K off a multiple of 8: taken, through the thread-loaded kernel */
    cr_assert_eq(tma_grouped_gemm_plan_make(&plan, 2, 100, 64, a, a, c, m, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(plan.thread_loads, 1, "N = 100");
    cr_assert_eq(tma_grouped_gemm_plan_free(&plan, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(tma_grouped_gemm_plan_make(&plan, 2, 64, 60, a, a, c, m, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(plan.thread_loads, 1, "K = 60");
    cr_assert_eq(tma_grouped_gemm_plan_free(&plan, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(tma_grouped_gemm_plan_make(&plan, 2, 64, 64, a, a, c, NULL, &diag), TMA_ERR_NULL_ARG);
    cr_assert(strstr(diag.message, "m = NULL") != NULL, "%s", diag.message);
    cr_assert_eq(tma_grouped_gemm_plan_make(&plan, -1, 64, 64, a, a, c, m, &diag), TMA_ERR_ARG);
    cr_assert_eq(tma_grouped_gemm_plan_make(&plan, 2, 64, 64, a, a, c, m, &diag), TMA_OK, "%s", diag.message);
    /* tune checks what run checks, and leaves the plan as it was when it refuses */
    cr_assert_eq(tma_grouped_gemm_plan_tune(&plan, plan.sms + 1, 0, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "plan.grid_blocks") != NULL, "%s", diag.message);
    cr_assert_eq(plan.grid_blocks, 0, "a refused tune changes nothing");
    cr_assert_eq(tma_grouped_gemm_plan_tune(&plan, 0, -1, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "plan.group_m = -1") != NULL, "%s", diag.message);
    cr_assert_eq(tma_grouped_gemm_plan_tune(NULL, 0, 0, &diag), TMA_ERR_NULL_ARG);
    plan.grid_blocks = plan.sms + 1;
    cr_assert_eq(tma_grouped_gemm_run(&plan, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "grid_blocks") != NULL, "%s", diag.message);
    plan.grid_blocks = 0;
    cr_assert_eq(tma_grouped_gemm_plan_free(&plan, &diag), TMA_OK);
    cr_assert_eq(tma_grouped_gemm_run(&plan, NULL, &diag), TMA_ERR_ARG, "a freed plan must not run");
    CUDA_OK(cudaFree(arr));
}
