/* gpu: the silicon against the CPU model. Every byte a TMA copy writes on the GPU must equal what
 * tma_model_load_tiled / tma_model_store_tiled / tma_model_reduce_tiled write, and every other byte must
 * keep its poison. Random configurations; the seed is logged and TMA_TEST_SEED replays it. */
#include "gpu_common.h"

#include <criterion/redirect.h>

#include "conformance.h"
#include "special_values.h"

enum { BOXES_PER_LOAD = 4 };

/* A tensor placed on both sides: host bytes for the model, the same bytes on the device for the copy. */
typedef struct placed {
    tma_tiled_desc host; /* global_address -> host copy */
    tma_tensor dev;      /* map over the device copy */
    uint8_t *h;
    uint8_t *d;
    size_t bytes;
} placed;

static void place(placed *p, const tma_tiled_desc *d, const uint8_t *contents) {
    p->bytes = tma_global_extent_bytes(d);
    p->h = malloc(p->bytes);
    cr_assert(p->h != NULL, "out of host memory");
    memcpy(p->h, contents, p->bytes);
    CUDA_OK(cudaMalloc((void **)&p->d, p->bytes));
    CUDA_OK(cudaMemcpy(p->d, contents, p->bytes, cudaMemcpyHostToDevice));
    tma_tiled_desc dd = *d;
    dd.global_address = p->d;
    tma_diag diag;
    tma_status st = tma_tensor_make(&p->dev, &dd, &diag);
    cr_assert(st == TMA_OK, "tma_tensor_make: %s: %s", tma_status_name(st), diag.message);
    p->host = *d;
    p->host.global_address = p->h;
}

static void unplace(placed *p) {
    free(p->h);
    cudaFree(p->d);
}

static uint32_t arena_for(const tma_tiled_desc *d) { return (uint32_t)(1024 + (tma_box_smem_bytes(d) + 127) / 128 * 128); }

/* First differing byte, or -1. */
static long first_difference(const uint8_t *a, const uint8_t *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return (long)i;
    return -1;
}

/* Run n box loads of t through the conformance kernel: box b at coords[b] into an arena of arena_bytes
 * first filled with `poison` (host), landing at offsets[b]; the arenas come back in got (host, n x arena).
 * Returns the launch's CUDA error (a trapped kernel is an error, not a test failure, for the callers). */
