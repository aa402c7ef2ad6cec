/* Whether the samples can run their kernels: device 0 is a Hopper (sm_90) GPU. Otherwise it says why, and that the
 * sample runs `instead` (its CPU-model pipeline) or, with `instead` NULL, that it stops there. Header-only; CUDA
 * runtime. */
#ifndef SAMPLES_COMMON_HOPPER_H
#define SAMPLES_COMMON_HOPPER_H

#include <stdio.h>

#include <cuda_runtime.h>

#include "cuda_check.h"

/* The end of the "no Hopper GPU" line: what runs instead, or that the sample stops. */
static inline void sample_no_hopper_(const char *instead) {
    if (instead)
        printf(" Running %s instead.\n", instead);
    else
        printf(" This sample stops here.\n");
}

/** 1 when device 0 is sm_90 (and made current, its name, SMs and memory printed); 0, with the reason and what runs
 *  instead (NULL: nothing) printed, when there is no CUDA device or it is not Hopper. */
static inline int sample_have_hopper(const char *instead) {
    int ndev = 0;
    struct cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("No CUDA GPU here (%s): the kernels cannot run.",
               e != cudaSuccess ? cudaGetErrorString(e) : "no device found");
        sample_no_hopper_(instead);
        return 0;
    }
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) {
        printf("Device 0 is %s (sm_%d%d), not Hopper (sm_90): TMA kernels need sm_90.", prop.name, prop.major,
               prop.minor);
        sample_no_hopper_(instead);
        return 0;
    }
    CUDA_CHECK(cudaSetDevice(0));
    printf("GPU: %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
    return 1;
}

#endif /* SAMPLES_COMMON_HOPPER_H */
