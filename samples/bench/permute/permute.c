/* tma-permute(1)
 *
 * NAME
 *     tma-permute - tensor permutations at copy speed: tma_permute beside a device-to-device copy and a plain TMA
 *     copy of the same tensor
 *
 * SYNOPSIS
 *     tma-permute [--quick] [--only LIST] [--once] [--tune] [--probes] [--reps N] [--ncu | --ncu-isolated]
 *
 * DESCRIPTION
 *     For each case (2-D transposes 8192^2, 16384^2 and the ragged 12345 x 6789 in 1-, 2-, 4- and 8-byte elements;
 *     NCHW -> NHWC and back at 32 x 256 x 56 x 56 and 128 x 64 x 112 x 112 in bf16 and fp32; [B, S, H, D] ->
 *     [B, H, S, D] at 8 x 4096 x 32 x 128 bf16; the batched transpose [64, 1000, 1000] fp32; a rank-5 permutation),
 *     with strides padded to 16 bytes where dense ones would not be:
 *       memcpy      cudaMemcpyAsync device-to-device of the tensor's bytes
 *       tma-copy    tma_permute with the identity permutation into a tensor of src's layout: a plain TMA copy (load
 *                   map -> store map) over the same strides, the ceiling for any TMA kernel on them
 *       tma-copy-dst  the same over dst's layout (dst's dimensions and strides, copied into a tensor like it)
 *       permute     tma_permute (tma/kernels.h; tma_transpose is its 2-D case)
 *     Every variant is first verified against a CPU permutation of fresh random data (seed printed; output poisoned
 *     first; every element compared bitwise). Then all variants of a case are timed together in interleaved rounds
 *     after >= 500 ms of warm-up rounds (median of N launches each, CUDA events; common/bench.h). GB/s counts bytes
 *     read plus bytes written (2 x elements x element size). One table is printed last.
 *
 *     Without a Hopper GPU it says so, runs the permute's tile pipeline through the CPU model of the copy engine
 *     (tma_permute_model) on small cases, verifies them and prints each plan's descriptors and per-copy bytes.
 *
 * OPTIONS
 *     --quick          only the 8192^2 transposes, the smaller NCHW shape, the heads split and the rank-5 case
 *     --only LIST      only the cases whose "name dtype" (e.g. "transpose 12345x6789 fp32") contains LIST or one of
 *                      its comma-separated strings
 *     --once           each case's permute and tma-copy-dst once, on unverified data, untimed (for ncu)
 *     --tune           after the table, sweep the transpose's tile order (bands of G tile columns) and L2
 *                      promotion on the ragged transposes (fp32, fp64, bf16), fp32 8192^2, fp32 and fp64 16384^2,
 *                      NCHW -> NHWC bf16 and the rank-5 case (those --only selects), each verified
 *     --probes         instead of the table's cases, permutations of the rank-5 case's tensor that each change one
 *                      thing about its pattern (the dst rows of a tile, the slabs in flight), verified and timed
 *     --reps N         timed launches per variant (default 20)
 *     --ncu            each permute kernel once (one case per element size and kind), unverified, untimed: for
 *                      ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum,...
 *     --ncu-isolated   the transpose kernels on exactly one tile per block (132 tiles), so no TMA copy overlaps a
 *                      block's shared reads and writes; every kernel instance, the short and packed tiles included
 *     TMA_PERMUTE_SEED replays the data; TMA_PERMUTE_DST_ALIGN=N (diagnostic) pads dst's row strides to N bytes
 *     instead of 16 (docs/lab/permute.md: the ragged cases with 32-byte aligned dst rows); TMA_PERMUTE_ROW_PAD=N
 *     (diagnostic) adds N bytes (a multiple of 16) between the rows of src and dst (docs/lab/permute.md: power-of-two
 *     pitches), TMA_PERMUTE_ROW_PAD=S,D S bytes between src's rows and D between dst's; TMA_PERMUTE_TUNE=G,L2
 *     (diagnostic) tunes the permute's plan (tma_permute_plan_tune: bands of G tile columns, 0 = row-major; L2
 *     promotion 0..3 = none, 64, 128, 256 bytes); TMA_PERMUTE_HEAP_PAD=N (diagnostic) allocates N MiB of device
 *     memory before the first case and holds it, so every case's buffers lie further on (each plan line prints the
 *     buffers' addresses).
 *
 * BUILD AND RUN
 *     cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j && ./build/samples/tma-permute
 *
 * EXIT STATUS
 *     0 when every variant verified (or the CPU-model pipeline did), 1 otherwise, 2 for bad usage.
 *
 * SEE ALSO
 *     samples/permute/ (tma-permute-example: the kernel's API on small data, no timing), docs/guide/permute.md,
 *     docs/lab/permute.md (this benchmark's results)
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

/* ------------------------------------------------------------------------------------------------
 * Cases and the CPU reference
 * ---------------------------------------------------------------------------------------------- */
typedef struct pcase {
    const char *name;
    uint32_t e, rank;
    uint64_t dims[5]; /* src, dimension 0 innermost */
    uint32_t perm[5]; /* dst dimension i = src dimension perm[i] */
    int quick;        /* part of --quick */
} pcase;

