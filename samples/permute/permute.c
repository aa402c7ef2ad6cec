/* tma-permute-example: NCHW -> NHWC with tma_permute: a plan, what it chose, a run, a check; then a 17 x 31 transpose.
 *
 * What it shows: describing a permutation (tma_permute_desc: dimensions innermost first, dst dimension i = src
 * dimension perm[i], strides 0 = dense), planning it once (tma_permute_plan_make: the dimensions merged, a copy or a
 * tile transpose, the tile, the grid), running it (tma_permute_run) and comparing the result with a CPU permutation,
 * element by element. Then a dense fp32 17 x 31 transpose, whose rows (124 bytes in, 68 out) no TMA map can describe
 * (its strides must be multiples of 16 bytes): the same call takes it, the plan picks the thread kernel. Without a
 * Hopper GPU the same descriptors run through the kernels' pipelines on libtma's CPU model of the copy engine
 * (tma_permute_model). How it works: docs/guide/permute.md; the benchmark: samples/bench/permute/ (tma-permute).
 *
 * Build and run:  cmake -B build && cmake --build build -j && ./build/samples/tma-permute-example
 * Exit status: 0 when both results equal the CPU's, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/cuda_check.h"
#include "../common/hopper.h"

enum { N = 2, C = 16, H = 14, W = 16, ELEMS = N * C * H * W, ROWS = 17, COLS = 31 };

static const char *path(uint32_t threads, uint32_t transpose) {
    return threads ? "the thread kernel" : transpose ? "a tile transpose" : "a TMA copy";
}

/* dst = permute(src), both dense of `bytes`: on the GPU (plan, say what it chose, run, copy back) or on the model. */
static tma_status permute(tma_permute_desc d, size_t bytes, int gpu, tma_diag *diag) {
    if (!gpu) {
        tma_permute_model_facts f;
        const tma_status st = tma_permute_model(&d, &f, diag);
        if (st == TMA_OK)
            printf("CPU model: %s, %llu tiles\n", path(f.threads, f.transpose), (unsigned long long)f.tiles);
        return st;
    }
    void *src, *dst, *host_dst = d.dst;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    CUDA_CHECK(cudaMemcpy(src, d.src, bytes, cudaMemcpyHostToDevice));
    d.src = src, d.dst = dst;
    tma_permute_plan plan;
    tma_status st = tma_permute_plan_make(&plan, &d, diag);
    if (st == TMA_OK) {
        printf("plan: %s, %u map dimensions, tile {%u, %u, %u}, %llu tiles on %u blocks of %u threads\n",
               path(plan.threads, plan.transpose), plan.rank, plan.box[0], plan.box[1], plan.box[2],
               (unsigned long long)plan.tiles, plan.grid, plan.block);
        st = tma_permute_run(&plan, NULL, diag);
    }
    if (st == TMA_OK)
        CUDA_CHECK(cudaMemcpy(host_dst, dst, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    return st;
}

int main(void) {
    static uint16_t x[ELEMS], y[ELEMS];              /* x is N x C x H x W, y becomes N x H x W x C (bf16 bits) */
    static uint32_t a[ROWS * COLS], b[ROWS * COLS];  /* a is ROWS x COLS (fp32 bits), b becomes a^T */
    for (uint32_t i = 0; i < ELEMS; i++)
        x[i] = (uint16_t)i;
    for (uint32_t i = 0; i < ROWS * COLS; i++)
        a[i] = 0x3F800000u + i;
    memset(y, 0xFF, sizeof y);
    memset(b, 0xFF, sizeof b);
    /* src dimensions innermost first: {W, H, C, N}; dst = {C, W, H, N}, so perm = {2, 0, 1, 3}. */
    const tma_permute_desc d = {.elem_bytes = 2, .rank = 4, .src = x, .dst = y, .src_dims = {W, H, C, N},
                                .perm = {2, 0, 1, 3}};
    const tma_permute_desc t = tma_transpose_desc(4, a, b, ROWS, COLS, 0, 0); /* pitches 0: dense */
    const int gpu = sample_have_hopper("the kernels' pipelines on the CPU model of the copy engine");
    tma_diag diag;
    tma_status st = permute(d, sizeof x, gpu, &diag);
    if (st == TMA_OK)
        st = permute(t, sizeof a, gpu, &diag);
    if (st != TMA_OK) {
        fprintf(stderr, "permute: %s: %s\n", tma_status_name(st), diag.message);
        return 1;
    }

    int bad = 0, bad_t = 0;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++)
                    bad += y[((n * H + h) * W + w) * C + c] != x[((n * C + c) * H + h) * W + w];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            bad_t += b[c * ROWS + r] != a[r * COLS + c];
    printf("NCHW %d x %d x %d x %d -> NHWC, bf16: %d of %d elements differ from the CPU permutation\n", N, C, H, W,
           bad, ELEMS);
    printf("transpose %d x %d, fp32, dense: %d of %d elements differ\n", ROWS, COLS, bad_t, ROWS * COLS);
    return bad != 0 || bad_t != 0;
}
