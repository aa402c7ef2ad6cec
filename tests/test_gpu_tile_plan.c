/* gpu: tile plans on the silicon against the model of the whole tile. A planned tile is loaded window by window
 * (tma_tile_load_range; the whole tile at once, tma_tile_load, where it fits), each window's shared image comes
 * back, and every byte of the reassembled image must equal the model's (tma_model_load_tile_range per window, over
 * the same poison): the sub-boxes' bytes, their swizzle, the fill past the tensor's edge, and the poison left in
 * padding. Bytes are compared, so a NaN compares as its bits. The seed is logged; TMA_TEST_SEED replays it. */
#include "gpu_common.h"

#include <criterion/redirect.h>

#include "tile_plan_conformance.h"
#include "tma/tile_plan.h"

/* A tensor on both sides: host bytes for the model, the same bytes on the device; a plan of each. */
typedef struct placed_tile {
    tma_tile_plan host;  /* box_desc.global_address -> the host copy */
    tma_tile_plan dev;   /* box_desc.global_address -> the device copy */
    tma_tensor t;        /* encoded from dev.box_desc */
    uint8_t *h, *d;
} placed_tile;

static void place_tile(placed_tile *pt, const tma_tiled_desc *tile, const uint32_t *max_box) {
    const size_t bytes = tma_global_extent_bytes(tile);
    cr_assert(bytes > 0, "the tensor has no extent");
    pt->h = malloc(bytes);
    cr_assert(pt->h != NULL, "out of host memory");
    rnd_bytes(pt->h, bytes);
    CUDA_OK(cudaMalloc((void **)&pt->d, bytes));
    CUDA_OK(cudaMemcpy(pt->d, pt->h, bytes, cudaMemcpyHostToDevice));
    tma_tiled_desc dd = *tile;
    dd.global_address = pt->d;
    tma_diag diag;
    tma_status st = tma_tile_plan_make(&dd, max_box, &pt->dev, &diag);
    cr_assert(st == TMA_OK, "tma_tile_plan_make: %s: %s", tma_status_name(st), diag.message);
    st = tma_tensor_make(&pt->t, &pt->dev.box_desc, &diag);
    cr_assert(st == TMA_OK, "tma_tensor_make: %s: %s", tma_status_name(st), diag.message);
    pt->host = pt->dev;
    pt->host.box_desc.global_address = pt->h;
}

static void unplace_tile(placed_tile *pt) {
    free(pt->h);
    cudaFree(pt->d);
}

/* Run the kernel: blocks origins, windows of `window` sub-boxes at `offset`; the images come back in got
 * (host, blocks x smem_bytes), the poison they started from in poison (host, smem_bytes). */