#define T2(n, e, r, c, q) {n, e, 2, {c, r}, {1, 0}, q}
/* NCHW -> NHWC: src {W, H, C, N}; NHWC -> NCHW: src {C, W, H, N} */
#define TO_NHWC(e, n, c, h, w, q) {"NCHW->NHWC " #n "x" #c "x" #h "x" #w, e, 4, {w, h, c, n}, {2, 0, 1, 3}, q}
#define TO_NCHW(e, n, c, h, w, q) {"NHWC->NCHW " #n "x" #c "x" #h "x" #w, e, 4, {c, w, h, n}, {1, 2, 0, 3}, q}
static const pcase cases[] = {
    T2("transpose 8192^2", 4, 8192, 8192, 1),   T2("transpose 8192^2", 2, 8192, 8192, 1),
    T2("transpose 8192^2", 1, 8192, 8192, 1),   T2("transpose 8192^2", 8, 8192, 8192, 1),
    T2("transpose 16384^2", 4, 16384, 16384, 0), T2("transpose 16384^2", 2, 16384, 16384, 0),
    T2("transpose 16384^2", 1, 16384, 16384, 0), T2("transpose 16384^2", 8, 16384, 16384, 0),
    T2("transpose 12345x6789", 4, 12345, 6789, 1), T2("transpose 12345x6789", 2, 12345, 6789, 0),
    T2("transpose 12345x6789", 1, 12345, 6789, 0), T2("transpose 12345x6789", 8, 12345, 6789, 0),
    /* not the issue's: the ragged matrix the other way round, whose dst pitches (bytes mod 32: u8 6,800: 16, bf16
     * 13,584: 16, fp32 27,168: 0, fp64 54,320: 16) are the misaligned ones for 1-, 2- and 8-byte elements */
    T2("transpose 6789x12345", 4, 6789, 12345, 0), T2("transpose 6789x12345", 2, 6789, 12345, 0),
    T2("transpose 6789x12345", 1, 6789, 12345, 0), T2("transpose 6789x12345", 8, 6789, 12345, 0),
    TO_NHWC(2, 32, 256, 56, 56, 1),   TO_NCHW(2, 32, 256, 56, 56, 1),
    TO_NHWC(4, 32, 256, 56, 56, 0),   TO_NCHW(4, 32, 256, 56, 56, 0),
    TO_NHWC(2, 128, 64, 112, 112, 0), TO_NCHW(2, 128, 64, 112, 112, 0),
    TO_NHWC(4, 128, 64, 112, 112, 0), TO_NCHW(4, 128, 64, 112, 112, 0),
    {"BSHD->BHSD 8x4096x32x128", 2, 4, {128, 32, 4096, 8}, {0, 2, 1, 3}, 1},
    {"batched [64,1000,1000]^T", 4, 3, {1000, 1000, 64}, {1, 0, 2}, 0},
    {"rank 5 (1,3,0,4,2)", 4, 5, {256, 128, 64, 32, 16}, {1, 3, 0, 4, 2}, 1},
    {"rank 5, 64-byte dst rows", 4, 5, {48, 32, 64, 16, 24}, {3, 0, 4, 1, 2}, 1},
    /* not the issue's: few channels, the NHWC side's rows shorter than 128 bytes (dst: short tiles, pm_short_rows;
     * src: packed tiles, pm_packed_cols) */
    TO_NHWC(4, 32, 4, 224, 224, 0),  TO_NHWC(2, 32, 8, 224, 224, 0), TO_NHWC(4, 32, 16, 224, 224, 0),
    TO_NHWC(2, 32, 32, 112, 112, 0), TO_NCHW(4, 32, 16, 224, 224, 0), TO_NCHW(2, 32, 32, 112, 112, 0),
    /* not the issue's: NHWC -> NCHW at ResNet's 14x14 and 7x7 layers, whose NCHW rows (392 and 98 bytes, padded to
     * 400 and 112) are not 32-byte multiples: the threads store them */
    TO_NCHW(2, 128, 256, 14, 14, 0), TO_NCHW(2, 128, 512, 7, 7, 0),
};
#define NCASES (sizeof cases / sizeof cases[0])

static const char *elem_name(uint32_t e) { return e == 1 ? "u8" : e == 2 ? "bf16" : e == 4 ? "fp32" : "fp64"; }

