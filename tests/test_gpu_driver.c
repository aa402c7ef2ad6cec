/* gpu: tma_check_tiled against the driver's own cuTensorMapEncodeTiled, on random parameter sets drawn
 * near every limit. They must agree, except where libtma is deliberately stricter (the table below, each
 * with its reason; docs/HARDWARE.md has the same table). The driver is opened here with dlopen, as the
 * library does, so this binary also starts on machines with no driver (and skips). */
#include <dlfcn.h>

#include <cuda.h> /* the driver API, called directly here */

#include "gpu_common.h"

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* Rules where libtma refuses what the driver encodes. */
static const struct {
    tma_status status;
    const char *why;
} stricter[] = {
    {TMA_ERR_GLOBAL_ADDRESS_NULL, "a NULL tensor faults at the first copy"},
    {TMA_ERR_GLOBAL_STRIDE_OVERLAP, "overlapping rows: well defined for loads, a race for stores"},
    {TMA_ERR_BOX_SMEM, "a box over 227 KiB can never land in a Hopper block's shared memory"},
    {TMA_ERR_GLOBAL_EXTENT, "a tensor past the end of the 64-bit address space"},
    {TMA_ERR_ELEMENT_STRIDE, "element_stride[0] != 1 without interleave is ignored by the hardware"},
    {TMA_ERR_SWIZZLE_UNSUPPORTED, "128B_ATOM swizzles are compute capability 10.x modes"},
    {TMA_ERR_DTYPE, "packed 16U4/16U6 types are compute capability 10.x types"},
};

static int deliberately_stricter(tma_status s) {
    for (size_t i = 0; i < sizeof stricter / sizeof stricter[0]; i++)
        if (stricter[i].status == s)
            return 1;
    return 0;
}

static uint64_t pick_u64(const uint64_t *v, size_t n) { return v[rnd() % n]; }
#define PICK(arr) pick_u64(arr, sizeof(arr) / sizeof(arr[0]))

/* A descriptor that is valid most of the time, with one to three fields pushed to, just past or far
 * beyond a limit. Element strides are never 0 here: libtma reads 0 as 1, the driver refuses it. */
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
        switch (rnd() % 12) {
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
        default: /* an interleaved layout, which brings its own rules */
            d.interleave = (tma_interleave)rnd_in(1, 2);
            d.rank = (uint32_t)rnd_in(2, 5);
            break;
        }
    }
    return d;
}

typedef struct tally {
    encode_fn encode;
    int sets, both_ok, both_refuse, mismatches;
    int stricter_count[sizeof stricter / sizeof stricter[0]];
} tally;

/* One parameter set through both; a disagreement that is not a listed stricter rule is logged. */
static void compare(tally *t, const tma_tiled_desc *d) {
    tma_diag diag;
    tma_status ours = tma_check_tiled(d, &diag);
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
    if (ours == TMA_OK && theirs == CUDA_SUCCESS) {
        t->both_ok++;
    } else if (ours != TMA_OK && theirs != CUDA_SUCCESS) {
        t->both_refuse++;
    } else if (ours != TMA_OK && deliberately_stricter(ours)) {
        for (size_t i = 0; i < sizeof stricter / sizeof stricter[0]; i++)
            t->stricter_count[i] += stricter[i].status == ours;
    } else {
        char what[512];
        int32_t zero[5] = {0};
        describe(d, zero, what, sizeof what);
        if (t->mismatches++ < 30)
            cr_log_error("set %d: libtma says %s (%s), the driver says %d; interleave %d l2 %d address %p; %s", t->sets,
                         tma_status_name(ours), diag.message, (int)theirs, (int)d->interleave, (int)d->l2_promotion,
                         d->global_address, what);
    }
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

    cr_log_info("checker vs driver: %d sets: %d accepted by both, %d refused by both, %d disagreements", t.sets,
                t.both_ok, t.both_refuse, t.mismatches);
    for (size_t i = 0; i < sizeof stricter / sizeof stricter[0]; i++)
        cr_log_info("  libtma stricter, %s: %d sets (%s)", tma_status_name(stricter[i].status), t.stricter_count[i],
                    stricter[i].why);
    cr_assert(t.mismatches == 0, "%d disagreements between tma_check_tiled and cuTensorMapEncodeTiled (listed above)",
              t.mismatches);
    cr_assert(t.both_ok > sets / 10 && t.both_refuse > sets / 10, "the draw is lopsided: %d valid, %d invalid",
              t.both_ok, t.both_refuse);
}
