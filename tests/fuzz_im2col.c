/* libFuzzer target: tma_check_im2col (and _all), tma_check_im2col_coords, the footprints and the CPU model of im2col
 * loads on arbitrary descriptors, coordinates, offsets and destinations.
 *
 * Every descriptor is checked, and the three checkers must agree (the first status of tma_check_im2col_all is
 * tma_check_im2col's). One the checker accepts, whose image is small enough to allocate, goes through
 * tma_model_load_im2col: the image is allocated to exactly its extent and shared memory to exactly dst_offset +
 * tma_im2col_smem_bytes + a guard (AddressSanitizer catches a read or write past either), and the bytes before
 * dst_offset and in the guard must come back untouched. The model must accept exactly the loads
 * tma_check_im2col_coords accepts (given a 128-aligned destination and room), and refuse a buffer one byte short
 * without writing anything.
 *
 * Build: cmake -B build-fuzz -DCMAKE_C_COMPILER=clang -DTMA_FUZZ=ON -DTMA_SANITIZE=address,undefined
 * Run:   build-fuzz/tests/fuzz_im2col -max_total_time=60 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reader.h"
#include "tma/tma.h"

enum { MAX_GLOBAL_BYTES = 1 << 20, GUARD = 256 };

/* Mostly small image sizes, sometimes the driver's 32-bit edges, sometimes anything. */
static uint64_t take_dim(reader *r) {
    switch (take(r, 1) % 8) {
    case 0: return take(r, 8);
    case 1: return (1ull << 31) + (take(r, 1) % 5) - 2;
    case 2: return (1ull << 32) + (take(r, 1) % 3) - 1;
    default: return take(r, 1) % 40;
    }
}

/* Corners mostly near 0, sometimes at or past the rank's range (32767, 127, 15). */
static int32_t take_corner(reader *r) {
    switch (take(r, 1) % 6) {
    case 0: return (int32_t)(uint32_t)take(r, 4);
    case 1: return (int32_t)(take(r, 2) % 70) - 35;
    default: return (int32_t)(take(r, 1) % 9) - 4;
    }
}

/* Coordinates mostly near the box, sometimes anything (negative channels and images too). */
static int32_t take_coord(reader *r) {
    return take(r, 1) % 4 == 0 ? (int32_t)(uint32_t)take(r, 4) : (int32_t)(take(r, 1) % 96) - 40;
}

static void take_desc(reader *r, tma_im2col_desc *d) {
    static const uint32_t cpps[] = {1, 2, 4, 8, 16, 24, 32, 48, 64, 128, 256, 257, 0};
    memset(d, 0, sizeof *d);
    d->dtype = (tma_dtype)(take(r, 1) % 18);
    d->rank = (uint32_t)(take(r, 1) % 7);
    d->interleave = (tma_interleave)(take(r, 1) % 4);
    d->swizzle = (tma_swizzle)(take(r, 1) % 8);
    d->l2_promotion = (tma_l2_promotion)(take(r, 1) % 5);
    d->oob_fill = (tma_oob_fill)(take(r, 1) % 3);
    d->channels_per_pixel = take(r, 1) % 4 == 0 ? (uint32_t)take(r, 2) : cpps[take(r, 1) % 13];
    d->pixels_per_column = take(r, 1) % 4 == 0 ? (uint32_t)take(r, 2) % 1100 : (uint32_t)take(r, 1) % 70;
    for (int i = 0; i < 5; i++) {
        d->global_dim[i] = take_dim(r);
        d->element_stride[i] = (uint32_t)(take(r, 1) % 10);
    }
    for (int i = 0; i < 4; i++)
        d->global_stride[i] = take(r, 1) % 4 == 0 ? take(r, 8) : (take(r, 2) % 1200) * 16;
    for (int i = 0; i < 3; i++) {
        d->pixel_box_lower[i] = take_corner(r);
        d->pixel_box_upper[i] = take_corner(r);
    }
}

static int untouched(const uint8_t *p, size_t n, uint8_t v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    tma_im2col_desc d;
    take_desc(&r, &d);
    const uint32_t misalign = (uint32_t)(take(&r, 1) % 4) * 8;
    int32_t coord[5];
    uint16_t offset[3];
    for (int i = 0; i < 5; i++)
        coord[i] = take_coord(&r);
    for (int i = 0; i < 3; i++)
        offset[i] = (uint16_t)(take(&r, 1) % 4 == 0 ? take(&r, 2) : take(&r, 1) % 40);
    const uint32_t dst = (uint32_t)(take(&r, 1) % 16) * 64; /* every other one off the 128-byte grid */
    const int short_buffer = take(&r, 1) % 8 == 0;

    /* The checkers, with a stand-in address: they never dereference it. */
    d.global_address = (void *)(uintptr_t)(4096 + misalign);
    tma_diag diags[8];
    size_t count = 0;
    const tma_status first = tma_check_im2col_all(&d, diags, 8, &count);
    if ((first == TMA_OK) != (count == 0) || tma_check_im2col(&d, NULL) != first)
        abort();
    const tma_status coords = tma_check_im2col_coords(&d, coord, offset);
    if (first != TMA_OK) {
        if (coords == TMA_OK) /* a broken descriptor is never a valid copy */
            abort();
        return 0;
    }
    const size_t smem = tma_im2col_smem_bytes(&d);
    if (tma_im2col_tx_bytes(&d) == 0 || tma_im2col_tx_bytes(&d) > smem || smem > TMA_MAX_BOX_SMEM_BYTES)
        abort();
    const tma_tiled_desc as_tiled = tma_rule_im2col_as_tiled(&d);
    const uint64_t extent = tma_rule_global_extent(&as_tiled);
    if (extent == 0)
        abort();
    if (extent > MAX_GLOBAL_BYTES)
        return 0;

    /* Sized exactly: the image ends where its allocation ends, shared memory GUARD bytes after the copy. */
    void *global = NULL;
    const size_t smem_bytes = dst + smem + GUARD;
    uint8_t *sm = malloc(smem_bytes);
    if (posix_memalign(&global, 32, misalign + extent) != 0 || sm == NULL) {
        free(global);
        free(sm);
        return 0;
    }
    d.global_address = (uint8_t *)global + misalign;
    memset(global, 0x5A, misalign + extent);
    memset(sm, 0xA5, smem_bytes);
    const size_t given = short_buffer ? dst + smem - 1 : smem_bytes;
    const tma_status model = tma_model_load_im2col(&d, coord, offset, sm, given, dst);
    const int expect_ok = coords == TMA_OK && dst % TMA_SMEM_ALIGN == 0 && d.interleave == TMA_INTERLEAVE_NONE &&
                          !short_buffer;
    if ((model == TMA_OK) != expect_ok)
        abort(); /* the model accepts exactly the loads the checker accepts, into a buffer with room */
    if (model != TMA_OK && !untouched(sm, smem_bytes, 0xA5))
        abort(); /* a refused load writes nothing */
    if (!untouched(sm, dst, 0xA5) || !untouched(sm + dst + smem, GUARD, 0xA5))
        abort(); /* nothing outside [dst, dst + tma_im2col_smem_bytes) */
    free(global);
    free(sm);
    return 0;
}