/* Fresh data every run (seed from the clock, printed; TMA_PERMUTE_SEED replays it). */
static uint64_t rng;
static void seed_random(void) {
    const char *env = getenv("TMA_PERMUTE_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    printf("data seed %llu (replay with TMA_PERMUTE_SEED=%llu)\n", (unsigned long long)seed, (unsigned long long)seed);
}

static void fill_random(uint8_t *p, size_t bytes) {
    for (size_t i = 0; i < bytes; i += 8) {
        rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
        uint64_t x = rng * 0x2545F4914F6CDD1Dull;
        memcpy(p + i, &x, bytes - i < 8 ? bytes - i : 8);
    }
}

/* A case's description with strides padded to 16 bytes where dense ones would not be (dst likewise). */
typedef struct layout {
    tma_permute_desc d;
    uint64_t ss[5], ds[5], dd[5];
    size_t src_bytes, dst_bytes, elems;
} layout;

/* TMA_PERMUTE_ROW_PAD=N or S,D (diagnostic): N more bytes between rows (a multiple of 16) in src and dst, or S
 * more in src and D more in dst. */
static uint64_t row_pad(int dst) {
    const char *env = getenv("TMA_PERMUTE_ROW_PAD");
    char *end = NULL;
    uint64_t n = env ? strtoull(env, &end, 0) : 0u;
    if (dst && end && *end == ',')
        n = strtoull(end + 1, NULL, 0);
    return n % 16u == 0 ? n : 0u;
}

static void strides_of(uint32_t e, uint32_t r, const uint64_t *dims, uint64_t align, uint64_t pad, uint64_t *given,
                       uint64_t *out) {
    out[0] = e;
    for (uint32_t i = 1; i < r; i++) {
        const uint64_t dense = out[i - 1] * dims[i - 1];
        out[i] = (dense % align ? (dense + align - 1) / align * align : dense) + (i == 1 ? pad : 0u);
        given[i - 1] = out[i] == dense ? 0 : out[i];
    }
}

/* TMA_PERMUTE_DST_ALIGN (diagnostic): pad dst's row strides to this many bytes instead of 16 (a multiple of 16). */
static uint64_t dst_align(void) {
    const char *env = getenv("TMA_PERMUTE_DST_ALIGN");
    const uint64_t a = env ? strtoull(env, NULL, 0) : 16u;
    return a >= 16u && a % 16u == 0 ? a : 16u;
}

static layout layout_of(const pcase *c) {
    layout L;
    memset(&L, 0, sizeof L);
    L.d.elem_bytes = c->e, L.d.rank = c->rank;
    memcpy(L.d.src_dims, c->dims, sizeof c->dims);
    memcpy(L.d.perm, c->perm, sizeof c->perm);
    L.elems = 1;
    for (uint32_t i = 0; i < c->rank; i++)
        L.dd[i] = c->dims[c->perm[i]], L.elems *= c->dims[i];
    strides_of(c->e, c->rank, c->dims, 16u, row_pad(0), L.d.src_strides, L.ss);
    strides_of(c->e, c->rank, L.dd, dst_align(), row_pad(1), L.d.dst_strides, L.ds);
    size_t s = c->e, t = c->e;
    for (uint32_t i = 0; i < c->rank; i++)
        s += (c->dims[i] - 1) * L.ss[i], t += (L.dd[i] - 1) * L.ds[i];
    L.src_bytes = (s + 15) / 16 * 16, L.dst_bytes = (t + 15) / 16 * 16 + 16;
    return L;
}

/* want[dst] = src[perm], walking dst in order (dst dimension 0 innermost); src offset kept incrementally. */
static void cpu_permute(const layout *L, const uint8_t *src, uint8_t *want) {
    const uint32_t r = L->d.rank, e = L->d.elem_bytes;
    uint64_t sst[5] = {0, 0, 0, 0, 0}; /* src stride of each dst dimension */
    for (uint32_t i = 0; i < r; i++)
        sst[i] = L->ss[L->d.perm[i]];
    uint64_t rows = 1;
    for (uint32_t i = 1; i < r; i++)
        rows *= L->dd[i];
    const uint64_t n0 = L->dd[0], s0 = sst[0];
    for (uint64_t row = 0; row < rows; row++) {
        uint64_t x = row, so = 0, doff = 0;
        for (uint32_t i = 1; i < r; i++) {
            const uint64_t k = x % L->dd[i];
            x /= L->dd[i];
            so += k * sst[i], doff += k * L->ds[i];
        }
        uint8_t *w = want + doff;
        const uint8_t *sp = src + so;
        switch (e) {
        case 1: for (uint64_t j = 0; j < n0; j++) w[j] = sp[j * s0]; break;
        case 2: for (uint64_t j = 0; j < n0; j++) memcpy(w + 2 * j, sp + j * s0, 2); break;
        case 4: for (uint64_t j = 0; j < n0; j++) memcpy(w + 4 * j, sp + j * s0, 4); break;
        default: for (uint64_t j = 0; j < n0; j++) memcpy(w + 8 * j, sp + j * s0, 8); break;
        }
    }
}

/* Elements of got (laid out with dst dims dd and strides ds) that differ from want; the first in `where`. */
static size_t compare_rows(uint32_t e, uint32_t r, const uint64_t *dd, const uint64_t *ds, const uint8_t *got,
                           const uint8_t *want, char *where, size_t n) {
    uint64_t rows = 1;
    for (uint32_t i = 1; i < r; i++)
        rows *= dd[i];
    size_t bad = 0;
    for (uint64_t row = 0; row < rows; row++) {
        uint64_t x = row, off = 0;
        for (uint32_t i = 1; i < r; i++)
            off += (x % dd[i]) * ds[i], x /= dd[i];
        if (memcmp(got + off, want + off, dd[0] * e) == 0)
            continue;
        for (uint64_t j = 0; j < dd[0]; j++)
            if (memcmp(got + off + j * e, want + off + j * e, e) != 0 && bad++ == 0)
                snprintf(where, n, "innermost row %llu element %llu", (unsigned long long)row, (unsigned long long)j);
    }
    return bad;
}

/* ------------------------------------------------------------------------------------------------
 * The variants of one case
 * ---------------------------------------------------------------------------------------------- */
enum { V_MEMCPY, V_TMA_COPY, V_COPY_DST, V_PERMUTE, NV };
static const char *vname[NV] = {"memcpy", "tma-copy", "tma-copy-dst", "permute"};

typedef struct bench_ctx {
    const layout *L;
    void *dsrc, *ddst, *dcopy, *dcopy2;
    tma_permute_plan perm, copy, copy_dst;
} bench_ctx;

static void launch(void *p, int which) {
    bench_ctx *c = (bench_ctx *)p;
    tma_diag diag;
    tma_status st = TMA_OK;
    if (which == V_MEMCPY)
        CUDA_CHECK(cudaMemcpyAsync(c->dcopy, c->dsrc, c->L->elems * c->L->d.elem_bytes, cudaMemcpyDeviceToDevice, 0));
    else if (which == V_TMA_COPY)
        st = tma_permute_run(&c->copy, NULL, &diag);
    else if (which == V_COPY_DST)
        st = tma_permute_run(&c->copy_dst, NULL, &diag);
    else
        st = tma_permute_run(&c->perm, NULL, &diag);
    if (st != TMA_OK) {
        fprintf(stderr, "%s: %s: %s\n", vname[which], tma_status_name(st), diag.message);
        exit(1);
    }
}

typedef struct row {
    const pcase *c;
    int transpose, ok;
    float ms[NV];
    size_t bytes;
} row;

/* Plans for the case; the identity permutation of src into a tensor of src's layout is the plain TMA copy. */
static int make_plans(bench_ctx *b, const layout *L) {
    tma_diag diag;
    tma_permute_desc d = L->d, id = L->d;
    d.src = b->dsrc, d.dst = b->ddst;
    id.src = b->dsrc, id.dst = b->dcopy;
    for (uint32_t i = 0; i < 5; i++)
        id.perm[i] = i;
    memcpy(id.dst_strides, id.src_strides, sizeof id.dst_strides);
    /* and the same over dst's layout: a tensor of dst's dims and strides copied into another one */
    tma_permute_desc idd = id;
    for (uint32_t i = 0; i < 5; i++)
        idd.src_dims[i] = i < L->d.rank ? L->dd[i] : 0;
    memcpy(idd.src_strides, L->d.dst_strides, sizeof idd.src_strides);
    memcpy(idd.dst_strides, L->d.dst_strides, sizeof idd.dst_strides);
    idd.src = b->ddst, idd.dst = b->dcopy2;
    tma_status st = tma_permute_plan_make(&b->perm, &d, &diag);
    if (st == TMA_OK)
        st = tma_permute_plan_make(&b->copy, &id, &diag);
    if (st == TMA_OK)
        st = tma_permute_plan_make(&b->copy_dst, &idd, &diag);
    const char *tune = getenv("TMA_PERMUTE_TUNE"); /* diagnostic: "G,L2" (L2 0..3: none, 64, 128, 256 bytes) */
    if (st == TMA_OK && tune && b->perm.transpose) {
        char *end = NULL;
        const uint32_t g = (uint32_t)strtoul(tune, &end, 0);
        const uint32_t l2 = end && *end == ',' ? (uint32_t)strtoul(end + 1, NULL, 0) : 3u;
        st = tma_permute_plan_tune(&b->perm, g, (tma_l2_promotion)l2, &diag);
    }
    if (st != TMA_OK)
        printf("  plan refused: %s: %s\n", tma_status_name(st), diag.message);
    return st == TMA_OK;
}

/* --once: the case's permute and tma-copy-dst, one launch each, on a constant pattern (no host data): for ncu. */
static int once_case(const pcase *c) {
    const layout L = layout_of(c);
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.L = &L;
    CUDA_CHECK(cudaMalloc(&b.dsrc, L.src_bytes));
    CUDA_CHECK(cudaMalloc(&b.ddst, L.dst_bytes));
    CUDA_CHECK(cudaMalloc(&b.dcopy, L.src_bytes + 16));
    CUDA_CHECK(cudaMalloc(&b.dcopy2, L.dst_bytes));
    CUDA_CHECK(cudaMemset(b.dsrc, 0x5A, L.src_bytes));
    const int ok = make_plans(&b, &L);
    if (ok) {
        launch(&b, V_PERMUTE);
        launch(&b, V_COPY_DST);
        CUDA_CHECK(cudaDeviceSynchronize());
        printf("%s %s: permute and tma-copy-dst launched once\n", c->name, elem_name(c->e));
    }
    CUDA_CHECK(cudaFree(b.dsrc));
    CUDA_CHECK(cudaFree(b.ddst));
    CUDA_CHECK(cudaFree(b.dcopy));
    CUDA_CHECK(cudaFree(b.dcopy2));
    return ok ? 0 : 1;
}

/* --only: does "name dtype" contain one of LIST's comma-separated strings? */
static int selected(const pcase *c, const char *list) {
    if (!list)
        return 1;
    char full[96], item[96];
    snprintf(full, sizeof full, "%s %s", c->name, elem_name(c->e));
    if (strstr(full, list)) /* the whole LIST first: some names hold commas, "rank 5 (1,3,0,4,2)" */
        return 1;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n > 0 && n < sizeof item) {
            memcpy(item, p, n);
            item[n] = 0;
            if (strstr(full, item))
                return 1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

static int measure_case(const pcase *c, int reps, row *out) {
    const layout L = layout_of(c);
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.L = &L;
    uint8_t *src = malloc(L.src_bytes), *want = malloc(L.dst_bytes), *got = malloc(L.dst_bytes > L.src_bytes ? L.dst_bytes : L.src_bytes);
    if (!src || !want || !got) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    fill_random(src, L.src_bytes);
    memset(want, 0xFF, L.dst_bytes);
    cpu_permute(&L, src, want);
    CUDA_CHECK(cudaMalloc(&b.dsrc, L.src_bytes));
    CUDA_CHECK(cudaMalloc(&b.ddst, L.dst_bytes));
    CUDA_CHECK(cudaMalloc(&b.dcopy, L.src_bytes + 16));
    CUDA_CHECK(cudaMalloc(&b.dcopy2, L.dst_bytes));
    CUDA_CHECK(cudaMemcpy(b.dsrc, src, L.src_bytes, cudaMemcpyHostToDevice));
    memset(out, 0, sizeof *out);
    out->c = c, out->bytes = 2 * L.elems * c->e;
    int ok = make_plans(&b, &L);
    out->transpose = (int)b.perm.transpose;
    if (ok)
        printf("  plan: %s, rank %u, box {%u, %u, %u, %u, %u}, %llu tiles, grid %u x %u threads, %zu bytes of shared "
               "memory; row pitches src %llu, dst %llu bytes; src at %p, dst at %p, memcpy's dst at %p\n",
               b.perm.transpose ? "transpose" : "copy", b.perm.rank, b.perm.box[0], b.perm.box[1], b.perm.box[2],
               b.perm.box[3], b.perm.box[4], (unsigned long long)b.perm.tiles, b.perm.grid, b.perm.block, b.perm.smem,
               (unsigned long long)(c->rank > 1 ? L.ss[1] : 0), (unsigned long long)(c->rank > 1 ? L.ds[1] : 0),
               b.dsrc, b.ddst, b.dcopy);
    /* verify each variant (not memcpy) on a poisoned output; tma-copy-dst last: it copies dst as permute left it */
    static const int order[] = {V_TMA_COPY, V_PERMUTE, V_COPY_DST};
    for (int oi = 0; ok && oi < 3; oi++) {
        const int v = order[oi];
        void *dout = v == V_TMA_COPY ? b.dcopy : v == V_COPY_DST ? b.dcopy2 : b.ddst;
        const size_t bytes = v == V_TMA_COPY ? L.src_bytes : L.dst_bytes;
        CUDA_CHECK(cudaMemset(dout, 0xFF, bytes));
        launch(&b, v);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(got, dout, bytes, cudaMemcpyDeviceToHost));
        char where[120] = "";
        const size_t bad = v == V_TMA_COPY ? compare_rows(c->e, c->rank, c->dims, L.ss, got, src, where, sizeof where)
                                           : compare_rows(c->e, c->rank, L.dd, L.ds, got, want, where, sizeof where);
        if (bad) {
            printf("  %s %s %s: %zu elements differ, first at %s\n", c->name, elem_name(c->e), vname[v], bad, where);
            ok = 0;
        }
    }
    out->ok = ok;
    if (ok) {
        bench_interleaved(launch, &b, NV, reps, out->ms);
    }
    CUDA_CHECK(cudaFree(b.dsrc));
    CUDA_CHECK(cudaFree(b.ddst));
    CUDA_CHECK(cudaFree(b.dcopy));
    CUDA_CHECK(cudaFree(b.dcopy2));
    free(src), free(want), free(got);
    return ok ? 0 : 1;
}

static void print_table(const row *rows, int n, int reps) {
    printf("\n| case | dtype | kind | memcpy GB/s | tma-copy %% | tma-copy-dst %% | permute ms | permute GB/s | permute %% "
           "memcpy |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        if (!r->ok) {
            printf("| %s | %s | - | FAILED verification | | | | | |\n", r->c->name, elem_name(r->c->e));
            continue;
        }
        const double mc = r->bytes / (r->ms[V_MEMCPY] * 1e6), pg = r->bytes / (r->ms[V_PERMUTE] * 1e6);
        const double cg = r->bytes / (r->ms[V_TMA_COPY] * 1e6);
        const double dg = r->bytes / (r->ms[V_COPY_DST] * 1e6);
        printf("| %s | %s | %s | %.0f | %.1f%% | %.1f%% | %.3f | %.0f | %.1f%% |\n", r->c->name, elem_name(r->c->e),
               r->transpose ? "transpose" : "copy", mc, 100.0 * cg / mc, 100.0 * dg / mc, r->ms[V_PERMUTE], pg,
               100.0 * pg / mc);
    }
    printf("\n(median of %d launches per variant, interleaved rounds; GB/s = 2 x elements x size / time)\n", reps);
}

