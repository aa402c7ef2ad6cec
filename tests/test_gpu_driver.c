/* gpu: tma_check_tiled against the driver's own cuTensorMapEncodeTiled, on random parameter sets drawn
 * near every limit, and on the maps public Hopper kernels encode: views whose coordinates share bytes (strides
 * shorter than a row, zero, equal), templates with a NULL address and zero strides (TMA_DESC_TEMPLATE), and the
 * same views as store maps (TMA_DESC_STORE). No map the driver encodes may be refused without a hardware reason
 * written down: where libtma refuses one, every rule it reports must be in the table below, each with its reason
 * (docs/HARDWARE.md, "Where libtma is stricter than the driver, and why", has the same table). The driver is
 * opened here with dlopen, as the library does, so this binary also starts on machines with no driver (and
 * skips). */
#include <dlfcn.h>
#include <pthread.h>

#include <cuda.h> /* the driver API, called directly here */

#include "gpu_common.h"

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* The rules by which libtma refuses maps the driver encodes, each with its hardware reason; `flags`: the
 * descriptor flags a rule needs to apply (the overlap rule guards store maps only). Keep in step with
 * docs/HARDWARE.md, "Where libtma is stricter than the driver, and why". */
static const struct {
    tma_rule rule;
    uint32_t flags;
    const char *why;
} stricter[] = {
    {TMA_RULE_ADDRESS_NULL, 0, "the driver encodes a NULL address; the first copy through the map faults (a template "
                               "whose address the device replaces says so: TMA_DESC_TEMPLATE)"},
    {TMA_RULE_OVERLAP, TMA_DESC_STORE, "store maps only: two coordinates reach the same bytes, so a store writes "
                                       "them twice and races with itself"},
    {TMA_RULE_OVERLAP_ELEMENTS, TMA_DESC_STORE, "store maps only: as OVERLAP (the message guesses a unit mistake)"},
    {TMA_RULE_OVERLAP_SWAPPED, TMA_DESC_STORE, "store maps only: as OVERLAP (the message guesses swapped dimensions)"},
    {TMA_RULE_OVERLAP_UNPROVEN, TMA_DESC_STORE, "store maps only: no proof within the search budget that a store "
                                                "does not race with itself"},
    {TMA_RULE_OVERLAP_HUGE, TMA_DESC_STORE, "store maps only: dimensions spanning more than 2^64 bytes"},
    {TMA_RULE_BOX_SMEM, 0, "a box over 227 KiB can never land in a Hopper block's shared memory"},
    {TMA_RULE_EXTENT, 0, "a tensor past the end of the 64-bit address space: no such memory"},
    {TMA_RULE_ELEMENT_STRIDE_0, 0, "element_stride[0] != 1 without interleave: the copy engine ignores it (measured) "
                                   "and would take every element"},
    {TMA_RULE_SWIZZLE_SM100, 0, "128B_ATOM swizzles are compute capability 10.x modes Hopper's copy engine lacks"},
    {TMA_RULE_DTYPE_PACKED, 0, "packed 16U4/16U6 types are compute capability 10.x types"},
};
#define N_STRICTER (sizeof stricter / sizeof stricter[0])

/* The row of `stricter` that lets libtma refuse d by rule r, or -1: a refusal without a hardware reason. */
static int stricter_row(tma_rule r, const tma_tiled_desc *d) {
    for (size_t i = 0; i < N_STRICTER; i++)
        if (stricter[i].rule == r && (d->flags & stricter[i].flags) == stricter[i].flags)
            return (int)i;
    return -1;
}

static uint64_t pick_u64(const uint64_t *v, size_t n) { return v[rnd() % n]; }
#define PICK(arr) pick_u64(arr, sizeof(arr) / sizeof(arr[0]))

/* A descriptor that is valid most of the time, with one to three fields pushed to, just past or far
 * beyond a limit, or made into a map kernels encode: a view whose coordinates share bytes, a template, a store map.
 * Element strides are never 0 here: libtma reads 0 as 1, the driver refuses it. */
