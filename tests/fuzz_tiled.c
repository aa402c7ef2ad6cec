/* libFuzzer target: tma_check_tiled, the footprint helpers and the CPU model on arbitrary descriptors.
 *
 * Every descriptor is checked. One the checker accepts, and whose tensor is small enough to allocate,
 * also goes through a model load and a model store into buffers sized exactly as the footprint helpers
 * say: AddressSanitizer then proves that nothing the checker accepts makes the model read or write
 * outside what tma_global_extent_bytes / tma_box_smem_bytes promise.
 *
 * Build: cmake -B build-fuzz -DCMAKE_C_COMPILER=clang -DTMA_FUZZ=ON -DTMA_SANITIZE=address,undefined
 * Run:   build-fuzz/tests/fuzz_tiled -max_total_time=60 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reader.h"
#include "tma/tma.h"

enum { MAX_GLOBAL_BYTES = 1 << 20 };

/* Mostly small values near the limits, sometimes anything. */
static uint64_t take_dim(reader *r) {
    uint8_t kind = (uint8_t)take(r, 1);
    switch (kind % 8) {
    case 0: return take(r, 8);
    case 1: return (1ull << 32) + (take(r, 1) % 3) - 1;
    default: return take(r, 1) % 70;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = (tma_dtype)(take(&r, 1) % 18);
    d.rank = (uint32_t)(take(&r, 1) % 7);
    d.interleave = (tma_interleave)(take(&r, 1) % 4);
    d.swizzle = (tma_swizzle)(take(&r, 1) % 8);
    d.l2_promotion = (tma_l2_promotion)(take(&r, 1) % 5);
    d.oob_fill = (tma_oob_fill)(take(&r, 1) % 3);
    d.flags = (uint32_t)(take(&r, 1) % 8); /* TMA_DESC_ALLOW_OVERLAP, _TEMPLATE, _STORE in every combination */
    uint32_t misalign = (uint32_t)(take(&r, 1) % 4) * 8;
    for (int i = 0; i < 5; i++) {
        d.global_dim[i] = take_dim(&r);
        d.box_dim[i] = (uint32_t)(take(&r, 1) % 2 ? take(&r, 2) % 300 : take(&r, 1) % 20);
        d.element_stride[i] = (uint32_t)(take(&r, 1) % 10);
    }
    for (int i = 0; i < 4; i++)
        d.global_stride[i] = take(&r, 1) % 4 == 0 ? take(&r, 8) : (take(&r, 2) % 600) * 8;
    int32_t coord[5];
    for (int i = 0; i < 5; i++)
        coord[i] = (int32_t)(take(&r, 1) % 4 == 0 ? (uint32_t)take(&r, 4) : (uint32_t)(take(&r, 1) % 96) - 32u);
    uint32_t offset = (uint32_t)(take(&r, 1) % 12) * 64;

    /* First pass with a stand-in address: the checker never dereferences it. */
    d.global_address = (void *)(uintptr_t)(4096 + misalign);
    tma_diag diags[8];
    size_t count = 0;
    tma_status first = tma_check_tiled_all(&d, diags, 8, &count);
    if ((first == TMA_OK) != (count == 0) || tma_check_tiled(&d, NULL) != first)
        abort();
    if (first != TMA_OK || d.interleave != TMA_INTERLEAVE_NONE)
        return 0;

    size_t extent = tma_global_extent_bytes(&d);
    size_t smem_bytes = offset + tma_box_smem_bytes(&d);
    if (extent == 0 || tma_box_tx_bytes(&d) > tma_box_smem_bytes(&d))
        abort();
    if (extent > MAX_GLOBAL_BYTES)
        return 0;

    /* Sized exactly: the tensor ends where the allocation ends, so one byte too far is an ASan report. */
    void *global = NULL;
    uint8_t *smem = malloc(smem_bytes);
    if (posix_memalign(&global, 32, misalign + extent) != 0 || smem == NULL) {
        free(global);
        free(smem);
        return 0;
    }
    d.global_address = (uint8_t *)global + misalign;
    if (tma_check_tiled(&d, NULL) == TMA_OK) {
        memset(global, 0x5A, misalign + extent);
        memset(smem, 0xA5, smem_bytes);
        tma_model_load_tiled(&d, coord, smem, smem_bytes, offset);
        tma_model_store_tiled(&d, coord, smem, smem_bytes, offset);
    }
    free(global);
    free(smem);
    return 0;
}