static cudaError_t run_loads(const tma_tensor *t, const int32_t (*coords)[5], const uint32_t *offsets, int n,
                             const uint8_t *poison, uint32_t arena, uint8_t *got) {
    int32_t(*dcoords)[5];
    uint32_t *doffsets;
    uint8_t *dpoison, *dout;
    CUDA_OK(cudaMalloc((void **)&dcoords, (size_t)n * sizeof coords[0]));
    CUDA_OK(cudaMalloc((void **)&doffsets, (size_t)n * sizeof offsets[0]));
    CUDA_OK(cudaMalloc((void **)&dpoison, arena));
    CUDA_OK(cudaMalloc((void **)&dout, (size_t)arena * n));
    CUDA_OK(cudaMemcpy(dcoords, coords, (size_t)n * sizeof coords[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(doffsets, offsets, (size_t)n * sizeof offsets[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dpoison, poison, arena, cudaMemcpyHostToDevice));
    cudaError_t e = conf_load(t, (const int32_t(*)[5])dcoords, doffsets, n, dpoison, arena, dout);
    if (e == cudaSuccess)
        CUDA_OK(cudaMemcpy(got, dout, (size_t)arena * n, cudaMemcpyDeviceToHost));
    cudaFree(dcoords);
    cudaFree(doffsets);
    cudaFree(dpoison);
    cudaFree(dout);
    return e;
}

/* Everything the kernel printed, for tests that run with .init = cr_redirect_stdout. */


Test(gpu_copies, loads_match_model, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_copies.loads_match_model");
    const int configs = config_count(2000);
    int boxes = 0, oob_boxes = 0, nan_fill = 0, offsets_seen = 0;
    int per_rank[6] = {0}, per_swizzle[4] = {0}, per_type[TMA_DTYPE_COUNT_] = {0};

    for (int k = 0; k < configs; k++) {
        tma_tiled_desc d = random_desc(NULL, 0);
        size_t extent = tma_global_extent_bytes(&d);
        uint8_t *contents = malloc(extent);
        rnd_bytes(contents, extent);
        placed p;
        place(&p, &d, contents);
        free(contents);

        uint32_t arena = arena_for(&d);
        int32_t coords[BOXES_PER_LOAD][5];
        uint32_t offsets[BOXES_PER_LOAD];
        for (int b = 0; b < BOXES_PER_LOAD; b++) {
            random_coords(&d, coords[b], 1);
            offsets[b] = (uint32_t)rnd_in(0, 7) * 128; /* every 128-byte phase of a 1 KiB block */
            offsets_seen |= 1 << (offsets[b] / 128);
        }
        uint8_t *poison = malloc(arena), *got = malloc((size_t)arena * BOXES_PER_LOAD);
        rnd_bytes(poison, arena);

        CUDA_OK(run_loads(&p.dev, (const int32_t(*)[5])coords, offsets, BOXES_PER_LOAD, poison, arena, got));

        uint8_t *want = malloc(arena);
        for (int b = 0; b < BOXES_PER_LOAD; b++) {
            memcpy(want, poison, arena);
            tma_status st = tma_model_load_tiled(&p.host, coords[b], want, arena, offsets[b]);
            cr_assert(st == TMA_OK, "model refused a load the GPU ran: %s", tma_status_name(st));
            long at = first_difference(got + (size_t)b * arena, want, arena);
            if (at >= 0) {
                char what[512];
                describe(&d, coords[b], what, sizeof what);
                cr_assert_fail("config %d box %d: GPU and model differ at arena byte %ld (box offset %u): GPU 0x%02x, "
                               "model 0x%02x, poison 0x%02x; %s",
                               k, b, at, offsets[b], got[(size_t)b * arena + at], want[at], poison[at], what);
            }
            boxes++;
            for (uint32_t i = 0; i < d.rank; i++)
                if (coords[b][i] < 0 || (uint64_t)coords[b][i] + d.box_dim[i] > d.global_dim[i]) {
                    oob_boxes++;
                    break;
                }
        }
        per_rank[d.rank]++;
        per_swizzle[d.swizzle]++;
        per_type[d.dtype]++;
        nan_fill += d.oob_fill == TMA_OOB_NAN;
        free(want);
        free(poison);
        free(got);
        unplace(&p);
    }
    cr_assert(offsets_seen == 0xFF || configs < 100, "not every 128-byte offset was tried");
    cr_log_info("loads: %d configurations, %d boxes (%d partly/wholly out of bounds), %d with NaN fill; ranks 1-5: "
                "%d %d %d %d %d; swizzle NONE/32/64/128: %d %d %d %d; all matched the model byte for byte",
                configs, boxes, oob_boxes, nan_fill, per_rank[1], per_rank[2], per_rank[3], per_rank[4], per_rank[5],
                per_swizzle[0], per_swizzle[1], per_swizzle[2], per_swizzle[3]);
    for (int t = 0; t < TMA_DTYPE_COUNT_ && configs >= 1000; t++)
        cr_expect(per_type[t] > 0, "dtype %s never drawn", tma_dtype_name((tma_dtype)t));
}

/* Loads through views in which two coordinates reach the same bytes, which the driver encodes and libtma accepts as
 * load maps (TMA_BOX_LOAD_ONLY): a broadcast (a stride of 0), a sliding window (a stride shorter than a row, a
 * multiple of 16), two dimensions with one stride. Every byte must equal the model's, which reads the shared bytes
 * once per coordinate that reaches them. */
Test(gpu_copies, loads_through_views_that_share_bytes_match_model, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_copies.loads_through_views_that_share_bytes_match_model");
    const int configs = config_count(500);
    int kinds[3] = {0}, boxes = 0;
    for (int k = 0; k < configs; k++) {
        tma_tiled_desc d;
        int kind;
        tma_overlap o;
        do { /* a random valid map of rank >= 2, one of its strides made to share bytes */
            d = random_desc(NULL, 0);
            kind = (int)rnd_in(0, 2);
            const uint32_t i = d.rank >= 2 ? (uint32_t)rnd_in(1, d.rank - 1) : 0;
            const uint64_t row = (d.global_dim[0] * tma_dtype_size(d.dtype) + 15) / 16 * 16;
            if (i == 0)
                continue;
            if (kind == 0)
                d.global_stride[i - 1] = 0;
            else if (kind == 1)
                d.global_stride[i - 1] = 16 * (uint64_t)rnd_in(1, row > 16 ? (int64_t)(row / 16) : 1);
            else if (d.rank >= 3)
                d.global_stride[i - 1] = d.global_stride[i == 1 ? 1 : 0];
        } while (d.rank < 2 || tma_check_tiled(&d, NULL) != TMA_OK || tma_rule_one_to_one(&d, &o));
        size_t extent = tma_global_extent_bytes(&d);
        uint8_t *contents = malloc(extent);
        rnd_bytes(contents, extent);
        placed p;
        place(&p, &d, contents);
        free(contents);
        cr_assert_eq(p.dev.box.flags & TMA_BOX_LOAD_ONLY, TMA_BOX_LOAD_ONLY, "config %d: the box facts: load-only", k);
        const uint32_t arena = arena_for(&d);
        int32_t coords[BOXES_PER_LOAD][5];
        uint32_t offsets[BOXES_PER_LOAD];
        for (int b = 0; b < BOXES_PER_LOAD; b++) {
            random_coords(&d, coords[b], 1);
            offsets[b] = (uint32_t)rnd_in(0, 7) * 128;
        }
        uint8_t *poison = malloc(arena), *got = malloc((size_t)arena * BOXES_PER_LOAD), *want = malloc(arena);
        cr_assert(poison != NULL && got != NULL && want != NULL, "out of host memory");
        rnd_bytes(poison, arena);
        CUDA_OK(run_loads(&p.dev, (const int32_t(*)[5])coords, offsets, BOXES_PER_LOAD, poison, arena, got));
        for (int b = 0; b < BOXES_PER_LOAD; b++) {
            memcpy(want, poison, arena);
            cr_assert_eq(tma_model_load_tiled(&p.host, coords[b], want, arena, offsets[b]), TMA_OK, "model load");
            const long at = first_difference(got + (size_t)b * arena, want, arena);
            if (at >= 0) {
                char what[512];
                describe(&d, coords[b], what, sizeof what);
                cr_assert_fail("config %d box %d: GPU and model differ at arena byte %ld: GPU 0x%02x, model 0x%02x; %s",
                               k, b, at, got[(size_t)b * arena + at], want[at], what);
            }
            boxes++;
        }
        kinds[kind]++;
        free(poison), free(got), free(want);
        unplace(&p);
    }
    cr_log_info("loads through views sharing bytes: %d configurations (%d broadcasts, %d sliding windows, %d with two "
                "dimensions on one stride), %d boxes, all matched the model byte for byte",
                configs, kinds[0], kinds[1], kinds[2], boxes);
}

/* One store or reduce-store configuration: returns after asserting GPU == model over the whole extent. */
static void store_one(int k, const tma_tiled_desc *d, int reduce, const uint8_t *contents, const uint8_t *image) {
    placed p;
    place(&p, d, contents);
    uint32_t arena = arena_for(d);
    int32_t c[5];
    random_coords(d, c, 0);
    uint32_t offset = (uint32_t)rnd_in(0, 7) * 128;

    uint8_t *dimage;
    CUDA_OK(cudaMalloc((void **)&dimage, arena));
    CUDA_OK(cudaMemcpy(dimage, image, arena, cudaMemcpyHostToDevice));
    CUDA_OK(conf_store(&p.dev, c, offset, dimage, arena, reduce));
    uint8_t *got = malloc(p.bytes);
    CUDA_OK(cudaMemcpy(got, p.d, p.bytes, cudaMemcpyDeviceToHost));

    tma_status st = reduce < 0 ? tma_model_store_tiled(&p.host, c, image, arena, offset)
                               : tma_model_reduce_tiled(&p.host, c, image, arena, offset, (tma_reduce)reduce);
    cr_assert(st == TMA_OK, "model refused a store the GPU ran: %s", tma_status_name(st));
    long at = first_difference(got, p.h, p.bytes);
    if (at >= 0) {
        char what[512];
        describe(d, c, what, sizeof what);
        cr_assert_fail("config %d (%s): GPU and model differ at global byte %ld of %zu: GPU 0x%02x, model 0x%02x, "
                       "before 0x%02x; smem offset %u; %s",
                       k, reduce == CONF_STORE_HINT ? "store with an L2 hint" : reduce < 0 ? "store"
                                                        : tma_rule_reduce_name((tma_reduce)reduce),
                       at, p.bytes, got[at], p.h[at], contents[at], offset, what);
    }
    free(got);
    cudaFree(dimage);
    unplace(&p);
}

Test(gpu_copies, stores_match_model, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_copies.stores_match_model");
    const int configs = config_count(500);
    for (int k = 0; k < configs; k++) {
        tma_tiled_desc d = random_desc(NULL, 0);
        size_t extent = tma_global_extent_bytes(&d);
        uint32_t arena = arena_for(&d);
        uint8_t *contents = malloc(extent), *image = malloc(arena);
        rnd_bytes(contents, extent);
        rnd_bytes(image, arena);
        store_one(k, &d, k % 2 ? CONF_STORE_HINT : -1, contents, image); /* odd ones through tma_store_hint */
        free(contents);
        free(image);
    }
    cr_log_info("stores: %d configurations (every other one with an L2 evict_first hint) matched the model over every "
                "byte of each tensor", configs);
}

/* Reduce-stores: every (type, reduction) pair a map can reduce (TMA_REDUCE_FORMS, measured), each over at least 400
 * random configurations, on data rich in special values (tests/special_values.h: NaN payloads, infinities, signed
 * zeros, denormals, overflow) mixed with close magnitudes and random bits. */
static uint64_t rnd_source(void) { return rnd(); }

Test(gpu_copies, reduce_stores_match_model, .timeout = 600) {
    require_sm90();
    seed_rng("gpu_copies.reduce_stores_match_model");
    const int configs = config_count(400);
    int forms = 0, total = 0;
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++)
        for (int op = 0; op < TMA_REDUCE_COUNT_; op++) {
            if (!tma_rule_reduce_exists((tma_dtype)t, (tma_reduce)op, 1))
                continue;
            const tma_dtype type = (tma_dtype)t;
            for (int k = 0; k < configs; k++) {
                tma_tiled_desc d = random_desc(&type, 1);
                size_t extent = tma_global_extent_bytes(&d);
                uint32_t arena = arena_for(&d);
                const size_t esize = tma_dtype_size(type);
                uint8_t *contents = malloc(extent), *image = malloc(arena);
                cr_assert(contents != NULL && image != NULL, "out of host memory");
                const int magnitude = (int)rnd_in(-20, 20);
                sv_fill_mixed(type, contents, extent / esize, magnitude, rnd_source);
                sv_fill_mixed(type, image, arena / esize, magnitude, rnd_source);
                store_one(k, &d, op, contents, image);
                free(contents);
                free(image);
            }
            forms++;
            total += configs;
        }
    cr_assert_eq(forms, 33, "every tiled pair of TMA_REDUCE_FORMS was run");
    cr_log_info("reduce-stores: %d (type, op) pairs x %d configurations = %d, special-rich data, all matched the model "
                "byte for byte over every tensor",
                forms, configs, total);
}

/* Checked mode: a load whose innermost coordinate is not on the 16-byte grid prints the rule and traps,
 * instead of the hardware's bare "illegal instruction". */
Test(gpu_copies, checked_mode_names_misaligned_coordinate, .init = cr_redirect_stdout, .timeout = 60) {
    require_sm90();
    tma_tiled_desc d = {.dtype = TMA_DTYPE_U8, .rank = 2, .global_dim = {256, 4}, .global_stride = {256},
                        .box_dim = {64, 4}, .swizzle = TMA_SWIZZLE_64B};
    uint8_t contents[1024] = {0};
    placed p;
    place(&p, &d, contents);
    int32_t coords[1][5] = {{114, 0, 0, 0, 0}}; /* 114 bytes: faults on the GPU; 112 works */
    uint32_t offsets[1] = {0};
    uint32_t arena = arena_for(&d);
    uint8_t *poison = calloc(arena, 1), *got = malloc(arena);
    cudaError_t e = run_loads(&p.dev, (const int32_t(*)[5])coords, offsets, 1, poison, arena, got);
    free(poison);
    free(got);
    cr_assert(e != cudaSuccess, "a load at a misaligned coordinate completed");
    char text[4096];
    captured_stdout(text, sizeof text);
    cr_assert(strstr(text, "coord[0] = 114") != NULL && strstr(text, "not a multiple of 16") != NULL &&
                  strstr(text, "block (0,0,0) thread 0") != NULL,
              "checked mode did not name the rule (CUDA said %s); device output:\n%s", cudaGetErrorString(e), text);
    /* the device prints the host's message for the same rule, word for word */
    tma_diag host;
    d.global_address = (void *)(uintptr_t)4096;
    cr_assert_eq(tma_check_coords(&d, coords[0], &host), TMA_ERR_COORD_ALIGN, "the host refuses it too");
    cr_assert(strstr(text, host.message) != NULL, "device and host messages differ:\n device: %s\n host: %s", text,
              host.message);
    cr_log_info("checked mode turned the fault into: %.200s (then %s)", text, cudaGetErrorName(e));
}

Test(gpu_copies, checked_mode_refuses_a_store_through_a_load_only_map, .init = cr_redirect_stdout, .timeout = 60) {
    require_sm90();
    /* rows 128 bytes apart, 256 bytes long: a valid map to load from, not to store through */
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 2, .global_dim = {64, 8}, .global_stride = {128},
                        .box_dim = {32, 4}};
    uint8_t contents[2048] = {0};
    placed p;
    place(&p, &d, contents);
    cr_assert_eq(p.dev.box.flags & TMA_BOX_LOAD_ONLY, TMA_BOX_LOAD_ONLY, "the box facts mark it load-only");
    const uint32_t arena = arena_for(&d);
    uint8_t *image;
    CUDA_OK(cudaMalloc((void **)&image, arena));
    CUDA_OK(cudaMemset(image, 0, arena));
    const int32_t c[5] = {0, 0, 0, 0, 0};
    const cudaError_t e = conf_store(&p.dev, c, 0, image, arena, -1);
    cr_assert(e != cudaSuccess, "a store through a load-only map completed");
    char text[4096];
    captured_stdout(text, sizeof text);
    cr_assert(strstr(text, "TMA_ERR_GLOBAL_STRIDE_OVERLAP") != NULL && strstr(text, "race with itself") != NULL,
              "checked mode did not refuse the store (CUDA said %s); device output:\n%s", cudaGetErrorString(e), text);
}

/* Checked mode: no copy goes through a template (TMA_DESC_TEMPLATE: its address and strides are placeholders a kernel
 * replaces first; here a real address, so an unchecked load would complete and read the wrong map's bytes). */
Test(gpu_copies, checked_mode_refuses_a_copy_through_a_template, .init = cr_redirect_stdout, .timeout = 60) {
    require_sm90();
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 2, .global_dim = {64, 8}, .global_stride = {0},
                        .box_dim = {32, 4}, .flags = TMA_DESC_TEMPLATE};
    uint8_t contents[2048] = {0};
    placed p;
    place(&p, &d, contents);
    cr_assert_eq(p.dev.box.flags & TMA_BOX_TEMPLATE, TMA_BOX_TEMPLATE, "the box facts mark it a template");
    const uint32_t arena = arena_for(&d);
    uint8_t *poison = calloc(arena, 1), *got = malloc(arena);
    cr_assert(poison != NULL && got != NULL, "out of host memory");
    const int32_t c[1][5] = {{0, 0, 0, 0, 0}};
    const uint32_t offset = 0;
    const cudaError_t e = run_loads(&p.dev, c, &offset, 1, poison, arena, got);
    cr_assert(e != cudaSuccess, "a load through a template completed");
    char text[4096];
    captured_stdout(text, sizeof text);
    tma_diag host;
    cr_assert_eq(tma_check_coords(&p.host, c[0], &host), TMA_ERR_ARG, "the host refuses it too");
    cr_assert(strstr(text, "TMA_ERR_ARG") != NULL && strstr(text, host.message) != NULL,
              "checked mode did not refuse the load with the host's message (CUDA said %s); device output:\n%s\n"
              "host: %s",
              cudaGetErrorString(e), text, host.message);
    free(poison), free(got);
}