static tma_tiled_desc near_limits(void) {
    static const tma_dtype all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    tma_tiled_desc d = random_desc(all, 13);
    d.global_address = (void *)(uintptr_t)0x7f0000000000ull;
    for (uint32_t i = 0; i < 5; i++)
        if (d.element_stride[i] == 0)
            d.element_stride[i] = 1;
    int tweaks = (int)rnd_in(0, 3);
    for (int t = 0; t < tweaks; t++) {
        uint32_t i = (uint32_t)rnd_in(0, 4);
        static const uint64_t dims[] = {0, 1, 2, 255, 256, 257, (1ull << 32) - 1, 1ull << 32, (1ull << 32) + 1};
        static const uint64_t strides[] = {0, 8, 16, 24, 32, 48, (1ull << 40) - 32, (1ull << 40) - 16,
                                           1ull << 40, (1ull << 40) + 16, 1ull << 41};
        static const uint64_t boxes[] = {0, 1, 2, 3, 4, 8, 16, 24, 32, 64, 128, 255, 256, 257};
        static const uint64_t addrs[] = {0, 8, 16, 24, 32, 48, 64, 0x7f0000000010ull, 0x7f0000000020ull};
        const uint64_t row = (d.global_dim[0] * tma_dtype_size(d.dtype) + 15) / 16 * 16;
        switch (rnd() % 16) {
        case 0: d.rank = (uint32_t)rnd_in(0, 6); break;
        case 1: d.dtype = (tma_dtype)rnd_in(0, 16); break;
        case 2: d.global_dim[i] = PICK(dims); break;
        case 3: d.global_stride[i % 4] = PICK(strides); break;
        case 4: d.box_dim[i] = (uint32_t)PICK(boxes); break;
        case 5: d.element_stride[i] = (uint32_t)rnd_in(1, 9); break;
        case 6: d.interleave = (tma_interleave)rnd_in(0, 3); break;
        case 7: d.swizzle = (tma_swizzle)rnd_in(0, 7); break;
        case 8: d.l2_promotion = (tma_l2_promotion)rnd_in(0, 4); break;
        case 9: d.oob_fill = (tma_oob_fill)rnd_in(0, 2); break;
        case 10: d.global_address = (void *)(uintptr_t)PICK(addrs); break;
        case 11: /* an interleaved layout, which brings its own rules */
            d.interleave = (tma_interleave)rnd_in(1, 2);
            d.rank = (uint32_t)rnd_in(2, 5);
            break;
        case 12: /* rows that overlap: a stride shorter than a row (a sliding window), or one dimension's twice */
            if (rnd() % 2 || d.rank < 3)
                d.global_stride[i % 4] = 16 * (uint64_t)rnd_in(0, row > 16 ? (int64_t)(row / 16 - 1) : 0);
            else
                d.global_stride[1] = d.global_stride[0];
            break;
        case 13: /* a broadcast: stride 0 */
            d.global_stride[i % 4] = 0;
            break;
        case 14: /* a template: NULL address, zero strides (the device replaces them) */
            d.global_address = NULL;
            memset(d.global_stride, 0, sizeof d.global_stride);
            d.flags |= TMA_DESC_TEMPLATE;
            break;
        default: /* a map to store through: the store-side rules apply */
            d.flags |= TMA_DESC_STORE;
            break;
        }
    }
    return d;
}

typedef struct tally {
    encode_fn encode;
    int sets, both_ok, both_refuse, mismatches;
    int stricter_count[N_STRICTER];
    /* among the sets both accept: views whose coordinates share bytes, NULL templates, zero strides (rank >= 2) */
    int shared_bytes, null_templates, zero_strides;
} tally;

/* d's kinds, for the coverage counts: valid fields assumed (both accepted it). */
static void count_kinds(tally *t, const tma_tiled_desc *d) {
    tma_overlap o;
    t->shared_bytes += !tma_rule_one_to_one(d, &o);
    t->null_templates += d->global_address == NULL && (d->flags & TMA_DESC_TEMPLATE);
    for (uint32_t i = 1; i < d->rank; i++)
        if (d->global_stride[i - 1] == 0) {
            t->zero_strides++;
            break;
        }
}

/* One parameter set through both. Where libtma refuses what the driver encodes, every rule it reports must be a
 * listed stricter one; any other disagreement is logged. */
