/* tma-permute(1)
 *
 * NAME
 *     tma-permute - tensor permutations at copy speed: tma_permute beside a device-to-device copy, a plain TMA copy
 *     and a plain element-wise index kernel of the same tensor
 *
 * SYNOPSIS
 *     tma-permute [--quick] [--small] [--only LIST] [--once] [--tune] [--probes] [--reps N] [--ncu | --ncu-isolated]
 *     tma-permute --list
 *
 * DESCRIPTION
 *     For each case (2-D transposes 8192^2, 16384^2 and the ragged 12345 x 6789 in 1-, 2-, 4- and 8-byte elements,
 *     the logits 4096 x 50257 and a tiny 17 x 31; NCHW -> NHWC and back at 32 x 256 x 56 x 56, 128 x 64 x 112 x 112,
 *     64 x 3 x 224 x 224 and 128 x 2048 x 7 x 7; [B, S, H, D] -> [B, H, S, D] at 8 x 4096 x 32 x 128 bf16; the
 *     batched transpose [64, 1000, 1000] fp32; rank-3 and rank-5 permutations), src and dst DENSE, as a PyTorch user
 *     has them (x.permute(...).contiguous() of a contiguous x), whatever their rows' byte lengths:
 *       memcpy      cudaMemcpyAsync device-to-device of the tensor's bytes
 *       tma-copy    tma_permute with the identity permutation into a tensor of src's layout: a plain copy over the
 *                   same strides (a TMA copy where TMA can describe them), the ceiling for any TMA kernel on them
 *       tma-copy-dst  the same over dst's layout (dst's dimensions and strides, copied into a tensor like it)
 *       index       a plain element-wise index kernel (index_permute.cu): one thread per dst element, the src offset
 *                   from the dst index by divisions by dst's dimensions; the baseline where PyTorch is not at hand
 *       permute     tma_permute (tma/kernels.h; tma_transpose is its 2-D case); its path (TMA copy, TMA transpose,
 *                   threads) is printed with each case
 *     Every variant is first verified against a CPU permutation of fresh random data (seed printed; output poisoned
 *     first, with 64 guard bytes after it; every element compared bitwise, and every byte outside dst's elements
 *     checked untouched). Then all variants of a case are timed together in interleaved rounds after >= 500 ms of
 *     warm-up rounds (median of N launches each, CUDA events; common/bench.h). GB/s counts bytes read plus bytes
 *     written (2 x elements x element size); "x index" is the index kernel's time over the permute's.
 *
 *     Then small tensors (< 1 MiB: fp32 17 x 31 and 64 x 64 transposes, bf16 NCHW -> NHWC 1 x 3 x 32 x 32, an fp32
 *     rank-3 and a u8 100 x 7 transpose), per call in microseconds: the one call tma_permute (plan and launch, no
 *     host synchronization), tma_permute_run of a plan made once, the index kernel and a cudaMemcpyAsync of the same
 *     bytes, each timed as 200 calls back to back between two CUDA events, in interleaved rounds, median (the same
 *     verification first). The two tables are printed last.
 *
 *     Without a Hopper GPU it says so, runs the permute's pipeline through the CPU model of the copy engine
 *     (tma_permute_model) on small dense cases, verifies them (guard bytes included) and prints each plan's
 *     descriptors and per-copy bytes.
 *
 *     PyTorch beside it: samples/bench/permute/torch_permute.py times x.permute(...).contiguous() on the same cases
 *     (it reads them from tma-permute --list) against y.copy_(x) of the same bytes, on a machine with PyTorch and a
 *     CUDA GPU (not part of the build or of CI):
 *         python3 samples/bench/permute/torch_permute.py [--bin build/samples/tma-permute] [--only LIST] [--reps N]
 *
 * OPTIONS
 *     --quick          only the 8192^2 transposes, the smaller NCHW shape, the heads split, the rank-5 cases and the
 *                      fp32 shapes of issue 31 (logits, images, 7 x 7, rank 3, 17 x 31), then the small table
 *     --small          only the small tensors' table
 *     --only LIST      only the cases whose "name dtype" (e.g. "transpose 12345x6789 fp32") contains LIST or one of
 *                      its comma-separated strings (both tables)
 *     --list           print the cases (both tables) with their PyTorch shapes and permute dims, one a line, tab-
 *                      separated: table, name, dtype, shape (outermost first), dims; for torch_permute.py. No GPU used
 *     --once           each case's permute and tma-copy-dst once, on unverified data, untimed (for ncu)
 *     --tune           after the table, sweep the TMA transpose's tile order (bands of G tile columns) and L2
 *                      promotion on fp32 8192^2, fp32 and fp64 16384^2, NCHW -> NHWC bf16 and the rank-5 cases
 *                      (those --only selects), each verified
 *     --probes         instead of the table's cases, permutations of the rank-5 case's tensor that each change one
 *                      thing about its pattern (the dst rows of a tile, the slabs in flight), verified and timed
 *     --reps N         timed launches per variant (default 20)
 *     --ncu            each permute kernel once (one case per element size and kind), unverified, untimed: for
 *                      ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum,...
 *     --ncu-isolated   the transpose kernels on exactly one tile per block (132 tiles), so no TMA copy overlaps a
 *                      block's shared reads and writes; every kernel instance, the short and packed tiles included
 *     TMA_PERMUTE_SEED replays the data; TMA_PERMUTE_ALIGN=N (diagnostic) pads the strides of src and dst to
 *     multiples of N bytes where dense ones are not (16: the layouts of this benchmark before issue 31, which every
 *     TMA map can describe); TMA_PERMUTE_DST_ALIGN=N (diagnostic) pads dst's strides to N bytes instead (a multiple
 *     of 16; docs/lab/permute.md: the ragged cases with 32-byte aligned dst rows); TMA_PERMUTE_ROW_PAD=N (diagnostic)
 *     adds N bytes (a multiple of 16) between the rows of src and dst (docs/lab/permute.md: power-of-two pitches),
 *     TMA_PERMUTE_ROW_PAD=S,D S bytes between src's rows and D between dst's; TMA_PERMUTE_TUNE=G,L2 (diagnostic)
 *     tunes the permute's plan (tma_permute_plan_tune: bands of G tile columns, 0 = row-major; L2 promotion 0..3 =
 *     none, 64, 128, 256 bytes); TMA_PERMUTE_HEAP_PAD=N (diagnostic) allocates N MiB of device memory before the
 *     first case and holds it, so every case's buffers lie further on (each plan line prints the buffers' addresses).
 *
 * BUILD AND RUN
 *     cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j && ./build/samples/tma-permute
 *
 * EXIT STATUS
 *     0 when every variant verified (or the CPU-model pipeline did), 1 otherwise (a refused plan included), 2 for
 *     bad usage.
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
#include "index_permute.h"

/* ------------------------------------------------------------------------------------------------
 * Cases and the CPU reference
 * ---------------------------------------------------------------------------------------------- */
