/* interleave_probe: what a TMA load through an interleaved tensor map does, measured without ever hanging.
 *
 *   interleave_probe capture OUT.bin SEED [MAIN_CONFIGS [SECONDS]]   (on a Hopper GPU)
 *   interleave_probe replay OUT.bin [--csv FILE] [--show INDEX]...   (anywhere: compares with the CPU model)
 *   interleave_probe selftest OUT.bin   (anywhere: writes controls from the model, which replay must match)
 *
 * capture encodes maps with the driver's own cuTensorMapEncodeTiled (so combinations libtma's checker refuses
 * can be measured too) and, per configuration:
 *   1. one "search" block measures the bytes the copy delivers to the mbarrier (interleave_probe.h);
 *   2. a second launch arms blocks with that count (twice, at two shared-memory offsets, arenas kept), with the
 *      dense box bytes (what libtma armed before), with 16 bytes less and with 16 bytes more, and once more with
 *      the measured count: which of them complete, within a bounded wait, is recorded.
 * Global memory is a 4 MiB buffer whose 32-bit word w holds ILP_TAG(w), so a shared-memory word names the global
 * word it came from; arenas are poisoned with ilp_poison, so untouched bytes show (the file holds them XORed with
 * the poison, so they compress). Each configuration runs in a
 * child process that may die (a faulting copy kills its CUDA context): the parent records the fault and goes on
 * with a fresh child. Sections: controls (no interleave: the harness against the proven model), main (random
 * interleaved maps, every interleave x swizzle, types of 1/2/4/8 bytes, ranks 3-5, element strides, coordinates
 * in and out of bounds), repeats (the box that hung before, many times) and coordinates (coord[0] off the 16- and
 * 32-byte grids, which may fault).
 * replay rebuilds each configuration's global buffer and poison, runs tma_model_load_tiled and compares every
 * arena byte; it prints a table per interleave x swizzle and, with --csv, one line per configuration. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "interleave_probe.h"
#include "tma/tma.h"

/* ---------------------------------------------------------------------------------------------
 * Configurations and records
 * ------------------------------------------------------------------------------------------- */
enum { SEC_CONTROL = 0, SEC_MAIN = 1, SEC_REPEAT = 2, SEC_COORD = 3 };
static const char *const section_name[] = {"control", "main", "repeat", "coord"};

enum { BUF_BYTES = 4u << 20, BASE = 1u << 20, NB = 6, WAIT_US = 10000 };

#define ILP_MAGIC 0x31504C49u /* "ILP1" */

/* One configuration and what the GPU did with it (the arenas of blocks 0..ndumps-1 follow it in the file). */
typedef struct ilp_record {
    uint32_t magic, index, section, dtype, rank, interleave, swizzle, oob_fill, l2;
    uint32_t box[5], estride[5];
    int32_t coord[5];
    uint64_t gdim[5], gstride[4];
    uint64_t base_off;    /* tensor start: BASE + base_off in the tagged buffer */
    int32_t encode_rc;    /* the driver's CUresult */
    int32_t cuda_err;     /* 0; a cudaError_t; or -1000 - signal when the child died */
    uint32_t t_search;    /* armed by the search block */
    uint32_t nblocks, arena_bytes, poison_seed, ndumps, pad;
    uint32_t arm[NB], offsets[NB], same_as_0[NB];
    ilp_block_result search;
    ilp_block_result res[NB];
} ilp_record;

