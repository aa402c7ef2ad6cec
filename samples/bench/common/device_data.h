/* Data for the GEMM samples, made and compared on the GPU (device_data.cu): random bf16, and the comparison of two
 * bf16 outputs element by element. */
#ifndef SAMPLES_COMMON_DEVICE_DATA_H
#define SAMPLES_COMMON_DEVICE_DATA_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Fill n bf16 values at p (device memory) with uniform values in [-1, 1) from `seed`. @return the launch error */
cudaError_t fill_random_bf16(void *p, size_t n, uint64_t seed, cudaStream_t stream);

/** What compare_bf16 found. */
typedef struct compare_result {
    unsigned long long bad;      /**< elements outside the tolerance, or not finite in either */
    unsigned long long first;    /**< index of one bad element (the smallest), or n when none */
    float max_abs_diff;          /**< over the finite pairs */
} compare_result;

/** Compare n bf16 values at got and ref (device memory): element i is bad unless both are finite and
 *  |got - ref| <= rel * |ref| + abs. Synchronous. @return the first CUDA error */
cudaError_t compare_bf16(const void *got, const void *ref, size_t n, float rel, float abs, compare_result *r);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLES_COMMON_DEVICE_DATA_H */
