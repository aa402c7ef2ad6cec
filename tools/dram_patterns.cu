/* tma-dram-patterns: how fast the memory system moves a matrix's bytes in the access patterns of a tiled transpose,
 * each beside a read stream, a write stream and a device-to-device copy of the same bytes, in interleaved rounds
 * (CUDA events, 3 warm-up launches, the median of --reps launches a round, the median of the rounds' medians).
 * It moves no data anyone reads: it measures traffic, which is what bounds a transpose whose SM work is hidden.
 *
 *   tma-dram-patterns [--rows R] [--cols C] [--src-pitch P] [--dst-pitch Q] [--reps N] [--rounds N] [--only TEXT]
 *
 * src is R rows of C two-byte elements, P bytes apart (default 2 C); dst, its transpose, C rows of R elements, Q bytes
 * apart (default 2 R). A tile is 128 bytes (64 columns) of each of H src rows, loaded as boxes W bytes wide; its dst
 * side is 2 H bytes of each of 64 dst rows, at the transposed place. Tiles are walked row-major ("rm") or in bands of
 * 8 tile columns ("b8"), one block after another over a persistent grid. The patterns:
 *   read, write, copy        a read stream and a write stream of the tiles' bytes, cudaMemcpyAsync of them
 *   tma-load                 TMA tile loads of W x H boxes, 4 stages a block, a grid of 2 blocks an SM (one an SM
 *                            resident where 4 stages of 144 x 256 do not fit twice; stores alone: 2 blocks an SM for
 *                            TMA stores, 4 for thread stores) (P a multiple of 16)
 *   class-load               the same rows through g = 16 / gcd(P, 16) residue-class maps (map c: rows c, c + g, ...,
 *                            its base row c's first byte rounded down to 16 bytes), g boxes of W x H / g a tile: any
 *                            even pitch. W = 144 adds the 16 bytes a row at a phase needs past its 128.
 *   tma-store                TMA stores of the dst tiles, one box of 2 H bytes by 64 rows each (Q a multiple of 16)
 *   thread-store U           256 threads store each tile's dst segments in 16-byte chunks: the U-byte units (16, 32,
 *                            128) whose first byte lies in the segment, so every unit is written whole by one tile
 *                            (a dst row's first and last chunks left out where they are partial)
 *   class-store U            TMA stores of the dst tiles through g' = U / gcd(Q, U) residue-class maps of dst rows
 *                            (map c: rows c, c + g', ..., its base row c's first byte rounded down to 16 bytes), one
 *                            box of H elements by 64 / g' rows a class, each class's box shifted so that its rows
 *                            begin on a U-byte unit: every unit (16, 32, 128) written whole by one tile; any even Q
 *   A + B                    both in one kernel: each tile stored from the stage its load landed in
 * R must be a multiple of 256 and 2 C of 128. Needs an sm_90 GPU. docs/HARDWARE.md "Reads and writes share DRAM"
 * and docs/lab/permute.md "What the memory system gives a ragged transpose" report its results. */
#include <algorithm>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#include "tma/device.cuh"
#include "tma/tma.h"

/* A failing CUDA call prints file:line, the call and the error, and exits (a tool's own check). */
#define CUDA_CHECK(call)                                                                                               \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "tma-dram-patterns: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                    \
                    cudaGetErrorString(e_));                                                                           \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* ---------------------------------------------------------------------------------------------------------------- */
/* Kernels                                                                                                           */
/* ---------------------------------------------------------------------------------------------------------------- */

enum { LOAD_NONE, LOAD_TMA, LOAD_CLASS };
enum { STORE_NONE, STORE_TMA, STORE_THREADS, STORE_CLASS };
#define MAX_CLASSES 16
#define MAX_DST_CLASSES 64
#define STAGES 4u

struct pattern {
    tma_tensor src_map, dst_map, cls[MAX_CLASSES];
    uint8_t *dst;                    /* dst's first byte */
    uint64_t dst_pitch, dst_row;     /* dst rows' pitch and bytes */
    uint32_t tiles_x, tiles_y, band; /* band 0: row-major */
    uint32_t w, h, g, stage_bytes;   /* tile W bytes x H rows; class maps; a stage's bytes */
    uint32_t load, store, unit, lanes_log2;
    uint32_t dg;                       /* dst class maps (class-store) */
    uint32_t dx[MAX_DST_CLASSES];      /* class c's box column: its rows' first byte a multiple of the unit */
    tma_tensor dcls[MAX_DST_CLASSES];  /* map c: dst rows c, c + dg, ..., its base row c's first byte rounded down */
};