/* ------------------------------------------------------------------------------------------------
 * --tune: the transpose's tile order (bands of G tile columns; 0 = row-major) and L2 promotion
 * ---------------------------------------------------------------------------------------------- */
#define NSET 10
static const uint32_t set_group[NSET] = {8, 8, 8, 8, 2, 4, 16, 0, 4, 16};
static const tma_l2_promotion set_l2[NSET] = {TMA_L2_256B, TMA_L2_128B, TMA_L2_64B, TMA_L2_NONE, TMA_L2_128B,
                                              TMA_L2_128B, TMA_L2_128B, TMA_L2_128B, TMA_L2_256B, TMA_L2_256B};

typedef struct tune_ctx {
    const layout *L;
    void *dsrc, *ddst, *dcopy;
    tma_permute_plan p[NSET];
} tune_ctx;

static void tune_launch(void *p, int which) {
    tune_ctx *c = (tune_ctx *)p;
    tma_diag diag;
    if (which == 0) {
        CUDA_CHECK(cudaMemcpyAsync(c->dcopy, c->dsrc, c->L->elems * c->L->d.elem_bytes, cudaMemcpyDeviceToDevice, 0));
        return;
    }
    tma_status st = tma_permute_run(&c->p[which - 1], NULL, &diag);
    if (st != TMA_OK) {
        fprintf(stderr, "tune run: %s: %s\n", tma_status_name(st), diag.message);
        exit(1);
    }
}