typedef struct pcase {
    const char *name;
    uint32_t e, rank;
    uint64_t dims[5]; /* src, dimension 0 innermost (a PyTorch shape reversed) */
    uint32_t perm[5]; /* dst dimension i = src dimension perm[i] (PyTorch's permute dims: rank-1-perm[rank-1-j]) */
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
    /* not the issue's: the ragged matrix the other way round (dense rows of 12345 elements: odd byte lengths) */
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
    /* not the issue's: few channels, the NHWC side's rows shorter than 128 bytes */
    TO_NHWC(4, 32, 4, 224, 224, 0),  TO_NHWC(2, 32, 8, 224, 224, 0), TO_NHWC(4, 32, 16, 224, 224, 0),
    TO_NHWC(2, 32, 32, 112, 112, 0), TO_NCHW(4, 32, 16, 224, 224, 0), TO_NCHW(2, 32, 32, 112, 112, 0),
    /* not the issue's: NHWC -> NCHW at ResNet's 14x14 and 7x7 layers, whose NCHW rows (392 and 98 bytes) are not
     * 32-byte multiples */
    TO_NCHW(2, 128, 256, 14, 14, 0), TO_NCHW(2, 128, 512, 7, 7, 0),
    /* issue 31: the shapes TMA maps cannot describe densely (rows whose bytes are not a multiple of 16), refused
     * before it. PyTorch shapes in the names, outermost first. */
    T2("transpose 4096x50257", 4, 4096, 50257, 1), T2("transpose 4096x50257", 2, 4096, 50257, 0),
    TO_NHWC(4, 64, 3, 224, 224, 1),  TO_NCHW(4, 64, 3, 224, 224, 1),
    TO_NHWC(4, 128, 2048, 7, 7, 1),  TO_NHWC(2, 128, 2048, 7, 7, 0),
    /* x of shape (333, 444, 55), x.permute(2, 0, 1) */
    {"rank 3 [333,444,55] (2,0,1)", 4, 3, {55, 444, 333}, {1, 2, 0}, 1},
    T2("transpose 17x31", 4, 17, 31, 1),
    /* x of shape (16, 32, 24, 40, 48), x.permute(0, 3, 1, 4, 2) */
    {"rank 5 [16,32,24,40,48] (0,3,1,4,2)", 4, 5, {48, 40, 24, 32, 16}, {2, 0, 3, 1, 4}, 1},
    {"rank 5 [16,32,24,40,48] (0,3,1,4,2)", 2, 5, {48, 40, 24, 32, 16}, {2, 0, 3, 1, 4}, 0},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Small tensors (< 1 MiB): the time of a call, not of the bytes. */
static const pcase small_cases[] = {
    T2("transpose 17x31", 4, 17, 31, 1),
    T2("transpose 64x64", 4, 64, 64, 1),
    TO_NHWC(2, 1, 3, 32, 32, 1),
    /* x of shape (8, 16, 33), x.permute(2, 0, 1) */
    {"rank 3 [8,16,33] (2,0,1)", 4, 3, {33, 16, 8}, {1, 2, 0}, 1},
    T2("transpose 100x7", 1, 100, 7, 1),
};
#define NSMALL (sizeof small_cases / sizeof small_cases[0])

static const char *elem_name(uint32_t e) { return e == 1 ? "u8" : e == 2 ? "bf16" : e == 4 ? "fp32" : "fp64"; }

/* What the plan chose. */
static const char *path_name(const tma_permute_plan *p) {
    return p->threads ? "threads" : p->transpose ? "TMA transpose" : "TMA copy";
}

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

/* A case's description: dense by default (the diagnostics below pad it). src_bytes and dst_bytes are the tensors'
 * extents, from their first element's first byte to their last element's last; every output buffer has GUARD
 * poisoned bytes after that, which must stay untouched. */
enum { GUARD = 64, POISON = 0xFF };
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

/* TMA_PERMUTE_ALIGN (diagnostic): pad src's and dst's strides to multiples of this many bytes (a multiple of 16;
 * default: dense); TMA_PERMUTE_DST_ALIGN: dst's alone. */
static uint64_t align_env(const char *name, uint64_t dflt) {
    const char *env = getenv(name);
    const uint64_t a = env ? strtoull(env, NULL, 0) : 0u;
    return a >= 16u && a % 16u == 0 ? a : dflt;
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
    const uint64_t align = align_env("TMA_PERMUTE_ALIGN", c->e);
    strides_of(c->e, c->rank, c->dims, align, row_pad(0), L.d.src_strides, L.ss);
    strides_of(c->e, c->rank, L.dd, align_env("TMA_PERMUTE_DST_ALIGN", align), row_pad(1), L.d.dst_strides, L.ds);
    size_t s = c->e, t = c->e;
    for (uint32_t i = 0; i < c->rank; i++)
        s += (c->dims[i] - 1) * L.ss[i], t += (L.dd[i] - 1) * L.ds[i];
    L.src_bytes = s, L.dst_bytes = t;
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

/* Bytes of got (`bytes` long, poisoned before the run) written outside the tensor's elements: the element rows are
 * poisoned again, and then every byte must be POISON. Overwrites got's elements. */
static size_t written_outside(uint32_t e, uint32_t r, const uint64_t *dd, const uint64_t *ds, uint8_t *got,
                              size_t bytes, size_t *first) {
    uint64_t rows = 1;
    for (uint32_t i = 1; i < r; i++)
        rows *= dd[i];
    for (uint64_t row = 0; row < rows; row++) {
        uint64_t x = row, off = 0;
        for (uint32_t i = 1; i < r; i++)
            off += (x % dd[i]) * ds[i], x /= dd[i];
        memset(got + off, POISON, dd[0] * e);
    }
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++)
        if (got[i] != POISON && n++ == 0)
            *first = i;
    return n;
}

/* got, read back from a poisoned output of `bytes` (extent + GUARD): its elements against want's, then the bytes
 * outside them untouched; prints what differs. @return 1 when it all holds */
static int verify_output(const char *what, uint32_t e, uint32_t r, const uint64_t *dd, const uint64_t *ds,
                         uint8_t *got, const uint8_t *want, size_t bytes) {
    char where[120] = "";
    const size_t bad = compare_rows(e, r, dd, ds, got, want, where, sizeof where);
    size_t first = 0;
    const size_t outside = written_outside(e, r, dd, ds, got, bytes, &first);
    if (bad)
        printf("  %s: %zu elements differ, first at %s\n", what, bad, where);
    if (outside)
        printf("  %s: %zu bytes written outside the tensor's elements, the first at byte %zu (the tensor's extent: "
               "%zu bytes)\n", what, outside, first, bytes - GUARD);
    return !bad && !outside;
}

/* The index kernel's arguments for the case (its src and dst addresses apart). */
static index_permute_args index_args(const layout *L, const void *src, void *dst) {
    index_permute_args a;
    memset(&a, 0, sizeof a);
    a.elem_bytes = L->d.elem_bytes, a.rank = L->d.rank, a.src = src, a.dst = dst;
    for (uint32_t i = 0; i < L->d.rank; i++)
        a.dims[i] = L->dd[i], a.src_strides[i] = L->ss[L->d.perm[i]], a.dst_strides[i] = L->ds[i];
    return a;
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

/* --list: each case as PyTorch has it, for torch_permute.py: table, name, dtype, shape outermost first, dims. */
static void list_cases(const pcase *list, size_t n, const char *table) {
    for (size_t i = 0; i < n; i++) {
        const pcase *c = &list[i];
        printf("%s\t%s\t%s\t", table, c->name, elem_name(c->e));
        for (uint32_t j = 0; j < c->rank; j++)
            printf("%s%llu", j ? "," : "", (unsigned long long)c->dims[c->rank - 1 - j]);
        printf("\t");
        for (uint32_t j = 0; j < c->rank; j++)
            printf("%s%u", j ? "," : "", c->rank - 1 - c->perm[c->rank - 1 - j]);
        printf("\n");
    }
}

/* ------------------------------------------------------------------------------------------------
 * The variants of one case
 * ---------------------------------------------------------------------------------------------- */
enum { V_MEMCPY, V_TMA_COPY, V_COPY_DST, V_INDEX, V_PERMUTE, NV };
static const char *vname[NV] = {"memcpy", "tma-copy", "tma-copy-dst", "index", "permute"};

typedef struct bench_ctx {
    const layout *L;
    void *dsrc, *ddst, *dcopy, *dcopy2;
    tma_permute_plan perm, copy, copy_dst;
    int have[NV]; /* the variant's plan was made (memcpy and index: always) */
    index_permute_args ix;
} bench_ctx;

/* One launch of what both tables time: a device-to-device copy of the tensor's bytes (dcopy), the index kernel (ix), a
 * plan's run (plan), or the one call of desc; the first given. Exits on an error, naming `name`. */
static void launch_one(const char *name, const layout *L, void *dcopy, const void *dsrc, const index_permute_args *ix,
                       const tma_permute_plan *plan, const tma_permute_desc *desc) {
    tma_diag diag;
    tma_status st = TMA_OK;
    if (dcopy)
        CUDA_CHECK(cudaMemcpyAsync(dcopy, dsrc, L->elems * L->d.elem_bytes, cudaMemcpyDeviceToDevice, 0));
    else if (ix)
        CUDA_CHECK(index_permute(ix, 0));
    else if (plan)
        st = tma_permute_run(plan, NULL, &diag);
    else
        st = tma_permute(desc, NULL, &diag);
    if (st != TMA_OK) {
        fprintf(stderr, "%s: %s: %s\n", name, tma_status_name(st), diag.message);
        exit(1);
    }
}

static void launch(void *p, int which) {
    bench_ctx *c = (bench_ctx *)p;
    if (!c->have[which])
        return; /* a refused plan: nothing to time (its columns say so) */
    const tma_permute_plan *plan = which == V_TMA_COPY ? &c->copy : which == V_COPY_DST ? &c->copy_dst : &c->perm;
    launch_one(vname[which], c->L, which == V_MEMCPY ? c->dcopy : NULL, c->dsrc, which == V_INDEX ? &c->ix : NULL,
               plan, NULL);
}

typedef struct row {
    const pcase *c;
    const char *path; /* the permute plan's, or "refused" */
    int ok;
    int have[NV];
    float ms[NV];
    size_t bytes;
} row;

/* Plans for the case; the identity permutation of src into a tensor of src's layout is the plain copy. A refused
 * copy plan leaves its variant out; a refused permute plan, the case. @return 1 when the permute was planned */
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
    b->have[V_MEMCPY] = b->have[V_INDEX] = 1;
    b->ix = index_args(L, b->dsrc, b->ddst);
    tma_status st = tma_permute_plan_make(&b->copy, &id, &diag);
    if (st != TMA_OK)
        printf("  tma-copy plan refused: %s: %s\n", tma_status_name(st), diag.message);
    b->have[V_TMA_COPY] = st == TMA_OK;
    st = tma_permute_plan_make(&b->copy_dst, &idd, &diag);
    if (st != TMA_OK)
        printf("  tma-copy-dst plan refused: %s: %s\n", tma_status_name(st), diag.message);
    b->have[V_COPY_DST] = st == TMA_OK;
    st = tma_permute_plan_make(&b->perm, &d, &diag);
    const char *tune = getenv("TMA_PERMUTE_TUNE"); /* diagnostic: "G,L2" (L2 0..3: none, 64, 128, 256 bytes) */
    if (st == TMA_OK && tune && b->perm.transpose) {
        char *end = NULL;
        const uint32_t g = (uint32_t)strtoul(tune, &end, 0);
        const uint32_t l2 = end && *end == ',' ? (uint32_t)strtoul(end + 1, NULL, 0) : 3u;
        st = tma_permute_plan_tune(&b->perm, g, (tma_l2_promotion)l2, &diag);
    }
    if (st != TMA_OK)
        printf("  plan refused: %s: %s\n", tma_status_name(st), diag.message);
    b->have[V_PERMUTE] = st == TMA_OK;
    return st == TMA_OK;
}

static void alloc_buffers(bench_ctx *b, const layout *L) {
    CUDA_CHECK(cudaMalloc(&b->dsrc, L->src_bytes));
    CUDA_CHECK(cudaMalloc(&b->ddst, L->dst_bytes + GUARD));
    CUDA_CHECK(cudaMalloc(&b->dcopy, L->src_bytes + GUARD));
    CUDA_CHECK(cudaMalloc(&b->dcopy2, L->dst_bytes + GUARD));
}

static void free_buffers(bench_ctx *b) {
    CUDA_CHECK(cudaFree(b->dsrc));
    CUDA_CHECK(cudaFree(b->ddst));
    CUDA_CHECK(cudaFree(b->dcopy));
    CUDA_CHECK(cudaFree(b->dcopy2));
}

/* --once: the case's permute and tma-copy-dst, one launch each, on a constant pattern (no host data): for ncu. */
static int once_case(const pcase *c) {
    const layout L = layout_of(c);
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.L = &L;
    alloc_buffers(&b, &L);
    CUDA_CHECK(cudaMemset(b.dsrc, 0x5A, L.src_bytes));
    const int ok = make_plans(&b, &L);
    if (ok) {
        launch(&b, V_PERMUTE);
        launch(&b, V_COPY_DST);
        CUDA_CHECK(cudaDeviceSynchronize());
        printf("%s %s: permute (%s) and tma-copy-dst launched once\n", c->name, elem_name(c->e), path_name(&b.perm));
    }
    free_buffers(&b);
    return ok ? 0 : 1;
}

/* A case's host buffers: src of fresh random data, want (dst's span poisoned, then the CPU permutation), got of
 * got_bytes for the device's result. */
static void host_case(const layout *L, size_t got_bytes, uint8_t **src, uint8_t **want, uint8_t **got) {
    *src = malloc(L->src_bytes), *want = malloc(L->dst_bytes), *got = malloc(got_bytes);
    if (!*src || !*want || !*got) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    fill_random(*src, L->src_bytes);
    memset(*want, POISON, L->dst_bytes);
    cpu_permute(L, *src, *want);
}

static int measure_case(const pcase *c, int reps, row *out) {
    const layout L = layout_of(c);
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.L = &L;
    const size_t out_max = (L.dst_bytes > L.src_bytes ? L.dst_bytes : L.src_bytes) + GUARD;
    uint8_t *src, *want, *got;
    host_case(&L, out_max, &src, &want, &got);
    alloc_buffers(&b, &L);
    CUDA_CHECK(cudaMemcpy(b.dsrc, src, L.src_bytes, cudaMemcpyHostToDevice));
    memset(out, 0, sizeof *out);
    out->c = c, out->bytes = 2 * L.elems * c->e;
    int ok = make_plans(&b, &L);
    out->path = ok ? path_name(&b.perm) : "refused";
    memcpy(out->have, b.have, sizeof out->have);
    if (ok)
        printf("  plan: %s, rank %u, box {%u, %u, %u, %u, %u}, %llu tiles, grid %u x %u threads, %zu bytes of shared "
               "memory; row pitches src %llu, dst %llu bytes; src at %p, dst at %p, memcpy's dst at %p\n",
               out->path, b.perm.rank, b.perm.box[0], b.perm.box[1], b.perm.box[2], b.perm.box[3], b.perm.box[4],
               (unsigned long long)b.perm.tiles, b.perm.grid, b.perm.block, b.perm.smem,
               (unsigned long long)(c->rank > 1 ? L.ss[1] : 0), (unsigned long long)(c->rank > 1 ? L.ds[1] : 0),
               b.dsrc, b.ddst, b.dcopy);
    /* verify each variant (not memcpy) on a poisoned output; tma-copy-dst last: it copies dst as permute left it */
    static const int order[] = {V_TMA_COPY, V_INDEX, V_PERMUTE, V_COPY_DST};
    for (int oi = 0; ok && oi < 4; oi++) {
        const int v = order[oi];
        if (!b.have[v])
            continue;
        void *dout = v == V_TMA_COPY ? b.dcopy : v == V_COPY_DST ? b.dcopy2 : b.ddst;
        const size_t bytes = (v == V_TMA_COPY ? L.src_bytes : L.dst_bytes) + GUARD;
        CUDA_CHECK(cudaMemset(dout, POISON, bytes));
        launch(&b, v);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(got, dout, bytes, cudaMemcpyDeviceToHost));
        char what[160];
        snprintf(what, sizeof what, "%s %s %s", c->name, elem_name(c->e), vname[v]);
        ok = v == V_TMA_COPY ? verify_output(what, c->e, c->rank, c->dims, L.ss, got, src, bytes)
                             : verify_output(what, c->e, c->rank, L.dd, L.ds, got, want, bytes);
    }
    out->ok = ok;
    if (ok)
        bench_interleaved(launch, &b, NV, reps, out->ms);
    free_buffers(&b);
    free(src), free(want), free(got);
    return ok ? 0 : 1;
}

