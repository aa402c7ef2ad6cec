/* gpu: im2col loads on the silicon against tma_model_load_im2col, byte for byte over a poisoned arena (plain,
 * L2-hinted, and multicast in a cluster of two); the checker tma_check_im2col against the driver's
 * cuTensorMapEncodeIm2col near every limit; checked mode's refusal of a start outside the bounding box; and the
 * loads the PTX ISA leaves open (offsets past its ranges, negative channel and image starts), each in a child process
 * (im2col_probe), held to tma_check_im2col_coords: it must refuse what faults and accept what works. Random
 * configurations; the seed is logged and TMA_TEST_SEED replays it. */
#define _POSIX_C_SOURCE 200809L /* fork, execv, waitpid, readlink, mkstemp */
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h> /* the driver API, called directly by the agreement test */

#include "gpu_common.h"
#include "im2col_conformance.h"
#include "im2col_probe.h"

enum { LOADS_PER_CONFIG = 4 };

static size_t extent_of(const tma_im2col_desc *d) {
    const tma_tiled_desc t = tma_rule_im2col_as_tiled(d);
    return (size_t)tma_rule_global_extent(&t);
}

/* A random valid im2col descriptor with a small image (<= 512 KiB) and a copy of <= 24 KiB of shared memory.
 * global_address is a stand-in; the caller places the tensor. */
static tma_im2col_desc random_im2col(void) {
    for (;;) {
        tma_im2col_desc d;
        memset(&d, 0, sizeof d);
        d.dtype = (tma_dtype)(rnd() % TMA_DTYPE_COUNT_);
        d.rank = (uint32_t)rnd_in(3, 5);
        d.swizzle = (tma_swizzle)rnd_in(0, 3);
        d.l2_promotion = (tma_l2_promotion)rnd_in(0, 3);
        d.oob_fill = is_float_type(d.dtype) && rnd() % 2 ? TMA_OOB_NAN : TMA_OOB_ZERO;
        const uint32_t esize = (uint32_t)tma_dtype_size(d.dtype), span = tma_swizzle_span(d.swizzle);
        const uint32_t chunks = (uint32_t)rnd_in(1, span ? span / 16 : 16);
        d.channels_per_pixel = chunks * 16 / esize;
        if (d.channels_per_pixel > 256)
            continue;
        d.global_dim[0] = (uint64_t)rnd_in(1, d.channels_per_pixel + 16);
        const uint32_t spatial = d.rank - 2, max_dim = d.rank == 3 ? 12 : d.rank == 4 ? 7 : 4;
        for (uint32_t i = 1; i <= spatial; i++) {
            d.global_dim[i] = (uint64_t)rnd_in(1, max_dim);
            d.pixel_box_lower[i - 1] = (int32_t)rnd_in(-3, 2);
            d.pixel_box_upper[i - 1] = (int32_t)rnd_in(-3, 2);
        }
        d.global_dim[d.rank - 1] = (uint64_t)rnd_in(1, 3);
        for (uint32_t i = 1; i < d.rank; i++)
            d.element_stride[i] = rnd() % 4 == 0 ? (uint32_t)rnd_in(2, 4) : 1;
        d.pixels_per_column = (uint32_t)rnd_in(1, 64);
        uint64_t stride = (d.global_dim[0] * esize + 15) / 16 * 16 + 16 * (uint64_t)rnd_in(0, 1);
        for (uint32_t i = 1; i < d.rank; i++) {
            d.global_stride[i - 1] = stride;
            stride = stride * d.global_dim[i] + 16 * (uint64_t)rnd_in(0, 1);
        }
        d.global_address = (const void *)(uintptr_t)4096;
        if (tma_check_im2col(&d, NULL) == TMA_OK && extent_of(&d) <= (1u << 19) &&
            tma_im2col_smem_bytes(&d) <= 24 * 1024)
            return d;
    }
}

/* Random per-copy arguments that pass tma_check_im2col_coords: channel start >= 0 on the 16-byte grid (partly past
 * dim C at times), spatial starts anywhere in the bounding box, n in 0..N (N: past the last image), offsets 0..4. */
static void random_copy(const tma_im2col_desc *d, int32_t c[5], uint16_t o[3]) {
    memset(c, 0, 5 * sizeof c[0]);
    memset(o, 0, 3 * sizeof o[0]);
    const int32_t step = 16 / (int32_t)tma_dtype_size(d->dtype);
    c[0] = (int32_t)rnd_in(0, (int64_t)d->global_dim[0] / step + 1) * step;
    for (uint32_t i = 0; i + 2 < d->rank; i++) {
        c[i + 1] = (int32_t)rnd_in(d->pixel_box_lower[i], (int64_t)d->global_dim[i + 1] + d->pixel_box_upper[i] - 1);
        o[i] = (uint16_t)rnd_in(0, 4);
    }
    c[d->rank - 1] = (int32_t)rnd_in(0, (int64_t)d->global_dim[d->rank - 1]);
}