static cudaError_t run_tile(const placed_tile *pt, const int32_t (*origins)[5], int blocks, uint32_t window,
                            uint32_t offset, const uint8_t *poison, uint8_t *got) {
    const size_t image = pt->dev.smem_bytes;
    int32_t(*dorigins)[5];
    uint8_t *dpoison, *dout;
    CUDA_OK(cudaMalloc((void **)&dorigins, (size_t)blocks * sizeof origins[0]));
    CUDA_OK(cudaMalloc((void **)&dpoison, image));
    CUDA_OK(cudaMalloc((void **)&dout, image * blocks));
    CUDA_OK(cudaMemcpy(dorigins, origins, (size_t)blocks * sizeof origins[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dpoison, poison, image, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dout, 0xC3, image * blocks)); /* neither poison nor data: a byte never copied out shows */
    const cudaError_t e = conf_tile_load(&pt->t, &pt->dev, (const int32_t(*)[5])dorigins, blocks, window, offset,
                                         dpoison, dout);
    if (e == cudaSuccess)
        CUDA_OK(cudaMemcpy(got, dout, image * blocks, cudaMemcpyDeviceToHost));
    cudaFree(dorigins);
    cudaFree(dpoison);
    cudaFree(dout);
    return e;
}

/* The model's image of the whole tile at `origin`, built as the kernel builds it: window [first, first + n) at
 * `offset` past a 1024-aligned base, over the poison of its place. */
static void model_windows(const tma_tile_plan *p, const int32_t origin[5], uint32_t window, uint32_t offset,
                          const uint8_t *poison, uint8_t *want) {
    const uint32_t w = window < p->count ? window : p->count;
    uint8_t *buf = malloc((size_t)offset + (size_t)w * p->box_stride);
    cr_assert(buf != NULL, "out of host memory");
    for (uint32_t first = 0; first < p->count; first += w) {
        const uint32_t n = p->count - first < w ? p->count - first : w;
        const size_t from = (size_t)first * p->box_stride, len = (size_t)n * p->box_stride;
        memcpy(buf + offset, poison + from, len);
        const tma_status st = tma_model_load_tile_range(p, origin, first, n, buf, offset + len, offset);
        cr_assert(st == TMA_OK, "the model refused a window the GPU loaded: %s", tma_status_name(st));
        memcpy(want + from, buf + offset, len);
    }
    free(buf);
}

static long first_difference(const uint8_t *a, const uint8_t *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return (long)i;
    return -1;
}

static void describe_tile(const tma_tile_plan *p, const int32_t o[5], uint32_t window, uint32_t offset, char *out,
                          size_t n) {
    char d[384];
    describe(&p->box_desc, o, d, sizeof d);
    snprintf(out, n, "tile {%u,%u,%u} as %u sub-boxes {%u,%u,%u} (stride %u), window %u at +%u; %s", p->tile_dim[0],
             p->tile_dim[1], p->tile_dim[2], p->count, p->box_dim[0], p->box_dim[1], p->box_dim[2], p->box_stride,
             window, offset, d);
}

/* Compare block b's image with the model; returns the bytes compared. */
static size_t check_image(int k, int b, const placed_tile *pt, const int32_t origin[5], uint32_t window,
                          uint32_t offset, const uint8_t *poison, const uint8_t *got) {
    const size_t image = pt->host.smem_bytes;
    uint8_t *want = malloc(image);
    cr_assert(want != NULL, "out of host memory");
    model_windows(&pt->host, origin, window, offset, poison, want);
    const long at = first_difference(got, want, image);
    if (at >= 0) {
        char what[640];
        describe_tile(&pt->host, origin, window, offset, what, sizeof what);
        cr_assert_fail("config %d block %d: GPU and model differ at image byte %ld (sub-box %ld): GPU 0x%02x, model "
                       "0x%02x, poison 0x%02x; %s",
                       k, b, at, at / (long)pt->host.box_stride, got[at], want[at], poison[at], what);
    }
    free(want);
    return image;
}

/* The shape: a 512 x 512 bf16 tile with the 128B swizzle is 512 KiB, more than a block's shared memory,
 * so it streams through windows of 6 sub-boxes (192 KiB) and each window's image is copied out. The whole image
 * then equals ONE model of the whole tile: the windows start 1024-aligned, so their swizzle phases are the
 * whole's. Three tiles: inside the tensor, past its far corner (fill), and before its origin (negative). */
Test(gpu_tile_plan, bf16_512x512_128B_in_windows, .timeout = 120) {
    require_sm90();
    seed_rng("gpu_tile_plan.bf16_512x512_128B_in_windows");
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, NULL, 1000, 1040, 1040 * 2, 512, 512, TMA_SWIZZLE_128B);
    d.oob_fill = rnd() % 2 ? TMA_OOB_NAN : TMA_OOB_ZERO;
    placed_tile pt;
    place_tile(&pt, &d, NULL);
    cr_assert(pt.dev.count == 16 && pt.dev.box_dim[0] == 64 && pt.dev.box_dim[1] == 256 &&
                  pt.dev.tx_bytes == 512u * 1024u && pt.dev.smem_bytes == 512u * 1024u,
              "the plan: %u sub-boxes of {%u, %u}, %u tx bytes", pt.dev.count, pt.dev.box_dim[0], pt.dev.box_dim[1],
              pt.dev.tx_bytes);
    const uint32_t window = tma_tile_plan_window(&pt.dev, 200u * 1024u);
    cr_assert_eq(window, 6u, "200 KiB hold 6 sub-boxes of 32 KiB");
    enum { BLOCKS = 3 };
    const int32_t origins[BLOCKS][5] = {{256, 200, 0, 0, 0}, {768, 640, 0, 0, 0}, {-64, -128, 0, 0, 0}};
    const size_t image = pt.dev.smem_bytes;
    uint8_t *poison = malloc(image), *got = malloc(image * BLOCKS), *whole = malloc(image);
    cr_assert(poison && got && whole, "out of host memory");
    rnd_bytes(poison, image);
    CUDA_OK(run_tile(&pt, origins, BLOCKS, window, 0, poison, got));
    size_t compared = 0;
    for (int b = 0; b < BLOCKS; b++) {
        compared += check_image(0, b, &pt, origins[b], window, 0, poison, got + (size_t)b * image);
        memcpy(whole, poison, image);
        cr_assert_eq(tma_model_load_tile(&pt.host, origins[b], whole, image, 0), TMA_OK, "model of the whole tile");
        const long at = first_difference(got + (size_t)b * image, whole, image);
        cr_assert(at < 0, "block %d: the GPU's 512 KiB image differs from the whole tile's model at byte %ld", b, at);
    }
    cr_log_info("big tiles: 512 x 512 bf16 128B (%s fill), 16 sub-boxes of 64 x 256 in windows of %u, 3 tiles (inside, "
                "past the far corner, before the origin): %zu bytes equal the model of the whole tile",
                d.oob_fill == TMA_OOB_NAN ? "NaN" : "zero", window, compared);
    free(poison);
    free(got);
    free(whole);
    unplace_tile(&pt);
}