/* A variant's % of memcpy into buf, or why there is none. */
static const char *pct(char *buf, size_t n, const row *r, int v) {
    if (!r->have[v])
        snprintf(buf, n, "refused");
    else
        snprintf(buf, n, "%.1f%%", 100.0 * r->ms[V_MEMCPY] / r->ms[v]);
    return buf;
}

static void print_table(const row *rows, int n, int reps) {
    printf("\n| case | dtype | path | memcpy GB/s | tma-copy %% | tma-copy-dst %% | index %% | permute ms "
           "| permute GB/s | permute %% memcpy | x index |\n"
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        if (!r->ok) {
            printf("| %s | %s | %s | %s | | | | | | | |\n", r->c->name, elem_name(r->c->e), r->path,
                   r->have[V_PERMUTE] ? "FAILED verification" : "-");
            continue;
        }
        char a[16], b[16], x[16];
        const double mc = r->bytes / (r->ms[V_MEMCPY] * 1e6), pg = r->bytes / (r->ms[V_PERMUTE] * 1e6);
        printf("| %s | %s | %s | %.0f | %s | %s | %s | %.3f | %.0f | %.1f%% | %.2f |\n", r->c->name, elem_name(r->c->e),
               r->path, mc, pct(a, sizeof a, r, V_TMA_COPY), pct(b, sizeof b, r, V_COPY_DST),
               pct(x, sizeof x, r, V_INDEX), r->ms[V_PERMUTE], pg, 100.0 * pg / mc, r->ms[V_INDEX] / r->ms[V_PERMUTE]);
    }
    printf("\n(median of %d launches per variant, interleaved rounds; GB/s = 2 x elements x size / time; x index = "
           "index kernel's time / permute's)\n", reps);
}

