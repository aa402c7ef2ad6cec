/* im2col_probe: one im2col load of the table in im2col_probe.h, in a process of its own, for the gpu suite
 * (test_gpu_im2col, gpu_im2col/probe_*), which runs it once per case (fork + exec) and models what it wrote.
 *
 *   im2col_probe INDEX SEED OUT_FILE
 *
 * Writes OUT_FILE: int32 CUDA error of the load (0: completed), uint32 arena bytes, then the arena (the poisoned
 * shared memory the load wrote into, at I2C_PROBE_DST). A load that faults ends this process's CUDA context only.
 * Exit status: 0 written (whatever the load did), 2 bad arguments or a setup failure (message on stderr).
 *
 * Built without TMA_CHECKED: it issues what checked mode may refuse, to see what the hardware does. The wait is
 * tma_mbar_wait's (bounded: a copy that never completes traps instead of hanging). */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "tma/device.cuh"
#include "tma/tma.h"

#include "conformance_arena.cuh"
#include "im2col_probe.h"

template <int Rank>
static __device__ void probe_issue(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5],
                                   const uint16_t (&o)[3]) {
    tma_mbar_expect_box(bar, t);
    tma_load_im2col<Rank>(dst, t, bar, c, o);
}

__global__ void probe_kernel(const __grid_constant__ tma_tensor t, const __grid_constant__ i2c_probe_case pc,
                             const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = conf_arena(dyn);
    conf_fill_arena_and_barrier(arena, poison, arena_bytes, &bar);
    if (threadIdx.x == 0) {
        const int32_t c[5] = {pc.coord[0], pc.coord[1], pc.coord[2], pc.coord[3], pc.coord[4]};
        const uint16_t o[3] = {pc.offset[0], pc.offset[1], pc.offset[2]};
        switch (t.box.rank) {
        case 3: probe_issue<3>(arena + I2C_PROBE_DST, &t, &bar, c, o); break;
        case 4: probe_issue<4>(arena + I2C_PROBE_DST, &t, &bar, c, o); break;
        default: probe_issue<5>(arena + I2C_PROBE_DST, &t, &bar, c, o); break;
        }
    }
    tma_mbar_wait(&bar, 0);
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[i] = arena[i];
}

static int setup_failed(const char *what, cudaError_t e) {
    fprintf(stderr, "im2col_probe: %s: %s\n", what, cudaGetErrorString(e));
    return 2;
}

#define SETUP(call)                                                                                 \
    do {                                                                                            \
        const cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                      \
            return setup_failed(#call, e_);                                                         \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: im2col_probe INDEX SEED OUT_FILE\n");
        return 2;
    }
    i2c_probe_case cases[I2C_PROBE_MAX];
    const int n = i2c_probe_cases(cases), index = atoi(argv[1]);
    const uint64_t seed = strtoull(argv[2], NULL, 0);
    if (index < 0 || index >= n) {
        fprintf(stderr, "im2col_probe: case %d: the table has %d\n", index, n);
        return 2;
    }
    i2c_probe_case pc = cases[index];
    const size_t extent = i2c_probe_extent(&pc.d);
    const uint32_t arena = i2c_probe_arena(&pc.d);
    uint8_t *image = (uint8_t *)malloc(extent), *poison = (uint8_t *)malloc(arena), *got = (uint8_t *)malloc(arena);
    if (image == NULL || poison == NULL || got == NULL) {
        fprintf(stderr, "im2col_probe: out of host memory\n");
        return 2;
    }
    i2c_probe_bytes(seed, 2u * (uint64_t)index, image, extent);
    i2c_probe_bytes(seed, 2u * (uint64_t)index + 1u, poison, arena);
    memcpy(got, poison, arena);

    uint8_t *d_image, *d_poison, *d_out;
    SETUP(cudaMalloc((void **)&d_image, extent));
    SETUP(cudaMalloc((void **)&d_poison, arena));
    SETUP(cudaMalloc((void **)&d_out, arena));
    SETUP(cudaMemcpy(d_image, image, extent, cudaMemcpyHostToDevice));
    SETUP(cudaMemcpy(d_poison, poison, arena, cudaMemcpyHostToDevice));
    SETUP(cudaMemcpy(d_out, poison, arena, cudaMemcpyHostToDevice));
    tma_im2col_desc d = pc.d;
    d.global_address = d_image;
    tma_tensor t;
    tma_diag diag;
    const tma_status st = tma_tensor_make_im2col(&t, &d, &diag);
    if (st != TMA_OK) {
        fprintf(stderr, "im2col_probe: case %d: tma_tensor_make_im2col: %s: %s\n", index, tma_status_name(st),
                diag.message);
        return 2;
    }
    const size_t smem = arena + 1024;
    SETUP(cudaFuncSetAttribute((const void *)probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    probe_kernel<<<1, 128, smem>>>(t, pc, d_poison, arena, d_out);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaMemcpy(got, d_out, arena, cudaMemcpyDeviceToHost);

    FILE *f = fopen(argv[3], "wb");
    const int32_t status = (int32_t)e;
    if (f == NULL || fwrite(&status, sizeof status, 1, f) != 1 || fwrite(&arena, sizeof arena, 1, f) != 1 ||
        fwrite(got, 1, arena, f) != arena || fclose(f) != 0) {
        fprintf(stderr, "im2col_probe: cannot write %s\n", argv[3]);
        return 2;
    }
    return 0;
}
