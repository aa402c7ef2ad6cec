/* The differential fuzzer of the kernels (gpu label; tests/run-gpu.sh runs it): random problems from the shapes real
 * models run, and their edge cases, with random plan options, each run three times on its plan and compared element
 * by element with an independent reference computed on the GPU (tests/gpu_ref.h):
 *   conv    - tma_conv2d: 1x1 to 7x7 filters (and 1 x n, n x 1), strides 1-4, padding (same, none, random, cropped),
 *             dilation, N 1-256, H and W 1-224, C 8-2048, K 1-2048 (any), ResNet-50's layers and the stem among
 *             them; every tile (128 x 64/128/256, 192 x 128), schedule (tiles, stream-K, split-K), clusters of two,
 *             both epilogues, grid sizes and band heights, and the one-call form;
 *   gemm    - tma_gemm: M and N 1-16384 (skinny M = 1-256 often), K 0-16384; bf16 and fp32 C, clusters, both
 *             epilogues, grids, band heights, C at element-aligned offsets, the one-call form;
 *   grouped - tma_grouped_gemm: 1-256 groups, empty, tiny and huge ones; grids and band heights;
 *   permute - tma_permute: ranks 1-5, 1/2/4/8-byte elements, every permutation, any sizes; dense, 16-byte aligned
 *             and odd strides (any multiple of the element, dimensions in another order in memory, any stride on a
 *             dimension of one element, src rows overlapping) at element-aligned addresses; NCHW <-> NHWC
 *             (3-channel 224 x 224 images, 7 x 7 maps of many channels), head splits, batched transposes, logits
 *             rows, tiny tensors among them; the thread kernel and both TMA kernels; tuned plans; the one-call
 *             form.
 * Every problem: fresh random data (half of the GEMM-like problems small integers, where the result is exact and
 * must match bit for bit; the others within the rounding bound of fp32 sums, 2^-8 |ref| + 2^-16 sum |a b|); outputs
 * poisoned (NaN, or a byte pattern that changes from run to run) before each run, so an unwritten element shows; the
 * bytes around every output (and for permutes every byte of dst that is no element) still the poison after; the
 * three runs equal bit for bit (a race shows as a difference); inputs unchanged. A refusal of a valid problem is a
 * failure too; a convolution whose dilation takes the im2col map past its documented ranges must be refused, with
 * that rule's status (counted apart).
 * Seeds: TMA_TEST_SEED sets the run's seed (printed); each problem has its own seed, derived from it, and a failure
 * prints the command that replays that problem alone (TMA_FUZZ_REPLAY=kind:seed). TMA_FUZZ_PROBLEMS sets how many
 * problems each kernel gets (the sanitizer runs take few). Each kernel's results line: problems, plan options
 * covered, runs each, failures. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "gpu_ref.h"
#include "permute_ref.h"
#include "grouped_tiles.h" /* gg_sched_make: whether the grouped GEMM cuts its last wave into K parts (coverage) */
#include "permute_tiles.h" /* pm_plan: which spans the thread kernel's plan takes, for the coverage line */
#include "tma/kernels.h"

enum {
    RUNS = 3,           /* runs of each problem on its plan */
    GUARD = 256,        /* poisoned bytes before and after each output */
    MAX_REPORTS = 25,   /* failures printed in full; all are counted */
};

/* ---------------------------------------------------------------------------------------------
 * The fuzzer's bookkeeping: seeds, failures, coverage.
 * ------------------------------------------------------------------------------------------- */

typedef struct fuzz {
    const char *kind;
    uint64_t seed;            /* the current problem's */
    unsigned long problems, failures;
    char what[768];           /* the current problem, described */
    unsigned long cover[32];  /* per-option counts (each kernel names its own) */
} fuzz;

