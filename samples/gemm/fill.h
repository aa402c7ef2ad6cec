/* Random bf16 data for tma-gemm, generated on the GPU (fill.cu). */
#ifndef SAMPLES_GEMM_FILL_H
#define SAMPLES_GEMM_FILL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Fill n bf16 values at p (device memory) with uniform values in [-1, 1) from `seed`. @return the launch error */
cudaError_t fill_random_bf16(void *p, size_t n, uint64_t seed, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLES_GEMM_FILL_H */