/* A random tile larger than one box: ranks 2-3, every type and swizzle, dimension 0 past the swizzle span or past
 * 256 elements, dimension 1 past 256 at times, a tensor around it so that tiles reach past its edges. */
static tma_tiled_desc random_big_tile(uint32_t **max_box, uint32_t mb[5]) {
    for (;;) {
        tma_tiled_desc d;
        memset(&d, 0, sizeof d);
        d.dtype = (tma_dtype)(rnd() % TMA_DTYPE_COUNT_);
        d.rank = (uint32_t)rnd_in(2, 3);
        d.swizzle = (tma_swizzle)rnd_in(0, 3);
        d.l2_promotion = (tma_l2_promotion)rnd_in(0, 3);
        d.oob_fill = is_float_type(d.dtype) && rnd() % 2 ? TMA_OOB_NAN : TMA_OOB_ZERO;
        const uint32_t es = (uint32_t)tma_dtype_size(d.dtype), unit0 = 16 / es;
        const uint32_t span = tma_swizzle_span(d.swizzle), box0 = span ? span / es : 256u; /* one sub-box's width */
        d.box_dim[0] = unit0 * (uint32_t)rnd_in(1, 3 * box0 / unit0 + 2); /* up to 3 panels and more */
        d.box_dim[1] = rnd() % 4 == 0 ? (uint32_t)rnd_in(257, 600) : (uint32_t)rnd_in(1, 256);
        if (rnd() % 3 == 0)
            d.box_dim[1] = 8u * (uint32_t)rnd_in(1, 64);
        if (d.rank == 3)
            d.box_dim[2] = (uint32_t)rnd_in(1, 6);
        uint64_t stride = 0;
        for (uint32_t i = 0; i < d.rank; i++) {
            d.global_dim[i] = (uint64_t)rnd_in(d.box_dim[i] / 2 + 1, (int64_t)d.box_dim[i] * 2 + 8);
            if (i == 0)
                stride = (d.global_dim[0] * es + 15) / 16 * 16 + 16 * (uint64_t)rnd_in(0, 2);
            else {
                d.global_stride[i - 1] = stride;
                stride *= d.global_dim[i];
            }
        }
        *max_box = NULL;
        if (rnd() % 4 == 0) { /* smaller sub-boxes: more of them, smaller windows */
            mb[0] = 0, mb[1] = (uint32_t)rnd_in(1, 64), mb[2] = 0, mb[3] = 0, mb[4] = 0;
            *max_box = mb;
        }
        d.global_address = (void *)(uintptr_t)4096;
        tma_tile_plan p;
        /* a sub-box of at most 64 KiB, so that a 200 KiB window holds 3 at any offset */
        if (tma_tile_plan_make(&d, *max_box, &p, NULL) != TMA_OK || p.count < 2 || p.box_stride > (64u << 10) ||
            p.smem_bytes > (768u << 10) || tma_global_extent_bytes(&d) > (4u << 20))
            continue;
        return d;
    }
}