static uint64_t fz_mix(uint64_t z) { /* splitmix64 */
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t fz_next(uint64_t *s) { return fz_mix(*s += 0x9E3779B97F4A7C15ull); }
static int64_t fz_in(uint64_t *s, int64_t lo, int64_t hi) {
    return lo + (int64_t)(fz_next(s) % (uint64_t)(hi - lo + 1));
}
static int fz_pct(uint64_t *s, int pct) { return (int)(fz_next(s) % 100u) < pct; }
/* Log-uniform in [lo, hi]: as many small sizes as large ones. */
static int64_t fz_log(uint64_t *s, int64_t lo, int64_t hi) {
    const double l = log((double)lo), h = log((double)hi + 1.0);
    const double u = (double)(fz_next(s) >> 11) * (1.0 / 9007199254740992.0);
    int64_t v = (int64_t)exp(l + u * (h - l));
    return v < lo ? lo : v > hi ? hi : v;
}
static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* A failure of the current problem: counted, and the first MAX_REPORTS printed with the replay command. */
static void fz_fail(fuzz *f, const char *fmt, ...) {
    if (f->failures++ < MAX_REPORTS) {
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        printf("gpu_fuzz %s FAILED: %s\n  problem: %s\n  replay: TMA_FUZZ_REPLAY=%s:0x%016" PRIx64
               " tests/test_gpu_fuzz --filter='gpu_fuzz/%s'\n",
               f->kind, msg, f->what, f->kind, f->seed, f->kind);
        fflush(stdout);
    }
}

/* A CUDA call in a problem: a failure is the problem's (and the rest of it is skipped by the caller). */
#define FZ_CUDA(f, call) fz_cuda_ok((f), (call), #call, __LINE__)
static int fz_cuda_ok(fuzz *f, cudaError_t e, const char *call, int line) {
    if (e == cudaSuccess)
        return 1;
    fz_fail(f, "line %d: %s: %s", line, call, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return 0;
}
#define FZ_TMA(f, st, diag, call) fz_tma_ok((f), (st), &(diag), call)
static int fz_tma_ok(fuzz *f, tma_status st, const tma_diag *diag, const char *call) {
    if (st == TMA_OK)
        return 1;
    fz_fail(f, "%s refused a valid problem: %s: %s", call, tma_status_name(st), diag->message);
    return 0;
}

/* The seed of problem i of a run: the problems of one run seed are always the same. */
static uint64_t fz_problem_seed(uint64_t run_seed, const char *kind, unsigned long i) {
    uint64_t h = run_seed;
    for (const char *c = kind; *c; c++)
        h = fz_mix(h ^ (uint8_t)*c);
    return fz_mix(h ^ fz_mix(i + 1u));
}

/* The kernel's loop: TMA_FUZZ_REPLAY=kind:seed runs that one problem; else `fallback` problems (TMA_FUZZ_PROBLEMS
 * overrides), each from its own seed. */
static void fz_loop(fuzz *f, unsigned long fallback, void (*problem)(fuzz *, uint64_t)) {
    const char *replay = getenv("TMA_FUZZ_REPLAY");
    if (replay != NULL && *replay != '\0') {
        const size_t len = strlen(f->kind);
        if (strncmp(replay, f->kind, len) != 0 || replay[len] != ':') {
            cr_log_info("gpu_fuzz %s: TMA_FUZZ_REPLAY=%s is another kernel's problem", f->kind, replay);
            return;
        }
        f->seed = strtoull(replay + len + 1, NULL, 0);
        f->problems = 1;
        problem(f, f->seed);
        return;
    }
    const char *env = getenv("TMA_FUZZ_PROBLEMS");
    const unsigned long n = env && atol(env) > 0 ? (unsigned long)atol(env) : fallback;
    char name[64];
    snprintf(name, sizeof name, "gpu_fuzz/%s", f->kind);
    const uint64_t run_seed = test_seed(name);
    printf("gpu_fuzz %s: seed %" PRIu64 " (TMA_TEST_SEED=%" PRIu64 " replays the run)\n", f->kind, run_seed, run_seed);
    for (unsigned long i = 0; i < n; i++) {
        f->seed = fz_problem_seed(run_seed, f->kind, i);
        f->problems++;
        problem(f, f->seed);
    }
}

/* cudaMalloc'd scratch, freed together at the end of a problem. */
typedef struct fz_mem {
    void *p[16];
    int n;
} fz_mem;
static void *fz_alloc(fuzz *f, fz_mem *m, size_t bytes) {
    void *p = NULL;
    if (m->n == 16 || !FZ_CUDA(f, cudaMalloc(&p, bytes > 0 ? bytes : 1)))
        return NULL;
    m->p[m->n++] = p;
    return p;
}
static void fz_free_all(fuzz *f, fz_mem *m) {
    for (int i = 0; i < m->n; i++)
        FZ_CUDA(f, cudaFree(m->p[i]));
    m->n = 0;
}

/* An output region with GUARD poisoned bytes on each side, the output `offset` bytes past the allocation's start. */
typedef struct fz_out {
    uint8_t *base, *at;
    size_t bytes, offset;
} fz_out;
static int fz_out_make(fuzz *f, fz_mem *m, fz_out *o, size_t bytes, size_t offset) {
    o->bytes = bytes, o->offset = offset;
    o->base = fz_alloc(f, m, GUARD + offset + bytes + GUARD);
    o->at = o->base ? o->base + GUARD + offset : NULL;
    return o->base != NULL;
}
/* Poison the whole region (output and guards) with byte v. */
static int fz_poison(fuzz *f, const fz_out *o, uint8_t v) {
    return FZ_CUDA(f, cudaMemset(o->base, v, GUARD + o->offset + o->bytes + GUARD));
}
/* The guards and the offset's bytes still v. */
static int fz_guards_ok(fuzz *f, const fz_out *o, uint8_t v, int run) {
    unsigned long long before = 0, after = 0;
    if (!FZ_CUDA(f, ref_count_not(o->base, GUARD + o->offset, v, &before)) ||
        !FZ_CUDA(f, ref_count_not(o->at + o->bytes, GUARD, v, &after)))
        return 0;
    if (before || after) {
        fz_fail(f, "run %d wrote outside the output: %llu bytes before it, %llu after", run, before, after);
        return 0;
    }
    return 1;
}

/* The output of runs 2 and 3 bit for bit the first's (kept in `first`). */
static int fz_same_as_first(fuzz *f, const fz_out *o, const void *first, int run) {
    unsigned long long diff = 0, at = 0;
    if (!FZ_CUDA(f, ref_count_diff(o->at, first, o->bytes, &diff, &at)))
        return 0;
    if (diff) {
        fz_fail(f, "run %d differs from run 1 in %llu bytes (the first at byte %llu): a race", run, diff, at);
        return 0;
    }
    return 1;
}

/* A comparison's verdict: every element within the bound, none NaN. */
static int fz_values_ok(fuzz *f, const ref_diff *d, size_t n, int run, const char *what) {
    if (d->bad == 0)
        return 1;
    fz_fail(f, "run %d: %s: %llu of %zu elements wrong (%llu NaN or infinite); the first at %llu: got %.8g, want %.8g",
            run, what, d->bad, n, d->nonfinite, d->first, (double)d->got, (double)d->want);
    return 0;
}

/* The bound of a comparison with the fp32 reference: exact for integer data, else the rounding of bf16 (or fp32)
 * outputs plus that of fp32 sums in another order. */
static void fz_bound(ref_data data, int out_f32, float *rel, float *abs_coef) {
    *rel = data == REF_DATA_INTS ? 0.f : out_f32 ? ldexpf(1.f, -20) : ldexpf(1.f, -8);
    *abs_coef = data == REF_DATA_INTS ? 0.f : ldexpf(1.f, -16);
}

/* The device's multiprocessors (a plan of an empty problem has none recorded). */
static int fz_sms(void) {
    int sms = 0;
    return cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && sms > 0 ? sms : 132;
}

/* A coverage count's name in the results line: cover[slot] problems (or groups) had it. */
typedef struct fz_option {
    const char *name;
    int slot;
} fz_option;

/* One kernel's fuzzing: `problems` problems (fz_loop), then its results line (how many problems had each of the
 * options), and the test fails if any problem did. */
static void fz_kernel(const char *kind, unsigned long problems, void (*problem)(fuzz *, uint64_t),
                      const fz_option *options, size_t noptions) {
    require_sm90();
    fuzz f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    fz_loop(&f, problems, problem);
    char covered[1024] = "";
    for (size_t i = 0, at = 0; i < noptions && at < sizeof covered; i++)
        at += (size_t)snprintf(covered + at, sizeof covered - at, "%s%s %lu", i ? ", " : "", options[i].name,
                               f.cover[options[i].slot]);
    printf("gpu_fuzz %-7s: %lu problems, %d runs each, plan options covered: %s; failures: %lu\n", f.kind, f.problems,
           RUNS, covered, f.failures);
    fflush(stdout);
    cr_assert_eq(f.failures, 0, "gpu_fuzz %s: %lu of %lu problems failed (printed above with their replay seeds)", kind,
                 f.failures, f.problems);
}

/* ---------------------------------------------------------------------------------------------
 * Convolutions.
 * ------------------------------------------------------------------------------------------- */

/* Layers of real networks: H (= W), C, K, R (= S), stride, pad. ResNet-50 (the stem with C padded to 8, every
 * bottleneck's 1x1 and 3x3, the stride-2 projections), VGG, MobileNet-style 1x1s and a 5x5. */
static const struct conv_layer {
    int hw, c, k, r, stride, pad;
} conv_layers[] = {
    {224, 3, 64, 7, 2, 3},    {224, 8, 64, 7, 2, 3},    {56, 64, 64, 1, 1, 0},    {56, 64, 64, 3, 1, 1},    {56, 64, 256, 1, 1, 0},
    {56, 256, 64, 1, 1, 0},   {56, 128, 64, 1, 1, 0},   {56, 192, 64, 1, 1, 0},   {56, 256, 128, 1, 1, 0},
    {56, 256, 512, 1, 2, 0},  {28, 128, 128, 3, 1, 1},  {28, 128, 512, 1, 1, 0},  {28, 512, 128, 1, 1, 0},
    {28, 512, 256, 1, 1, 0},  {28, 512, 1024, 1, 2, 0}, {14, 256, 256, 3, 1, 1},  {14, 256, 1024, 1, 1, 0},
    {14, 1024, 256, 1, 1, 0}, {14, 1024, 512, 1, 1, 0}, {14, 1024, 2048, 1, 2, 0}, {7, 512, 512, 3, 1, 1},
    {7, 512, 2048, 1, 1, 0},  {7, 2048, 512, 1, 1, 0},  {56, 128, 128, 3, 2, 1},  {28, 256, 256, 3, 2, 1},
    {14, 512, 512, 3, 2, 1},  {224, 64, 64, 3, 1, 1},   {112, 128, 128, 3, 1, 1}, {112, 32, 64, 1, 1, 0},
    {28, 96, 32, 5, 1, 2},    {14, 576, 96, 1, 1, 0},
};

enum { CONV_MACS_CAP_LOG2 = 33, CONV_X_CAP = 1 << 27 }; /* per problem: the reference's work, x's elements */

static uint64_t conv_macs(const tma_conv2d_shape *sh) {
    int p, q;
    tma_conv2d_out_size(sh, &p, &q);
    return (uint64_t)sh->n * p * q * sh->k * sh->r * sh->s * sh->c;
}

static tma_conv2d_shape conv_random_shape(uint64_t *s) {
    for (;;) {
        tma_conv2d_shape sh;
        memset(&sh, 0, sizeof sh);
        sh.dilation_h = sh.dilation_w = 1;
        if (fz_pct(s, 40)) { /* a real layer, at a batch of inference or training (every tile of a block's many then
                                  follows the one before at once: where the epilogue race showed) */
            static const int batches[] = {1, 2, 8, 16, 32, 32, 64, 128, 128, 256};
            const struct conv_layer *l = &conv_layers[fz_next(s) % (sizeof conv_layers / sizeof conv_layers[0])];
            sh.h = sh.w = l->hw, sh.c = l->c, sh.k = l->k, sh.r = sh.s = l->r;
            sh.stride_h = sh.stride_w = l->stride, sh.pad_h = sh.pad_w = l->pad;
            sh.n = batches[fz_next(s) % 10];
        } else {
            static const int filters[] = {1, 1, 3, 3, 3, 5, 7};
            sh.r = filters[fz_next(s) % 7];
            sh.s = fz_pct(s, 85) ? sh.r : filters[fz_next(s) % 7]; /* 1 x 7, 7 x 1, ... */
            sh.stride_h = fz_pct(s, 60) ? 1 : fz_pct(s, 90) ? (int)fz_in(s, 2, 4) : (int)fz_in(s, 5, 8);
            sh.stride_w = fz_pct(s, 85) ? sh.stride_h : (int)fz_in(s, 1, 4);
            if (fz_pct(s, 12)) { /* up to the im2col offset range of a copy: dilation (filter - 1) <= 255 */
                const int span = (sh.r > sh.s ? sh.r : sh.s) - 1; /* the longer side's taps after the first */
                const int most = fz_pct(s, 80) || span == 0 ? 4 : 255 / span;
                sh.dilation_h = (int)fz_in(s, 1, most);
                sh.dilation_w = fz_pct(s, 70) ? sh.dilation_h : (int)fz_in(s, 1, most);
            }
            const int pad_kind = (int)(fz_next(s) % 10);
            for (int d = 0; d < 2; d++) {
                const int f = d ? sh.s : sh.r, dil = d ? sh.dilation_w : sh.dilation_h;
                const int pad = pad_kind < 5 ? dil * (f - 1) / 2 /* same */
                                : pad_kind < 8 ? 0
                                : pad_kind < 9 ? (int)fz_in(s, 0, f + 1)
                                               : -(int)fz_in(s, 0, 2); /* cropped */
                *(d ? &sh.pad_w : &sh.pad_h) = pad;
            }
            sh.h = (int)fz_log(s, 1, 224);
            sh.w = fz_pct(s, 70) ? sh.h : (int)fz_log(s, 1, 224);
            if (sh.dilation_h > 4 || sh.dilation_w > 4) /* room for the dilated filter */
                sh.h += sh.dilation_h * (sh.r - 1), sh.w += sh.dilation_w * (sh.s - 1);
            sh.c = fz_pct(s, 25)   ? (int)fz_log(s, 1, 300) /* any: packed first unless a multiple of 8 */
                   : fz_pct(s, 50) ? (int)round_up(fz_log(s, 8, 2048), 8)
                                   : 64 * (int)fz_log(s, 1, 32);
            sh.k = fz_pct(s, 50) ? (int)fz_log(s, 1, 2048) : (int)round_up(fz_log(s, 8, 2048), fz_pct(s, 50) ? 8 : 64);
            sh.n = (int)fz_log(s, 1, 256);
        }
        /* the reference's work and x's size within their caps: fewer images, then smaller images, then channels */
        while ((conv_macs(&sh) >> CONV_MACS_CAP_LOG2) > 0 || (uint64_t)sh.n * sh.h * sh.w * sh.c > CONV_X_CAP) {
            if (sh.n > 1)
                sh.n = (sh.n + 1) / 2;
            else if (sh.h > 8 && sh.w > 8)
                sh.h = (sh.h + 1) / 2, sh.w = (sh.w + 1) / 2;
            else if (sh.c > 8)
                sh.c = sh.c % 8 ? (sh.c + 1) / 2 : (int)round_up(sh.c / 2, 8);
            else
                sh.k = (sh.k + 1) / 2;
        }
        int p, q;
        tma_conv2d_out_size(&sh, &p, &q);
        if (p >= 1 && q >= 1) /* else the filter does not fit the padded input: not a convolution */
            return sh;
    }
}

/* Whether a shape keeps to the im2col map's ranges that tma_conv2d documents (docs/guide/conv.md, "What it refuses"):
 * the bounding box's corners -pad and pad - dil (filter - 1) in -128..127, and the last tap's offset dil (filter - 1)
 * at most 255 (a rank-4 map and copy). Outside them the plan must refuse, with the corner's or the offset's status. */
static int conv_in_im2col_ranges(const tma_conv2d_shape *sh) {
    const int pads[2] = {sh->pad_w, sh->pad_h}, far[2] = {sh->dilation_w * (sh->s - 1), sh->dilation_h * (sh->r - 1)};
    for (int d = 0; d < 2; d++)
        if (-pads[d] < -128 || -pads[d] > 127 || pads[d] - far[d] < -128 || pads[d] - far[d] > 127 || far[d] > 255)
            return 0;
    return 1;
}

/* Coverage slots of the convolution. */
enum { CV_T64, CV_T128, CV_T256, CV_TFM, CV_HALO, CV_TILES, CV_SK, CV_SPLIT, CV_CL2, CV_DIRECT, CV_GRID, CV_GROUP, CV_ONECALL,
       CV_INTS, CV_1X1, CV_REFUSED, CV_TUNED, CV_PACKED };

static const char *sched_name(tma_conv2d_schedule s) {
    return s == TMA_CONV2D_SCHEDULE_STREAM_K ? "stream-K" : s == TMA_CONV2D_SCHEDULE_SPLIT_K ? "split-K" : "tiles";
}

static void conv_describe(fuzz *f, const tma_conv2d_shape *sh, const tma_conv2d_plan *p, int one_call, ref_data data,
                          size_t y_offset) {
    snprintf(f->what, sizeof f->what,
             "N %d H %d W %d C %d -> K %d, R %d S %d, stride %d,%d pad %d,%d dil %d,%d; %s; tile %d x %d, %s, "
             "cluster %d, %s epilogue, grid_blocks %d, group_m %d; y at +%zu bytes; %s data",
             sh->n, sh->h, sh->w, sh->c, sh->k, sh->r, sh->s, sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w,
             sh->dilation_h, sh->dilation_w, one_call ? "tma_conv2d (one call)" : "plan", p->block_m, p->block_n,
             sched_name(p->schedule), p->cluster, p->epilogue == TMA_GEMM_EPILOGUE_DIRECT ? "direct" : "TMA-store",
             p->grid_blocks, p->group_m, y_offset, data == REF_DATA_INTS ? "integer" : "real");
}

/* Whether tma/kernels.h documents a halo tile for the shape (TMA_CONV2D_HALO): filters 3 wide at stride and dilation
 * 1, output rows of at most 62 pixels, y stored through a map (K a multiple of 8, y 16-byte aligned), taps not folded
 * into the channels by the packer (it folds a filter row's taps where S C <= 64). */
static int conv_has_halo(const tma_conv2d_plan *p) {
    const tma_conv2d_shape *sh = &p->shape;
    return sh->s == 3 && sh->stride_h == 1 && sh->stride_w == 1 && sh->dilation_h == 1 && sh->dilation_w == 1 &&
           p->q + 2 <= 64 && sh->k % 8 == 0 && (uintptr_t)p->y % 16 == 0 && 3 * sh->c > 64;
}

/* The plan options of a problem, drawn and applied: a tile, a schedule, then the fields run checks. 0 where the plan
 * refused (a failure: every combination drawn here is one the API documents as valid). */
static int conv_plan_options(fuzz *f, uint64_t *s, tma_conv2d_plan *p, int sms) {
    static const int tiles[4][2] = {{128, 64}, {128, 128}, {128, 256}, {192, 128}};
    tma_diag diag;
    if (fz_pct(s, 25)) /* the plan's own choice (plan_make's) */
        return 1;
    if (conv_has_halo(p) && fz_pct(s, 30)) { /* the halo tile: whole tiles, no clusters, the TMA store */
        if (fz_pct(s, 20))
            p->grid_blocks = (int)fz_in(s, 1, sms);
        if (!FZ_TMA(f, tma_conv2d_plan_tiles(p, TMA_CONV2D_HALO, 0, TMA_CONV2D_SCHEDULE_TILES, &diag), diag,
                    "tma_conv2d_plan_tiles (halo)"))
            return 0;
        if (fz_pct(s, 20))
            p->group_m = (int)fz_in(s, 1, 40);
        return 1;
    }
    const int t = (int)(fz_next(s) % 4), bm = tiles[t][0], bn = tiles[t][1];
    const long units = ((long)p->shape.n * p->p * p->q + bm - 1) / bm * ((p->shape.k + bn - 1) / bn);
    /* split-K where the documentation says it applies: two blocks a tile or more, two stages or more, 128 or 256
     * filters wide */
    const long blocks = fz_pct(s, 25) ? fz_in(s, 1, sms) : sms;
    const int split_ok = bn >= 128 && 2 * units <= blocks && p->stages >= 2;
    const int pick = (int)(fz_next(s) % 3);
    tma_conv2d_schedule sched = pick == 0 ? TMA_CONV2D_SCHEDULE_TILES
                                : pick == 1 || !split_ok ? TMA_CONV2D_SCHEDULE_STREAM_K
                                                         : TMA_CONV2D_SCHEDULE_SPLIT_K;
    if (fz_pct(s, 10))
        sched = TMA_CONV2D_SCHEDULE_AUTO;
    p->grid_blocks = blocks == sms ? 0 : (int)blocks;
    if (!FZ_TMA(f, tma_conv2d_plan_tiles(p, bm, bn, sched, &diag), diag, "tma_conv2d_plan_tiles"))
        return 0;
    int cluster = p->cluster, group_m = p->group_m;
    tma_gemm_epilogue epilogue = p->epilogue;
    if (p->schedule == TMA_CONV2D_SCHEDULE_TILES && p->block_m == 128 && fz_pct(s, 30))
        cluster = 2;
    if (fz_pct(s, 25))
        epilogue = TMA_GEMM_EPILOGUE_DIRECT;
    if (fz_pct(s, 20))
        group_m = (int)fz_in(s, 1, 40);
    /* through tune (the launch computed once) or by hand (re-derived in every run): both ways run */
    if (fz_pct(s, 50)) {
        f->cover[CV_TUNED]++;
        return FZ_TMA(f, tma_conv2d_plan_tune(p, cluster, epilogue, group_m, p->grid_blocks, &diag), diag,
                      "tma_conv2d_plan_tune");
    }
    p->cluster = cluster, p->epilogue = epilogue, p->group_m = group_m;
    return 1;
}

static void conv_count(fuzz *f, const tma_conv2d_plan *p, int one_call, ref_data data) {
    f->cover[p->block_m == TMA_CONV2D_HALO ? CV_HALO
             : p->block_m == 192           ? CV_TFM
             : p->block_n == 64            ? CV_T64
             : p->block_n == 128           ? CV_T128
                                           : CV_T256]++;
    f->cover[p->schedule == TMA_CONV2D_SCHEDULE_STREAM_K  ? CV_SK
             : p->schedule == TMA_CONV2D_SCHEDULE_SPLIT_K ? CV_SPLIT
                                                          : CV_TILES]++;
    f->cover[CV_CL2] += p->cluster == 2;
    f->cover[CV_DIRECT] += p->epilogue == TMA_GEMM_EPILOGUE_DIRECT;
    f->cover[CV_GRID] += p->grid_blocks != 0;
    f->cover[CV_GROUP] += p->group_m != (int)TMA_GEMM_GROUP_M;
    f->cover[CV_ONECALL] += one_call;
    f->cover[CV_INTS] += data == REF_DATA_INTS;
    f->cover[CV_1X1] += p->shape.r == 1 && p->shape.s == 1;
    f->cover[CV_PACKED] += p->packed != NULL;
}

static void conv_problem(fuzz *f, uint64_t seed) {
    uint64_t s = seed;
    const tma_conv2d_shape sh = conv_random_shape(&s);
    const ref_data data = fz_pct(&s, 50) ? REF_DATA_INTS : REF_DATA_REAL;
    int P, Q;
    tma_conv2d_out_size(&sh, &P, &Q);
    const size_t nx = (size_t)sh.n * sh.h * sh.w * sh.c, nw = (size_t)sh.k * sh.r * sh.s * sh.c;
    const size_t ny = (size_t)sh.n * P * Q * sh.k;
    /* x and w at random 16-byte offsets, or at 2-byte ones (packed first); y at an even offset (2-byte aligned: the
     * direct epilogue) */
    const size_t x_off = fz_pct(&s, 10) ? 2u * (size_t)fz_in(&s, 1, 7) : 16u * (size_t)fz_in(&s, 0, 3);
    const size_t w_off = fz_pct(&s, 10) ? 2u * (size_t)fz_in(&s, 1, 7) : 16u * (size_t)fz_in(&s, 0, 3);
    const size_t y_off = fz_pct(&s, 15) ? 2u * (size_t)fz_in(&s, 1, 7) : 0u;
    const int one_call = fz_pct(&s, 8);
    tma_conv2d_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(f->what, sizeof f->what, "N %d H %d W %d C %d -> K %d, R %d S %d, stride %d,%d pad %d,%d dil %d,%d",
             sh.n, sh.h, sh.w, sh.c, sh.k, sh.r, sh.s, sh.stride_h, sh.stride_w, sh.pad_h, sh.pad_w, sh.dilation_h,
             sh.dilation_w);
    fz_mem mem = {{0}, 0};
    fz_out y;
    uint8_t *x = fz_alloc(f, &mem, nx * 2 + x_off), *w = fz_alloc(f, &mem, nw * 2 + w_off);
    float *ref = fz_alloc(f, &mem, ny * 4), *refabs = fz_alloc(f, &mem, ny * 4);
    void *first = fz_alloc(f, &mem, ny * 2);
    if (!x || !w || !ref || !refabs || !first || !fz_out_make(f, &mem, &y, ny * 2, y_off))
        goto done;
    x += x_off, w += w_off;
    if (!FZ_CUDA(f, ref_fill_bf16((uint16_t *)x, nx, fz_mix(seed ^ 1u), data)) ||
        !FZ_CUDA(f, ref_fill_bf16((uint16_t *)w, nw, fz_mix(seed ^ 2u), data)) ||
        !FZ_CUDA(f, ref_conv2d(&sh, (const uint16_t *)x, (const uint16_t *)w, ref, refabs)))
        goto done;
    tma_diag diag;
    const tma_status made = tma_conv2d_plan_make(&plan, &sh, x, w, y.at, &diag);
    if (!conv_in_im2col_ranges(&sh) && made != TMA_OK) { /* the documented refusal, for the documented reason */
        if (made != TMA_ERR_IM2COL_CORNER && made != TMA_ERR_IM2COL_OFFSET)
            fz_fail(f, "outside the im2col ranges, refused with %s, not the corner's or offset's status: %s",
                    tma_status_name(made), diag.message);
        f->cover[CV_REFUSED]++;
        goto done;
    }
    if (!FZ_TMA(f, made, diag, "tma_conv2d_plan_make") || (!one_call && !conv_plan_options(f, &s, &plan, plan.sms)))
        goto done;
    if (one_call) /* what tma_conv2d runs: the plan's tiles, whole */
        plan.schedule = TMA_CONV2D_SCHEDULE_TILES;
    conv_describe(f, &sh, &plan, one_call, data, y_off);
    conv_count(f, &plan, one_call, data);
    float rel, abs_coef;
    fz_bound(data, 0, &rel, &abs_coef);
    for (int run = 1; run <= RUNS; run++) {
        if (!fz_poison(f, &y, 0xFF)) /* bf16 NaN */
            goto done;
        const tma_status st = one_call ? tma_conv2d(&sh, x, w, y.at, NULL, &diag) : tma_conv2d_run(&plan, NULL, &diag);
        ref_diff d;
        if (!FZ_TMA(f, st, diag, one_call ? "tma_conv2d" : "tma_conv2d_run") ||
            !FZ_CUDA(f, cudaDeviceSynchronize()) ||
            !FZ_CUDA(f, ref_compare(y.at, 0, ref, refabs, ny, rel, abs_coef, &d)) ||
            !fz_values_ok(f, &d, ny, run, "y") || !fz_guards_ok(f, &y, 0xFF, run))
            goto done;
        if (run == 1 ? !FZ_CUDA(f, cudaMemcpy(first, y.at, ny * 2, cudaMemcpyDeviceToDevice))
                     : !fz_same_as_first(f, &y, first, run))
            goto done;
    }
done:
    FZ_TMA(f, tma_conv2d_plan_free(&plan, &diag), diag, "tma_conv2d_plan_free");
    fz_free_all(f, &mem);
}

static const fz_option conv_options[] = {
    {"tiles 128x64", CV_T64},
    {"128x128", CV_T128},
    {"128x256", CV_T256},
    {"192x128", CV_TFM},
    {"halo", CV_HALO},
    {"whole tiles", CV_TILES},
    {"stream-K", CV_SK},
    {"split-K", CV_SPLIT},
    {"clusters of 2", CV_CL2},
    {"direct epilogue", CV_DIRECT},
    {"set grids", CV_GRID},
    {"band heights", CV_GROUP},
    {"one-call", CV_ONECALL},
    {"integer data", CV_INTS},
    {"1x1 filters", CV_1X1},
    {"packed inputs", CV_PACKED},
    {"refused as documented (dilation past the im2col ranges)", CV_REFUSED},
    {"options set through tma_conv2d_plan_tune", CV_TUNED},
};

Test(gpu_fuzz, conv, .timeout = 900) {
    fz_kernel("conv", 1000, conv_problem, conv_options, sizeof conv_options / sizeof conv_options[0]);
}

/* ---------------------------------------------------------------------------------------------
 * GEMMs.
 * ------------------------------------------------------------------------------------------- */

enum { GEMM_MACS_CAP_LOG2 = 34, GEMM_C_CAP = 1 << 26 }; /* per problem: the reference's work, C's elements */

/* Shapes of real models' GEMMs: N x K of LLM projections (Llama-style 4096 / 8192 models, their MLPs and vocabulary),
 * used with a random M (the tokens of a batch: 1 when decoding). */
static const int gemm_nk[][2] = {{4096, 4096}, {12288, 4096}, {11008, 4096}, {4096, 11008}, {14336, 4096},
                                 {4096, 14336}, {8192, 8192}, {28672, 8192}, {8192, 28672}, {1024, 4096},
                                 {32000, 4096}, {2048, 7168}, {7168, 2048}};

enum { GM_BF16, GM_F32, GM_CL2, GM_DIRECT, GM_GRID, GM_GROUP, GM_ONECALL, GM_SKINNY, GM_KZERO, GM_INTS, GM_TUNED,
       GM_SPLIT, GM_SPLIT128, GM_WHOLE128, GM_PACKED };

static void gemm_problem(fuzz *f, uint64_t seed) {
    uint64_t s = seed;
    int m, n, k;
    if (fz_pct(&s, 25)) {
        const int *nk = gemm_nk[fz_next(&s) % (sizeof gemm_nk / sizeof gemm_nk[0])];
        n = nk[0], k = nk[1];
    } else {
        n = fz_pct(&s, 30) ? (int)round_up(fz_log(&s, 1, 16384), fz_pct(&s, 50) ? 64 : 8) : (int)fz_log(&s, 1, 16384);
        k = fz_pct(&s, 2)    ? 0
            : fz_pct(&s, 15) ? (int)fz_log(&s, 1, 16384) /* any: packed first unless a multiple of 8 */
                             : (int)round_up(fz_log(&s, 8, 16384), fz_pct(&s, 60) ? 8 : 64);
    }
    m = fz_pct(&s, 35) ? (int)fz_log(&s, 1, 256) : fz_pct(&s, 30) ? 1 << fz_in(&s, 0, 14) : (int)fz_log(&s, 1, 16384);
    /* within the caps: K first (the reference's work), then the larger of M and N */
    while (((uint64_t)m * n * (uint64_t)(k > 0 ? k : 1)) >> GEMM_MACS_CAP_LOG2 || (uint64_t)m * n > GEMM_C_CAP) {
        if ((uint64_t)m * n <= GEMM_C_CAP && k > 64)
            k = (int)round_up(k / 2, 8);
        else if (m >= n)
            m = (m + 1) / 2;
        else
            n = (n + 1) / 2;
    }
    const tma_gemm_out out = fz_pct(&s, 30) ? TMA_GEMM_OUT_F32 : TMA_GEMM_OUT_BF16;
    const size_t eb = out == TMA_GEMM_OUT_F32 ? 4u : 2u;
    const ref_data data = fz_pct(&s, 50) ? REF_DATA_INTS : REF_DATA_REAL;
    /* A and B at 16-byte offsets, or at 2-byte ones (packed first) */
    const size_t a_off = fz_pct(&s, 8) ? 2u * (size_t)fz_in(&s, 1, 7) : 16u * (size_t)fz_in(&s, 0, 3);
    const size_t b_off = fz_pct(&s, 8) ? 2u * (size_t)fz_in(&s, 1, 7) : 16u * (size_t)fz_in(&s, 0, 3);
    const size_t c_off = fz_pct(&s, 15) ? eb * (size_t)fz_in(&s, 1, 15) : 0u;
    const int one_call = fz_pct(&s, 8);
    const size_t nc = (size_t)m * n;
    fz_mem mem = {{0}, 0};
    fz_out c;
    tma_gemm_plan plan;
    tma_diag diag;
    memset(&plan, 0, sizeof plan);
    snprintf(f->what, sizeof f->what, "M %d N %d K %d, %s C at +%zu bytes", m, n, k,
             out == TMA_GEMM_OUT_F32 ? "fp32" : "bf16", c_off);
    uint8_t *a = fz_alloc(f, &mem, (size_t)m * k * 2 + a_off), *b = fz_alloc(f, &mem, (size_t)n * k * 2 + b_off);
    float *ref = fz_alloc(f, &mem, nc * 4), *refabs = fz_alloc(f, &mem, nc * 4);
    void *first = fz_alloc(f, &mem, nc * eb);
    if (!a || !b || !ref || !refabs || !first || !fz_out_make(f, &mem, &c, nc * eb, c_off))
        goto done;
    a += a_off, b += b_off;
    if (!FZ_CUDA(f, ref_fill_bf16((uint16_t *)a, (size_t)m * k, fz_mix(seed ^ 1u), data)) ||
        !FZ_CUDA(f, ref_fill_bf16((uint16_t *)b, (size_t)n * k, fz_mix(seed ^ 2u), data)) ||
        !FZ_CUDA(f, ref_gemm((const uint16_t *)a, (const uint16_t *)b, m, n, k, (size_t)k, (size_t)k, ref, refabs)))
        goto done;
    if (!FZ_TMA(f, tma_gemm_plan_make(&plan, a, b, c.at, out, m, n, k, &diag), diag, "tma_gemm_plan_make"))
        goto done;
    if (!one_call) {
        int cluster = plan.cluster, grid_blocks = plan.grid_blocks, group_m = plan.group_m;
        tma_gemm_epilogue epilogue = plan.epilogue;
        const int steps = (k + 63) / 64;
        if (fz_pct(&s, 15)) /* the other schedule: whole tiles where the plan splits K, split-K where it does not */
            plan.split_parts = plan.split_parts || steps < 2 ? 0 : (int)fz_in(&s, 2, steps < 8 ? steps : 8);
        if (fz_pct(&s, 25)) /* the other tile width */
            plan.block_n = 384 - plan.block_n;
        if (fz_pct(&s, 30))
            cluster = 3 - plan.cluster;
        if (cluster == 2) /* pairs sharing B: whole 256-wide tiles */
            plan.split_parts = 0, plan.block_n = 256;
        if (fz_pct(&s, 25))
            epilogue = TMA_GEMM_EPILOGUE_DIRECT;
        if (fz_pct(&s, 25))
            grid_blocks = (int)fz_in(&s, 1, 2 * fz_sms());
        if (fz_pct(&s, 20))
            group_m = (int)fz_in(&s, 1, 40);
        /* through tune (the launch computed once) or by hand (re-derived in every run); an empty problem's plan
         * has no launch to tune */
        if (m > 0 && n > 0 && k > 0 && fz_pct(&s, 50)) {
            f->cover[GM_TUNED]++;
            if (!FZ_TMA(f, tma_gemm_plan_tune(&plan, cluster, epilogue, group_m, grid_blocks, &diag), diag,
                        "tma_gemm_plan_tune"))
                goto done;
        } else {
            plan.cluster = cluster, plan.epilogue = epilogue, plan.grid_blocks = grid_blocks, plan.group_m = group_m;
        }
    }
    snprintf(f->what, sizeof f->what,
             "M %d N %d K %d, %s C at +%zu bytes; %s; cluster %d, %d split-K parts, block_n %d, %s epilogue, "
             "grid_blocks %d, group_m %d; %s data",
             m, n, k, out == TMA_GEMM_OUT_F32 ? "fp32" : "bf16", c_off, one_call ? "tma_gemm (one call)" : "plan",
             plan.cluster, plan.split_parts, plan.block_n,
             plan.epilogue == TMA_GEMM_EPILOGUE_DIRECT ? "direct" : "TMA-store", plan.grid_blocks,
             plan.group_m, data == REF_DATA_INTS ? "integer" : "real");
    f->cover[out == TMA_GEMM_OUT_F32 ? GM_F32 : GM_BF16]++;
    f->cover[GM_CL2] += plan.cluster == 2;
    f->cover[GM_SPLIT] += plan.split_parts >= 2 && !one_call;
    f->cover[GM_SPLIT128] += plan.split_parts >= 2 && plan.block_n == 128 && !one_call;
    f->cover[GM_WHOLE128] += plan.split_parts == 0 && plan.block_n == 128 && !one_call;
    f->cover[GM_PACKED] += plan.packed != NULL;
    f->cover[GM_DIRECT] += plan.epilogue == TMA_GEMM_EPILOGUE_DIRECT;
    f->cover[GM_GRID] += plan.grid_blocks != 0;
    f->cover[GM_GROUP] += plan.group_m != (int)TMA_GEMM_GROUP_M;
    f->cover[GM_ONECALL] += one_call;
    f->cover[GM_SKINNY] += m <= 256;
    f->cover[GM_KZERO] += k == 0;
    f->cover[GM_INTS] += data == REF_DATA_INTS;
    float rel, abs_coef;
    fz_bound(data, out == TMA_GEMM_OUT_F32, &rel, &abs_coef);
    for (int run = 1; run <= RUNS; run++) {
        if (!fz_poison(f, &c, 0xFF)) /* NaN in bf16 and fp32 */
            goto done;
        const tma_status st =
            one_call ? tma_gemm(a, b, c.at, out, m, n, k, NULL, &diag) : tma_gemm_run(&plan, NULL, &diag);
        ref_diff d;
        if (!FZ_TMA(f, st, diag, one_call ? "tma_gemm" : "tma_gemm_run") || !FZ_CUDA(f, cudaDeviceSynchronize()) ||
            !FZ_CUDA(f, ref_compare(c.at, out == TMA_GEMM_OUT_F32, ref, refabs, nc, rel, abs_coef, &d)) ||
            !fz_values_ok(f, &d, nc, run, "C") || !fz_guards_ok(f, &c, 0xFF, run))
            goto done;
        if (run == 1 ? !FZ_CUDA(f, cudaMemcpy(first, c.at, nc * eb, cudaMemcpyDeviceToDevice))
                     : !fz_same_as_first(f, &c, first, run))
            goto done;
    }
done:
    FZ_TMA(f, tma_gemm_plan_free(&plan, &diag), diag, "tma_gemm_plan_free");
    fz_free_all(f, &mem);
}

static const fz_option gemm_options[] = {
    {"bf16 C", GM_BF16},
    {"fp32 C", GM_F32},
    {"clusters of 2", GM_CL2},
    {"direct epilogue", GM_DIRECT},
    {"set grids", GM_GRID},
    {"band heights", GM_GROUP},
    {"one-call", GM_ONECALL},
    {"M <= 256", GM_SKINNY},
    {"K = 0", GM_KZERO},
    {"integer data", GM_INTS},
    {"options set through tma_gemm_plan_tune", GM_TUNED},
    {"split-K", GM_SPLIT},
    {"split-K on 128 x 128 tiles", GM_SPLIT128},
    {"whole 128 x 128 tiles", GM_WHOLE128},
    {"packed inputs (K not a multiple of 8, or A, B off 16 bytes)", GM_PACKED},
};

Test(gpu_fuzz, gemm, .timeout = 900) {
    fz_kernel("gemm", 800, gemm_problem, gemm_options, sizeof gemm_options / sizeof gemm_options[0]);
}

/* ---------------------------------------------------------------------------------------------
 * Grouped GEMMs.
 * ------------------------------------------------------------------------------------------- */

enum { GG_MAX = 256, GG_MACS_CAP_LOG2 = 33, GG_ELEMS_CAP = 1 << 27 };
enum { GG_EMPTY, GG_TINY, GG_HUGE, GG_GRID, GG_GROUPM, GG_ONECALL, GG_INTS, GG_KZERO, GG_MANY, GG_SKIP, GG_TUNED,
       GG_THREADS, GG_KPARTS, GG_OFF16 };

/* One group's rows: empty, a few (under a tile), a few hundred, or thousands. */
static int gg_rows(uint64_t *s) {
    const int kind = (int)(fz_next(s) % 20);
    return kind < 3 ? 0 : kind < 9 ? (int)fz_in(s, 1, 64) : kind < 18 ? (int)fz_log(s, 65, 1024)
                                                                       : (int)fz_log(s, 1025, 16384);
}

static void grouped_problem(fuzz *f, uint64_t seed) {
    uint64_t s = seed;
    int groups = fz_pct(&s, 20) ? (int)fz_in(&s, 1, 4) : (int)fz_log(&s, 1, GG_MAX);
    const int any = fz_pct(&s, 25); /* any N and K: the thread-loaded kernel where either is off a multiple of 8 */
    int n = any ? (int)fz_log(&s, 1, 4096) : (int)round_up(fz_log(&s, 8, 8192), fz_pct(&s, 50) ? 8 : 64);
    int k = fz_pct(&s, 3)  ? 0
            : any          ? (int)fz_log(&s, 1, 4096)
                           : (int)round_up(fz_log(&s, 8, 8192), fz_pct(&s, 50) ? 8 : 64);
    int32_t m[GG_MAX];
    uint64_t rows = 0;
    for (int g = 0; g < groups; g++)
        rows += (uint64_t)(m[g] = gg_rows(&s));
    /* within the caps: B_g is N x K per group, so N and K first, then the rows */
    while ((uint64_t)groups * n * k > GG_ELEMS_CAP || (rows * n * (uint64_t)(k > 0 ? k : 1)) >> GG_MACS_CAP_LOG2 ||
           rows * n > GG_ELEMS_CAP) {
        if ((uint64_t)groups * n * k > GG_ELEMS_CAP && k > 64)
            k = any ? k / 2 : (int)round_up(k / 2, 8);
        else if ((uint64_t)groups * n * k > GG_ELEMS_CAP || n > 1024)
            n = any ? n / 2 : (int)round_up(n / 2, 8);
        else {
            rows = 0;
            for (int g = 0; g < groups; g++)
                rows += (uint64_t)(m[g] /= 2);
        }
    }
    const ref_data data = fz_pct(&s, 50) ? REF_DATA_INTS : REF_DATA_REAL;
    const int one_call = fz_pct(&s, 10);
    /* pools: A_g, B_g and C_g of every group at 16-byte aligned offsets (at any even one under the thread-loaded
     * kernel), each C_g between GUARD poisoned bytes */
    const int odd = any && (n % 8 != 0 || k % 8 != 0);
    /* under the pipeline, groups at any even offset too: those off 16 bytes are computed by the threads after it */
    const int shifted = !odd && fz_pct(&s, 15);
    size_t a_at[GG_MAX], b_at[GG_MAX], c_at[GG_MAX], r_at[GG_MAX], a_total = 0, b_total = 0, c_total = 0, r_total = 0;
    uint32_t off16 = 0; /* groups with rows off 16 bytes under the pipeline */
    for (int g = 0; g < groups; g++) {
        const int at_any = odd || shifted;
        const size_t a_off = at_any ? 2u * (size_t)fz_in(&s, 0, 7) : 0u;
        const size_t b_off = at_any ? 2u * (size_t)fz_in(&s, 0, 7) : 0u;
        const size_t c_off = at_any ? 2u * (size_t)fz_in(&s, 0, 7) : 0u;
        off16 += shifted && m[g] > 0 && k > 0 && (a_off | b_off | c_off) % 16u != 0u;
        a_at[g] = a_total + a_off;
        a_total += round_up((int64_t)m[g] * k * 2 + a_off, 16) + 16u * (size_t)fz_in(&s, 0, 2);
        b_at[g] = b_total + b_off;
        b_total += round_up((int64_t)n * k * 2 + b_off, 16) + 16u * (size_t)fz_in(&s, 0, 2);
        c_total += GUARD;
        c_at[g] = c_total + c_off, c_total += round_up((int64_t)m[g] * n * 2 + c_off, 16);
        r_at[g] = r_total, r_total += (size_t)m[g] * n;
    }
    c_total += GUARD;
    fz_mem mem = {{0}, 0};
    snprintf(f->what, sizeof f->what, "%d groups, N %d K %d, %llu rows", groups, n, k, (unsigned long long)rows);
    uint8_t *pa = fz_alloc(f, &mem, a_total), *pb = fz_alloc(f, &mem, b_total), *pc = fz_alloc(f, &mem, c_total);
    uint8_t *first = fz_alloc(f, &mem, c_total);
    float *ref = fz_alloc(f, &mem, r_total * 4), *refabs = fz_alloc(f, &mem, r_total * 4);
    void **arr = fz_alloc(f, &mem, 3 * sizeof(void *) * GG_MAX);
    int32_t *arr_m = fz_alloc(f, &mem, sizeof(int32_t) * GG_MAX);
    tma_grouped_gemm_plan plan;
    int have_plan = 0;
    tma_diag diag;
    if (!pa || !pb || !pc || !first || !ref || !refabs || !arr || !arr_m)
        goto done;
    void *host_arr[3 * GG_MAX];
    for (int g = 0; g < groups; g++) {
        host_arr[g] = pa + a_at[g];
        host_arr[GG_MAX + g] = pb + b_at[g];
        host_arr[2 * GG_MAX + g] = pc + c_at[g];
        if (!FZ_CUDA(f, ref_fill_bf16((uint16_t *)(pa + a_at[g]), (size_t)m[g] * k, fz_mix(seed ^ (2u * g + 1u)),
                                      data)) ||
            !FZ_CUDA(f, ref_fill_bf16((uint16_t *)(pb + b_at[g]), (size_t)n * k, fz_mix(seed ^ (2u * g + 2u)), data)) ||
            !FZ_CUDA(f, ref_gemm((const uint16_t *)(pa + a_at[g]), (const uint16_t *)(pb + b_at[g]), m[g], n, k,
                                 (size_t)k, (size_t)k, ref + r_at[g], refabs + r_at[g])))
            goto done;
    }
    if (!FZ_CUDA(f, cudaMemcpy(arr, host_arr, sizeof host_arr, cudaMemcpyHostToDevice)) ||
        !FZ_CUDA(f, cudaMemcpy(arr_m, m, sizeof(int32_t) * groups, cudaMemcpyHostToDevice)))
        goto done;
    const void *const *da = (const void *const *)arr, *const *db = (const void *const *)(arr + GG_MAX);
    void *const *dc = (void *const *)(arr + 2 * GG_MAX);
    if (!one_call) {
        if (!FZ_TMA(f, tma_grouped_gemm_plan_make(&plan, groups, n, k, da, db, dc, arr_m, &diag), diag,
                    "tma_grouped_gemm_plan_make"))
            goto done;
        have_plan = 1;
        const int grid_blocks = fz_pct(&s, 25) ? (int)fz_in(&s, 1, plan.sms > 0 ? plan.sms : fz_sms()) : 0;
        const int group_m = fz_pct(&s, 20) ? (int)fz_in(&s, 1, 40) : plan.group_m;
        if (fz_pct(&s, 50)) { /* through tune, or by hand */
            f->cover[GG_TUNED]++;
            if (!FZ_TMA(f, tma_grouped_gemm_plan_tune(&plan, grid_blocks, group_m, &diag), diag,
                        "tma_grouped_gemm_plan_tune"))
                goto done;
        } else {
            plan.grid_blocks = grid_blocks, plan.group_m = group_m;
        }
    }
    /* runs 2 and 3 reuse run 1's maps (diag_skip_build: right while a, b, c and m stay as they are) */
    const int skip_build = have_plan && fz_pct(&s, 25);
    snprintf(f->what, sizeof f->what, "%d groups, N %d K %d, %llu rows (M_g %d, %d, ...); %s; grid_blocks %d, "
             "group_m %d%s; %s data", groups, n, k, (unsigned long long)rows, m[0], groups > 1 ? m[1] : -1,
             one_call ? "tma_grouped_gemm (one call)" : "plan", have_plan ? plan.grid_blocks : 0,
             have_plan ? plan.group_m : (int)TMA_GEMM_GROUP_M, skip_build ? ", runs 2-3 on run 1's maps" : "",
             data == REF_DATA_INTS ? "integer" : "real");
    for (int g = 0; g < groups; g++) {
        f->cover[GG_EMPTY] += m[g] == 0;
        f->cover[GG_TINY] += m[g] > 0 && m[g] < 128;
        f->cover[GG_HUGE] += m[g] > 1024;
    }
    f->cover[GG_GRID] += have_plan && plan.grid_blocks != 0;
    f->cover[GG_GROUPM] += have_plan && plan.group_m != (int)TMA_GEMM_GROUP_M;
    f->cover[GG_ONECALL] += one_call;
    f->cover[GG_INTS] += data == REF_DATA_INTS;
    f->cover[GG_KZERO] += k == 0;
    f->cover[GG_MANY] += groups >= 64;
    f->cover[GG_SKIP] += skip_build;
    f->cover[GG_THREADS] += odd;
    f->cover[GG_OFF16] += off16;
    if (!odd && k > 0 && n > 0) { /* the schedule the device makes (GroupedOps::device_sched), from the same counts */
        uint64_t units = 0;
        for (int g = 0; g < groups; g++)
            units += gg_group_units(m[g], ((uint32_t)n + TMA_GEMM_BN - 1u) / TMA_GEMM_BN);
        const int blocks = have_plan && plan.grid_blocks > 0 ? plan.grid_blocks : fz_sms();
        const gg_sched sched = gg_sched_make(units, (uint32_t)blocks, ((uint32_t)k + TMA_GEMM_BK - 1u) / TMA_GEMM_BK);
        f->cover[GG_KPARTS] += sched.split < sched.units;
    }
    float rel, abs_coef;
    fz_bound(data, 0, &rel, &abs_coef);
    for (int run = 1; run <= RUNS; run++) {
        if (!FZ_CUDA(f, cudaMemset(pc, 0xFF, c_total)))
            goto done;
        if (have_plan)
            plan.diag_skip_build = skip_build && run > 1;
        tma_status st = one_call ? tma_grouped_gemm(groups, n, k, da, db, dc, arr_m, NULL, &diag)
                                 : tma_grouped_gemm_run(&plan, NULL, &diag);
        if (st == TMA_OK && !one_call)
            st = tma_grouped_gemm_check(&plan, NULL, &diag);
        if (!FZ_TMA(f, st, diag, one_call ? "tma_grouped_gemm" : "tma_grouped_gemm_run / _check") ||
            !FZ_CUDA(f, cudaDeviceSynchronize()))
            goto done;
        for (int g = 0; g < groups; g++) {
            ref_diff d;
            unsigned long long guard = 0;
            char what[64];
            snprintf(what, sizeof what, "group %d (M_g %d)", g, m[g]);
            if (!FZ_CUDA(f, ref_compare(pc + c_at[g], 0, ref + r_at[g], refabs + r_at[g], (size_t)m[g] * n, rel,
                                        abs_coef, &d)) ||
                !fz_values_ok(f, &d, (size_t)m[g] * n, run, what) ||
                !FZ_CUDA(f, ref_count_not(pc + c_at[g] - GUARD, GUARD, 0xFF, &guard)))
                goto done;
            if (guard) {
                fz_fail(f, "run %d wrote %llu bytes into the guard before group %d's C_g", run, guard, g);
                goto done;
            }
        }
        unsigned long long tail = 0;
        if (!FZ_CUDA(f, ref_count_not(pc + c_total - GUARD, GUARD, 0xFF, &tail)))
            goto done;
        if (tail) {
            fz_fail(f, "run %d wrote %llu bytes past the last C_g", run, tail);
            goto done;
        }
        unsigned long long diff = 0, at = 0;
        if (run == 1 ? !FZ_CUDA(f, cudaMemcpy(first, pc, c_total, cudaMemcpyDeviceToDevice))
                     : !FZ_CUDA(f, ref_count_diff(pc, first, c_total, &diff, &at)))
            goto done;
        if (diff) {
            fz_fail(f, "run %d differs from run 1 in %llu bytes (the first at pool byte %llu): a race", run, diff, at);
            goto done;
        }
    }
done:
    if (have_plan)
        FZ_TMA(f, tma_grouped_gemm_plan_free(&plan, &diag), diag, "tma_grouped_gemm_plan_free");
    fz_free_all(f, &mem);
}

static const fz_option grouped_options[] = {
    {"empty groups", GG_EMPTY},
    {"groups under a tile", GG_TINY},
    {"groups over 1024 rows", GG_HUGE},
    {"problems of 64+ groups", GG_MANY},
    {"set grids", GG_GRID},
    {"band heights", GG_GROUPM},
    {"maps reused (diag_skip_build)", GG_SKIP},
    {"one-call", GG_ONECALL},
    {"K = 0", GG_KZERO},
    {"integer data", GG_INTS},
    {"options set through tma_grouped_gemm_plan_tune", GG_TUNED},
    {"N or K off a multiple of 8 (thread loads, operands at any even offset)", GG_THREADS},
    {"K parts in a short last wave (the device's gg_sched_make)", GG_KPARTS},
    {"groups off 16 bytes under the pipeline (the threads after it)", GG_OFF16},
};

Test(gpu_fuzz, grouped, .timeout = 900) {
    fz_kernel("grouped", 400, grouped_problem, grouped_options, sizeof grouped_options / sizeof grouped_options[0]);
}

/* ---------------------------------------------------------------------------------------------
 * Permutes.
 * ------------------------------------------------------------------------------------------- */

enum { PM_ELEMS_CAP = 1 << 24 };
#define PM_BYTES_CAP ((size_t)1 << 29) /* a tensor's span past this: its strides drawn again, dense */
enum { PM_E1, PM_E2, PM_E4, PM_E8, PM_R1, PM_R2, PM_R3, PM_R4, PM_R5, PM_STRIDED, PM_TUNED, PM_ONECALL, PM_REAL,
       PM_THREADS, PM_DST_SPANS, PM_SRC_SPANS, PM_DST_ROW_SPANS, PM_CHUNKS, PM_TMA_COPY, PM_TMA_TRANSPOSE, PM_TSTORE,
       PM_SLAB_RUNS, PM_ODD_ADDR, PM_ODD_STRIDES, PM_ODD_ROWS, PM_DST_UNSORTED, PM_UNIT_STRIDES, PM_SRC_OVERLAP,
       PM_TINY };

/* Shapes of real tensors, dimension 0 innermost, with the permutation applied to them: NCHW -> NHWC and back (any
 * channels; 3-channel 224 x 224 images; 7 x 7 and 14 x 14 maps of many channels), attention's head split {D, H, S, B}
 * -> {D, S, H, B}, batched transposes, logits (rows of a vocabulary: 50,257 and others, transposed or copied into
 * padded rows), tiny tensors (17 x 31 and smaller), the rank-3 333 x 444 x 55 (2, 0, 1) and rank-5
 * 16 x 32 x 24 x 40 x 48 (0, 3, 1, 4, 2), ragged 12345 x 6789 transposes. Most of them TMA cannot describe densely
 * (rows of 3, 49 or 50,257 elements); pm_random_desc scales them to the cap. Returns 1 for a tiny one. */
static int pm_real_shape(uint64_t *s, tma_permute_desc *d) {
    static const uint32_t chans[] = {3, 4, 8, 16, 32, 64, 96, 128, 256, 512, 1024, 2048};
    const int kind = (int)(fz_next(s) % 10);
    const int back = fz_pct(s, 50); /* images: NHWC -> NCHW instead */
    if (kind == 0 || kind == 4 || kind == 5) { /* images: {W, H, C, N} -> {C, W, H, N}, or back */
        uint64_t hw, c, n;
        if (kind == 0)
            hw = (uint64_t)fz_in(s, 1, 112), c = chans[fz_next(s) % 12], n = (uint64_t)fz_log(s, 1, 64);
        else if (kind == 4)
            hw = 224, c = 3, n = (uint64_t)fz_log(s, 1, 64);
        else
            hw = fz_pct(s, 70) ? 7 : 14, c = 512u << (fz_next(s) % 3), n = (uint64_t)fz_log(s, 1, 128);
        d->rank = 4;
        if (!back) {
            d->src_dims[0] = hw, d->src_dims[1] = hw, d->src_dims[2] = c, d->src_dims[3] = n;
            d->perm[0] = 2, d->perm[1] = 0, d->perm[2] = 1, d->perm[3] = 3;
        } else {
            d->src_dims[0] = c, d->src_dims[1] = hw, d->src_dims[2] = hw, d->src_dims[3] = n;
            d->perm[0] = 1, d->perm[1] = 2, d->perm[2] = 0, d->perm[3] = 3;
        }
    } else if (kind == 1) { /* heads: {D, H, S, B} -> {D, S, H, B} */
        static const uint32_t dh[] = {32, 64, 80, 96, 128};
        d->rank = 4;
        d->src_dims[0] = dh[fz_next(s) % 5], d->src_dims[1] = (uint64_t)fz_in(s, 1, 64);
        d->src_dims[2] = (uint64_t)fz_log(s, 1, 4096), d->src_dims[3] = (uint64_t)fz_log(s, 1, 16);
        d->perm[0] = 0, d->perm[1] = 2, d->perm[2] = 1, d->perm[3] = 3;
    } else if (kind == 2) { /* batched transposes {C, R, B} -> {R, C, B} */
        d->rank = 3;
        d->src_dims[0] = (uint64_t)fz_log(s, 1, 8192), d->src_dims[1] = (uint64_t)fz_log(s, 1, 8192);
        d->src_dims[2] = (uint64_t)fz_log(s, 1, 64);
        d->perm[0] = 1, d->perm[1] = 0, d->perm[2] = 2;
    } else if (kind == 3) { /* logits: {V, T} or {V, T, B}, transposed, or copied (strides pad the rows) */
        static const uint32_t vocab[] = {50257, 50257, 32000, 32001, 151936, 49999, 128256};
        d->rank = fz_pct(s, 70) ? 2 : 3;
        d->src_dims[0] = vocab[fz_next(s) % 7], d->src_dims[1] = (uint64_t)fz_log(s, 1, 4096);
        if (d->rank == 3)
            d->src_dims[2] = (uint64_t)fz_log(s, 1, 8);
        const int copy = fz_pct(s, 25);
        for (uint32_t i = 0; i < d->rank; i++)
            d->perm[i] = i;
        if (!copy)
            d->perm[0] = 1, d->perm[1] = 0;
    } else if (kind == 6) { /* tiny: 17 x 31 transposed, or a small tensor of any rank */
        if (fz_pct(s, 40)) {
            d->rank = 2;
            d->src_dims[0] = fz_pct(s, 50) ? 31 : 17, d->src_dims[1] = d->src_dims[0] == 31 ? 17 : 31;
            d->perm[0] = 1, d->perm[1] = 0;
        } else {
            d->rank = (uint32_t)fz_in(s, 1, 5);
            for (uint32_t i = 0; i < d->rank; i++)
                d->src_dims[i] = (uint64_t)fz_in(s, 1, 17);
            for (uint32_t i = 0; i < d->rank; i++)
                d->perm[i] = i;
            for (uint32_t i = d->rank; i-- > 1;) {
                const uint32_t j = (uint32_t)fz_in(s, 0, i), t = d->perm[i];
                d->perm[i] = d->perm[j], d->perm[j] = t;
            }
        }
        return 1;
    } else if (kind == 7) { /* PyTorch 333 x 444 x 55, permute(2, 0, 1): src {55, 444, 333}, dst {444, 333, 55} */
        d->rank = 3;
        d->src_dims[0] = 55, d->src_dims[1] = 444, d->src_dims[2] = 333;
        d->perm[0] = 1, d->perm[1] = 2, d->perm[2] = 0;
    } else if (kind == 8) { /* PyTorch 16 x 32 x 24 x 40 x 48, permute(0, 3, 1, 4, 2) */
        static const uint64_t dims[5] = {48, 40, 24, 32, 16};
        static const uint32_t perm[5] = {2, 0, 3, 1, 4};
        d->rank = 5;
        memcpy(d->src_dims, dims, sizeof dims);
        memcpy(d->perm, perm, sizeof perm);
    } else { /* ragged 12345 x 6789, either way */
        d->rank = 2;
        d->src_dims[0] = fz_pct(s, 50) ? 6789 : 12345, d->src_dims[1] = d->src_dims[0] == 6789 ? 12345 : 6789;
        d->perm[0] = 1, d->perm[1] = 0;
    }
    return 0;
}

/* What a problem's description has beyond sizes, for the coverage counts. */
typedef struct pm_traits {
    int tma; /* drawn in the TMA kernels' domain: rows of whole 16-byte chunks, aligned strides and addresses */
    int real, tiny, odd_strides, odd_rows, dst_unsorted, unit_strides, src_overlap;
} pm_traits;

/* Any resolved stride of a dimension of more than one element that is not a multiple of 16 bytes (TMA strides must
 * be), dense ones included. */
static int pm_odd_strides(uint32_t e, uint32_t rank, const uint64_t *dims, const uint64_t *given) {
    uint64_t st[5];
    pr_strides(e, rank, dims, given, st);
    for (uint32_t i = 1; i < rank; i++)
        if (dims[i] > 1 && st[i] % 16u != 0)
            return 1;
    return 0;
}

/* Given strides of dimensions of more than one element that do not grow with the dimension's index. */
static int pm_unsorted(uint32_t e, uint32_t rank, const uint64_t *dims, const uint64_t *given) {
    uint64_t st[5], last = 0;
    pr_strides(e, rank, dims, given, st);
    for (uint32_t i = 0; i < rank; i++)
        if (dims[i] > 1) {
            if (st[i] < last)
                return 1;
            last = st[i];
        }
    return 0;
}

/* A permute in the domain tma_permute accepts, which is every tensor: real shapes (35%) or random ranks, sizes and
 * perms; 40% in the TMA kernels' domain (the random shapes' src and dst rows whole 16-byte chunks, strides dense or
 * 16-byte aligned, addresses too: permute_problem), the others with strides of any kind (pr_draw_strides: dense, a
 * few elements of padding, any multiple of the element, dimensions in another order in memory) at element-aligned
 * addresses, now and then src rows that overlap; odd strides on dimensions of one element in both. */
static tma_permute_desc pm_random_desc(uint64_t *s, pm_traits *t) {
    static const uint32_t elems[] = {1, 2, 4, 8};
    tma_permute_desc d;
    memset(&d, 0, sizeof d);
    memset(t, 0, sizeof *t);
    d.elem_bytes = elems[fz_next(s) % 4];
    const uint64_t v = 16u / d.elem_bytes; /* elements of a 16-byte chunk */
    t->tma = fz_pct(s, 40);
    t->real = fz_pct(s, 35);
    if (t->real) {
        t->tiny = pm_real_shape(s, &d);
    } else {
        d.rank = (uint32_t)fz_in(s, 1, 5);
        for (uint32_t i = 0; i < d.rank; i++)
            d.src_dims[i] = (uint64_t)fz_log(s, 1, d.rank <= 2 ? 8192 : d.rank == 3 ? 512 : 64);
        for (uint32_t i = 0; i < d.rank; i++)
            d.perm[i] = i;
        for (uint32_t i = d.rank; i-- > 1;) { /* Fisher-Yates: every permutation */
            const uint32_t j = (uint32_t)fz_in(s, 0, i), tmp = d.perm[i];
            d.perm[i] = d.perm[j], d.perm[j] = tmp;
        }
        if (t->tma) /* src's and dst's rows whole chunks */
            d.src_dims[0] = (uint64_t)round_up((int64_t)d.src_dims[0], (int64_t)v),
            d.src_dims[d.perm[0]] = (uint64_t)round_up((int64_t)d.src_dims[d.perm[0]], (int64_t)v);
    }
    /* within the cap, halving the largest dimension (odd sizes stay odd as often as not; whole chunks stay so) */
    const int chunked = t->tma && !t->real;
    for (;;) {
        uint64_t total = 1;
        uint32_t big = 0;
        for (uint32_t i = 0; i < d.rank; i++) {
            total *= d.src_dims[i];
            big = d.src_dims[i] > d.src_dims[big] ? i : big;
        }
        if (total <= PM_ELEMS_CAP)
            break;
        d.src_dims[big] = (d.src_dims[big] + 1) / 2;
        if (chunked && (big == 0 || big == d.perm[0]))
            d.src_dims[big] = (uint64_t)round_up((int64_t)d.src_dims[big], (int64_t)v);
    }
    uint64_t dd[5];
    for (uint32_t i = 0; i < d.rank; i++)
        dd[i] = d.src_dims[d.perm[i]];
    uint64_t r = fz_next(s) | 1u; /* permute_ref.h's generator, seeded from the problem's */
    const pr_style style = t->tma ? (fz_pct(s, 50) ? PR_DENSE : PR_ALIGNED)
                           : t->real && fz_pct(s, 50) ? PR_DENSE /* real tensors are mostly dense */
                                                      : PR_ANY;
    pr_draw_strides(&r, d.elem_bytes, d.rank, d.src_dims, d.src_strides, style);
    pr_draw_strides(&r, d.elem_bytes, d.rank, dd, d.dst_strides, style);
    const pr_layout L = pr_layout_of(&d);
    if (L.src_bytes > PM_BYTES_CAP || L.dst_bytes > PM_BYTES_CAP) /* padding of many short rows */
        memset(d.src_strides, 0, sizeof d.src_strides), memset(d.dst_strides, 0, sizeof d.dst_strides);
    t->unit_strides = pr_unit_strides(&r, d.elem_bytes, d.rank, d.src_dims, d.src_strides, 10) +
                      pr_unit_strides(&r, d.elem_bytes, d.rank, dd, d.dst_strides, 10);
    t->src_overlap = !t->tma && fz_pct(s, 6) && pr_overlap_src(&r, d.elem_bytes, d.rank, d.src_dims, d.src_strides);
    t->odd_strides = pm_odd_strides(d.elem_bytes, d.rank, d.src_dims, d.src_strides) ||
                     pm_odd_strides(d.elem_bytes, d.rank, dd, d.dst_strides);
    t->odd_rows = (dd[0] * d.elem_bytes) % 16u != 0 || (d.src_dims[0] * d.elem_bytes) % 16u != 0;
    t->dst_unsorted = pm_unsorted(d.elem_bytes, d.rank, dd, d.dst_strides);
    return d;
}

static void pm_describe(fuzz *f, const tma_permute_desc *d, const char *how, size_t src_off, size_t dst_off) {
    char desc[480];
    pr_describe(d, desc, sizeof desc);
    snprintf(f->what, sizeof f->what, "%s; src at +%zu, dst at +%zu bytes from 256-byte boundaries; %s", desc,
             src_off, dst_off, how);
}

static void permute_problem(fuzz *f, uint64_t seed) {
    uint64_t s = seed;
    pm_traits tr;
    tma_permute_desc d = pm_random_desc(&s, &tr);
    const pr_layout L = pr_layout_of(&d);
    /* the spans exactly: dst's guards (fz_out) start at the byte after its last element */
    const size_t src_bytes = L.src_bytes, dst_bytes = L.dst_bytes;
    uint64_t r = fz_next(&s) | 1u;
    const size_t src_off = tr.tma ? 16u * (size_t)fz_in(&s, 0, 7) : pr_offset(&r, d.elem_bytes);
    const size_t dst_off = tr.tma ? 16u * (size_t)fz_in(&s, 0, 7) : pr_offset(&r, d.elem_bytes);
    const int one_call = fz_pct(&s, 10), tuned = !one_call && fz_pct(&s, 25);
    const uint32_t group = (uint32_t)fz_in(&s, 0, 16);
    const tma_l2_promotion l2 = (tma_l2_promotion)fz_in(&s, 0, 3);
    char how[96];
    snprintf(how, sizeof how, "%s", one_call ? "tma_permute (one call)" : "plan");
    if (tuned)
        snprintf(how, sizeof how, "plan tuned: group %u, L2 promotion %d", group, (int)l2);
    pm_describe(f, &d, how, src_off, dst_off);
    fz_mem mem = {{0}, 0};
    fz_out dst;
    uint8_t *src = fz_alloc(f, &mem, src_off + src_bytes), *src_copy = fz_alloc(f, &mem, src_bytes);
    uint8_t *want = fz_alloc(f, &mem, dst_bytes), *role = fz_alloc(f, &mem, dst_bytes);
    tma_permute_plan plan;
    memset(&plan, 0, sizeof plan);
    if (!src || !src_copy || !want || !role || !fz_out_make(f, &mem, &dst, dst_bytes, dst_off))
        goto done;
    src += src_off;
    d.src = src, d.dst = dst.at;
    pm_describe(f, &d, how, src_off, dst_off); /* with the addresses' alignment */
    if (!FZ_CUDA(f, ref_fill_bytes(src, src_bytes, fz_mix(seed ^ 1u))) ||
        !FZ_CUDA(f, cudaMemcpy(src_copy, src, src_bytes, cudaMemcpyDeviceToDevice)) ||
        !FZ_CUDA(f, ref_permute(&d, want, role, dst_bytes)))
        goto done;
    tma_diag diag;
    if (!one_call) {
        if (!FZ_TMA(f, tma_permute_plan_make(&plan, &d, &diag), diag, "tma_permute_plan_make") ||
            (tuned && !FZ_TMA(f, tma_permute_plan_tune(&plan, group, l2, &diag), diag, "tma_permute_plan_tune")))
            goto done;
    }
    f->cover[d.elem_bytes == 1 ? PM_E1 : d.elem_bytes == 2 ? PM_E2 : d.elem_bytes == 4 ? PM_E4 : PM_E8]++;
    f->cover[PM_R1 + d.rank - 1]++;
    if (!one_call) { /* the path the plan took */
        f->cover[PM_THREADS] += plan.threads != 0;
        pm_layout layout; /* the plan's own layout: the thread kernel's spans (DST SPANS, ... in permute_tiles.h), the
                           * TMA transpose's thread stores and slab runs */
        tma_diag ignored;
        if (pm_plan(&d, &layout, &ignored) == TMA_OK) {
            if (plan.threads) {
                f->cover[PM_DST_SPANS] += layout.thr.dspan != 0;
                f->cover[PM_SRC_SPANS] += layout.thr.sspan != 0;
                f->cover[PM_DST_ROW_SPANS] += layout.thr.drows != 0;
                f->cover[PM_CHUNKS] += layout.thr.chunks != 0;
            } else if (plan.transpose) {
                f->cover[PM_TSTORE] += layout.grid.tstore != 0;
                f->cover[PM_SLAB_RUNS] += layout.grid.dspan != 0;
            }
        }
        f->cover[PM_TMA_COPY] += !plan.threads && !plan.transpose;
        f->cover[PM_TMA_TRANSPOSE] += !plan.threads && plan.transpose;
    }
    int strided = 0;
    for (uint32_t i = 0; i + 1 < d.rank; i++)
        strided |= d.src_strides[i] != 0 || d.dst_strides[i] != 0;
    f->cover[PM_STRIDED] += strided;
    f->cover[PM_TUNED] += tuned;
    f->cover[PM_ONECALL] += one_call;
    f->cover[PM_REAL] += tr.real;
    f->cover[PM_TINY] += tr.tiny;
    f->cover[PM_ODD_ADDR] += src_off % 16u != 0 || dst_off % 16u != 0;
    f->cover[PM_ODD_STRIDES] += tr.odd_strides;
    f->cover[PM_ODD_ROWS] += tr.odd_rows;
    f->cover[PM_DST_UNSORTED] += tr.dst_unsorted;
    f->cover[PM_UNIT_STRIDES] += tr.unit_strides > 0;
    f->cover[PM_SRC_OVERLAP] += tr.src_overlap;
    const char *path = one_call ? "one call" : plan.threads ? "thread kernel" : plan.transpose ? "TMA transpose"
                                                                                                : "TMA copy";
    static const uint8_t poison[RUNS] = {0xEE, 0x5A, 0xC3};
    for (int run = 1; run <= RUNS; run++) {
        if (!fz_poison(f, &dst, poison[run - 1]))
            goto done;
        const tma_status st = one_call ? tma_permute(&d, NULL, &diag) : tma_permute_run(&plan, NULL, &diag);
        ref_diff rd;
        unsigned long long src_changed = 0, at = 0;
        if (!FZ_TMA(f, st, diag, one_call ? "tma_permute" : "tma_permute_run") ||
            !FZ_CUDA(f, cudaDeviceSynchronize()) ||
            !FZ_CUDA(f, ref_permute_check(dst.at, want, role, dst_bytes, poison[run - 1], &rd)) ||
            !FZ_CUDA(f, ref_count_diff(src, src_copy, src_bytes, &src_changed, &at)))
            goto done;
        if (rd.bad) {
            uint8_t rl = 0;
            (void)cudaMemcpy(&rl, role + rd.first, 1, cudaMemcpyDeviceToHost);
            fz_fail(f, "run %d (%s): %llu bad dst bytes; the first, byte %llu (%s), is 0x%02x, want 0x%02x", run, path,
                    rd.bad, rd.first, rl ? "an element's" : "no element's: between rows or in a gap, never written",
                    (unsigned)rd.got, rl ? (unsigned)rd.want : (unsigned)poison[run - 1]);
            goto done;
        }
        if (src_changed) {
            fz_fail(f, "run %d (%s) changed %llu bytes of src (the first at byte %llu)", run, path, src_changed, at);
            goto done;
        }
        if (!fz_guards_ok(f, &dst, poison[run - 1], run))
            goto done;
    }
done:
    fz_free_all(f, &mem);
}

static const fz_option permute_options[] = {
    {"1-byte elements", PM_E1},
    {"2-byte", PM_E2},
    {"4-byte", PM_E4},
    {"8-byte", PM_E8},
    {"rank 1", PM_R1},
    {"rank 2", PM_R2},
    {"rank 3", PM_R3},
    {"rank 4", PM_R4},
    {"rank 5", PM_R5},
    {"thread kernel", PM_THREADS},
    {"dst spans", PM_DST_SPANS},
    {"src spans", PM_SRC_SPANS},
    {"dst row spans", PM_DST_ROW_SPANS},
    {"chunk transpose", PM_CHUNKS},
    {"TMA copy", PM_TMA_COPY},
    {"TMA transpose", PM_TMA_TRANSPOSE},
    {"its threads storing", PM_TSTORE},
    {"slab runs", PM_SLAB_RUNS},
    {"odd addresses", PM_ODD_ADDR},
    {"odd strides", PM_ODD_STRIDES},
    {"rows not of 16-byte multiples", PM_ODD_ROWS},
    {"dst strides out of dimension order", PM_DST_UNSORTED},
    {"odd strides on dimensions of one element", PM_UNIT_STRIDES},
    {"src rows overlapping", PM_SRC_OVERLAP},
    {"strided", PM_STRIDED},
    {"tuned", PM_TUNED},
    {"one-call", PM_ONECALL},
    {"real shapes", PM_REAL},
    {"tiny", PM_TINY},
};

Test(gpu_fuzz, permute, .timeout = 900) {
    fz_kernel("permute", 800, permute_problem, permute_options, sizeof permute_options / sizeof permute_options[0]);
}