/* ------------------------------------------------------------------------------------------------
 * Small tensors: microseconds a call
 * ---------------------------------------------------------------------------------------------- */
enum { S_MEMCPY, S_INDEX, S_ONE_CALL, S_RUN, NS };
static const char *sname[NS] = {"memcpy", "index", "tma_permute", "tma_permute_run"};
enum { SMALL_CALLS = 200 }; /* calls back to back between two events */

typedef struct small_ctx {
    const layout *L;
    void *dsrc, *ddst, *dcopy;
    tma_permute_desc d;
    tma_permute_plan plan;
    index_permute_args ix;
    int calls;
} small_ctx;

static void small_launch(void *p, int which) {
    small_ctx *s = (small_ctx *)p;
    for (int i = 0; i < s->calls; i++)
        launch_one(sname[which], s->L, which == S_MEMCPY ? s->dcopy : NULL, s->dsrc, which == S_INDEX ? &s->ix : NULL,
                   which == S_RUN ? &s->plan : NULL, &s->d);
}

typedef struct small_row {
    const pcase *c;
    const char *path;
    int ok;
    float us[NS]; /* a call */
    size_t bytes;
} small_row;

static int measure_small(const pcase *c, int reps, small_row *out) {
    const layout L = layout_of(c);
    small_ctx s;
    memset(&s, 0, sizeof s);
    s.L = &L;
    uint8_t *src, *want, *got;
    host_case(&L, L.dst_bytes + GUARD, &src, &want, &got);
    CUDA_CHECK(cudaMalloc(&s.dsrc, L.src_bytes));
    CUDA_CHECK(cudaMalloc(&s.ddst, L.dst_bytes + GUARD));
    CUDA_CHECK(cudaMalloc(&s.dcopy, L.src_bytes));
    CUDA_CHECK(cudaMemcpy(s.dsrc, src, L.src_bytes, cudaMemcpyHostToDevice));
    memset(out, 0, sizeof *out);
    out->c = c, out->bytes = 2 * L.elems * c->e, out->path = "refused";
    s.d = L.d, s.d.src = s.dsrc, s.d.dst = s.ddst;
    s.ix = index_args(&L, s.dsrc, s.ddst);
    tma_diag diag;
    const tma_status st = tma_permute_plan_make(&s.plan, &s.d, &diag);
    int ok = st == TMA_OK;
    if (!ok)
        printf("%-28s %-4s refused: %s: %s\n", c->name, elem_name(c->e), tma_status_name(st), diag.message);
    else
        out->path = path_name(&s.plan);
    s.calls = 1;
    for (int v = S_INDEX; ok && v < NS; v++) {
        CUDA_CHECK(cudaMemset(s.ddst, POISON, L.dst_bytes + GUARD));
        small_launch(&s, v);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(got, s.ddst, L.dst_bytes + GUARD, cudaMemcpyDeviceToHost));
        char what[160];
        snprintf(what, sizeof what, "%s %s %s", c->name, elem_name(c->e), sname[v]);
        ok = verify_output(what, c->e, c->rank, L.dd, L.ds, got, want, L.dst_bytes + GUARD);
    }
    out->ok = ok;
    if (ok) {
        float ms[NS];
        s.calls = SMALL_CALLS;
        bench_interleaved(small_launch, &s, NS, reps, ms);
        for (int v = 0; v < NS; v++)
            out->us[v] = ms[v] * 1000.f / (float)SMALL_CALLS;
        printf("%-28s %-4s %-13s verified; a call: tma_permute %.2f us, run %.2f us, index %.2f us, memcpy %.2f "
               "us\n", c->name, elem_name(c->e), out->path, out->us[S_ONE_CALL], out->us[S_RUN], out->us[S_INDEX],
               out->us[S_MEMCPY]);
    }
    CUDA_CHECK(cudaFree(s.dsrc));
    CUDA_CHECK(cudaFree(s.ddst));
    CUDA_CHECK(cudaFree(s.dcopy));
    free(src), free(want), free(got);
    return ok ? 0 : 1;
}