static void random_origin(const tma_tiled_desc *d, int32_t o[5]) {
    memset(o, 0, 5 * sizeof o[0]);
    const int32_t unit0 = 16 / (int32_t)tma_dtype_size(d->dtype);
    for (uint32_t i = 0; i < d->rank; i++) {
        int64_t x = rnd_in(-(int64_t)d->box_dim[i] / 2 - 2, (int64_t)d->global_dim[i] - (int64_t)d->box_dim[i] / 2);
        if (rnd() % 2 == 0 && d->global_dim[i] >= d->box_dim[i]) /* inside, half the time */
            x = rnd_in(0, (int64_t)(d->global_dim[i] - d->box_dim[i]));
        if (i == 0)
            x = (x >= 0 ? x / unit0 : -((-x + unit0 - 1) / unit0)) * unit0;
        o[i] = (int32_t)x;
    }
}

Test(gpu_tile_plan, random_big_tiles, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_tile_plan.random_big_tiles");
    const int configs = config_count(300);
    enum { BLOCKS = 2 };
    int per_rank[4] = {0}, per_swizzle[4] = {0}, per_type[TMA_DTYPE_COUNT_] = {0};
    int whole = 0, windowed = 0, oob_tiles = 0, nan_fill = 0, limited = 0;
    uint64_t sub_boxes = 0, windows = 0;
    size_t compared = 0;
    for (int k = 0; k < configs; k++) {
        uint32_t mb[5], *max_box;
        tma_tiled_desc d = random_big_tile(&max_box, mb);
        placed_tile pt;
        place_tile(&pt, &d, max_box);
        const tma_tile_plan *p = &pt.dev;
        /* the window: the whole tile when it fits (half the time), else a random share of 200 KiB */
        const uint32_t most = tma_tile_plan_window(p, 200u * 1024u);
        cr_assert(most >= 1, "config %d: not one sub-box fits in 200 KiB (%u bytes)", k, p->box_stride);
        uint32_t window = (uint32_t)rnd_in(1, most);
        if (most == p->count && rnd() % 2 == 0)
            window = p->count;
        const uint32_t offset = (uint32_t)rnd_in(0, 7) * 128u;
        if ((size_t)offset + (size_t)window * p->box_stride > 200u * 1024u)
            window = (uint32_t)((200u * 1024u - offset) / p->box_stride);
        cr_assert(window >= 1, "config %d: no window", k);

        int32_t origins[BLOCKS][5];
        for (int b = 0; b < BLOCKS; b++) {
            random_origin(&d, origins[b]);
            for (uint32_t i = 0; i < d.rank; i++)
                if (origins[b][i] < 0 || (uint64_t)origins[b][i] + d.box_dim[i] > d.global_dim[i]) {
                    oob_tiles++;
                    break;
                }
        }
        const size_t image = p->smem_bytes;
        uint8_t *poison = malloc(image), *got = malloc(image * BLOCKS);
        cr_assert(poison && got, "out of host memory");
        rnd_bytes(poison, image);
        const cudaError_t e = run_tile(&pt, (const int32_t(*)[5])origins, BLOCKS, window, offset, poison, got);
        if (e != cudaSuccess) {
            char what[640];
            describe_tile(p, origins[0], window, offset, what, sizeof what);
            cr_assert_fail("config %d: the kernel failed: %s; %s", k, cudaGetErrorString(e), what);
        }
        for (int b = 0; b < BLOCKS; b++)
            compared += check_image(k, b, &pt, origins[b], window, offset, poison, got + (size_t)b * image);
        per_rank[d.rank]++;
        per_swizzle[d.swizzle]++;
        per_type[d.dtype]++;
        nan_fill += d.oob_fill == TMA_OOB_NAN;
        limited += max_box != NULL;
        sub_boxes += (uint64_t)p->count * BLOCKS;
        windows += (uint64_t)((p->count + window - 1) / window) * BLOCKS;
        if (window >= p->count)
            whole++;
        else
            windowed++;
        free(poison);
        free(got);
        unplace_tile(&pt);
    }
    cr_log_info("big tiles: %d random configurations x %d tiles (%d tiles reaching past the tensor, %d configurations "
                "with NaN fill, %d with max_box): %llu sub-boxes in %llu windows (%d configurations loaded whole, %d "
                "in windows); ranks 2/3: %d %d; swizzle NONE/32/64/128: %d %d %d %d; %zu image bytes equal the model",
                configs, BLOCKS, oob_tiles, nan_fill, limited, (unsigned long long)sub_boxes,
                (unsigned long long)windows, whole, windowed, per_rank[2], per_rank[3], per_swizzle[0], per_swizzle[1],
                per_swizzle[2], per_swizzle[3], compared);
    for (int t = 0; t < TMA_DTYPE_COUNT_ && configs >= 200; t++)
        cr_expect(per_type[t] > 0, "dtype %s never drawn", tma_dtype_name((tma_dtype)t));
    cr_expect(configs < 50 || (whole > 0 && windowed > 0 && oob_tiles > 0), "whole, windowed and edge tiles all drawn");
}

