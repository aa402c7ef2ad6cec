/* gpu: loads through interleaved maps (TMA_INTERLEAVE_16B / _32B) against the CPU model. Every block arms its
 * mbarrier with tma_mbar_expect_box (the map's tma_box_tx_bytes) and waits a bounded time: a load that does not
 * complete fails the test with its configuration, it does not hang. Every byte of a poisoned arena must equal
 * tma_model_load_tiled's. Random configurations over both interleaves, every swizzle the checker accepts, all
 * element types, ranks 3-5, element strides (dimension 0's included), coordinates in and out of bounds and
 * destinations at every 128-byte offset of a 1 KiB block; the seed is logged and TMA_TEST_SEED replays it.
 * The rules under test are in tma/rules.h ("Interleaved layouts"); docs/HARDWARE.md has the measurements. */
#include "gpu_common.h"

#include "interleave_conformance.h"

enum { BOXES = 4, WAIT_US = 200000 /* 0.2 s: a box here lands in microseconds */ };

/* A tensor placed on both sides: host bytes for the model, the same bytes on the device for the copy. */
typedef struct placed {
    tma_tiled_desc host;
    tma_tensor dev;
    uint8_t *h;
    uint8_t *d;
    size_t bytes;
} placed;

static void place(placed *p, const tma_tiled_desc *d) {
    p->bytes = tma_global_extent_bytes(d);
    p->h = aligned_alloc(256, (p->bytes + 255) / 256 * 256); /* as cudaMalloc: INTERLEAVE_32B needs 32 */
    cr_assert(p->h != NULL, "out of host memory");
    rnd_bytes(p->h, p->bytes);
    CUDA_OK(cudaMalloc((void **)&p->d, p->bytes));
    CUDA_OK(cudaMemcpy(p->d, p->h, p->bytes, cudaMemcpyHostToDevice));
    tma_tiled_desc dd = *d;
    dd.global_address = p->d;
    tma_diag diag;
    const tma_status st = tma_tensor_make(&p->dev, &dd, &diag);
    cr_assert(st == TMA_OK, "tma_tensor_make: %s: %s", tma_status_name(st), diag.message);
    p->host = *d;
    p->host.global_address = p->h;
}

static void unplace(placed *p) {
    free(p->h);
    CUDA_OK(cudaFree(p->d));
}

static void describe_il(const tma_tiled_desc *d, const int32_t c[5], uint32_t offset, char *out, size_t n) {
    char rest[512];
    describe(d, c, rest, sizeof rest);
    snprintf(out, n, "interleave %s, smem offset %u, tx_bytes %zu, %s",
             d->interleave == TMA_INTERLEAVE_16B ? "16B" : "32B", offset, tma_box_tx_bytes(d), rest);
}

/* A random interleaved descriptor that tma_check_tiled accepts, with a small tensor (at most 1 MiB) and box (at
 * most 32 KiB of shared memory). Dimension 0 counts 16/32-byte chunks; dimension rank-2 is the slice index. */