static __device__ __forceinline__ void tile_xy(const pattern &A, uint32_t t, uint32_t *tx, uint32_t *ty) {
    if (A.band == 0u) {
        *ty = t / A.tiles_x, *tx = t % A.tiles_x;
        return;
    }
    const uint32_t per_band = A.band * A.tiles_y, b = t / per_band, r = t % per_band;
    const uint32_t w = A.tiles_x - b * A.band < A.band ? A.tiles_x - b * A.band : A.band; /* the last band */
    *ty = r / w, *tx = b * A.band + r % w;
}

static __device__ __forceinline__ void load_tile(const pattern &A, uint8_t *stage, uint64_t *bar, uint32_t tx,
                                                 uint32_t ty) {
    if (A.load == LOAD_TMA) {
        tma_mbar_arrive_expect_tx(bar, A.w * A.h);
        tma_load_2d(stage, &A.src_map, bar, (int32_t)(tx * 64u), (int32_t)(ty * A.h)); /* 64 columns: 128 bytes */
        return;
    }
    const uint32_t rows = A.h / A.g, box = rows * A.w;
    tma_mbar_arrive_expect_tx(bar, box * A.g);
    for (uint32_t c = 0; c < A.g; c++)
        tma_load_2d(stage + c * ((box + 127u) / 128u * 128u), &A.cls[c], bar, (int32_t)(tx * 64u),
                    (int32_t)(ty * rows));
}

/* The tile's owned units of its dst segments, from `from` (contents do not matter), by the block's threads. */
static __device__ __forceinline__ void thread_stores(const pattern &A, uint32_t tx, uint32_t ty, const uint8_t *from) {
    const uint32_t rows = 64u, seg = 2u * A.h, sh = A.lanes_log2; /* a tile's 128 bytes of src columns */
    const uint64_t um = A.unit - 1u;
    for (uint32_t c = threadIdx.x; c < (rows << sh); c += blockDim.x) {
        const uint32_t r = c >> sh, k = c & ((1u << sh) - 1u);
        const uint64_t row0 = (uint64_t)(tx * rows + r) * A.dst_pitch, row1 = row0 + A.dst_row; /* from dst */
        const uint64_t a0 = row0 + (uint64_t)ty * seg, a1 = a0 + seg;
        const uint64_t lo = ty == 0u ? row0 : (a0 + um) & ~um, hi0 = (a1 + um) & ~um, hi = hi0 < row1 ? hi0 : row1;
        const uint64_t ch = ((lo + 15u) & ~(uint64_t)15u) + 16u * k;
        if (ch + 16u <= hi)
            *(uint4 *)(A.dst + ch) = *(const uint4 *)(from + ((16u * c) % A.stage_bytes)); /* dst: 256-byte aligned */
    }
}

/* The tile's dst segments by TMA stores through the dst class maps, one box of H x 64 / dg a class, each class's
 * box shifted so that its rows begin on a unit (the last tile's boxes clip at the row; rule 7's chunk past it lands in
 * the next row or the allocation's slack). One thread. */
static __device__ __forceinline__ void class_stores(const pattern &A, uint32_t tx, uint32_t ty, const uint8_t *from) {
    const uint32_t rows = 64u / A.dg, box = 2u * A.h * rows;
    for (uint32_t c = 0; c < A.dg; c++)
        tma_store_2d(&A.dcls[c], from + c * box, (int32_t)(ty * A.h + A.dx[c]), (int32_t)(tx * rows));
}