/* Checked mode: a map encoded from another box than the plan's sub-box would deliver other byte counts than the
 * expect-tx (a hang, or a barrier that completes early); the issuer refuses it with the host's words. */
Test(gpu_tile_plan, checked_mode_refuses_a_map_of_another_box, .init = cr_redirect_stdout, .timeout = 60) {
    require_sm90();
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, NULL, 512, 512, 1024, 512, 512, TMA_SWIZZLE_128B);
    placed_tile pt;
    place_tile(&pt, &d, NULL);
    tma_tiled_desc other = pt.dev.box_desc;
    other.box_dim[1] = 128; /* a valid map, of half the plan's rows */
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&pt.t, &other, &diag), TMA_OK, "%s", diag.message);
    const int32_t origins[1][5] = {{0, 0, 0, 0, 0}};
    uint8_t *poison = calloc(pt.dev.smem_bytes, 1), *got = malloc(pt.dev.smem_bytes);
    const cudaError_t e = run_tile(&pt, origins, 1, 4, 0, poison, got);
    free(poison);
    free(got);
    cr_assert(e != cudaSuccess, "a tile load through a map of another box completed");
    char text[4096];
    captured_stdout(text, sizeof text);
    tma_tile_refusal w;
    memset(&w, 0, sizeof w);
    TMA_TILE_REFUSE_(&w, MAP_MISMATCH, tma_arg_u(1), tma_arg_u(128), tma_arg_u(16384), tma_arg_u(256),
                     tma_arg_u(32768));
    char host[TMA_DIAG_MESSAGE_BYTES];
    tma_tile_refusal_format(&w, host, sizeof host);
    cr_assert(strstr(text, "TMA_ERR_ARG") != NULL && strstr(text, host) != NULL &&
                  strstr(text, "block (0,0,0) thread 0") != NULL,
              "checked mode did not name the mismatch (CUDA said %s); device output:\n%s\nexpected:\n%s",
              cudaGetErrorString(e), text, host);
    cr_log_info("checked mode turned the mismatched map into: %.240s (then %s)", text, cudaGetErrorName(e));
    unplace_tile(&pt);
}