static int run_tune(int reps, const char *only) {
    static const char *names[] = {"transpose 12345x6789", "transpose 12345x6789", "transpose 12345x6789",
                                  "transpose 8192^2", "transpose 16384^2", "NCHW->NHWC 32x256x56x56",
                                  "transpose 16384^2", "rank 5 (1,3,0,4,2)"};
    static const uint32_t elems[] = {4, 8, 2, 4, 4, 2, 8, 4};
    int failed = 0;
    printf("\n| case | dtype | G | L2 | permute ms | %% memcpy |\n| --- | --- | ---: | --- | ---: | ---: |\n");
    for (int n = 0; n < (int)(sizeof names / sizeof names[0]); n++) {
        const pcase *c = NULL;
        for (size_t i = 0; i < NCASES; i++)
            if (!strcmp(cases[i].name, names[n]) && cases[i].e == elems[n])
                c = &cases[i];
        if (!c || !selected(c, only))
            continue;
        const layout L = layout_of(c);
        tune_ctx t;
        memset(&t, 0, sizeof t);
        t.L = &L;
        uint8_t *src = malloc(L.src_bytes), *want = malloc(L.dst_bytes), *got = malloc(L.dst_bytes);
        if (!src || !want || !got)
            return 1;
        fill_random(src, L.src_bytes);
        memset(want, 0xFF, L.dst_bytes);
        cpu_permute(&L, src, want);
        CUDA_CHECK(cudaMalloc(&t.dsrc, L.src_bytes));
        CUDA_CHECK(cudaMalloc(&t.ddst, L.dst_bytes));
        CUDA_CHECK(cudaMalloc(&t.dcopy, L.src_bytes));
        CUDA_CHECK(cudaMemcpy(t.dsrc, src, L.src_bytes, cudaMemcpyHostToDevice));
        int ok = 1;
        for (int k = 0; k < NSET && ok; k++) {
            tma_permute_desc d = L.d;
            d.src = t.dsrc, d.dst = t.ddst;
            tma_diag diag;
            tma_status st = tma_permute_plan_make(&t.p[k], &d, &diag);
            if (st == TMA_OK)
                st = tma_permute_plan_tune(&t.p[k], set_group[k], set_l2[k], &diag);
            if (st != TMA_OK) {
                printf("  tune plan: %s\n", diag.message);
                ok = 0;
                break;
            }
            CUDA_CHECK(cudaMemset(t.ddst, 0xFF, L.dst_bytes));
            tune_launch(&t, k + 1);
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemcpy(got, t.ddst, L.dst_bytes, cudaMemcpyDeviceToHost));
            char where[120] = "";
            if (compare_rows(c->e, c->rank, L.dd, L.ds, got, want, where, sizeof where)) {
                printf("  %s G=%u: MISMATCH at %s\n", c->name, set_group[k], where);
                ok = 0;
            }
        }
        failed |= !ok;
        if (ok) {
            float med[NSET + 1];
            bench_interleaved(tune_launch, &t, NSET + 1, reps, med);
            for (int k = 0; k < NSET; k++)
                printf("| %s | %s | %u | %s | %.3f | %.1f%% |\n", c->name, elem_name(c->e), set_group[k],
                       set_l2[k] == TMA_L2_256B ? "256B" : set_l2[k] == TMA_L2_128B ? "128B"
                                                  : set_l2[k] == TMA_L2_64B ? "64B" : "none", med[k + 1],
                       100.0 * med[0] / med[k + 1]);
        }
        CUDA_CHECK(cudaFree(t.dsrc));
        CUDA_CHECK(cudaFree(t.ddst));
        CUDA_CHECK(cudaFree(t.dcopy));
        free(src), free(want), free(got);
    }
    return failed;
}