static tma_tiled_desc random_interleaved(void) {
    for (;;) {
        tma_tiled_desc d;
        memset(&d, 0, sizeof d);
        d.dtype = (tma_dtype)(rnd() % TMA_DTYPE_COUNT_);
        const uint32_t es = (uint32_t)tma_dtype_size(d.dtype);
        d.interleave = rnd() % 2 ? TMA_INTERLEAVE_16B : TMA_INTERLEAVE_32B;
        d.swizzle = (tma_swizzle)rnd_in(0, 3); /* INTERLEAVE_32B takes every swizzle (measured) */
        d.rank = (uint32_t)rnd_in(3, 5);
        d.l2_promotion = (tma_l2_promotion)rnd_in(0, 3);
        d.oob_fill = is_float_type(d.dtype) && rnd() % 2 ? TMA_OOB_NAN : TMA_OOB_ZERO;
        /* box_dim[0] * elem must be a multiple of 16 bytes (the driver's rule), whatever the chunk */
        const uint32_t step = 16u / es, k = (uint32_t)(rnd() % 10);
        const uint32_t mult = k < 6   ? (uint32_t)rnd_in(1, 4)
                              : k < 9 ? (uint32_t)rnd_in(5, 16)
                                      : (uint32_t)rnd_in(17, 64);
        d.box_dim[0] = step * mult <= TMA_MAX_BOX_DIM ? step * mult : TMA_MAX_BOX_DIM / step * step;
        d.element_stride[0] = rnd() % 5 < 2 ? (uint32_t)rnd_in(2, 8) : (uint32_t)rnd_in(0, 1);
        d.global_dim[0] = (uint64_t)rnd_in(1, 2 * (int64_t)d.box_dim[0] + 8);
        const uint32_t max_box = d.rank == 3 ? 8u : 4u;
        for (uint32_t i = 1; i < d.rank; i++) {
            d.box_dim[i] = (uint32_t)rnd_in(1, max_box);
            d.element_stride[i] = rnd() % 4 == 0 ? (uint32_t)rnd_in(2, 8) : (uint32_t)rnd_in(0, 1);
            d.global_dim[i] = (uint64_t)rnd_in(1, 2 * (int64_t)d.box_dim[i] + 3);
        }
        /* strides nest over rows of global_dim[0] chunks, padded at times; a third of the time in a shuffled order */
        const uint64_t align = d.interleave == TMA_INTERLEAVE_32B ? 32u : 16u;
        const uint64_t chunk = d.interleave == TMA_INTERLEAVE_32B ? 32u : 16u;
        uint64_t stride = d.global_dim[0] * chunk + align * (uint64_t)rnd_in(0, 2);
        uint32_t order[4] = {1, 2, 3, 4};
        if (rnd() % 3 == 0)
            for (uint32_t k2 = d.rank - 1; k2 > 1; k2--) {
                const uint32_t j = (uint32_t)(rnd() % k2), t = order[k2 - 1];
                order[k2 - 1] = order[j], order[j] = t;
            }
        for (uint32_t k2 = 0; k2 + 1 < d.rank; k2++) {
            d.global_stride[order[k2] - 1] = stride;
            stride = stride * d.global_dim[order[k2]] + align * (uint64_t)rnd_in(0, 1);
        }
        d.global_address = (void *)(uintptr_t)4096; /* stand-in for the check */
        if (tma_check_tiled(&d, NULL) == TMA_OK && tma_global_extent_bytes(&d) <= (1u << 20) &&
            tma_box_smem_bytes(&d) <= 32u * 1024u)
            return d;
    }
}

/* Coordinates in chunks for dimension 0 (any integer: interleaved maps have no 16-byte grid there), elements
 * elsewhere. A third of the boxes lie inside the tensor where it is large enough; otherwise each coordinate is
 * inside half the time, else anywhere near the tensor, negative included. */
static void random_il_coords(const tma_tiled_desc *d, int32_t c[5]) {
    memset(c, 0, 5 * sizeof c[0]);
    const int inside = rnd() % 3 == 0;
    for (uint32_t i = 0; i < d->rank; i++) {
        const int64_t span = (int64_t)d->box_dim[i] * (d->element_stride[i] ? d->element_stride[i] : 1);
        const int64_t room = (int64_t)d->global_dim[i] - span;
        c[i] = (int32_t)(inside || rnd() % 2 ? rnd_in(0, room > 0 ? room : 0)
                                            : rnd_in(-span - 2, (int64_t)d->global_dim[i] + 2));
    }
}

/* Whether every chunk or element the box at c reads lies inside the tensor (the slice dimension rank-2 takes
 * coord[rank-2] only). */
static int box_inside(const tma_tiled_desc *d, const int32_t c[5]) {
    for (uint32_t i = 0; i < d->rank; i++) {
        const uint32_t e = d->element_stride[i] ? d->element_stride[i] : 1u;
        const uint32_t count = i == d->rank - 2u ? 1u : (d->box_dim[i] + e - 1u) / e;
        if (c[i] < 0 || (uint64_t)c[i] + (uint64_t)(count - 1u) * e >= d->global_dim[i])
            return 0;
    }
    return 1;
}