__global__ void pattern_kernel(const __grid_constant__ pattern A) {
    extern __shared__ __align__(128) uint8_t dyn[];
    __shared__ uint64_t full[STAGES];
    uint8_t *base = dyn + ((128u - tma_smem_addr(dyn) % 128u) % 128u);
    const uint32_t G = gridDim.x, all = A.tiles_x * A.tiles_y;
    const uint32_t n = blockIdx.x < all ? (all - blockIdx.x + G - 1u) / G : 0u; /* this block's tiles */
    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < STAGES; s++)
            tma_mbar_init(&full[s], 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (A.load == LOAD_NONE) { /* stores alone, from stage 0 */
        for (uint32_t i = 0; i < n; i++) {
            uint32_t tx, ty;
            tile_xy(A, blockIdx.x + i * G, &tx, &ty);
            if (A.store == STORE_THREADS) {
                thread_stores(A, tx, ty, base);
            } else if (threadIdx.x == 0) {
                tma_store_wait_read<1>();
                if (A.store == STORE_CLASS)
                    class_stores(A, tx, ty, base + (i % 2u) * A.stage_bytes);
                else
                    tma_store_2d(&A.dst_map, base + (i % 2u) * A.stage_bytes, (int32_t)(ty * A.h),
                                 (int32_t)(tx * 64u));
                tma_store_commit();
            }
        }
        if (threadIdx.x == 0)
            tma_store_wait<0>();
        return;
    }
    /* Load: STAGES tiles ahead. Store: each landed tile, then its stage is refilled (TMA stores: once the store
     * before it has read its stage). */
    if (threadIdx.x == 0)
        for (uint32_t i = 0; i < STAGES && i < n; i++) {
            uint32_t tx, ty;
            tile_xy(A, blockIdx.x + i * G, &tx, &ty);
            load_tile(A, base + i * A.stage_bytes, &full[i], tx, ty);
        }
    uint32_t sink = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t s = i % STAGES;
        uint32_t tx, ty, refill = i;
        tile_xy(A, blockIdx.x + i * G, &tx, &ty);
        tma_mbar_wait_quiet(&full[s], (i / STAGES) & 1u);
        if (A.store == STORE_NONE) {
            sink ^= *(const uint32_t *)(base + s * A.stage_bytes + 4u * (threadIdx.x % 32u));
        } else if (A.store == STORE_TMA || A.store == STORE_CLASS) {
            if (threadIdx.x == 0) {
                if (A.store == STORE_CLASS)
                    class_stores(A, tx, ty, base + s * A.stage_bytes);
                else
                    tma_store_2d(&A.dst_map, base + s * A.stage_bytes, (int32_t)(ty * A.h), (int32_t)(tx * 64u));
                tma_store_commit();
                tma_store_wait_read<1>();
            }
            refill = i == 0 ? UINT32_MAX : i - 1u;
        } else {
            thread_stores(A, tx, ty, base + s * A.stage_bytes);
            __syncthreads();
        }
        if (threadIdx.x == 0 && refill != UINT32_MAX && refill + STAGES < n) {
            uint32_t ux, uy;
            tile_xy(A, blockIdx.x + (refill + STAGES) * G, &ux, &uy);
            load_tile(A, base + (refill % STAGES) * A.stage_bytes, &full[refill % STAGES], ux, uy);
        }
    }
    if (threadIdx.x == 0 && (A.store == STORE_TMA || A.store == STORE_CLASS))
        tma_store_wait<0>();
    if (sink == 0x9E3779B9u)
        A.dst[threadIdx.x] = 1; /* keeps the loads */
}

__global__ void read_stream(const uint4 *p, size_t n, uint8_t *sink) {
    uint32_t acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9E3779B9u)
        sink[threadIdx.x] = 1;
}

__global__ void write_stream(uint4 *p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_uint4((uint32_t)i, 1u, 2u, 3u);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Host                                                                                                              */
/* ---------------------------------------------------------------------------------------------------------------- */

/* A 2-D map of u16 rows, unswizzled, 128-byte L2 promotion (the residue-class maps' setting in "TMA-loaded residue
 * classes"). */
static tma_tensor map_u16(const void *base, uint64_t cols, uint64_t rows, uint64_t pitch, uint32_t box_cols,
                          uint32_t box_rows) {
    tma_tiled_desc d =
        tma_desc_2d(TMA_DTYPE_U16, (void *)base, rows, cols, pitch, box_rows, box_cols, TMA_SWIZZLE_NONE);
    d.l2_promotion = TMA_L2_128B;
    tma_tensor t;
    tma_diag diag;
    if (tma_tensor_make(&t, &d, &diag) != TMA_OK) {
        fprintf(stderr, "tma-dram-patterns: map: %s\n", diag.message);
        exit(1);
    }
    return t;
}

struct variant {
    std::string name;
    pattern p;
    int kind; /* 0 pattern kernel, 1 read, 2 write, 3 copy */
    int two_way;
    std::vector<float> us;
};

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
    while (b) {
        const uint64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

static uint64_t arg_u64(int argc, char **argv, const char *flag, uint64_t fallback) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], flag))
            return strtoull(argv[i + 1], NULL, 10);
    return fallback;
}

static const char *arg_str(int argc, char **argv, const char *flag) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], flag))
            return argv[i + 1];
    return NULL;
}