static void print_small_table(const small_row *rows, int n, int reps) {
    printf("\n| small case | dtype | path | bytes | memcpy us | index us | tma_permute us | run us "
           "| tma_permute x index | run x index |\n"
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < n; i++) {
        const small_row *r = &rows[i];
        if (!r->ok) {
            printf("| %s | %s | %s | %zu | %s | | | | | |\n", r->c->name, elem_name(r->c->e), r->path, r->bytes,
                   strcmp(r->path, "refused") ? "FAILED verification" : "-");
            continue;
        }
        printf("| %s | %s | %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r->c->name, elem_name(r->c->e),
               r->path, r->bytes, r->us[S_MEMCPY], r->us[S_INDEX], r->us[S_ONE_CALL], r->us[S_RUN],
               r->us[S_INDEX] / r->us[S_ONE_CALL], r->us[S_INDEX] / r->us[S_RUN]);
    }
    printf("\n(a call: %d calls back to back between two CUDA events, median of %d interleaved rounds; bytes = 2 x "
           "elements x size; tma_permute = plan + launch in one call, no host sync)\n", SMALL_CALLS, reps);
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
    /* TMA transposes only: tune leaves a thread-kernel plan as it is (the ragged 12345 x 6789 are such plans) */
    static const char *names[] = {"transpose 8192^2", "transpose 16384^2", "NCHW->NHWC 32x256x56x56",
                                  "transpose 16384^2", "rank 5 (1,3,0,4,2)", "rank 5 [16,32,24,40,48] (0,3,1,4,2)",
                                  "rank 5 [16,32,24,40,48] (0,3,1,4,2)"};
    static const uint32_t elems[] = {4, 4, 2, 8, 4, 4, 2};
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
        uint8_t *src = malloc(L.src_bytes), *want = malloc(L.dst_bytes), *got = malloc(L.dst_bytes + GUARD);
        if (!src || !want || !got)
            return 1;
        fill_random(src, L.src_bytes);
        memset(want, POISON, L.dst_bytes);
        cpu_permute(&L, src, want);
        CUDA_CHECK(cudaMalloc(&t.dsrc, L.src_bytes));
        CUDA_CHECK(cudaMalloc(&t.ddst, L.dst_bytes + GUARD));
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
            CUDA_CHECK(cudaMemset(t.ddst, POISON, L.dst_bytes + GUARD));
            tune_launch(&t, k + 1);
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemcpy(got, t.ddst, L.dst_bytes + GUARD, cudaMemcpyDeviceToHost));
            char what[160];
            snprintf(what, sizeof what, "%s %s G=%u", c->name, elem_name(c->e), set_group[k]);
            ok = verify_output(what, c->e, c->rank, L.dd, L.ds, got, want, L.dst_bytes + GUARD);
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
        T2("transpose 17x31", 4, 17, 31, 1), /* issue 31: rows of 124 and 68 bytes */
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
        const size_t out = L.dst_bytes + GUARD;
        uint8_t *src = aligned_alloc(16, (L.src_bytes + 15) / 16 * 16), *want = malloc(L.dst_bytes),
                *got = aligned_alloc(16, (out + 15) / 16 * 16);
        if (!src || !got || !want)
            return 1;
        fill_random(src, L.src_bytes);
        memset(got, POISON, out);
        memset(want, POISON, L.dst_bytes);
        cpu_permute(&L, src, want);
        L.d.src = src, L.d.dst = got;
        tma_permute_model_facts f;
        tma_diag diag;
        tma_status st = tma_permute_model(&L.d, &f, &diag);
        char what[160];
        snprintf(what, sizeof what, "%s %s", c->name, elem_name(c->e));
        const int ok = st == TMA_OK && verify_output(what, c->e, c->rank, L.dd, L.ds, got, want, out);
        printf("%s: %s\n", what, st != TMA_OK ? diag.message : ok ? "verified (guard bytes untouched)" : "MISMATCH");
        if (st == TMA_OK && f.threads) {
            printf("    thread kernel: %llu tiles, %llu 16-byte chunks stored, no TMA copies\n",
                   (unsigned long long)f.tiles, (unsigned long long)f.stores);
        } else if (st == TMA_OK) {
            printf("    %s: %llu tiles, %llu stores; load %zu tx bytes, %zu shared bytes; store box %zu shared bytes\n",
                   f.transpose ? "tile transpose" : "TMA copy", (unsigned long long)f.tiles,
                   (unsigned long long)f.stores, f.load_tx_bytes, f.load_smem_bytes, f.store_smem_bytes);
            print_desc("load map ", &f.load_desc);
            print_desc("store map", &f.store_desc);
        }
        failed |= !ok;
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