static void describe_im2col(const tma_im2col_desc *d, const int32_t c[5], const uint16_t o[3], char *out, size_t n) {
    snprintf(out, n,
             "rank %u %s swizzle %s oob %d dims {%llu,%llu,%llu,%llu,%llu} strides {%llu,%llu,%llu,%llu} lower "
             "{%d,%d,%d} upper {%d,%d,%d} cpp %u ppc %u estride {%u,%u,%u,%u,%u} coord {%d,%d,%d,%d,%d} offsets "
             "{%u,%u,%u}",
             d->rank, tma_dtype_name(d->dtype), tma_swizzle_name(d->swizzle), (int)d->oob_fill,
             (unsigned long long)d->global_dim[0], (unsigned long long)d->global_dim[1],
             (unsigned long long)d->global_dim[2], (unsigned long long)d->global_dim[3],
             (unsigned long long)d->global_dim[4], (unsigned long long)d->global_stride[0],
             (unsigned long long)d->global_stride[1], (unsigned long long)d->global_stride[2],
             (unsigned long long)d->global_stride[3], d->pixel_box_lower[0], d->pixel_box_lower[1],
             d->pixel_box_lower[2], d->pixel_box_upper[0], d->pixel_box_upper[1], d->pixel_box_upper[2],
             d->channels_per_pixel, d->pixels_per_column, d->element_stride[0], d->element_stride[1],
             d->element_stride[2], d->element_stride[3], d->element_stride[4], c[0], c[1], c[2], c[3], c[4], o[0], o[1],
             o[2]);
}

/* The image on both sides: host bytes for the model, the same bytes on the device behind the map. */
typedef struct placed {
    tma_im2col_desc host;
    tma_tensor dev;
    uint8_t *h, *d;
} placed;

static void place(placed *p, const tma_im2col_desc *d) {
    const size_t bytes = extent_of(d);
    p->h = malloc(bytes);
    cr_assert(p->h != NULL, "out of host memory");
    rnd_bytes(p->h, bytes);
    CUDA_OK(cudaMalloc((void **)&p->d, bytes));
    CUDA_OK(cudaMemcpy(p->d, p->h, bytes, cudaMemcpyHostToDevice));
    tma_im2col_desc dd = *d;
    dd.global_address = p->d;
    tma_diag diag;
    const tma_status st = tma_tensor_make_im2col(&p->dev, &dd, &diag);
    cr_assert(st == TMA_OK, "tma_tensor_make_im2col: %s: %s", tma_status_name(st), diag.message);
    p->host = *d;
    p->host.global_address = p->h;
}

static void unplace(placed *p) {
    free(p->h);
    cudaFree(p->d);
}