static uint32_t arena_for(const tma_tiled_desc *d) {
    return (uint32_t)(1024 + (tma_box_smem_bytes(d) + 127) / 128 * 128);
}

/* n loads of p's map; done[b] says whether box b completed; got receives the arenas. */
static void run_boxes(const placed *p, const int32_t (*coords)[5], const uint32_t *offsets, int n,
                      const uint8_t *poison, uint32_t arena, uint8_t *got, uint32_t *done) {
    int32_t(*dc)[5];
    uint32_t *doff, *ddone;
    uint8_t *dpoison, *dout;
    CUDA_OK(cudaMalloc((void **)&dc, (size_t)n * sizeof coords[0]));
    CUDA_OK(cudaMalloc((void **)&doff, (size_t)n * sizeof offsets[0]));
    CUDA_OK(cudaMalloc((void **)&ddone, (size_t)n * sizeof done[0]));
    CUDA_OK(cudaMalloc((void **)&dpoison, arena));
    CUDA_OK(cudaMalloc((void **)&dout, (size_t)arena * n));
    CUDA_OK(cudaMemcpy(dc, coords, (size_t)n * sizeof coords[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(doff, offsets, (size_t)n * sizeof offsets[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dpoison, poison, arena, cudaMemcpyHostToDevice));
    CUDA_OK(conf_il_load(&p->dev, (const int32_t(*)[5])dc, doff, n, dpoison, arena, WAIT_US, dout, ddone));
    CUDA_OK(cudaMemcpy(got, dout, (size_t)arena * n, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(done, ddone, (size_t)n * sizeof done[0], cudaMemcpyDeviceToHost));
    CUDA_OK(cudaFree(dc));
    CUDA_OK(cudaFree(doff));
    CUDA_OK(cudaFree(ddone));
    CUDA_OK(cudaFree(dpoison));
    CUDA_OK(cudaFree(dout));
}

/* Box b of a run: it completed, and its arena equals the model's, byte for byte. */
static void check_box(int k, int b, const placed *p, const int32_t c[5], uint32_t offset, const uint8_t *poison,
                      uint32_t arena, const uint8_t *got, uint32_t done) {
    char what[768];
    if (!done) {
        describe_il(&p->host, c, offset, what, sizeof what);
        cr_assert_fail("config %d box %d: the load did not complete within %d ms with expect-tx = tma_box_tx_bytes; %s",
                       k, b, WAIT_US / 1000, what);
    }
    uint8_t *want = malloc(arena);
    memcpy(want, poison, arena);
    const tma_status st = tma_model_load_tiled(&p->host, c, want, arena, offset);
    cr_assert(st == TMA_OK, "config %d: the model refused a load the GPU ran: %s", k, tma_status_name(st));
    for (uint32_t i = 0; i < arena; i++)
        if (got[i] != want[i]) {
            describe_il(&p->host, c, offset, what, sizeof what);
            cr_assert_fail("config %d box %d: GPU and model differ at arena byte %u (box byte %ld): GPU 0x%02x, model "
                           "0x%02x, poison 0x%02x; %s",
                           k, b, i, (long)i - (long)offset, got[i], want[i], poison[i], what);
        }
    free(want);
}

Test(gpu_interleave, loads_match_model, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_interleave.loads_match_model");
    const int configs = config_count(600);
    int boxes = 0, oob = 0, nan_fill = 0, estride0 = 0, offsets_seen = 0;
    int combos[3][4] = {{0}}, per_rank[6] = {0}, per_type[TMA_DTYPE_COUNT_] = {0};
    for (int k = 0; k < configs; k++) {
        const tma_tiled_desc d = random_interleaved();
        placed p;
        place(&p, &d);
        const uint32_t arena = arena_for(&d);
        int32_t coords[BOXES][5];
        uint32_t offsets[BOXES], done[BOXES];
        for (int b = 0; b < BOXES; b++) {
            random_il_coords(&d, coords[b]);
            offsets[b] = (uint32_t)rnd_in(0, 7) * 128u;
            offsets_seen |= 1 << (offsets[b] / 128u);
        }
        uint8_t *poison = malloc(arena), *got = malloc((size_t)arena * BOXES);
        rnd_bytes(poison, arena);
        run_boxes(&p, (const int32_t(*)[5])coords, offsets, BOXES, poison, arena, got, done);
        for (int b = 0; b < BOXES; b++) {
            check_box(k, b, &p, coords[b], offsets[b], poison, arena, got + (size_t)b * arena, done[b]);
            boxes++;
            oob += !box_inside(&d, coords[b]);
        }
        combos[d.interleave][d.swizzle]++;
        per_rank[d.rank]++;
        per_type[d.dtype]++;
        nan_fill += d.oob_fill == TMA_OOB_NAN;
        estride0 += d.element_stride[0] > 1u;
        free(poison);
        free(got);
        unplace(&p);
    }
    cr_log_info("interleaved loads: %d configurations, %d boxes (%d partly/wholly out of bounds), %d with NaN fill, %d "
                "with element_stride[0] > 1; ranks 3-5: %d %d %d; 16B x NONE/32B/64B/128B: %d %d %d %d; 32B x the same: %d %d %d %d; "
                "every box completed with expect-tx = tma_box_tx_bytes and matched the model byte for byte",
                configs, boxes, oob, nan_fill, estride0, per_rank[3], per_rank[4], per_rank[5], combos[1][0],
                combos[1][1], combos[1][2], combos[1][3], combos[2][0], combos[2][1], combos[2][2], combos[2][3]);
    if (configs >= 100) {
        cr_expect(offsets_seen == 0xFF, "not every 128-byte offset was tried");
        for (int il = 1; il <= 2; il++)
            for (int sw = 0; sw < 4; sw++)
                cr_expect(combos[il][sw] > 0, "interleave %d with swizzle %d never drawn", il, sw);
    }
    for (int t = 0; t < TMA_DTYPE_COUNT_ && configs >= 400; t++)
        cr_expect(per_type[t] > 0, "dtype %s never drawn", tma_dtype_name((tma_dtype)t));
}

/* The load that hung before libtma knew the interleaved expect-tx count (docs/HARDWARE.md): one f16 16 x 8 x 4 box
 * through INTERLEAVE_32B + SWIZZLE_32B, armed then with the element box (1,024 bytes) while the copy delivers 2,048.
 * Armed with tma_mbar_expect_box, 64 blocks at once, every one completes and lands the model's bytes. */
Test(gpu_interleave, the_box_that_hung_completes, .timeout = 60) {
    require_sm90();
    seed_rng("gpu_interleave.the_box_that_hung_completes");
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F16, .rank = 3, .global_dim = {16, 8, 4}, .global_stride = {512, 4096},
                        .box_dim = {16, 8, 4}, .interleave = TMA_INTERLEAVE_32B, .swizzle = TMA_SWIZZLE_32B};
    cr_assert_eq(tma_box_tx_bytes(&d), 2048u, "16 chunks of 32 bytes x 4 rows (dimension 1 is the slice index)");
    placed p;
    place(&p, &d);
    enum { N = 64 };
    const uint32_t arena = arena_for(&d);
    int32_t coords[N][5];
    uint32_t offsets[N], done[N];
    for (int b = 0; b < N; b++) {
        random_il_coords(&d, coords[b]);
        offsets[b] = (uint32_t)(b % 8) * 128u;
    }
    uint8_t *poison = malloc(arena), *got = malloc((size_t)arena * N);
    rnd_bytes(poison, arena);
    run_boxes(&p, (const int32_t(*)[5])coords, offsets, N, poison, arena, got, done);
    for (int b = 0; b < N; b++)
        check_box(0, b, &p, coords[b], offsets[b], poison, arena, got + (size_t)b * arena, done[b]);
    free(poison);
    free(got);
    unplace(&p);
    cr_log_info("the f16 16 x 8 x 4 INTERLEAVE_32B box: %d of %d loads completed with expect-tx %zu and matched the "
                "model", N, N, tma_box_tx_bytes(&d));
}