static void compare(tally *t, const tma_tiled_desc *d) {
    tma_violation v[64];
    tma_rule_sink sink = tma_rule_sink_make(v, 64);
    const tma_status ours = tma_rules_tiled(d, &sink);
    cuuint64_t gdim[5], gstride[4];
    cuuint32_t box[5], es[5];
    for (int i = 0; i < 5; i++) {
        gdim[i] = d->global_dim[i];
        box[i] = d->box_dim[i];
        es[i] = d->element_stride[i];
        if (i < 4)
            gstride[i] = d->global_stride[i];
    }
    CUtensorMap map;
    CUresult theirs = t->encode(&map, (CUtensorMapDataType)d->dtype, d->rank, d->global_address, gdim, gstride, box,
                                es, (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
                                (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
    t->sets++;
    int unlisted = -1; /* the first reported rule without a reason, when libtma alone refuses */
    if (ours == TMA_OK && theirs == CUDA_SUCCESS) {
        t->both_ok++;
        count_kinds(t, d);
        return;
    }
    if (ours != TMA_OK && theirs != CUDA_SUCCESS) {
        t->both_refuse++;
        return;
    }
    if (ours != TMA_OK) {
        for (uint32_t k = 0; k < sink.count && k < 64 && unlisted < 0; k++)
            if (stricter_row((tma_rule)v[k].rule, d) < 0)
                unlisted = (int)k;
        if (unlisted < 0) {
            t->stricter_count[stricter_row((tma_rule)v[0].rule, d)]++;
            return;
        }
    }
    char what[512], msg[TMA_DIAG_MESSAGE_BYTES] = "";
    int32_t zero[5] = {0};
    describe(d, zero, what, sizeof what);
    if (unlisted >= 0)
        tma_rule_format(&v[unlisted], msg, sizeof msg);
    if (t->mismatches++ < 30)
        cr_log_error("set %d: libtma says %s (%s%s), the driver says %d; interleave %d l2 %d address %p flags %u; %s",
                     t->sets, tma_status_name(ours), unlisted >= 0 ? "without a reason written down: " : "", msg,
                     (int)theirs, (int)d->interleave, (int)d->l2_promotion, d->global_address, d->flags, what);
}

Test(gpu_driver, checker_agrees_with_driver, .timeout = 300) {
    require_sm90();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cr_assert(lib != NULL, "a device is present but libcuda.so.1 does not open: %s", dlerror());
    tally t = {.encode = (encode_fn)dlsym(lib, "cuTensorMapEncodeTiled")};
    cr_assert(t.encode != NULL, "libcuda.so.1 has no cuTensorMapEncodeTiled");
    seed_rng("gpu_driver.checker_agrees_with_driver");

    /* Random sets near the limits. */
    const int sets = config_count(20000);
    for (int k = 0; k < sets; k++) {
        tma_tiled_desc d = near_limits();
        compare(&t, &d);
    }
    /* Exhaustive sweep of the box-width rules: every interleave, swizzle and type, box_dim[0] from 1 to 256. */
    for (int il = 0; il <= 2; il++)
        for (int sw = 0; sw <= 3; sw++)
            for (int ty = 0; ty < TMA_DTYPE_COUNT_; ty++)
                for (uint32_t b0 = 1; b0 <= 256; b0 += b0 < 40 ? 1 : 8) {
                    tma_tiled_desc d = {.dtype = (tma_dtype)ty, .rank = 3,
                                        .global_address = (void *)(uintptr_t)0x7f0000000000ull,
                                        .global_dim = {256, 8, 4}, .global_stride = {2048, 16384},
                                        .box_dim = {b0, 4, 2}, .element_stride = {1, 1, 1},
                                        .interleave = (tma_interleave)il, .swizzle = (tma_swizzle)sw};
                    compare(&t, &d);
                }

    cr_log_info("checker vs driver: %d sets: %d accepted by both (%d with coordinates sharing bytes, %d NULL "
                "templates, %d with a zero stride), %d refused by both, %d disagreements",
                t.sets, t.both_ok, t.shared_bytes, t.null_templates, t.zero_strides, t.both_refuse, t.mismatches);
    for (size_t i = 0; i < N_STRICTER; i++)
        cr_log_info("  libtma stricter, %s (%s): %d sets (%s)", tma_rule_status_name(tma_rule_status(stricter[i].rule)),
                    stricter[i].flags ? "TMA_DESC_STORE" : "every map", t.stricter_count[i], stricter[i].why);
    cr_assert(t.mismatches == 0, "%d disagreements between tma_check_tiled and cuTensorMapEncodeTiled (listed above)",
              t.mismatches);
    cr_assert(t.both_ok > sets / 10 && t.both_refuse > sets / 10, "the draw is lopsided: %d valid, %d invalid",
              t.both_ok, t.both_refuse);
    cr_assert(sets < 2000 || (t.shared_bytes > sets / 100 && t.null_templates > sets / 100 &&
                              t.zero_strides > sets / 100),
              "the draw missed the maps kernels encode: %d with coordinates sharing bytes, %d NULL templates, %d zero "
              "strides, among %d accepted by both",
              t.shared_bytes, t.null_templates, t.zero_strides, t.both_ok);
}

/* tma_tensor_make encodes a template and views whose coordinates share bytes as they are: the map is byte for byte
 * the driver's own encoding of the same arguments (a template's NULL address passed through, not replaced), and the
 * box facts say what may go through it. As store maps (TMA_DESC_STORE) the views are refused before the driver. */
Test(gpu_driver, templates_and_shared_byte_views_encode_as_given, .timeout = 60) {
    require_sm90();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cr_assert(lib != NULL, "a device is present but libcuda.so.1 does not open: %s", dlerror());
    const encode_fn encode = (encode_fn)dlsym(lib, "cuTensorMapEncodeTiled");
    cr_assert(encode != NULL, "libcuda.so.1 has no cuTensorMapEncodeTiled");
    void *const addr = (void *)(uintptr_t)0x7f0000000000ull;
    const struct {
        const char *what;
        tma_tiled_desc d;
        uint32_t box_flags;
    } maps[] = {
        {"a grouped GEMM's template: NULL address, zero strides",
         {.dtype = TMA_DTYPE_BF16, .rank = 3, .global_address = NULL, .global_dim = {64, 128, 1},
          .global_stride = {0, 0}, .box_dim = {64, 128, 1}, .swizzle = TMA_SWIZZLE_128B, .flags = TMA_DESC_TEMPLATE},
         TMA_BOX_TEMPLATE | TMA_BOX_LOAD_ONLY},
        {"a broadcast row (stride 0)",
         {.dtype = TMA_DTYPE_F32, .rank = 2, .global_address = addr, .global_dim = {32, 64}, .global_stride = {0},
          .box_dim = {32, 16}},
         TMA_BOX_LOAD_ONLY},
        {"a sliding window (rows 16 bytes apart)",
         {.dtype = TMA_DTYPE_U8, .rank = 2, .global_address = addr, .global_dim = {64, 1000}, .global_stride = {16},
          .box_dim = {64, 32}},
         TMA_BOX_LOAD_ONLY},
    };
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        const tma_tiled_desc *d = &maps[i].d;
        tma_tensor t;
        memset(&t, 0, sizeof t); /* as `theirs`: bytes the driver might leave alone compare equal */
        tma_diag diag;
        cr_assert_eq(tma_tensor_make(&t, d, &diag), TMA_OK, "%s: %s", maps[i].what, diag.message);
        cr_expect_eq(t.box.flags, maps[i].box_flags, "%s: box flags 0x%x", maps[i].what, t.box.flags);
        cuuint64_t gdim[5], gstride[4];
        cuuint32_t box[5], es[5] = {1, 1, 1, 1, 1};
        for (int k = 0; k < 5; k++) {
            gdim[k] = d->global_dim[k];
            box[k] = d->box_dim[k];
            if (k < 4)
                gstride[k] = d->global_stride[k];
        }
        CUtensorMap theirs;
        memset(&theirs, 0, sizeof theirs);
        const CUresult r = encode(&theirs, (CUtensorMapDataType)d->dtype, d->rank, d->global_address, gdim, gstride,
                                  box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)d->swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        cr_assert_eq(r, CUDA_SUCCESS, "%s: the driver refused it itself (%d)", maps[i].what, (int)r);
        cr_expect(memcmp(&theirs, &t.map, sizeof theirs) == 0, "%s: tma_tensor_make's map differs from the driver's",
                  maps[i].what);
        if (d->flags & TMA_DESC_TEMPLATE)
            continue;
        tma_tiled_desc stored = *d;
        stored.flags = TMA_DESC_STORE;
        cr_expect_eq(tma_tensor_make(&t, &stored, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "%s as a store map",
                     maps[i].what);
    }
}

/* A thread on which no CUDA context is current: the encoders need one (docs/HARDWARE.md "Encoding needs a current
 * context"), so tma_tensor_make and tma_tensor_make_im2col encode inside device 0's primary context, pushed for the
 * call and popped after: the maps are those encoded where a context is current, and the thread has none after. */
typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef struct no_context_run {
    ctx_get_fn ctx_get;
    tma_tiled_desc tiled;
    tma_im2col_desc im2col;
    tma_tensor t, ti;
    tma_status st, sti;
    CUcontext before, after;
    tma_diag diag;
} no_context_run;

static void *encode_without_context(void *arg) {
    no_context_run *r = arg;
    r->ctx_get(&r->before);
    r->st = tma_tensor_make(&r->t, &r->tiled, &r->diag);
    if (r->st == TMA_OK)
        r->sti = tma_tensor_make_im2col(&r->ti, &r->im2col, &r->diag);
    r->ctx_get(&r->after);
    return NULL;
}

Test(gpu_driver, encodes_on_a_thread_without_a_context, .timeout = 60) {
    require_sm90();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cr_assert(lib != NULL, "a device is present but libcuda.so.1 does not open: %s", dlerror());
    static no_context_run r;
    memset(&r, 0, sizeof r);
    r.ctx_get = (ctx_get_fn)dlsym(lib, "cuCtxGetCurrent");
    cr_assert(r.ctx_get != NULL, "libcuda.so.1 has no cuCtxGetCurrent");
    static _Alignas(256) uint16_t host[64 * 256]; /* an address: nothing is copied */
    r.tiled = tma_desc_2d(TMA_DTYPE_BF16, host, 64, 256, 512, 64, 64, TMA_SWIZZLE_128B);
    tma_im2col_desc *d = &r.im2col;
    d->dtype = TMA_DTYPE_BF16;
    d->rank = 4;
    d->global_address = host;
    d->global_dim[0] = 64, d->global_dim[1] = 8, d->global_dim[2] = 8, d->global_dim[3] = 4;
    d->global_stride[0] = 128, d->global_stride[1] = 1024, d->global_stride[2] = 8192;
    d->pixel_box_lower[0] = -1, d->pixel_box_lower[1] = -1, d->pixel_box_upper[0] = -1, d->pixel_box_upper[1] = -1;
    d->channels_per_pixel = 64, d->pixels_per_column = 32;
    for (int k = 0; k < 4; k++)
        d->element_stride[k] = 1;
    d->swizzle = TMA_SWIZZLE_128B;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, encode_without_context, &r), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert(r.before == NULL, "the new thread already had a context");
    cr_assert_eq(r.st, TMA_OK, "tiled, no context: %s: %s", tma_status_name(r.st), r.diag.message);
    cr_assert_eq(r.sti, TMA_OK, "im2col, no context: %s: %s", tma_status_name(r.sti), r.diag.message);
    cr_assert(r.after == NULL, "the thread was left with a context current");
    /* the same descriptors encoded where the runtime's context is current */
    CUDA_OK(cudaFree(0));
    tma_tensor t, ti;
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&t, &r.tiled, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(tma_tensor_make_im2col(&ti, &r.im2col, &diag), TMA_OK, "%s", diag.message);
    cr_expect(memcmp(&t.map, &r.t.map, sizeof t.map) == 0, "the tiled map depends on the context it was encoded in");
    cr_expect(memcmp(&ti.map, &r.ti.map, sizeof ti.map) == 0, "the im2col map depends on the context");
}
