/* The baseline tma-permute compares with where PyTorch is not in the process: a plain element-wise index kernel
 * (index_permute.cu), one thread per dst element, the src offset computed from the dst index by divisions by the dst
 * dimensions. Not library code. */
#ifndef SAMPLES_BENCH_PERMUTE_INDEX_PERMUTE_H
#define SAMPLES_BENCH_PERMUTE_INDEX_PERMUTE_H

#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/** dst = permute(src) as dst's dimensions and both tensors' strides say; dimension 0 innermost. */
typedef struct index_permute_args {
    uint32_t elem_bytes;     /**< 1, 2, 4 or 8 */
    uint32_t rank;           /**< 1..5 */
    const void *src;         /**< device address, aligned to the element */
    void *dst;               /**< likewise */
    uint64_t dims[5];        /**< dst's dimensions */
    uint64_t src_strides[5]; /**< bytes between consecutive indices of dst dimension i in src (multiples of the
                                  element) */
    uint64_t dst_strides[5]; /**< bytes between consecutive indices of dst dimension i in dst */
} index_permute_args;

/** Launch the index kernel on `stream` (asynchronous): a grid-stride loop over dst's elements in order, 256 threads a
 *  block, as many blocks as the device holds at once (fewer for small tensors); 32-bit index arithmetic where every
 *  element offset fits, 64-bit otherwise. @return the first CUDA error (cudaErrorInvalidValue for bad arguments) */
cudaError_t index_permute(const index_permute_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLES_BENCH_PERMUTE_INDEX_PERMUTE_H */
