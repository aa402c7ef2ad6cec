/* The kernels' CUDA-side reporting (kernel_diag.h): a failed runtime call, the device check. */
#include "kernel_diag.h"

/* kd_no_gpu_reason's words for e, with the versions it needs; false for any other error. */
static bool no_gpu_reason(cudaError_t e, char *out, size_t cap) {
    int driver = 0, runtime = 0;
    (void)cudaDriverGetVersion(&driver); /* 0 when no driver is installed: what tells "none" from "too old" */
    (void)cudaRuntimeGetVersion(&runtime);
    return kd_no_gpu_reason(e, driver, runtime, out, cap);
}

tma_status kd_cuda(tma_diag *diag, cudaError_t e, const char *what) {
    if (e == cudaSuccess)
        return TMA_OK;
    char why[TMA_DIAG_MESSAGE_BYTES];
    if (no_gpu_reason(e, why, sizeof why))
        return KD_FAIL(diag, CUDA_NO_GPU, tma_arg_s(what), tma_arg_s(why));
    return KD_FAIL(diag, CUDA_FAILED, tma_arg_s(what), tma_arg_s(cudaGetErrorName(e)),
                   tma_arg_s(cudaGetErrorString(e)));
}

tma_status kd_require_sm90(tma_diag *diag, const char *who, int *sms) {
    int dev = 0, major = 0, count = 0;
    /* cudaGetDeviceCount says why there is no device (cudaGetDevice may not, the runtime initialising lazily). */
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count == 0)
        e = cudaErrorNoDevice;
    char why[TMA_DIAG_MESSAGE_BYTES];
    if (e != cudaSuccess && no_gpu_reason(e, why, sizeof why)) {
        (void)cudaGetLastError(); /* not sticky: clear it for the caller's next call */
        return KD_FAIL(diag, NEEDS_HOPPER, tma_arg_s(who), tma_arg_s(why));
    }
    if (e == cudaSuccess)
        e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess)
        return kd_cuda(diag, e, "cudaGetDeviceCount / cudaGetDevice / cudaDeviceGetAttribute");
    if (major != 9)
        return KD_FAIL(diag, NOT_HOPPER, tma_arg_s(who), tma_arg_i(dev), tma_arg_i(major));
    return TMA_OK;
}

cudaError_t kd_malloc_on(void **p, size_t bytes, cudaStream_t stream) {
    const cudaError_t e = stream ? cudaMallocAsync(p, bytes, stream) : cudaMalloc(p, bytes);
    if (e != cudaSuccess)
        *p = NULL;
    return e;
}

cudaError_t kd_free_on(void **p, cudaStream_t stream) {
    const cudaError_t e = *p == NULL ? cudaSuccess : stream ? cudaFreeAsync(*p, stream) : cudaFree(*p);
    *p = NULL;
    return e;
}