static uint64_t rng;
static uint64_t rnd(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static uint32_t esize(uint32_t dtype) { return (uint32_t)tma_dtype_size((tma_dtype)dtype); }
static uint32_t span_of(uint32_t sw) { return sw == 0 ? 0u : 16u << sw; }
static uint64_t round_up(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

static tma_tiled_desc desc_of(const ilp_record *r, void *global) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = (tma_dtype)r->dtype;
    d.rank = r->rank;
    d.global_address = global;
    for (int i = 0; i < 5; i++) {
        d.global_dim[i] = r->gdim[i];
        d.box_dim[i] = r->box[i];
        d.element_stride[i] = r->estride[i];
        if (i < 4)
            d.global_stride[i] = r->gstride[i];
    }
    d.interleave = (tma_interleave)r->interleave;
    d.swizzle = (tma_swizzle)r->swizzle;
    d.l2_promotion = (tma_l2_promotion)r->l2;
    d.oob_fill = (tma_oob_fill)r->oob_fill;
    return d;
}

/* Elements along dimension i, dimension 0's element stride counted (interleaved or not: a guess for sizing). */
static uint32_t count_of(const ilp_record *r, int i) { return (r->box[i] + r->estride[i] - 1) / r->estride[i]; }
static uint64_t rows_of(const ilp_record *r) {
    uint64_t rows = 1;
    for (uint32_t i = 1; i < r->rank; i++)
        rows *= count_of(r, (int)i);
    return rows;
}
/* A generous guess at the shared memory a box can touch, for sizing arenas: element rows padded to 128 bytes,
 * or whole chunks over every dimension (interleaved maps count dimension 0 in 16/32-byte chunks; the first capture
 * found that out by overrunning arenas sized for elements). */
static uint64_t smem_guess(const ilp_record *r) {
    uint64_t inner = round_up((uint64_t)r->box[0] * esize(r->dtype), 16);
    uint64_t pitch = inner > span_of(r->swizzle) ? inner : span_of(r->swizzle);
    if (pitch < 32)
        pitch = 32;
    const uint64_t elements = rows_of(r) * round_up(pitch, 128);
    const uint64_t chunks = rows_of(r) * count_of(r, 0) * (r->interleave == TMA_INTERLEAVE_32B ? 32u : 16u);
    return r->interleave == TMA_INTERLEAVE_NONE || elements > chunks ? elements : chunks;
}
/* The dense box bytes, dimension 0's element stride counted: what libtma armed for interleaved maps before. */
static uint32_t dense_bytes(const ilp_record *r) { return (uint32_t)(rows_of(r) * count_of(r, 0) * esize(r->dtype)); }

/* Strides nesting over dimensions 1..rank-1, and the bytes the tensor spans. */
static uint64_t set_strides(ilp_record *r, uint32_t align) {
    uint64_t stride = round_up(r->gdim[0] * esize(r->dtype), align) + align * (uint64_t)rnd_in(0, 2);
    for (uint32_t i = 1; i < r->rank; i++) {
        r->gstride[i - 1] = stride;
        stride = stride * r->gdim[i] + align * (uint64_t)rnd_in(0, 1);
    }
    return stride;
}

static void other_dims(ilp_record *r, uint32_t max_box) {
    for (uint32_t i = 1; i < r->rank; i++) {
        r->box[i] = (uint32_t)rnd_in(1, max_box);
        r->estride[i] = rnd() % 4 == 0 ? (uint32_t)rnd_in(2, 4) : 1u;
        r->gdim[i] = (uint64_t)rnd_in(1, 2 * r->box[i] * r->estride[i] + 3);
    }
}

/* coord[0] on a grid of `grid_bytes`, the others anywhere near the tensor (in and out of bounds). */
static void random_coords(ilp_record *r, uint32_t grid_bytes) {
    const int64_t step = grid_bytes / esize(r->dtype) ? grid_bytes / esize(r->dtype) : 1;
    for (uint32_t i = 0; i < r->rank; i++) {
        int64_t span = (int64_t)r->box[i] * r->estride[i];
        const int64_t room = (int64_t)r->gdim[i] - span;
        int64_t x = rnd() % 2 ? rnd_in(0, room > 0 ? room : 0) : rnd_in(-span - 2, (int64_t)r->gdim[i] + 2);
        if (i == 0)
            x = (x >= 0 ? x / step : -((-x + step - 1) / step)) * step;
        r->coord[i] = (int32_t)x;
    }
}

static const uint32_t types_by_size[4][4] = {
    {TMA_DTYPE_U8, TMA_DTYPE_U8, TMA_DTYPE_U8, TMA_DTYPE_U8},
    {TMA_DTYPE_U16, TMA_DTYPE_F16, TMA_DTYPE_BF16, TMA_DTYPE_U16},
    {TMA_DTYPE_U32, TMA_DTYPE_I32, TMA_DTYPE_F32, TMA_DTYPE_TF32},
    {TMA_DTYPE_U64, TMA_DTYPE_I64, TMA_DTYPE_F64, TMA_DTYPE_U64},
};

static uint32_t random_type(void) {
    uint32_t k = (uint32_t)(rnd() % 20);
    uint32_t size = k < 4 ? 0 : k < 9 ? 1 : k < 16 ? 2 : 3;
    uint32_t t = types_by_size[size][rnd() % 4];
    if (t == TMA_DTYPE_F32 && rnd() % 3 == 0)
        t = TMA_DTYPE_F32_FTZ;
    if (t == TMA_DTYPE_TF32 && rnd() % 2 == 0)
        t = TMA_DTYPE_TF32_FTZ;
    return t;
}

static int is_float(uint32_t t) {
    return t == TMA_DTYPE_F16 || t == TMA_DTYPE_F32 || t == TMA_DTYPE_F64 || t == TMA_DTYPE_BF16 ||
           t == TMA_DTYPE_F32_FTZ || t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ;
}

static void common_fields(ilp_record *r, uint32_t index, uint32_t section) {
    memset(r, 0, sizeof *r);
    r->magic = ILP_MAGIC;
    r->index = index;
    r->section = section;
    for (int i = 0; i < 5; i++) {
        r->box[i] = 1;
        r->estride[i] = 1;
        r->gdim[i] = 1;
    }
    r->poison_seed = (uint32_t)rnd();
    r->l2 = (uint32_t)rnd_in(0, 3);
}

/* A random interleaved (or, for controls, plain) configuration whose box and tensor stay small. */
static void gen_random(ilp_record *r, uint32_t index, uint32_t section) {
    for (;;) {
        common_fields(r, index, section);
        r->dtype = random_type();
        const uint32_t es = esize(r->dtype);
        r->oob_fill = is_float(r->dtype) && rnd() % 3 == 0 ? TMA_OOB_NAN : TMA_OOB_ZERO;
        if (section == SEC_CONTROL) {
            r->interleave = TMA_INTERLEAVE_NONE;
            r->swizzle = (uint32_t)rnd_in(0, 3);
            r->rank = (uint32_t)rnd_in(1, 5);
            uint32_t chunks = span_of(r->swizzle) ? span_of(r->swizzle) / 16 : 8;
            r->box[0] = (uint32_t)rnd_in(1, chunks) * 16 / es;
        } else {
            r->interleave = rnd() % 2 ? TMA_INTERLEAVE_32B : TMA_INTERLEAVE_16B;
            if (r->interleave == TMA_INTERLEAVE_32B)
                r->swizzle = rnd() % 5 < 2 ? TMA_SWIZZLE_32B : (uint32_t)rnd_in(0, 3);
            else
                r->swizzle = (uint32_t)rnd_in(0, 3);
            r->rank = (uint32_t)rnd_in(3, 5);
            uint32_t k = (uint32_t)(rnd() % 10), chunks;
            chunks = k < 6 ? (uint32_t)rnd_in(1, 8) : k < 9 ? (uint32_t)rnd_in(9, 32) : (uint32_t)rnd_in(33, 128);
            uint32_t max_chunks = 256 * es / 16;
            r->box[0] = (chunks < max_chunks ? chunks : max_chunks) * 16 / es;
            if (rnd() % 5 < 2)
                r->estride[0] = (uint32_t)rnd_in(2, 8);
        }
        const uint32_t align = r->interleave == TMA_INTERLEAVE_32B ? 32u : 16u;
        other_dims(r, r->rank == 3 ? 8u : r->rank == 2 ? 16u : 4u);
        r->gdim[0] = (uint64_t)rnd_in(1, 3 * (int64_t)r->box[0] + 8);
        const uint64_t extent = set_strides(r, align);
        r->base_off = align * (uint64_t)rnd_in(0, 8);
        random_coords(r, section == SEC_CONTROL ? 16u : align);
        if (extent <= (1u << 20) && smem_guess(r) <= 24u * 1024u)
            return;
    }
}

/* The box that hung before (f16, 16 x 8 x 4, INTERLEAVE_32B), every swizzle; and its INTERLEAVE_16B twin. */
static void gen_repeat(ilp_record *r, uint32_t index, uint32_t k) {
    common_fields(r, index, SEC_REPEAT);
    r->l2 = 0;
    r->dtype = TMA_DTYPE_F16;
    r->rank = 3;
    r->swizzle = k % 4;
    r->interleave = k < 160 ? TMA_INTERLEAVE_32B : TMA_INTERLEAVE_16B;
    const uint32_t w = r->interleave == TMA_INTERLEAVE_32B ? 16u : 8u;
    const uint64_t gdim[3] = {w, 8, 4};
    const uint32_t box[3] = {w, 8, 4};
    for (int i = 0; i < 3; i++) {
        r->gdim[i] = gdim[i];
        r->box[i] = box[i];
    }
    r->gstride[0] = 2u * w;
    r->gstride[1] = 2u * w * 8u;
}

/* coord[0] off the grids, one type of each size, both interleaves (the documented swizzle for 32B). */
enum { COORD_CASES = 2 * 4 * 9 };
static void gen_coord(ilp_record *r, uint32_t index, uint32_t k) {
    static const int32_t bytes[9] = {0, 16, 32, 48, 8, 24, 4, -16, -8};
    common_fields(r, index, SEC_COORD);
    r->l2 = 0;
    const uint32_t il = k / 36, size = k / 9 % 4, b = k % 9;
    r->dtype = types_by_size[size][0];
    const uint32_t es = esize(r->dtype);
    r->interleave = il ? TMA_INTERLEAVE_32B : TMA_INTERLEAVE_16B;
    r->swizzle = il ? TMA_SWIZZLE_32B : TMA_SWIZZLE_NONE;
    r->rank = 3;
    r->box[0] = 64 / es;
    r->box[1] = 4;
    r->box[2] = 2;
    r->gdim[0] = 4u * r->box[0];
    r->gdim[1] = 8;
    r->gdim[2] = 4;
    r->gstride[0] = r->gdim[0] * es;
    r->gstride[1] = r->gstride[0] * 8;
    int32_t c = bytes[b] / (int32_t)es;
    if (c * (int32_t)es != bytes[b])
        c = 1; /* one element: 1, 2 or 8 bytes for the sizes that cannot hit the byte count */
    r->coord[0] = c;
    r->coord[1] = 1;
}

/* ---------------------------------------------------------------------------------------------
 * Capture (child side: the only code that touches CUDA)
 * ------------------------------------------------------------------------------------------- */
typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static void fill_tags(uint32_t *buf) {
    for (uint32_t w = 0; w < BUF_BYTES / 4; w++)
        buf[w] = ILP_TAG(w);
}

/* Encode with the driver, bypassing libtma's checker. */
static CUresult encode_raw(encode_fn enc, tma_tensor *t, const ilp_record *r, uint8_t *dbuf) {
    cuuint64_t gdim[5], gstride[4];
    cuuint32_t box[5], es[5];
    for (int i = 0; i < 5; i++) {
        gdim[i] = r->gdim[i];
        box[i] = r->box[i];
        es[i] = r->estride[i];
        if (i < 4)
            gstride[i] = r->gstride[i];
    }
    memset(t, 0, sizeof *t);
    t->box.rank = r->rank;
    t->box.elem_bytes = esize(r->dtype);
    return enc((CUtensorMap *)(void *)&t->map, (CUtensorMapDataType)r->dtype, r->rank, dbuf + BASE + r->base_off,
               gdim, gstride, box, es, (CUtensorMapInterleave)r->interleave, (CUtensorMapSwizzle)r->swizzle,
               (CUtensorMapL2promotion)r->l2, (CUtensorMapFloatOOBfill)r->oob_fill);
}

static int write_all(int fd, const void *p, size_t n) {
    const uint8_t *b = (const uint8_t *)p;
    while (n > 0) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Run one configuration; the record (and arenas) go to fd. Returns the CUDA error (the context is lost then). */
static cudaError_t capture_one(encode_fn enc, uint8_t *dbuf, ilp_record *r, int fd) {
    tma_tensor t;
    r->encode_rc = (int32_t)encode_raw(enc, &t, r, dbuf);
    cudaError_t e = cudaSuccess;
    uint8_t *arenas = NULL;
    if (r->encode_rc == CUDA_SUCCESS) {
        /* 1. measure */
        const uint32_t guess = (uint32_t)smem_guess(r);
        r->t_search = 4u * guess + 4096u;
        uint32_t arm = ILP_SEARCH | r->t_search, off = 0;
        uint32_t arena = (uint32_t)round_up(4u * guess + 1024u, 128);
        if (arena > 200u * 1024u)
            arena = 200u * 1024u;
        e = ilp_run(&t, r->coord, 1, &arm, &off, arena, r->poison_seed, WAIT_US, NULL, &r->search);
        /* 2. arm with the measured count and its neighbours */
        if (e == cudaSuccess) {
            const uint32_t d = r->search.delivered != ~0u ? r->search.delivered : dense_bytes(r);
            const uint32_t o0 = (uint32_t)rnd_in(0, 7) * 128u, o1 = (o0 + 128u * (uint32_t)rnd_in(1, 7)) % 1024u;
            const uint32_t arms[NB] = {d, d, dense_bytes(r), d > 16 ? d - 16 : d, d + 16, d};
            const uint32_t offs[NB] = {o0, o1, o0, o0, o0, o0};
            r->nblocks = NB;
            memcpy(r->arm, arms, sizeof arms);
            memcpy(r->offsets, offs, sizeof offs);
            uint64_t need = 2u * (uint64_t)(d > guess ? d : guess) + 2048u;
            r->arena_bytes = (uint32_t)round_up(need < 200u * 1024u ? need : 200u * 1024u, 128);
            arenas = (uint8_t *)malloc((size_t)NB * r->arena_bytes);
            e = ilp_run(&t, r->coord, NB, r->arm, r->offsets, r->arena_bytes, r->poison_seed, WAIT_US, arenas, r->res);
            if (e == cudaSuccess) {
                r->ndumps = 2;
                for (int b = 0; b < NB; b++)
                    r->same_as_0[b] = r->offsets[b] == r->offsets[0] &&
                                      memcmp(arenas + (size_t)b * r->arena_bytes, arenas, r->arena_bytes) == 0;
                for (uint32_t b = 0; b < r->ndumps; b++) /* stored XORed with the poison: untouched bytes compress */
                    for (uint32_t i = 0; i < r->arena_bytes; i++)
                        arenas[(size_t)b * r->arena_bytes + i] ^= ilp_poison(r->poison_seed, i);
            }
        }
    }
    r->cuda_err = (int32_t)e;
    if (write_all(fd, r, sizeof *r) != 0 ||
        (r->ndumps > 0 && write_all(fd, arenas, (size_t)r->ndumps * r->arena_bytes) != 0)) {
        fprintf(stderr, "interleave_probe: writing the capture failed: %s\n", strerror(errno));
        exit(4);
    }
    free(arenas);
    return e;
}

/* The child: configurations [from, n) until one fails; each index is announced on `pipe_fd` before it runs and
 * confirmed after (so the parent knows which one killed a child). */
static int child(const ilp_record *configs, uint32_t from, uint32_t n, int fd, int pipe_fd, time_t deadline) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    encode_fn enc = lib ? (encode_fn)(uintptr_t)dlsym(lib, "cuTensorMapEncodeTiled") : NULL;
    if (enc == NULL || cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "interleave_probe: no driver or no device\n");
        return 2;
    }
    uint8_t *dbuf = NULL;
    uint32_t *hbuf = (uint32_t *)malloc(BUF_BYTES);
    fill_tags(hbuf);
    if (cudaMalloc((void **)&dbuf, BUF_BYTES) != cudaSuccess ||
        cudaMemcpy(dbuf, hbuf, BUF_BYTES, cudaMemcpyHostToDevice) != cudaSuccess)
        return 2;
    free(hbuf);
    for (uint32_t i = from; i < n && time(NULL) < deadline; i++) {
        uint32_t msg[2] = {i, 0};
        if (write_all(pipe_fd, msg, sizeof msg) != 0)
            return 4;
        ilp_record r = configs[i];
        rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)r.poison_seed << 7) ^ i; /* offsets: reproducible per config */
        alarm(30);
        cudaError_t e = capture_one(enc, dbuf, &r, fd);
        alarm(0);
        msg[1] = 1;
        if (write_all(pipe_fd, msg, sizeof msg) != 0)
            return 4;
        if (e != cudaSuccess)
            return 3; /* the context is gone: the parent starts another child */
    }
    return 0;
}

