/* Build check: the device headers compile in a build for several architectures (this file is compiled for
 * sm_80 and sm_90a together; see tests/CMakeLists.txt). Below sm_90 the TMA functions trap; a kernel takes its
 * TMA path only where TMA_DEVICE_ARCH_OK is 1. Nothing here is launched. */
#include "tma/device.cuh"
#include "tma/wgmma.cuh"

__global__ void multiarch_kernel(const __grid_constant__ tma_tensor t, float *out) {
#if TMA_DEVICE_ARCH_OK
    __shared__ alignas(1024) uint8_t tile[4096];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_mbar_expect_box(&bar, &t);
        tma_load_2d(tile, &t, &bar, 0, 0);
    }
    tma_mbar_wait(&bar, 0);
    out[threadIdx.x] = *tma_box_elem<float>(&t, tile, threadIdx.x / 8u, threadIdx.x % 8u);
#else
    out[threadIdx.x] = 0.0f; /* the sm_80 path of a real kernel: no TMA */
#endif
}