static int known_flags(int argc, char **argv) {
    static const char *const flags[] = {"--rows", "--cols",   "--src-pitch", "--dst-pitch",
                                        "--reps", "--rounds", "--only"};
    for (int i = 1; i < argc; i += 2) { /* "--flag value" pairs, each flag one of these */
        int found = 0;
        for (const char *f : flags)
            found |= !strcmp(argv[i], f);
        if (!found || i + 1 >= argc)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    const uint64_t R = arg_u64(argc, argv, "--rows", 8192), C = arg_u64(argc, argv, "--cols", 8192);
    const uint64_t P = arg_u64(argc, argv, "--src-pitch", 2 * C), Q = arg_u64(argc, argv, "--dst-pitch", 2 * R);
    const int reps = (int)arg_u64(argc, argv, "--reps", 20), rounds = (int)arg_u64(argc, argv, "--rounds", 3);
    const char *only = arg_str(argc, argv, "--only");
    if (!known_flags(argc, argv) || R == 0 || R % 256 || (2 * C) % 128 || R > (1u << 24) || C > (1u << 24) ||
        P < 2 * C || Q < 2 * R || P % 2 || Q % 2 || reps < 1 || rounds < 1) {
        fprintf(stderr, "usage: tma-dram-patterns [--rows R (a multiple of 256)] [--cols C (2 C a multiple of 128)] "
                        "[--src-pitch P >= 2 C, even] [--dst-pitch Q >= 2 R, even] [--reps N] [--rounds N] "
                        "[--only TEXT]\n");
        return 2;
    }
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    uint8_t *src, *dst;
    CUDA_CHECK(cudaMalloc(&src, P * R));
    CUDA_CHECK(cudaMalloc(&dst, Q * C + 256)); /* class stores' last chunk past the last row */
    CUDA_CHECK(cudaMemset(src, 1, P * R));
    CUDA_CHECK(cudaMemset(dst, 0, Q * C));
    const uint64_t bytes = 2 * R * C;
    const uint32_t g = (uint32_t)(16u / gcd_u64(P, 16u));

    std::vector<variant> vs;
    auto add = [&](const char *load, uint32_t w, uint32_t h, uint32_t band, const char *store, uint32_t unit) {
        variant v;
        memset(&v.p, 0, sizeof v.p);
        pattern &A = v.p;
        A.dst = dst, A.dst_pitch = Q, A.dst_row = 2 * R, A.w = w, A.h = h, A.band = band;
        A.tiles_x = (uint32_t)(2 * C / 128), A.tiles_y = (uint32_t)(R / h); /* tiles step 128 bytes of a row */
        A.load = !strcmp(load, "tma-load") ? LOAD_TMA : !strcmp(load, "class-load") ? LOAD_CLASS : LOAD_NONE;
        A.store = !strcmp(store, "tma-store")      ? STORE_TMA
                  : !strcmp(store, "thread-store") ? STORE_THREADS
                  : !strcmp(store, "class-store")  ? STORE_CLASS
                                                   : STORE_NONE;
        if ((A.load == LOAD_TMA && P % 16) || (A.store == STORE_TMA && Q % 16) || (A.load == LOAD_CLASS && h % g))
            return; /* no map describes it */
        char name[160];
        snprintf(name, sizeof name, "%s%s%s %ux%u %s", A.load ? load : "", A.load && A.store ? " + " : "",
                 A.store ? store : "", w, h, band ? "b8" : "rm");
        if (A.store == STORE_THREADS || A.store == STORE_CLASS)
            snprintf(name + strlen(name), sizeof name - strlen(name), " U%u", unit);
        if (only && !strstr(name, only))
            return;
        v.name = name, v.kind = 0, v.two_way = A.load && A.store;
        if (A.load == LOAD_TMA)
            A.src_map = map_u16(src, C, R, P, 64, h);
        if (A.load == LOAD_CLASS) {
            A.g = g;
            for (uint32_t c = 0; c < g; c++) {
                const uintptr_t row = (uintptr_t)src + c * P, at = row / 16 * 16;
                A.cls[c] = map_u16((void *)at, (row - at + 2 * C) / 2, (R - c + g - 1) / g, g * P, w / 2, h / g);
            }
        }
        if (A.store == STORE_TMA)
            A.dst_map = map_u16(dst, R, C, Q, h, 64);
        if (A.store == STORE_CLASS) {
            A.dg = (uint32_t)(unit / gcd_u64(Q, unit));
            if (A.dg > MAX_DST_CLASSES || h > 256u)
                return;
            for (uint32_t c = 0; c < A.dg; c++) {
                const uintptr_t row = (uintptr_t)dst + c * Q, at = row / 16 * 16;
                const uint32_t shift = (uint32_t)((unit - row % unit) % unit); /* bytes to the row's first unit */
                A.dx[c] = (uint32_t)(row - at + shift) / 2u;
                A.dcls[c] =
                    map_u16((void *)at, (row - at + 2 * R) / 2, (C - c + A.dg - 1) / A.dg, A.dg * Q, h, 64 / A.dg);
            }
        }
        A.stage_bytes = A.load == LOAD_CLASS ? g * ((h / g * w + 127u) / 128u * 128u) : 128u * h;
        A.unit = unit;
        uint32_t need = 2u * h / 16u + unit / 16u + 1u, l = 0;
        while ((1u << l) < need)
            l++;
        A.lanes_log2 = l;
        vs.push_back(v);
    };
    for (const char *s : {"read", "write", "copy"}) {
        variant v;
        memset(&v.p, 0, sizeof v.p);
        v.name = s, v.kind = s[0] == 'r' ? 1 : s[0] == 'w' ? 2 : 3, v.two_way = v.kind == 3;
        if (!only || strstr(s, only) || v.kind == 3)
            vs.push_back(v);
    }
    for (uint32_t h : {128u, 256u})
        for (uint32_t band : {0u, 8u}) {
            add("tma-load", 128, h, band, "", 0);
            add("class-load", 128, h, band, "", 0);
            add("class-load", 144, h, band, "", 0);
            add("", 128, h, band, "tma-store", 0);
            for (uint32_t u : {16u, 32u, 128u})
                add("", 128, h, band, "thread-store", u);
            add("tma-load", 128, h, band, "tma-store", 0);
            add("class-load", 144, h, band, "tma-store", 0);
            add("tma-load", 128, h, band, "thread-store", 32);
            add("class-load", 144, h, band, "thread-store", 32);
            for (uint32_t u : {16u, 32u, 128u}) {
                add("", 128, h, band, "class-store", u);
                add("class-load", 128, h, band, "class-store", u);
                add("class-load", 144, h, band, "class-store", u);
            }
        }

    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int round = 0; round < rounds; round++)
        for (variant &v : vs) {
            /* stores alone read one stage (TMA stores: two, alternating); thread stores alone run 4 blocks an SM,
             * which their 16-byte stores need to keep enough in flight (2 an SM: 1.4-2x slower), the rest 2 */
            const int alone = v.p.load == LOAD_NONE && !v.kind;
            const uint32_t stages =
                alone ? (v.p.store == STORE_TMA || v.p.store == STORE_CLASS ? 2u : 1u) : STAGES;
            const size_t smem = v.kind ? 0 : stages * (size_t)v.p.stage_bytes + 128;
            const uint32_t threads = v.p.store == STORE_THREADS ? 256u : 32u;
            const int grid = (alone && v.p.store == STORE_THREADS ? 4 : 2) * sms;
            if (!v.kind)
                CUDA_CHECK(
                    cudaFuncSetAttribute(pattern_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            std::vector<float> t;
            for (int r = -3; r < reps; r++) {
                CUDA_CHECK(cudaEventRecord(e0));
                if (v.kind == 0)
                    pattern_kernel<<<grid, threads, smem>>>(v.p);
                else if (v.kind == 1)
                    read_stream<<<8 * sms, 256>>>((const uint4 *)src, bytes / 16, dst);
                else if (v.kind == 2)
                    write_stream<<<8 * sms, 256>>>((uint4 *)dst, bytes / 16);
                else
                    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
                CUDA_CHECK(cudaGetLastError());
                CUDA_CHECK(cudaEventRecord(e1));
                CUDA_CHECK(cudaEventSynchronize(e1));
                float ms = 0;
                CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 0)
                    t.push_back(1000.f * ms);
            }
            std::sort(t.begin(), t.end());
            v.us.push_back(t[t.size() / 2]);
        }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("%s: src %llu x %llu u16, pitch %llu bytes; dst pitch %llu bytes; %.1f MB each way; %u class maps\n",
           prop.name, (unsigned long long)R, (unsigned long long)C, (unsigned long long)P, (unsigned long long)Q,
           bytes / 1e6, g);
    auto median = [](std::vector<float> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    float copy_us = 0;
    for (const variant &v : vs)
        if (v.kind == 3)
            copy_us = median(v.us);
    printf("| pattern | us | GB/s | %% of copy (both ways) | rounds (us) |\n| --- | ---: | ---: | ---: | --- |\n");
    for (const variant &v : vs) {
        const float m = median(v.us);
        printf("| %s | %.1f | %.0f | ", v.name.c_str(), m, (v.two_way ? 2.0 : 1.0) * bytes / m / 1e3);
        if (v.two_way)
            printf("%.1f%%", 100.0 * copy_us / m);
        printf(" |");
        for (float u : v.us)
            printf(" %.1f", u);
        printf(" |\n");
    }
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    return 0;
}