static int capture(const char *path, uint64_t seed, uint32_t main_configs, uint32_t seconds) {
    const time_t deadline = time(NULL) + (time_t)seconds;
    const uint32_t controls = 60, repeats = 200;
    const uint32_t n = controls + main_configs + repeats + COORD_CASES;
    ilp_record *configs = (ilp_record *)calloc(n, sizeof *configs);
    rng = seed ? seed : 1;
    uint32_t k = 0;
    for (uint32_t i = 0; i < controls; i++, k++)
        gen_random(&configs[k], k, SEC_CONTROL);
    for (uint32_t i = 0; i < repeats; i++, k++)
        gen_repeat(&configs[k], k, i);
    for (uint32_t i = 0; i < COORD_CASES; i++, k++)
        gen_coord(&configs[k], k, i);
    for (uint32_t i = 0; i < main_configs; i++, k++)
        gen_random(&configs[k], k, SEC_MAIN);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "interleave_probe: cannot write %s\n", path);
        return 2;
    }
    const int fd = fileno(f);
    printf("interleave_probe capture: seed %llu, %u configurations (%u controls, %u repeats, %u coordinate cases, %u "
           "main), for at most %u s\n",
           (unsigned long long)seed, n, controls, repeats, (uint32_t)COORD_CASES, main_configs, seconds);
    fflush(stdout);
    uint32_t next = 0, deaths = 0;
    while (next < n && time(NULL) < deadline) {
        int p[2];
        if (pipe(p) != 0)
            return 2;
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            _exit(child(configs, next, n, fd, p[1], deadline));
        }
        close(p[1]);
        uint32_t msg[2], started = next, finished = 1;
        while (read(p[0], msg, sizeof msg) == (ssize_t)sizeof msg) {
            started = msg[0];
            finished = msg[1];
        }
        close(p[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            break;
        if (WIFEXITED(status) && (WEXITSTATUS(status) == 2 || WEXITSTATUS(status) == 4)) {
            fprintf(stderr, "interleave_probe: the child could not run (status %d)\n", WEXITSTATUS(status));
            return 2;
        }
        deaths++;
        if (!finished) { /* it died inside a configuration: record that */
            ilp_record r = configs[started];
            r.cuda_err = WIFSIGNALED(status) ? -1000 - WTERMSIG(status) : -999;
            if (write_all(fd, &r, sizeof r) != 0)
                return 2;
        }
        next = started + 1;
    }
    fclose(f);
    printf("interleave_probe capture: done, %u child processes ended by a failed configuration\n", deaths);
    free(configs);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Replay: the captures against the CPU model
 * ------------------------------------------------------------------------------------------- */
typedef struct tally {
    int configs, encoded, refused, faulted, measured, tx_equal_model, d_complete, dense_complete, less_complete,
        more_complete, same_bytes, modelled, matched, unmodelled_status;
} tally;

static void describe(const ilp_record *r, char *out, size_t n) {
    snprintf(out, n,
             "#%u %s %s il %u sw %u oob %u rank %u gdim {%llu,%llu,%llu,%llu,%llu} stride {%llu,%llu,%llu,%llu} "
             "box {%u,%u,%u,%u,%u} es {%u,%u,%u,%u,%u} coord {%d,%d,%d,%d,%d} base +%llu",
             r->index, section_name[r->section], tma_dtype_name((tma_dtype)r->dtype), r->interleave, r->swizzle,
             r->oob_fill, r->rank, (unsigned long long)r->gdim[0], (unsigned long long)r->gdim[1],
             (unsigned long long)r->gdim[2], (unsigned long long)r->gdim[3], (unsigned long long)r->gdim[4],
             (unsigned long long)r->gstride[0], (unsigned long long)r->gstride[1], (unsigned long long)r->gstride[2],
             (unsigned long long)r->gstride[3], r->box[0], r->box[1], r->box[2], r->box[3], r->box[4], r->estride[0],
             r->estride[1], r->estride[2], r->estride[3], r->estride[4], r->coord[0], r->coord[1], r->coord[2],
             r->coord[3], r->coord[4], (unsigned long long)r->base_off);
}

/* The arena as 16-byte chunks: each 32-bit word shown as the tensor-relative byte offset of the global word it
 * holds ("....." poison, "0" zero, "nan" the NaN fill, "?" anything else). */
static void show(const ilp_record *r, const uint8_t *arena, uint32_t off) {
    char what[600];
    describe(r, what, sizeof what);
    printf("%s\n  offsets %u/%u, delivered %u, dense %u\n", what, r->offsets[0], r->offsets[1], r->search.delivered,
           dense_bytes(r));
    uint32_t last = 0;
    for (uint32_t i = 0; i < r->arena_bytes; i++)
        if (arena[i] != ilp_poison(r->poison_seed, i))
            last = i;
    for (uint32_t c = off; c <= last; c += 16) {
        printf("  +%5u:", c - off);
        for (uint32_t w = 0; w < 4; w++) {
            uint32_t v, pois = 1;
            memcpy(&v, arena + c + 4 * w, 4);
            for (uint32_t j = 0; j < 4; j++)
                pois &= arena[c + 4 * w + j] == ilp_poison(r->poison_seed, c + 4 * w + j);
            if (pois)
                printf(" %8s", ".....");
            else if (v == 0)
                printf(" %8s", "0");
            else if (v == 0x7FF77FF7u)
                printf(" %8s", "nan");
            else if (v >= ILP_TAG(0) && v < ILP_TAG(BUF_BYTES / 4))
                printf(" %8lld", (long long)(v - ILP_TAG(0)) * 4 - (long long)(BASE + r->base_off));
            else
                printf(" %8s", "?");
        }
        printf("\n");
    }
}

/* The model of one captured load (every interleave and swizzle: libtma accepts INTERLEAVE_32B with each). */
static tma_status model_any_swizzle(const tma_tiled_desc *d, const int32_t coord[5], uint8_t *smem, uint32_t bytes,
                                    uint32_t off) {
    return tma_model_load_tiled(d, coord, smem, bytes, off);
}

static int replay(int argc, char **argv) {
    FILE *f = fopen(argv[2], "rb");
    if (f == NULL) {
        fprintf(stderr, "interleave_probe: cannot read %s\n", argv[2]);
        return 2;
    }
    FILE *csv = NULL;
    long shows[64];
    int nshow = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--csv") == 0)
            csv = fopen(argv[i + 1], "w");
        else if (strcmp(argv[i], "--show") == 0 && nshow < 64)
            shows[nshow++] = atol(argv[i + 1]);
    }
    if (csv)
        fprintf(csv, "index,section,dtype,es,interleave,swizzle,oob,rank,box0,box1,box2,box3,box4,es0,es1,es2,es3,es4,"
                     "coord0,coord1,coord2,coord3,coord4,gdim0,gdim1,gdim2,gdim3,gdim4,base_off,encode_rc,cuda_err,"
                     "delivered,early,dense,model_tx,model_smem,model_pitch,d_ok,d_ok2,dense_ok,less_ok,more_ok,"
                     "again_ok,"
                     "same_dense,same_less,same_again,model_status,match0,match1,first_diff,touched_lo,touched_hi\n");
    uint32_t *global = (uint32_t *)aligned_alloc(256, BUF_BYTES); /* the device buffer's alignment */
    fill_tags(global);
    tally t[3][4][2];
    memset(t, 0, sizeof t);
    int total = 0, mismatched = 0, control_bad = 0;
    ilp_record r;
    while (fread(&r, sizeof r, 1, f) == 1) {
        if (r.magic != ILP_MAGIC) {
            fprintf(stderr, "interleave_probe: not a capture record\n");
            return 2;
        }
        uint8_t *arenas = NULL;
        if (r.ndumps > 0) {
            arenas = (uint8_t *)malloc((size_t)r.ndumps * r.arena_bytes);
            if (fread(arenas, r.arena_bytes, r.ndumps, f) != r.ndumps) {
                fprintf(stderr, "interleave_probe: truncated capture\n");
                return 2;
            }
            for (uint32_t b = 0; b < r.ndumps; b++)
                for (uint32_t i = 0; i < r.arena_bytes; i++)
                    arenas[(size_t)b * r.arena_bytes + i] ^= ilp_poison(r.poison_seed, i);
        }
        total++;
        tally *x = &t[r.interleave][r.swizzle][r.section == SEC_REPEAT];
        x->configs++;
        tma_tiled_desc d = desc_of(&r, (uint8_t *)global + BASE + r.base_off);
        tma_status ms = TMA_ERR_UNSUPPORTED;
        int match[2] = {-1, -1};
        long first_diff = -1;
        uint32_t lo = ~0u, hi = 0;
        if (r.encode_rc != 0)
            x->refused++;
        else if (r.cuda_err != 0)
            x->faulted++;
        if (r.encode_rc == 0 && r.cuda_err == 0) {
            x->encoded++;
            x->measured += r.search.delivered != ~0u;
            x->tx_equal_model += r.search.delivered == tma_box_tx_bytes(&d);
            x->d_complete += r.res[0].completed && r.res[1].completed && r.res[5].completed;
            x->dense_complete += r.res[2].completed;
            x->less_complete += r.res[3].completed;
            x->more_complete += r.res[4].completed;
            x->same_bytes += r.same_as_0[2] && r.same_as_0[3] && r.same_as_0[5];
            uint8_t *want = (uint8_t *)malloc(r.arena_bytes);
            for (uint32_t b = 0; b < r.ndumps; b++) {
                const uint8_t *got = arenas + (size_t)b * r.arena_bytes;
                for (uint32_t i = 0; i < r.arena_bytes; i++) {
                    want[i] = ilp_poison(r.poison_seed, i);
                    if (b == 0 && got[i] != want[i]) {
                        lo = i < lo ? i : lo;
                        hi = i;
                    }
                }
                ms = model_any_swizzle(&d, r.coord, want, r.arena_bytes, r.offsets[b]);
                if (ms != TMA_OK)
                    break;
                match[b] = memcmp(want, got, r.arena_bytes) == 0;
                if (!match[b] && first_diff < 0)
                    for (uint32_t i = 0; i < r.arena_bytes; i++)
                        if (want[i] != got[i]) {
                            first_diff = (long)i - (long)r.offsets[b];
                            break;
                        }
            }
            free(want);
            if (ms == TMA_OK) {
                x->modelled++;
                x->matched += match[0] == 1 && match[1] == 1;
                mismatched += !(match[0] == 1 && match[1] == 1);
                control_bad += r.section == SEC_CONTROL && !(match[0] == 1 && match[1] == 1);
            } else {
                x->unmodelled_status++;
            }
        }
        for (int s = 0; s < nshow; s++)
            if (shows[s] == (long)r.index && arenas)
                show(&r, arenas, r.offsets[0]);
        if (csv) {
            fprintf(csv,
                    "%u,%s,%s,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%d,%d,%d,%d,%d,%llu,%llu,%llu,%llu,%llu,",
                    r.index, section_name[r.section], tma_dtype_name((tma_dtype)r.dtype), esize(r.dtype), r.interleave,
                    r.swizzle, r.oob_fill, r.rank, r.box[0], r.box[1], r.box[2], r.box[3], r.box[4], r.estride[0],
                    r.estride[1], r.estride[2], r.estride[3], r.estride[4], r.coord[0], r.coord[1], r.coord[2],
                    r.coord[3], r.coord[4], (unsigned long long)r.gdim[0], (unsigned long long)r.gdim[1],
                    (unsigned long long)r.gdim[2], (unsigned long long)r.gdim[3], (unsigned long long)r.gdim[4]);
            fprintf(csv, "%llu,%d,%d,%d,%u,%u,%zu,%zu,%zu,%u,%u,%u,%u,%u,%u,%u,%u,%u,%s,%d,%d,%ld,%d,%d\n",
                    (unsigned long long)r.base_off, r.encode_rc, r.cuda_err, (int)r.search.delivered, r.search.early,
                    dense_bytes(&r), tma_box_tx_bytes(&d), tma_box_smem_bytes(&d), tma_box_row_pitch(&d),
                    r.res[0].completed, r.res[1].completed, r.res[2].completed, r.res[3].completed, r.res[4].completed,
                    r.res[5].completed, r.same_as_0[2], r.same_as_0[3], r.same_as_0[5], tma_status_name(ms), match[0],
                    match[1], first_diff, lo == ~0u ? -1 : (int)(lo - r.offsets[0]),
                    lo == ~0u ? -1 : (int)(hi - r.offsets[0]));
        }
        free(arenas);
    }
    fclose(f);
    if (csv)
        fclose(csv);
    printf("%-34s %7s %7s %7s %7s %8s %8s %8s %8s %8s %8s %7s %8s %8s\n", "interleave x swizzle (section)", "configs",
           "refused", "faulted", "ran", "measured", "tx=model", "armD_ok", "dense_ok", "D-16_ok", "D+16_ok", "samebyt",
           "modelled", "matched");
    static const char *const il_name[3] = {"NONE", "16B", "32B"}, *const sw_name[4] = {"NONE", "32B", "64B", "128B"};
    for (int il = 0; il < 3; il++)
        for (int rep = 0; rep < 2; rep++)
            for (int sw = 0; sw < 4; sw++) {
                const tally *x = &t[il][sw][rep];
                if (x->configs == 0)
                    continue;
                char name[64];
                snprintf(name, sizeof name, "%s x %s%s", il_name[il], sw_name[sw], rep ? " (repeats)" : "");
                printf("%-34s %7d %7d %7d %7d %8d %8d %8d %8d %8d %8d %7d %8d %8d\n", name, x->configs, x->refused,
                       x->faulted, x->encoded, x->measured, x->tx_equal_model, x->d_complete, x->dense_complete,
                       x->less_complete, x->more_complete, x->same_bytes, x->modelled, x->matched);
            }
    printf("replay: %d records; %d modelled configurations differ from the model (%d of them controls)\n", total,
           mismatched, control_bad);
    free(global);
    return mismatched ? 1 : 0;
}

