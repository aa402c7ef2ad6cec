/* A stand-in CUDA driver for tests/test_encode.c (loaded through TMA_LIBCUDA): the entry points src/encode.c opens,
 * with the one behaviour of the real encoders these tests need (docs/HARDWARE.md "Encoding needs a current
 * context"): cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col return CUDA_ERROR_INVALID_CONTEXT unless a context is
 * current on the calling thread. No thread starts with one. FAKE_LIBCUDA_NO_DEVICE set: cuDeviceGet fails (no
 * device). fake_libcuda_state reports what happened, for the test to check. */
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

static __thread int depth;          /* contexts pushed on this thread */
static CUcontext primary = (CUcontext)(void *)0x1234;
static int retains, pushes, pops, encodes_in_context;

CUresult cuInit(unsigned int flags) {
    (void)flags;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char **name) {
    *name = r == CUDA_ERROR_INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT"
            : r == CUDA_ERROR_NO_DEVICE     ? "CUDA_ERROR_NO_DEVICE"
                                            : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *ctx) {
    *ctx = depth > 0 ? primary : NULL;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
    if (getenv("FAKE_LIBCUDA_NO_DEVICE") != NULL)
        return CUDA_ERROR_NO_DEVICE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
    (void)dev;
    __atomic_add_fetch(&retains, 1, __ATOMIC_SEQ_CST);
    *ctx = primary;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
    if (ctx != primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    depth++;
    __atomic_add_fetch(&pushes, 1, __ATOMIC_SEQ_CST);
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    *ctx = primary;
    __atomic_add_fetch(&pops, 1, __ATOMIC_SEQ_CST);
    return CUDA_SUCCESS;
}

static CUresult encode(CUtensorMap *map) {
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    memset(map, 0x5a, sizeof *map);
    __atomic_add_fetch(&encodes_in_context, 1, __ATOMIC_SEQ_CST);
    return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr,
                                const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *box,
                                const cuuint32_t *estride, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
    (void)type, (void)rank, (void)addr, (void)dim, (void)stride, (void)box, (void)estride, (void)il, (void)sw;
    (void)l2, (void)oob;
    return encode(map);
}

CUresult cuTensorMapEncodeIm2col(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr,
                                 const cuuint64_t *dim, const cuuint64_t *stride, const int *lower, const int *upper,
                                 cuuint32_t channels, cuuint32_t pixels, const cuuint32_t *estride,
                                 CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                                 CUtensorMapFloatOOBfill oob) {
    (void)type, (void)rank, (void)addr, (void)dim, (void)stride, (void)lower, (void)upper, (void)channels;
    (void)pixels, (void)estride, (void)il, (void)sw, (void)l2, (void)oob;
    return encode(map);
}

/* What happened so far: primary-context retains, pushes, pops, encodes made with a context current, and whether the
 * calling thread has a context now. */
void fake_libcuda_state(int *r, int *pu, int *po, int *e, int *current) {
    *r = retains, *pu = pushes, *po = pops, *e = encodes_in_context, *current = depth > 0;
}