/* ------------------------------------------------------------------------------------------------
 * ncu runs and the CPU-model path
 * ---------------------------------------------------------------------------------------------- */
static int run_once(tma_permute_desc d, size_t src_bytes, size_t dst_bytes, const char *what) {
    void *s, *t;
    CUDA_CHECK(cudaMalloc(&s, src_bytes));
    CUDA_CHECK(cudaMalloc(&t, dst_bytes));
    CUDA_CHECK(cudaMemset(s, 0x11, src_bytes));
    d.src = s, d.dst = t;
    tma_diag diag;
    tma_permute_plan p;
    tma_status st = tma_permute_plan_make(&p, &d, &diag);
    if (st == TMA_OK)
        st = tma_permute_run(&p, NULL, &diag);
    CUDA_CHECK(cudaDeviceSynchronize());
    printf("%s: %s%s%s (grid %u x %u threads, %llu tiles, box {%u, %u, %u})\n", what, tma_status_name(st),
           st ? ": " : "", st ? diag.message : "", p.grid, p.block, (unsigned long long)p.tiles, p.box[0], p.box[1],
           p.box[2]);
    CUDA_CHECK(cudaFree(s));
    CUDA_CHECK(cudaFree(t));
    return st != TMA_OK;
}

static int run_for_ncu(int isolated) {
    int failed = 0;
    for (uint32_t e = 1; e <= 8; e *= 2) {
        const uint64_t w = 128 / e;
        /* isolated: 132 tiles of 128 bytes x 128 rows, one per block */
        const uint64_t cols = isolated ? w * 132 : 8192, rows = isolated ? 128 : 8192;
        tma_permute_desc d = {.elem_bytes = e, .rank = 2, .src_dims = {cols, rows}, .perm = {1, 0}};
        char what[64];
        snprintf(what, sizeof what, "transpose %s %llux%llu", elem_name(e), (unsigned long long)rows,
                 (unsigned long long)cols);
        failed |= run_once(d, cols * rows * e, cols * rows * e + 16, what);
        /* 2-, 4- and 8-byte elements: also dst rows 16 bytes longer (16 mod 32: the threads store the tiles), src rows
         * 16 bytes longer (not a multiple of 128: the kernel instance with the L2 hints), and both */
        for (int v = 1; isolated && e >= 2 && v < 4; v++) {
            const uint64_t sp = cols * e + (v & 2 ? 16 : 0), dp = rows * e + (v & 1 ? 16 : 0);
            d.src_strides[0] = sp, d.dst_strides[0] = dp;
            snprintf(what, sizeof what, "transpose %s %llux%llu, src pitch %llu, dst pitch %llu", elem_name(e),
                     (unsigned long long)rows, (unsigned long long)cols, (unsigned long long)sp,
                     (unsigned long long)dp);
            failed |= run_once(d, sp * rows, dp * cols + 16, what);
        }
    }
    /* isolated, 2-, 4- and 8-byte elements: short tiles (NCHW -> NHWC, C = V and W / 2: W / C slabs side by side in
     * each line, the threads storing) and packed tiles (NHWC -> NCHW, the same C), 132 tiles each; packed 1-byte too.
     * A few-channel tile has 256 lines (128 for 8-byte elements: PM_TALL_TILE_LINES in kernels/permute_tiles.h). */
    for (uint32_t e = 1; isolated && e <= 8; e *= 2) {
        const uint64_t w = 128 / e, v = 16 / e, lines = e == 8 ? 128 : 256;
        for (uint64_t c = v; c <= w / 2; c = c == v ? w / 2 : w) {
            const uint64_t n = 132 * (lines / c); /* short: lines / c slabs a tile */
            tma_permute_desc d = {.elem_bytes = e, .rank = 3, .src_dims = {w, c, n}, .perm = {1, 0, 2}};
            char what[96];
            if (e >= 2) {
                snprintf(what, sizeof what, "short tiles %s {%llu, %llu, %llu} -> {C, HW, N}", elem_name(e),
                         (unsigned long long)w, (unsigned long long)c, (unsigned long long)n);
                failed |= run_once(d, w * c * n * e, w * c * n * e + 16, what);
            }
            const uint64_t np = 132 * (w / c); /* packed: w / c slabs a tile of `lines` rows */
            tma_permute_desc p = {.elem_bytes = e, .rank = 3, .src_dims = {c, lines, np}, .perm = {1, 0, 2}};
            snprintf(what, sizeof what, "packed tiles %s {%llu, %llu, %llu} -> {HW, C, N}", elem_name(e),
                     (unsigned long long)c, (unsigned long long)lines, (unsigned long long)np);
            failed |= run_once(p, c * lines * np * e, c * lines * np * e + 16, what);
        }
    }
    if (!isolated) {
        tma_permute_desc d = {.elem_bytes = 2, .rank = 4, .src_dims = {128, 32, 4096, 8}, .perm = {0, 2, 1, 3}};
        failed |= run_once(d, 128ull * 32 * 4096 * 8 * 2, 128ull * 32 * 4096 * 8 * 2 + 16, "copy bf16 BSHD->BHSD");
    }
    return failed;
}

