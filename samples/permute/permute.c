/* tma-permute-example: NCHW -> NHWC with tma_permute: a plan, what it chose, a run, a check.
 *
 * What it shows: describing a permutation (tma_permute_desc: dimensions innermost first, dst dimension i = src
 * dimension perm[i], strides 0 = dense), planning it once (tma_permute_plan_make: the dimensions merged, a copy or a
 * tile transpose, the tile, the grid), running it (tma_permute_run) and comparing the result with a CPU permutation,
 * element by element. Without a Hopper GPU the same descriptor runs through the kernel's tile pipeline on libtma's
 * CPU model of the copy engine (tma_permute_model). How it works: docs/guide/permute.md; the benchmark:
 * samples/bench/permute/ (tma-permute).
 *
 * Build and run:  cmake -B build && cmake --build build -j && ./build/samples/tma-permute-example
 * Exit status: 0 when the result equals the CPU permutation, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/cuda_check.h"
#include "../common/hopper.h"
#include "../common/host.h"

enum { N = 2, C = 16, H = 14, W = 16, ELEMS = N * C * H * W };

/* dst = permute(src) on the GPU: plan, say what the plan chose, run, copy back. */
static tma_status permute_on_gpu(tma_permute_desc d, uint16_t *y, tma_diag *diag) {
    void *src, *dst;
    CUDA_CHECK(cudaMalloc(&src, ELEMS * 2));
    CUDA_CHECK(cudaMalloc(&dst, ELEMS * 2));
    CUDA_CHECK(cudaMemcpy(src, d.src, ELEMS * 2, cudaMemcpyHostToDevice));
    d.src = src, d.dst = dst;
    tma_permute_plan plan;
    tma_status st = tma_permute_plan_make(&plan, &d, diag);
    if (st == TMA_OK) {
        printf("plan: %s, %u map dimensions, tile {%u, %u, %u}, %llu tiles on %u blocks of %u threads\n",
               plan.transpose ? "tile transpose" : "TMA copy", plan.rank, plan.box[0], plan.box[1], plan.box[2],
               (unsigned long long)plan.tiles, plan.grid, plan.block);
        st = tma_permute_run(&plan, NULL, diag);
    }
    if (st == TMA_OK)
        CUDA_CHECK(cudaMemcpy(y, dst, ELEMS * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    return st;
}

int main(void) {
    static uint16_t x[ELEMS], y[ELEMS]; /* x is N x C x H x W, y becomes N x H x W x C (bf16 bits) */
    for (uint32_t i = 0; i < ELEMS; i++)
        x[i] = (uint16_t)i;
    memset(y, 0xFF, sizeof y);
    /* src dimensions innermost first: {W, H, C, N}; dst = {C, W, H, N}, so perm = {2, 0, 1, 3}. */
    const tma_permute_desc d = {.elem_bytes = 2, .rank = 4, .src = x, .dst = y, .src_dims = {W, H, C, N},
                                .perm = {2, 0, 1, 3}};
    tma_diag diag;
    tma_status st;
    if (sample_have_hopper("the kernel's tile pipeline on the CPU model of the copy engine")) {
        st = permute_on_gpu(d, y, &diag);
    } else {
        tma_permute_model_facts facts;
        st = tma_permute_model(&d, &facts, &diag);
        if (st == TMA_OK)
            printf("CPU model: %s; tiles: %llu, bytes a load: %zu, TMA store boxes: %llu (0: the threads store)\n",
                   facts.transpose ? "a tile transpose" : "a TMA copy", (unsigned long long)facts.tiles,
                   facts.load_tx_bytes, (unsigned long long)facts.stores);
    }
    if (st != TMA_OK) {
        fprintf(stderr, "permute: %s: %s\n", tma_status_name(st), diag.message);
        return 1;
    }

    int bad = 0;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++)
                    bad += y[((n * H + h) * W + w) * C + c] != x[((n * C + c) * H + h) * W + w];
    printf("NCHW %d x %d x %d x %d -> NHWC, bf16: %d of %d elements differ from the CPU permutation\n", N, C, H, W,
           bad, ELEMS);
    return bad != 0;
}
