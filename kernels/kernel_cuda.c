/* The kernels' CUDA-side reporting (kernel_diag.h): a failed runtime call, the device check. */
#include "kernel_diag.h"

tma_status kd_cuda(tma_diag *diag, cudaError_t e, const char *what) {
    if (e == cudaSuccess)
        return TMA_OK;
    return kd_fail(diag, TMA_ERR_CUDA, "%s failed: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

tma_status kd_require_sm90(tma_diag *diag, const char *who, int *sms) {
    int dev = 0, major = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
        (void)cudaGetLastError();
        return kd_fail(diag, TMA_ERR_DEVICE, "%s: no CUDA device (%s): the kernel needs a Hopper (sm_90) GPU", who,
                       cudaGetErrorString(e));
    }
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess)
        return kd_cuda(diag, e, "cudaGetDevice / cudaDeviceGetAttribute");
    if (major != 9)
        return kd_fail(diag, TMA_ERR_DEVICE,
                       "%s: device %d has compute capability %d.x; the kernel is built for Hopper (sm_90a): run it "
                       "on an H100 or H200",
                       who, dev, major);
    return TMA_OK;
}