static void print_desc(const char *what, const tma_tiled_desc *d) {
    printf("    %s: rank %u, dims {", what, d->rank);
    for (uint32_t i = 0; i < d->rank; i++)
        printf("%s%llu", i ? ", " : "", (unsigned long long)d->global_dim[i]);
    printf("}, strides {");
    for (uint32_t i = 1; i < d->rank; i++)
        printf("%s%llu", i > 1 ? ", " : "", (unsigned long long)d->global_stride[i - 1]);
    printf("} bytes, box {");
    for (uint32_t i = 0; i < d->rank; i++)
        printf("%s%u", i ? ", " : "", d->box_dim[i]);
    printf("}, %s\n", tma_swizzle_name(d->swizzle));
}

static int cpu_model_demo(void) {
    static const pcase demo[] = {
        T2("transpose 333x201", 4, 333, 201, 1),
        T2("transpose 333x201", 1, 333, 201, 1),
        T2("transpose 333x201", 8, 333, 201, 1),
        {"NCHW->NHWC 3x40x14x14", 2, 4, {14, 14, 40, 3}, {2, 0, 1, 3}, 1},
        {"BSHD->BHSD 2x64x8x64", 2, 4, {64, 8, 64, 2}, {0, 2, 1, 3}, 1},
        {"rank 5 (0,3,1,4,2)", 4, 5, {12, 8, 16, 4, 6}, {3, 0, 4, 1, 2}, 1},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof demo / sizeof demo[0]; i++) {
        const pcase *c = &demo[i];
        layout L = layout_of(c);
        uint8_t *src = aligned_alloc(16, (L.src_bytes + 15) / 16 * 16), *got = aligned_alloc(16, L.dst_bytes),
                *want = malloc(L.dst_bytes);
        if (!src || !got || !want)
            return 1;
        fill_random(src, L.src_bytes);
        memset(got, 0xFF, L.dst_bytes);
        memset(want, 0xFF, L.dst_bytes);
        cpu_permute(&L, src, want);
        L.d.src = src, L.d.dst = got;
        tma_permute_model_facts f;
        tma_diag diag;
        tma_status st = tma_permute_model(&L.d, &f, &diag);
        char where[120] = "";
        size_t bad = st == TMA_OK ? compare_rows(c->e, c->rank, L.dd, L.ds, got, want, where, sizeof where) : 1;
        printf("%s %s: %s", c->name, elem_name(c->e), st != TMA_OK ? diag.message : bad ? "MISMATCH" : "verified");
        if (bad && st == TMA_OK)
            printf(" (%zu elements differ, first %s)", bad, where);
        printf("\n");
        if (st == TMA_OK) {
            printf("    %s: %llu tiles, %llu stores; load %zu tx bytes, %zu shared bytes; store box %zu shared bytes\n",
                   f.transpose ? "tile transpose" : "TMA copy", (unsigned long long)f.tiles,
                   (unsigned long long)f.stores, f.load_tx_bytes, f.load_smem_bytes, f.store_smem_bytes);
            print_desc("load map ", &f.load_desc);
            print_desc("store map", &f.store_desc);
        }
        failed |= st != TMA_OK || bad;
        free(src), free(got), free(want);
    }
    printf(failed ? "CPU-model pipeline: FAILED\n" : "CPU-model pipeline: every case verified bitwise\n");
    return failed;
}

