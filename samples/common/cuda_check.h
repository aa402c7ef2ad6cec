/* CUDA_CHECK(call): a failing CUDA runtime call prints file:line, the call and the error, then exits.
 * For the samples (programs, not the library: libtma itself returns statuses). */
#ifndef SAMPLES_COMMON_CUDA_CHECK_H
#define SAMPLES_COMMON_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                            \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

#endif /* SAMPLES_COMMON_CUDA_CHECK_H */