/* The replay's own check, without a GPU: controls whose arenas the model itself wrote must replay as matching. */
static int selftest(const char *path) {
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 2;
    uint32_t *global = (uint32_t *)malloc(BUF_BYTES);
    fill_tags(global);
    rng = 7;
    for (uint32_t k = 0; k < 50; k++) {
        ilp_record r;
        gen_random(&r, k, SEC_CONTROL);
        tma_tiled_desc d = desc_of(&r, (uint8_t *)global + BASE + r.base_off);
        r.nblocks = NB;
        r.ndumps = 2;
        r.arena_bytes = (uint32_t)round_up(2u * smem_guess(&r) + 2048u, 128);
        r.offsets[0] = 128u * (k % 8);
        r.offsets[1] = 128u * ((k + 3) % 8);
        r.search.delivered = (uint32_t)tma_box_tx_bytes(&d);
        uint8_t *arenas = (uint8_t *)malloc(2u * r.arena_bytes);
        for (uint32_t b = 0; b < 2; b++) {
            for (uint32_t i = 0; i < r.arena_bytes; i++)
                arenas[b * r.arena_bytes + i] = ilp_poison(r.poison_seed, i);
            if (tma_model_load_tiled(&d, r.coord, arenas + b * r.arena_bytes, r.arena_bytes, r.offsets[b]) != TMA_OK)
                return 3;
            for (uint32_t i = 0; i < r.arena_bytes; i++)
                arenas[b * r.arena_bytes + i] ^= ilp_poison(r.poison_seed, i);
        }
        if (fwrite(&r, sizeof r, 1, f) != 1 || fwrite(arenas, r.arena_bytes, 2, f) != 2)
            return 2;
        free(arenas);
    }
    free(global);
    fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "capture") == 0)
        return capture(argv[2], strtoull(argv[3], NULL, 0), argc >= 5 ? (uint32_t)atoi(argv[4]) : 1500u,
                       argc >= 6 ? (uint32_t)atoi(argv[5]) : 170u);
    if (argc >= 3 && strcmp(argv[1], "selftest") == 0)
        return selftest(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "replay") == 0)
        return replay(argc, argv);
    fprintf(stderr, "usage: interleave_probe capture OUT.bin SEED [MAIN_CONFIGS [SECONDS]]\n"
                    "       interleave_probe replay OUT.bin [--csv FILE] [--show INDEX]...\n"
                    "       interleave_probe selftest OUT.bin\n");
    return 2;
}