/* --probes: permutations of the rank-5 tensor that each change one thing about its pattern, timed like the
 * table's cases but not part of it (docs/lab/permute.md, "What limits the rest"). */
static const pcase probe_cases[] = {
    {"rank 5 (1,3,0,4,2)", 4, 5, {256, 128, 64, 32, 16}, {1, 3, 0, 4, 2}, 1}, /* the issue's: reference */
    /* the same load tiles, but a tile's 32 dst rows are 16 KiB contiguous (src 0's dst stride 512 bytes); 5-D maps */
    {"rank 5 (1,0,3,2,4)", 4, 5, {256, 128, 64, 32, 16}, {1, 0, 3, 2, 4}, 1},
    /* the tiles in flight read consecutive 128 KiB slabs (src 2 walked first), not slabs 8 MiB apart; dst rows 32 KiB
     * apart */
    {"rank 5 (1,2,0,3,4)", 4, 5, {256, 128, 64, 32, 16}, {1, 2, 0, 3, 4}, 1},
};

/* TMA_PERMUTE_HEAP_PAD=N (diagnostic): N MiB allocated before the first case and held to the end, so every case's
 * buffers lie N MiB further on in device memory. (2 and 6 MiB moved no case beyond its run-to-run spread, H200:
 * docs/lab/permute.md, "The fp32 instance without thread stores".) */
static void *alloc_heap_pad(void) {
    const char *env = getenv("TMA_PERMUTE_HEAP_PAD");
    const size_t mib = env ? (size_t)strtoull(env, NULL, 0) : 0u;
    void *p = NULL;
    if (mib) {
        CUDA_CHECK(cudaMalloc(&p, mib << 20));
        printf("heap pad: %zu MiB at %p\n", mib, p);
    }
    return p;
}

static int have_hopper(void) { return sample_have_hopper("the permute's tile pipeline through the CPU model of the copy engine"); }

int main(int argc, char **argv) {
    int quick = 0, reps = 20, ncu = 0, isolated = 0, tune = 0, once = 0, probes = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--once"))
            once = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--tune"))
            tune = 1;
        else if (!strcmp(argv[i], "--ncu"))
            ncu = 1;
        else if (!strcmp(argv[i], "--ncu-isolated"))
            isolated = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--probes"))
            probes = 1;
        else {
            fprintf(stderr, "usage: %s [--quick] [--only LIST] [--once] [--tune] [--probes] [--reps N] [--ncu | "
                    "--ncu-isolated]\n", argv[0]);
            return 2;
        }
    }
    reps = reps < 1 ? 1 : reps;
    seed_random();
    if (!have_hopper())
        return cpu_model_demo();
    if (ncu || isolated)
        return run_for_ncu(isolated);
    void *heap_pad = alloc_heap_pad();
    const pcase *list = probes ? probe_cases : cases;
    const size_t count = probes ? sizeof probe_cases / sizeof probe_cases[0] : NCASES;
    row rows[NCASES];
    int n = 0, failed = 0;
    for (size_t i = 0; i < count; i++) {
        if ((quick && !list[i].quick) || !selected(&list[i], only))
            continue;
        if (once) {
            failed |= once_case(&list[i]);
            continue;
        }
        failed |= measure_case(&list[i], reps, &rows[n]);
        const row *r = &rows[n++];
        if (r->ok)
            printf("%-28s %-4s %-9s verified; permute %.1f%% of memcpy, tma-copy %.1f%%\n", list[i].name,
                   elem_name(list[i].e), r->transpose ? "transpose" : "copy",
                   100.0 * r->ms[V_MEMCPY] / r->ms[V_PERMUTE], 100.0 * r->ms[V_MEMCPY] / r->ms[V_TMA_COPY]);
        fflush(stdout);
    }
    if (!once) {
        print_table(rows, n, reps);
        if (tune)
            failed |= run_tune(reps, only);
    }
    if (heap_pad)
        CUDA_CHECK(cudaFree(heap_pad));
    return failed;
}