/* n loads through the conformance kernel; the arenas come back in got (host, n x arena). */
static cudaError_t run_loads_mode(const tma_tensor *t, const int32_t (*c)[5], const uint16_t (*o)[3],
                                  const uint32_t *dst, int n, const uint8_t *poison, uint32_t arena, uint8_t *got,
                                  int tiled) {
    int32_t(*dc)[5];
    uint16_t(*dof)[3];
    uint32_t *ddst;
    uint8_t *dpoison, *dout;
    CUDA_OK(cudaMalloc((void **)&dc, (size_t)n * sizeof c[0]));
    CUDA_OK(cudaMalloc((void **)&dof, (size_t)n * sizeof o[0]));
    CUDA_OK(cudaMalloc((void **)&ddst, (size_t)n * sizeof dst[0]));
    CUDA_OK(cudaMalloc((void **)&dpoison, arena));
    CUDA_OK(cudaMalloc((void **)&dout, (size_t)arena * n));
    CUDA_OK(cudaMemcpy(dc, c, (size_t)n * sizeof c[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dof, o, (size_t)n * sizeof o[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(ddst, dst, (size_t)n * sizeof dst[0], cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dpoison, poison, arena, cudaMemcpyHostToDevice));
    const cudaError_t e =
        i2c_load(t, (const int32_t(*)[5])dc, (const uint16_t(*)[3])dof, ddst, n, dpoison, arena, dout, tiled);
    if (e == cudaSuccess)
        CUDA_OK(cudaMemcpy(got, dout, (size_t)arena * n, cudaMemcpyDeviceToHost));
    cudaFree(dc);
    cudaFree(dof);
    cudaFree(ddst);
    cudaFree(dpoison);
    cudaFree(dout);
    return e;
}

static cudaError_t run_loads(const tma_tensor *t, const int32_t (*c)[5], const uint16_t (*o)[3], const uint32_t *dst,
                             int n, const uint8_t *poison, uint32_t arena, uint8_t *got) {
    return run_loads_mode(t, c, o, dst, n, poison, arena, got, 0);
}

Test(gpu_im2col, loads_match_model, .timeout = 300) {
    require_sm90();
    const uint64_t seed = seed_rng("gpu_im2col.loads_match_model");
    const int configs = config_count(500);
    int loads = 0, per_rank[6] = {0}, per_swizzle[4] = {0}, per_type[TMA_DTYPE_COUNT_] = {0}, nan_fill = 0;
    int past_last_image = 0, channel_overhang = 0, strided = 0, wrapped = 0;
    for (int k = 0; k < configs; k++) {
        const tma_im2col_desc d = random_im2col();
        placed p;
        place(&p, &d);
        const uint32_t arena = (uint32_t)(1024 + (tma_im2col_smem_bytes(&d) + 127) / 128 * 128);
        int32_t c[LOADS_PER_CONFIG][5];
        uint16_t o[LOADS_PER_CONFIG][3];
        uint32_t dst[LOADS_PER_CONFIG];
        for (int b = 0; b < LOADS_PER_CONFIG; b++) {
            random_copy(&d, c[b], o[b]);
            dst[b] = (uint32_t)rnd_in(0, 7) * 128;
            cr_assert_eq(tma_check_im2col_coords(&d, c[b], o[b]), TMA_OK, "the generator made a refused copy");
        }
        uint8_t *poison = malloc(arena), *got = malloc((size_t)arena * LOADS_PER_CONFIG), *want = malloc(arena);
        rnd_bytes(poison, arena);
        CUDA_OK(run_loads(&p.dev, (const int32_t(*)[5])c, (const uint16_t(*)[3])o, dst, LOADS_PER_CONFIG, poison,
                          arena, got));
        for (int b = 0; b < LOADS_PER_CONFIG; b++) {
            memcpy(want, poison, arena);
            const tma_status st = tma_model_load_im2col(&p.host, c[b], o[b], want, arena, dst[b]);
            cr_assert(st == TMA_OK, "model refused a load the GPU ran: %s", tma_status_name(st));
            for (size_t i = 0; i < arena; i++)
                if (got[(size_t)b * arena + i] != want[i]) {
                    char what[768];
                    describe_im2col(&d, c[b], o[b], what, sizeof what);
                    cr_assert_fail("seed %llu config %d load %d: GPU and model differ at arena byte %zu (dst %u): GPU "
                                   "0x%02x, model 0x%02x, poison 0x%02x; %s",
                                   (unsigned long long)seed, k, b, i, dst[b], got[(size_t)b * arena + i], want[i],
                                   poison[i], what);
                }
            loads++;
            /* how far the walk can reach: pixels_per_column / pixels per image row */
            const int64_t wbox = (int64_t)d.global_dim[1] + d.pixel_box_upper[0] - d.pixel_box_lower[0];
            wrapped += (int64_t)d.pixels_per_column * d.element_stride[1] > wbox;
            past_last_image += (uint64_t)c[b][d.rank - 1] == d.global_dim[d.rank - 1];
            channel_overhang += c[b][0] < 0 || (uint64_t)c[b][0] + d.channels_per_pixel > d.global_dim[0];
        }
        per_rank[d.rank]++;
        per_swizzle[d.swizzle]++;
        per_type[d.dtype]++;
        nan_fill += d.oob_fill == TMA_OOB_NAN;
        for (uint32_t i = 1; i < d.rank; i++)
            if (d.element_stride[i] > 1) {
                strided++;
                break;
            }
        free(poison);
        free(got);
        free(want);
        unplace(&p);
    }
    cr_log_info("im2col loads: seed %llu: %d configurations, %d loads, every byte of the poisoned arenas equal to the "
                "model; ranks 3/4/5: %d/%d/%d configs; swizzle none/32/64/128: %d/%d/%d/%d; %d NaN fill, %d with "
                "element strides; loads: %d wrapping rows, %d starting past the last image, %d with channels outside "
                "dim C",
                (unsigned long long)seed, configs, loads, per_rank[3], per_rank[4], per_rank[5], per_swizzle[0],
                per_swizzle[1], per_swizzle[2], per_swizzle[3], nan_fill, strided, wrapped, past_last_image,
                channel_overhang);
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++)
        cr_log_info("  %s: %d configs", tma_dtype_name((tma_dtype)t), per_type[t]);
}

/* ---------------------------------------------------------------------------------------------
 * The checker against cuTensorMapEncodeIm2col.
 * ------------------------------------------------------------------------------------------- */

typedef CUresult (*encode_im2col_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                     const cuuint64_t *, const int *, const int *, cuuint32_t, cuuint32_t,
                                     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* Rules where libtma refuses what the driver encodes, each with its reason: a status, and where the status also
 * names rules the driver shares, a part of the message that singles the stricter rule out. */
static const struct {
    tma_status status;
    const char *message_part;
    const char *why;
} stricter[] = {
    {TMA_ERR_GLOBAL_ADDRESS_NULL, NULL, "a NULL tensor faults at the first copy"},
    {TMA_ERR_BOX_SMEM, NULL, "a copy over 227 KiB can never land in a Hopper block (the driver allows 228 KiB)"},
    {TMA_ERR_GLOBAL_EXTENT, NULL, "a tensor past the end of the 64-bit address space"},
    {TMA_ERR_ELEMENT_STRIDE, "has no effect", "element_stride[0] != 1 is ignored by im2col loads"},
    {TMA_ERR_SWIZZLE_UNSUPPORTED, NULL, "128B_ATOM swizzles are compute capability 10.x modes"},
    {TMA_ERR_DTYPE, "packed", "packed 16U4/16U6 types are compute capability 10.x types"},
    {TMA_ERR_GLOBAL_DIM, "in 32 bits", "global_dim + upper past 2^31: the driver wraps the box in 32 bits"},
    {TMA_ERR_IM2COL_BOX_EMPTY, "holds no pixel", "interleaved maps with an empty box: the driver checks global_dim[i]"},
};
enum { N_STRICTER = sizeof stricter / sizeof stricter[0] };

typedef struct tally {
    encode_im2col_fn encode;
    int sets, both_ok, both_refuse, mismatches, stricter_count[N_STRICTER];
} tally;

static void compare(tally *t, const tma_im2col_desc *d) {
    tma_diag diag;
    const tma_status ours = tma_check_im2col(d, &diag);
    cuuint64_t gdim[5], gstride[4];
    cuuint32_t es[5];
    int lower[3], upper[3];
    for (int i = 0; i < 5; i++) {
        gdim[i] = d->global_dim[i];
        es[i] = d->element_stride[i];
        if (i < 4)
            gstride[i] = d->global_stride[i];
        if (i < 3)
            lower[i] = d->pixel_box_lower[i], upper[i] = d->pixel_box_upper[i];
    }
    CUtensorMap map;
    const CUresult theirs = t->encode(&map, (CUtensorMapDataType)d->dtype, d->rank, (void *)(uintptr_t)d->global_address,
                                      gdim, gstride, lower, upper, d->channels_per_pixel, d->pixels_per_column, es,
                                      (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
                                      (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
    t->sets++;
    if (ours == TMA_OK && theirs == CUDA_SUCCESS) {
        t->both_ok++;
    } else if (ours != TMA_OK && theirs != CUDA_SUCCESS) {
        t->both_refuse++;
    } else {
        int listed = 0;
        for (int i = 0; i < N_STRICTER && ours != TMA_OK && !listed; i++)
            if (stricter[i].status == ours &&
                (stricter[i].message_part == NULL || strstr(diag.message, stricter[i].message_part) != NULL) &&
                (ours != TMA_ERR_IM2COL_BOX_EMPTY || d->interleave != TMA_INTERLEAVE_NONE))
                t->stricter_count[i]++, listed = 1;
        if (!listed) {
            char what[768];
            const int32_t zc[5] = {0};
            const uint16_t zo[3] = {0};
            describe_im2col(d, zc, zo, what, sizeof what);
            if (t->mismatches++ < 30)
                cr_log_error("set %d: libtma says %s (%s), the driver says %d; interleave %d l2 %d address %p; %s",
                             t->sets, tma_status_name(ours), diag.message, (int)theirs, (int)d->interleave,
                             (int)d->l2_promotion, d->global_address, what);
        }
    }
}

static uint64_t pick_u64(const uint64_t *v, size_t n) { return v[rnd() % n]; }
#define PICK(arr) pick_u64(arr, sizeof(arr) / sizeof(arr[0]))

/* A valid descriptor with zero to three fields pushed to, just past or far beyond a limit. */
static tma_im2col_desc near_limits(void) {
    tma_im2col_desc d = random_im2col();
    d.global_address = (const void *)(uintptr_t)0x7f0000000000ull;
    const int tweaks = (int)rnd_in(0, 3);
    for (int k = 0; k < tweaks; k++) {
        const uint32_t i = (uint32_t)rnd_in(0, 4), s = (uint32_t)rnd_in(0, 2);
        const int32_t cmax = d.rank == 3 ? 32767 : d.rank == 4 ? 127 : 15;
        static const uint64_t dims[] = {0, 1, 2, 3, 16, 255, 256, (1ull << 32) - 1, 1ull << 32, (1ull << 32) + 1};
        static const uint64_t strides[] = {0, 8, 16, 24, 32, 48, (1ull << 40) - 16, 1ull << 40, 1ull << 41};
        static const uint64_t addrs[] = {0, 8, 16, 32, 48, 0x7f0000000010ull, 0x7f0000000020ull};
        static const uint64_t cpps[] = {0, 1, 2, 4, 8, 16, 32, 64, 128, 255, 256, 257, 512};
        static const uint64_t ppcs[] = {0, 1, 2, 255, 256, 512, 900, 1023, 1024, 1025, 2048};
        switch (rnd() % 14) {
        case 0: d.rank = (uint32_t)rnd_in(1, 6); break;
        case 1: d.dtype = (tma_dtype)rnd_in(0, 16); break;
        case 2: d.global_dim[i] = PICK(dims); break;
        case 3: d.global_stride[i % 4] = PICK(strides); break;
        case 4: d.pixel_box_lower[s] = (int32_t)rnd_in(-cmax - 3, cmax + 3); break;
        case 5: d.pixel_box_upper[s] = (int32_t)rnd_in(-cmax - 3, cmax + 3); break;
        case 6: d.channels_per_pixel = (uint32_t)PICK(cpps); break;
        case 7: d.pixels_per_column = (uint32_t)PICK(ppcs); break;
        case 8: d.element_stride[i] = (uint32_t)rnd_in(0, 9); break;
        case 9: d.interleave = (tma_interleave)rnd_in(0, 3); break;
        case 10: d.swizzle = (tma_swizzle)rnd_in(0, 7); break;
        case 11: d.oob_fill = (tma_oob_fill)rnd_in(0, 2); break;
        case 12: d.global_address = (const void *)(uintptr_t)PICK(addrs); break;
        default: /* a box at the edge of empty: dim + upper - lower in {0, 1} */
            if (s + 2 < d.rank) {
                d.pixel_box_lower[s] = (int32_t)rnd_in(-2, 2);
                d.pixel_box_upper[s] = d.pixel_box_lower[s] - (int32_t)d.global_dim[s + 1] + (int32_t)rnd_in(0, 1);
                if (rnd() % 2)
                    d.interleave = (tma_interleave)rnd_in(1, 2);
            }
            break;
        }
    }
    /* the driver reads 0 as an error, libtma as 1: keep that known difference out of the draw */
    for (uint32_t i = 0; i < 5; i++)
        if (d.element_stride[i] == 0)
            d.element_stride[i] = 1;
    return d;
}

Test(gpu_im2col, checker_agrees_with_driver, .timeout = 300) {
    require_sm90();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cr_assert(lib != NULL, "a device is present but libcuda.so.1 does not open: %s", dlerror());
    tally t = {.encode = (encode_im2col_fn)dlsym(lib, "cuTensorMapEncodeIm2col")};
    cr_assert(t.encode != NULL, "libcuda.so.1 has no cuTensorMapEncodeIm2col");
    const uint64_t seed = seed_rng("gpu_im2col.checker_agrees_with_driver");
    const int sets = config_count(20000);
    for (int k = 0; k < sets; k++) {
        const tma_im2col_desc d = near_limits();
        compare(&t, &d);
    }
    /* every type, swizzle and interleave with channels_per_pixel 1..256 */
    for (int il = 0; il <= 2; il++)
        for (int sw = 0; sw <= 3; sw++)
            for (int ty = 0; ty < TMA_DTYPE_COUNT_; ty++)
                for (uint32_t cpp = 1; cpp <= 256; cpp += cpp < 40 ? 1 : 8) {
                    const tma_im2col_desc d = {.dtype = (tma_dtype)ty, .rank = 4,
                                               .global_address = (const void *)(uintptr_t)0x7f0000000000ull,
                                               .global_dim = {256, 8, 8, 2}, .global_stride = {2048, 16384, 131072},
                                               .pixel_box_lower = {-1, -1}, .pixel_box_upper = {-1, -1},
                                               .channels_per_pixel = cpp, .pixels_per_column = 64,
                                               .element_stride = {1, 1, 1, 1}, .interleave = (tma_interleave)il,
                                               .swizzle = (tma_swizzle)sw};
                    compare(&t, &d);
                }
    cr_log_info("im2col checker vs driver: seed %llu: %d sets: %d accepted by both, %d refused by both, %d "
                "disagreements",
                (unsigned long long)seed, t.sets, t.both_ok, t.both_refuse, t.mismatches);
    for (int i = 0; i < N_STRICTER; i++)
        cr_log_info("  libtma stricter, %s: %d sets (%s)", tma_status_name(stricter[i].status), t.stricter_count[i],
                    stricter[i].why);
    cr_assert(t.mismatches == 0, "%d disagreements between tma_check_im2col and cuTensorMapEncodeIm2col (above)",
              t.mismatches);
    cr_assert(t.both_ok > sets / 10 && t.both_refuse > sets / 10, "the draw is lopsided: %d valid, %d invalid",
              t.both_ok, t.both_refuse);
}

/* Checked mode: a start outside the bounding box (which the hardware answers with "illegal instruction") prints
 * the host's message for the rule and traps. */
Test(gpu_im2col, checked_mode_refuses_a_start_outside_the_box, .init = cr_redirect_stdout, .timeout = 60) {
    require_sm90();
    tma_im2col_desc d = {.dtype = TMA_DTYPE_F32, .rank = 4, .global_dim = {16, 8, 8, 1},
                         .global_stride = {64, 512, 4096}, .pixel_box_lower = {-1, -1}, .pixel_box_upper = {-1, -1},
                         .channels_per_pixel = 16, .pixels_per_column = 16, .global_address = (const void *)4096};
    placed p;
    place(&p, &d);
    const int32_t c[1][5] = {{0, 7, 0, 0, 0}}; /* W box [-1, 6] */
    const uint16_t o[1][3] = {{0, 0, 0}};
    const uint32_t dst[1] = {0};
    const uint32_t arena = 2048;
    uint8_t *poison = calloc(arena, 1), *got = malloc(arena);
    const cudaError_t e = run_loads(&p.dev, c, o, dst, 1, poison, arena, got);
    free(poison);
    free(got);
    cr_assert(e != cudaSuccess, "an im2col load starting outside the bounding box completed in checked mode");
    char text[4096];
    captured_stdout(text, sizeof text);
    tma_diag host;
    d.global_address = (const void *)(uintptr_t)4096;
    cr_assert_eq(tma_check_im2col_coords_diag(&d, c[0], o[0], &host), TMA_ERR_IM2COL_START, "the host refuses it");
    cr_assert(strstr(text, "TMA_ERR_IM2COL_START") != NULL && strstr(text, host.message) != NULL,
              "device and host messages differ (CUDA said %s):\n device: %s\n host: %s", cudaGetErrorString(e), text,
              host.message);
    cr_log_info("checked mode turned the fault into: %.240s (then %s)", text, cudaGetErrorName(e));
}

/* Checked mode: a tiled-mode load through an im2col map (a mode mismatch the PTX ISA leaves undefined) is refused. */
Test(gpu_im2col, checked_mode_refuses_a_tiled_load_through_an_im2col_map, .init = cr_redirect_stdout, .timeout = 60) {
    require_sm90();
    const tma_im2col_desc d = {.dtype = TMA_DTYPE_F32, .rank = 4, .global_dim = {16, 8, 8, 1},
                               .global_stride = {64, 512, 4096}, .channels_per_pixel = 16, .pixels_per_column = 16,
                               .global_address = (const void *)4096};
    placed p;
    place(&p, &d);
    const int32_t c[1][5] = {{0, 0, 0, 0, 0}};
    const uint16_t o[1][3] = {{0, 0, 0}};
    const uint32_t dst[1] = {0};
    const uint32_t arena = 2048;
    uint8_t *poison = calloc(arena, 1), *got = malloc(arena);
    const cudaError_t e = run_loads_mode(&p.dev, c, o, dst, 1, poison, arena, got, 1);
    free(poison);
    free(got);
    cr_assert(e != cudaSuccess, "a tiled load through an im2col map completed in checked mode");
    char text[4096];
    captured_stdout(text, sizeof text);
    cr_assert(strstr(text, "tiled load of rank 4 through an im2col map") != NULL,
              "checked mode did not refuse the tiled load (CUDA said %s); device output:\n%s", cudaGetErrorString(e),
              text);
}

/* ---------------------------------------------------------------------------------------------
 * Multicast: two loads in a cluster of two blocks, each delivered to both.
 * ------------------------------------------------------------------------------------------- */

Test(gpu_im2col, multicast_in_a_cluster_of_two_matches_model, .timeout = 300) {
    require_sm90();
    const uint64_t seed = seed_rng("gpu_im2col.multicast_in_a_cluster_of_two_matches_model");
    const int configs = config_count(200);
    int per_rank[6] = {0};
    for (int k = 0; k < configs; k++) {
        const tma_im2col_desc d = random_im2col();
        placed p;
        place(&p, &d);
        const uint32_t slot = (uint32_t)((tma_im2col_smem_bytes(&d) + 127) / 128 * 128) + 128u * (uint32_t)rnd_in(0, 7);
        const uint32_t arena = 2 * slot + 128;
        int32_t c[2][5];
        uint16_t o[2][3];
        for (int r = 0; r < 2; r++)
            random_copy(&d, c[r], o[r]);
        uint8_t *poison = malloc(arena), *got = malloc(2 * (size_t)arena), *want = malloc(arena);
        cr_assert(poison && got && want, "out of host memory");
        rnd_bytes(poison, arena);
        memcpy(want, poison, arena);
        for (int r = 0; r < 2; r++) {
            const tma_status st = tma_model_load_im2col(&p.host, c[r], o[r], want, arena, (uint32_t)r * slot);
            cr_assert(st == TMA_OK, "the model refused load %d: %s", r, tma_status_name(st));
        }
        uint8_t *dpoison, *dout;
        CUDA_OK(cudaMalloc((void **)&dpoison, arena));
        CUDA_OK(cudaMalloc((void **)&dout, 2 * (size_t)arena));
        CUDA_OK(cudaMemcpy(dpoison, poison, arena, cudaMemcpyHostToDevice));
        CUDA_OK(i2c_load_multicast(&p.dev, (const int32_t(*)[5])c, (const uint16_t(*)[3])o, slot, dpoison, arena, dout));
        CUDA_OK(cudaMemcpy(got, dout, 2 * (size_t)arena, cudaMemcpyDeviceToHost));
        for (int b = 0; b < 2; b++)
            for (size_t i = 0; i < arena; i++)
                if (got[(size_t)b * arena + i] != want[i]) {
                    char what[2][768];
                    describe_im2col(&d, c[0], o[0], what[0], sizeof what[0]);
                    describe_im2col(&d, c[1], o[1], what[1], sizeof what[1]);
                    cr_assert_fail("seed %llu config %d: block %d of the cluster differs from the model at arena byte "
                                   "%zu (slot %u): GPU 0x%02x, model 0x%02x, poison 0x%02x; load 0: %s; load 1: %s",
                                   (unsigned long long)seed, k, b, i, slot, got[(size_t)b * arena + i], want[i],
                                   poison[i], what[0], what[1]);
                }
        per_rank[d.rank]++;
        cudaFree(dpoison);
        cudaFree(dout);
        free(poison);
        free(got);
        free(want);
        unplace(&p);
    }
    cr_log_info("im2col multicast: seed %llu: %d clusters of 2 blocks, 2 loads each to both blocks (mask 0b11): every "
                "byte of both poisoned arenas equal to the model; ranks 3/4/5: %d/%d/%d",
                (unsigned long long)seed, configs, per_rank[3], per_rank[4], per_rank[5]);
}

/* ---------------------------------------------------------------------------------------------
 * What the PTX ISA leaves open, measured one load per process (im2col_probe.h's table).
 * ------------------------------------------------------------------------------------------- */

/* The probe program: $TMA_IM2COL_PROBE, or im2col_probe beside this test binary. */
static void probe_path(char *out, size_t n) {
    const char *env = getenv("TMA_IM2COL_PROBE");
    if (env != NULL) {
        snprintf(out, n, "%s", env);
        return;
    }
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    cr_assert(len > 0, "cannot read /proc/self/exe to find im2col_probe: set TMA_IM2COL_PROBE");
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    cr_assert(slash != NULL, "odd /proc/self/exe: %s", self);
    slash[1] = '\0';
    snprintf(out, n, "%sim2col_probe", self);
}

/* Run case `index` in a fresh process (fork + exec: a faulted context does not survive a plain fork). The result:
 * *status the CUDA error of the load (0 completed), bytes the arena (arena_bytes). */
static void run_probe(const char *probe, int index, uint64_t seed, int32_t *status, uint8_t *bytes,
                      uint32_t arena_bytes) {
    char file[] = "/tmp/tma_im2col_probe_XXXXXX";
    const int fd = mkstemp(file);
    cr_assert(fd >= 0, "mkstemp failed");
    close(fd);
    char a_index[16], a_seed[32];
    snprintf(a_index, sizeof a_index, "%d", index);
    snprintf(a_seed, sizeof a_seed, "%llu", (unsigned long long)seed);
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        char *args[] = {(char *)probe, a_index, a_seed, file, NULL};
        execv(probe, args);
        _exit(127);
    }
    int wst = 0;
    cr_assert(waitpid(pid, &wst, 0) == pid, "waitpid failed");
    cr_assert(WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
              "im2col_probe %d %llu did not run (%s %d; exit 127: %s not found or not executable)", index,
              (unsigned long long)seed, WIFEXITED(wst) ? "exit" : "signal",
              WIFEXITED(wst) ? WEXITSTATUS(wst) : WTERMSIG(wst), probe);
    FILE *f = fopen(file, "rb");
    cr_assert(f != NULL, "im2col_probe wrote no %s", file);
    uint32_t arena = 0;
    const int ok = fread(status, sizeof *status, 1, f) == 1 && fread(&arena, sizeof arena, 1, f) == 1 &&
                   arena == arena_bytes && fread(bytes, 1, arena, f) == arena;
    fclose(f);
    remove(file);
    cr_assert(ok, "im2col_probe case %d: short or odd output (arena %u, expected %u)", index, arena, arena_bytes);
}

/* The model's bytes for case pc read with effective offsets shift[0 .. rank-3]: the start moved by them and the
 * offsets 0 (the walk of an offset case never carries, so the two are the same pixels). 0 when the moved start
 * leaves the bounding box (no prediction). */
static int predict_shifted(const i2c_probe_case *pc, const tma_im2col_desc *host, const int64_t shift[3],
                           const uint8_t *poison, uint8_t *want, uint32_t arena) {
    int32_t c[5];
    const uint16_t o[3] = {0, 0, 0};
    memcpy(c, pc->coord, sizeof c);
    for (uint32_t j = 0; j + 2 < host->rank; j++) {
        const int64_t start = (int64_t)c[j + 1] + shift[j];
        if (start < INT32_MIN || start > INT32_MAX)
            return 0;
        c[j + 1] = (int32_t)start;
    }
    if (tma_check_im2col_coords(host, c, o) != TMA_OK)
        return 0;
    memcpy(want, poison, arena);
    return tma_model_load_im2col(host, c, o, want, arena, I2C_PROBE_DST) == TMA_OK;
}

/* The readings of offset[dim] = v that the probe tells apart: the full value; v mod 2^bits; v's low bits as a
 * signed number; and v spilling into the next offsets' bits (the offsets packed as fields of `bits` bits each,
 * innermost lowest, with nothing masked). */
enum { READINGS = 4 };
static const char *const reading_names[READINGS] = {"the full value", "the value mod 2^bits", "a signed bits-bit value",
                                                    "spilling into the next offsets' bits"};

static void reading_shifts(const i2c_probe_case *pc, uint32_t rank, int r, int64_t shift[3]) {
    const uint32_t v = pc->offset[pc->dim], b = pc->bits, mask = (1u << b) - 1u, m = v & mask;
    shift[0] = shift[1] = shift[2] = 0;
    switch (r) {
    case 0: shift[pc->dim] = v; break;
    case 1: shift[pc->dim] = m; break;
    case 2: shift[pc->dim] = m >= (1u << (b - 1)) ? (int64_t)m - (int64_t)(1u << b) : (int64_t)m; break;
    default: {
        const uint64_t packed = ((uint64_t)v << (b * pc->dim)) & ((1ull << (b * (rank - 2))) - 1u);
        for (uint32_t j = 0; j + 2 < rank; j++)
            shift[j] = (int64_t)((packed >> (b * j)) & mask);
        break;
    }
    }
}

static size_t first_difference(const uint8_t *a, const uint8_t *b, size_t n) {
    size_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

Test(gpu_im2col, probe_offsets_and_negative_starts, .timeout = 300) {
    require_sm90();
    const uint64_t seed = seed_rng("gpu_im2col.probe_offsets_and_negative_starts");
    char probe[4200];
    probe_path(probe, sizeof probe);
    cr_assert(access(probe, X_OK) == 0, "%s is not there or not executable (set TMA_IM2COL_PROBE)", probe);
    i2c_probe_case cases[I2C_PROBE_MAX];
    const int n = i2c_probe_cases(cases);
    int faults = 0, completed = 0, wrong = 0;
    for (int k = 0; k < n; k++) {
        const i2c_probe_case *pc = &cases[k];
        tma_im2col_desc host = pc->d;
        const size_t extent = i2c_probe_extent(&host);
        const uint32_t arena = i2c_probe_arena(&host);
        uint8_t *image = malloc(extent), *poison = malloc(arena), *got = malloc(arena), *want = malloc(arena);
        cr_assert(image && poison && got && want, "out of host memory");
        i2c_probe_bytes(seed, 2u * (uint64_t)k, image, extent);
        i2c_probe_bytes(seed, 2u * (uint64_t)k + 1u, poison, arena);
        host.global_address = image;
        tma_diag diag;
        const tma_status ours = tma_check_im2col_coords_diag(&host, pc->coord, pc->offset, &diag);
        int32_t status = 0;
        run_probe(probe, k, seed, &status, got, arena);

        char what[160], outcome[400];
        if (pc->kind == I2C_PROBE_OFFSET)
            snprintf(what, sizeof what, "rank %u offset[%u] = %u (start %d)", host.rank, pc->dim, pc->offset[pc->dim],
                     pc->coord[pc->dim + 1]);
        else
            snprintf(what, sizeof what, "rank %u %s start %d", host.rank, pc->kind == I2C_PROBE_CHANNEL ? "channel" : "n",
                     pc->kind == I2C_PROBE_CHANNEL ? pc->coord[0] : pc->coord[host.rank - 1]);
        /* does what the user asked: the full offset, or the model as given */
        int as_asked = 0;
        if (status != 0) {
            faults++;
            snprintf(outcome, sizeof outcome, "faults (%s)", cudaGetErrorName((cudaError_t)status));
        } else if (pc->kind == I2C_PROBE_OFFSET) {
            completed++;
            size_t len = (size_t)snprintf(outcome, sizeof outcome, "completed, read as");
            int any = 0;
            for (int r = 0; r < READINGS; r++) {
                int64_t shift[3];
                reading_shifts(pc, host.rank, r, shift);
                if (predict_shifted(pc, &host, shift, poison, want, arena) && memcmp(got, want, arena) == 0) {
                    len += (size_t)snprintf(outcome + len, sizeof outcome - len, "%s %s (%lld, %lld, %lld)",
                                            any ? "," : "", reading_names[r], (long long)shift[0], (long long)shift[1],
                                            (long long)shift[2]);
                    any = 1;
                    as_asked |= r == 0;
                }
            }
            if (!any) {
                int64_t full[3];
                reading_shifts(pc, host.rank, 0, full);
                const int have = predict_shifted(pc, &host, full, poison, want, arena);
                snprintf(outcome + len, sizeof outcome - len, " none of the readings (first difference from the full "
                         "value at arena byte %zu)", have ? first_difference(got, want, arena) : 0);
            }
        } else {
            completed++;
            memcpy(want, poison, arena);
            const tma_status st = tma_model_load_im2col(&host, pc->coord, pc->offset, want, arena, I2C_PROBE_DST);
            cr_assert(st == TMA_OK, "the model refused probe case %d: %s", k, tma_status_name(st));
            as_asked = memcmp(got, want, arena) == 0;
            if (as_asked)
                snprintf(outcome, sizeof outcome, "completed, every byte equal to the model");
            else {
                snprintf(outcome, sizeof outcome, "completed, differs from the model from arena byte %zu",
                         first_difference(got, want, arena));
            }
        }
        wrong += status == 0 && !as_asked;
        cr_log_info("probe %2d: %-44s %s; libtma %s", k, what, outcome,
                    ours == TMA_OK ? "accepts" : tma_status_name(ours));
        /* the rules hold to the measurement: accept exactly what does what it was asked */
        cr_expect(ours != TMA_OK || as_asked, "probe %d (%s): libtma accepts a load that %s", k, what, outcome);
        cr_expect(ours == TMA_OK || !as_asked, "probe %d (%s): libtma refuses a load that works (%s): %s", k, what,
                  outcome, diag.message);
        free(image);
        free(poison);
        free(got);
        free(want);
    }
    cr_log_info("im2col probe: seed %llu: %d loads in their own processes: %d faulted, %d completed (%d of them not as "
                "asked: other pixels)", (unsigned long long)seed, n, faults, completed, wrong);
}