static int have_hopper(void) {
    return sample_have_hopper("the permute's tile pipeline through the CPU model of the copy engine");
}

int main(int argc, char **argv) {
    int quick = 0, reps = 20, ncu = 0, isolated = 0, tune = 0, once = 0, probes = 0, small = 0, list_only = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--small"))
            small = 1;
        else if (!strcmp(argv[i], "--list"))
            list_only = 1;
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
            fprintf(stderr, "usage: %s [--quick] [--small] [--only LIST] [--once] [--tune] [--probes] [--reps N] "
                    "[--ncu | --ncu-isolated] | --list\n", argv[0]);
            return 2;
        }
    }
    if (list_only) {
        list_cases(cases, NCASES, "large");
        list_cases(small_cases, NSMALL, "small");
        return 0;
    }
    reps = reps < 1 ? 1 : reps;
    seed_random();
    if (!have_hopper())
        return cpu_model_demo();
    if (ncu || isolated)
        return run_for_ncu(isolated);
    void *heap_pad = alloc_heap_pad();
    const pcase *list = probes ? probe_cases : cases;
    const size_t count = small ? 0 : probes ? sizeof probe_cases / sizeof probe_cases[0] : NCASES;
    row rows[NCASES];
    small_row srows[NSMALL];
    int n = 0, ns = 0, failed = 0;
    for (size_t i = 0; i < count; i++) {
        if ((quick && !list[i].quick) || !selected(&list[i], only))
            continue;
        if (once) {
            failed |= once_case(&list[i]);
            continue;
        }
        failed |= measure_case(&list[i], reps, &rows[n]);
        const row *r = &rows[n++];
        char a[16], x[16];
        if (r->ok)
            printf("%-28s %-4s %-13s verified; permute %.1f%% of memcpy, tma-copy %s, index %s\n", list[i].name,
                   elem_name(list[i].e), r->path, 100.0 * r->ms[V_MEMCPY] / r->ms[V_PERMUTE],
                   pct(a, sizeof a, r, V_TMA_COPY), pct(x, sizeof x, r, V_INDEX));
        else
            printf("%-28s %-4s %s\n", list[i].name, elem_name(list[i].e), r->have[V_PERMUTE] ? "FAILED" : "refused");
        fflush(stdout);
    }
    for (size_t i = 0; !once && !probes && i < NSMALL; i++) {
        if (!selected(&small_cases[i], only))
            continue;
        failed |= measure_small(&small_cases[i], reps, &srows[ns++]);
        fflush(stdout);
    }
    if (!once) {
        if (tune && !small)
            failed |= run_tune(reps, only);
        if (!small)
            print_table(rows, n, reps);
        if (ns)
            print_small_table(srows, ns, reps);
    }
    if (heap_pad)
        CUDA_CHECK(cudaFree(heap_pad));
    return failed;
}
