/* tma_encode_tiled: check, then call cuTensorMapEncodeTiled from the driver found at run time.
 *
 * Nothing links against libcuda: the library (and everything but this function) works on a machine
 * with no driver. The function pointer type is our own, because the PFN_* typedefs of cudaTypedefs.h
 * changed between CUDA 12 and 13, and cudaGetDriverEntryPoint is deprecated in CUDA 13. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h> /* the driver's types, for the function pointer and the checks below; private to src/ */

#include "internal.h"

/* tma_map is the driver's CUtensorMap, byte for byte, whatever alignment a CUDA version declares. */
_Static_assert(sizeof(tma_map) == sizeof(CUtensorMap), "tma_map holds a CUtensorMap");
_Static_assert(_Alignof(tma_map) % _Alignof(CUtensorMap) == 0, "tma_map is at least as aligned as CUtensorMap");
_Static_assert(sizeof(tma_tensor) == 256 && _Alignof(tma_tensor) == 128, "tma_tensor: 256 bytes, 128-aligned");
_Static_assert(sizeof(tma_box_info) == 14 * 4 + 6 * 8, "tma_box_info has no padding bytes (box facts built on the "
                                                      "device are compared with the host's byte for byte)");

/* The tma_* enums are the driver's enums: a value passes straight through. */
_Static_assert(TMA_DTYPE_U8 == (int)CU_TENSOR_MAP_DATA_TYPE_UINT8, "dtype");
_Static_assert(TMA_DTYPE_U16 == (int)CU_TENSOR_MAP_DATA_TYPE_UINT16, "dtype");
_Static_assert(TMA_DTYPE_U32 == (int)CU_TENSOR_MAP_DATA_TYPE_UINT32, "dtype");
_Static_assert(TMA_DTYPE_I32 == (int)CU_TENSOR_MAP_DATA_TYPE_INT32, "dtype");
_Static_assert(TMA_DTYPE_U64 == (int)CU_TENSOR_MAP_DATA_TYPE_UINT64, "dtype");
_Static_assert(TMA_DTYPE_I64 == (int)CU_TENSOR_MAP_DATA_TYPE_INT64, "dtype");
_Static_assert(TMA_DTYPE_F16 == (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT16, "dtype");
_Static_assert(TMA_DTYPE_F32 == (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "dtype");
_Static_assert(TMA_DTYPE_F64 == (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT64, "dtype");
_Static_assert(TMA_DTYPE_BF16 == (int)CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, "dtype");
_Static_assert(TMA_DTYPE_F32_FTZ == (int)CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, "dtype");
_Static_assert(TMA_DTYPE_TF32 == (int)CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, "dtype");
_Static_assert(TMA_DTYPE_TF32_FTZ == (int)CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ, "dtype");
_Static_assert(TMA_SWIZZLE_NONE == (int)CU_TENSOR_MAP_SWIZZLE_NONE, "swizzle");
_Static_assert(TMA_SWIZZLE_32B == (int)CU_TENSOR_MAP_SWIZZLE_32B, "swizzle");
_Static_assert(TMA_SWIZZLE_64B == (int)CU_TENSOR_MAP_SWIZZLE_64B, "swizzle");
_Static_assert(TMA_SWIZZLE_128B == (int)CU_TENSOR_MAP_SWIZZLE_128B, "swizzle");
#if CUDA_VERSION >= 12080
_Static_assert(TMA_SWIZZLE_128B_ATOM_32B == (int)CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B, "swizzle");
_Static_assert(TMA_SWIZZLE_128B_ATOM_64B == (int)CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B, "swizzle");
#endif
_Static_assert(TMA_INTERLEAVE_NONE == (int)CU_TENSOR_MAP_INTERLEAVE_NONE, "interleave");
_Static_assert(TMA_INTERLEAVE_16B == (int)CU_TENSOR_MAP_INTERLEAVE_16B, "interleave");
_Static_assert(TMA_INTERLEAVE_32B == (int)CU_TENSOR_MAP_INTERLEAVE_32B, "interleave");
_Static_assert(TMA_L2_NONE == (int)CU_TENSOR_MAP_L2_PROMOTION_NONE, "l2");
_Static_assert(TMA_L2_256B == (int)CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "l2");
_Static_assert(TMA_OOB_ZERO == (int)CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, "oob");
_Static_assert(TMA_OOB_NAN == (int)CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, "oob");

typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                    const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
typedef CUresult (*encode_im2col_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                     const cuuint64_t *, const int *, const int *, cuuint32_t, cuuint32_t,
                                     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*error_name_fn)(CUresult, const char **);
typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*primary_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);

static struct {
    pthread_once_t once;
    encode_tiled_fn encode;
    encode_im2col_fn encode_im2col; /* NULL in a driver without it: tma_encode_im2col says so */
    error_name_fn error_name;
    ctx_get_fn ctx_get; /* the context calls of encode_context_enter (NULL where the driver lacks one) */
    device_get_fn device_get;
    primary_retain_fn primary_retain;
    ctx_push_fn ctx_push;
    ctx_pop_fn ctx_pop;
    pthread_once_t primary_once;
    CUcontext primary;       /* device 0's primary context, retained once where an encode found no context */
    CUresult primary_result; /* ... or why it could not be */
    CUresult init_result;
    tma_violation why;                          /* why the driver is unusable, if it is (a DRIVER_ rule) ... */
    char detail[sizeof(((tma_diag *)0)->message)]; /* ... and the text it quotes: dlerror()'s, or the path */
} driver = {.once = PTHREAD_ONCE_INIT, .primary_once = PTHREAD_ONCE_INIT};

static void load_driver(void) {
    const char *path = getenv("TMA_LIBCUDA");
    if (path == NULL || *path == '\0')
        path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(driver.detail, sizeof driver.detail, "%s", dlerror()); /* dlerror names the path */
        driver.why = tma_violation_of(TMA_RULE_DRIVER_OPEN, TMA_RULE_ARGS(tma_arg_s(driver.detail)));
        return;
    }
    init_fn init = (init_fn)dlsym(lib, "cuInit");
    driver.error_name = (error_name_fn)dlsym(lib, "cuGetErrorName");
    driver.encode = (encode_tiled_fn)dlsym(lib, "cuTensorMapEncodeTiled");
    driver.encode_im2col = (encode_im2col_fn)dlsym(lib, "cuTensorMapEncodeIm2col");
    driver.ctx_get = (ctx_get_fn)dlsym(lib, "cuCtxGetCurrent");
    driver.device_get = (device_get_fn)dlsym(lib, "cuDeviceGet");
    driver.primary_retain = (primary_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
    driver.ctx_push = (ctx_push_fn)dlsym(lib, "cuCtxPushCurrent_v2");
    driver.ctx_pop = (ctx_pop_fn)dlsym(lib, "cuCtxPopCurrent_v2");
    if (init == NULL || driver.encode == NULL) {
        driver.encode = NULL;
        snprintf(driver.detail, sizeof driver.detail, "%s", path);
        driver.why = tma_violation_of(TMA_RULE_DRIVER_MISSING, TMA_RULE_ARGS(tma_arg_s(driver.detail)));
        return;
    }
    driver.init_result = init(0);
}

/* "CUDA_ERROR_X (n)", or "CUresult n" when the driver cannot name it. */
static const char *cu_error_name(CUresult r, char *buf, size_t n) {
    const char *name = NULL;
    if (driver.error_name == NULL || driver.error_name(r, &name) != CUDA_SUCCESS || name == NULL)
        snprintf(buf, n, "CUresult %d", (int)r);
    else
        snprintf(buf, n, "%s (%d)", name, (int)r);
    return buf;
}

/* A refusal of the encoder: the rule's status, and its message in diag (optional). */
static tma_status fail(tma_diag *diag, tma_violation v) {
    if (diag) {
        memset(diag, 0, sizeof *diag); /* no stale bytes after the text, as check.c's diagnostics */
        diag->status = tma_violation_status(&v);
        tma_violation_format(&v, diag->message, sizeof diag->message);
    }
    return tma_violation_status(&v);
}

/* The driver loaded and initialised, or the reason it is not. */
static tma_status driver_ready(tma_diag *diag) {
    pthread_once(&driver.once, load_driver);
    if (driver.encode == NULL)
        return fail(diag, driver.why);
    if (driver.init_result != CUDA_SUCCESS) {
        char name[64];
        const char *error = cu_error_name(driver.init_result, name, sizeof name);
        return fail(diag, tma_violation_of(TMA_RULE_DRIVER_INIT, TMA_RULE_ARGS(tma_arg_s(error))));
    }
    return TMA_OK;
}

static void retain_primary(void) {
    CUdevice dev;
    if (driver.device_get == NULL || driver.primary_retain == NULL || driver.ctx_push == NULL ||
        driver.ctx_pop == NULL) {
        driver.primary_result = CUDA_ERROR_NOT_SUPPORTED;
        return;
    }
    driver.primary_result = driver.device_get(&dev, 0);
    if (driver.primary_result == CUDA_SUCCESS)
        driver.primary_result = driver.primary_retain(&driver.primary, dev);
}

/* The driver's encoders need a context current on the calling thread: without one they return
 * CUDA_ERROR_INVALID_CONTEXT, whatever the descriptor, a host address included (measured: docs/HARDWARE.md "Encoding
 * needs a current context"). Where the thread has none, the encode runs inside device 0's primary context (the one
 * the CUDA runtime would make current), retained once for the process, pushed for the call and popped after it:
 * the thread is left as it was. *pushed: whether encode_context_leave has a context to pop. */
static tma_status encode_context_enter(const char *function, int *pushed, tma_diag *diag) {
    CUcontext current = NULL;
    *pushed = 0;
    if (driver.ctx_get == NULL || driver.ctx_get(&current) != CUDA_SUCCESS || current != NULL)
        return TMA_OK; /* a context is current (or the driver cannot say: the call will) */
    pthread_once(&driver.primary_once, retain_primary);
    CUresult r = driver.primary_result;
    if (r == CUDA_SUCCESS && (r = driver.ctx_push(driver.primary)) == CUDA_SUCCESS) {
        *pushed = 1;
        return TMA_OK;
    }
    char name[64];
    const char *error = cu_error_name(r, name, sizeof name);
    return fail(diag, tma_violation_of(TMA_RULE_DRIVER_NO_CONTEXT, TMA_RULE_ARGS(tma_arg_s(function), tma_arg_s(error))));
}

static void encode_context_leave(int pushed) {
    CUcontext popped;
    if (pushed)
        (void)driver.ctx_pop(&popped);
}

/* What both encoders check before calling the driver, after the descriptor's own rules (tma_check_tiled /
 * tma_check_im2col, or the caller's check of the same rules): a map to write, 64-byte aligned, and a driver. */
static tma_status encode_prologue(const struct CUtensorMap_st *map, tma_diag *diag) {
    if ((uintptr_t)map % TMA_MAP_ALIGN != 0)
        return fail(diag, tma_violation_of(TMA_RULE_ENCODE_MAP_ALIGN, TMA_RULE_ARGS(tma_arg_u(TMA_MAP_ALIGN))));
    return driver_ready(diag);
}

/* The driver's answer to a descriptor libtma accepted; `refused` is the rule of a refusal (DRIVER_REFUSED, or the
 * template's DRIVER_REFUSED_NULL_TEMPLATE). */
static tma_status encode_result(CUresult r, const char *function, tma_rule refused, tma_diag *diag) {
    if (r != CUDA_SUCCESS) {
        char name[64];
        const char *error = cu_error_name(r, name, sizeof name);
        return fail(diag, tma_violation_of((uint32_t)refused, TMA_RULE_ARGS(tma_arg_s(function), tma_arg_s(error))));
    }
    if (diag)
        *diag = (tma_diag){TMA_OK, ""};
    return TMA_OK;
}

/* The driver's encoding of a descriptor that passed the rules (the caller checked it): map alignment, the driver, the
 * call. */
static tma_status encode_tiled_checked(struct CUtensorMap_st *map, const tma_tiled_desc *d, tma_diag *diag) {
    tma_status st = encode_prologue(map, diag);
    if (st != TMA_OK)
        return st;
    cuuint64_t gdim[5], gstride[4];
    cuuint32_t box[5], estride[5];
    for (uint32_t i = 0; i < d->rank; i++) {
        gdim[i] = d->global_dim[i];
        box[i] = d->box_dim[i];
        estride[i] = tma_rule_estride(d, i);
        if (i + 1 < d->rank)
            gstride[i] = d->global_stride[i];
    }
    int pushed;
    if ((st = encode_context_enter("cuTensorMapEncodeTiled", &pushed, diag)) != TMA_OK)
        return st;
    CUresult r = driver.encode(map, (CUtensorMapDataType)d->dtype, d->rank, d->global_address, gdim, gstride, box,
                               estride, (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
                               (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
    encode_context_leave(pushed);
    /* A template's NULL address goes to the driver as it is, so the map is the descriptor's own encoding, and no
     * address is made up behind the caller's back. Drivers from CUDA 12.6 on encode NULL; CUTLASS notes that older
     * ones refuse it, and gives its templates a stand-in address there (gpu_driver compares both encodings). */
    const int null_template = d->global_address == NULL && (d->flags & TMA_DESC_TEMPLATE);
    return encode_result(r, "cuTensorMapEncodeTiled",
                         null_template ? TMA_RULE_DRIVER_REFUSED_NULL_TEMPLATE : TMA_RULE_DRIVER_REFUSED, diag);
}

tma_status tma_encode_tiled(struct CUtensorMap_st *map, const tma_tiled_desc *d, tma_diag *diag) {
    if (map == NULL)
        return fail(diag, tma_violation_of(TMA_RULE_ENCODE_NULL_MAP, TMA_RULE_ARGS(tma_arg_u(0))));
    const tma_status st = tma_check_tiled(d, diag);
    return st != TMA_OK ? st : encode_tiled_checked(map, d, diag);
}

tma_box_info tma_box_info_of(const tma_tiled_desc *d) {
    const tma_box_info none = {0};
    return tma_check_tiled(d, NULL) == TMA_OK ? tma_rule_box_info(d) : none;
}

tma_status tma_tensor_make(tma_tensor *t, const tma_tiled_desc *d, tma_diag *diag) {
    if (t == NULL)
        return fail(diag, tma_violation_of(TMA_RULE_ENCODE_NULL_TENSOR, TMA_RULE_ARGS(tma_arg_u(0))));
    const tma_status st = tma_check_tiled(d, diag); /* once: the box facts below need no second check */
    return st != TMA_OK ? st : tma_tensor_make_prechecked_(t, d, diag);
}

tma_status tma_tensor_make_prechecked_(tma_tensor *t, const tma_tiled_desc *d, tma_diag *diag) {
    const tma_status st = encode_tiled_checked((struct CUtensorMap_st *)(void *)&t->map, d, diag);
    if (st == TMA_OK)
        t->box = tma_rule_box_info(d);
    return st;
}

/* cuTensorMapEncodeIm2col on a descriptor that passed the rules (the caller checked it). */
static tma_status encode_im2col_checked(struct CUtensorMap_st *map, const tma_im2col_desc *d, tma_diag *diag) {
    tma_status st = encode_prologue(map, diag);
    if (st != TMA_OK)
        return st;
    if (driver.encode_im2col == NULL)
        return fail(diag, tma_violation_of(TMA_RULE_DRIVER_NO_IM2COL, TMA_RULE_ARGS(tma_arg_u(0))));

    cuuint64_t gdim[5], gstride[4];
    cuuint32_t estride[5];
    int lower[3] = {0, 0, 0}, upper[3] = {0, 0, 0};
    for (uint32_t i = 0; i < d->rank; i++) {
        gdim[i] = d->global_dim[i];
        estride[i] = tma_rule_im2col_estride(d, i);
        if (i + 1 < d->rank)
            gstride[i] = d->global_stride[i];
        if (i + 2 < d->rank) {
            lower[i] = d->pixel_box_lower[i];
            upper[i] = d->pixel_box_upper[i];
        }
    }
    int pushed;
    const tma_status ctx = encode_context_enter("cuTensorMapEncodeIm2col", &pushed, diag);
    if (ctx != TMA_OK)
        return ctx;
    CUresult r = driver.encode_im2col(map, (CUtensorMapDataType)d->dtype, d->rank, (void *)(uintptr_t)d->global_address,
                                      gdim, gstride, lower, upper, d->channels_per_pixel, d->pixels_per_column,
                                      estride, (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
                                      (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
    encode_context_leave(pushed);
    return encode_result(r, "cuTensorMapEncodeIm2col", TMA_RULE_DRIVER_REFUSED, diag);
}

tma_status tma_encode_im2col(struct CUtensorMap_st *map, const tma_im2col_desc *d, tma_diag *diag) {
    if (map == NULL)
        return fail(diag, tma_violation_of(TMA_RULE_ENCODE_NULL_MAP, TMA_RULE_ARGS(tma_arg_u(0))));
    const tma_status st = tma_check_im2col(d, diag);
    return st != TMA_OK ? st : encode_im2col_checked(map, d, diag);
}

tma_box_info tma_im2col_box_info_of(const tma_im2col_desc *d) {
    const tma_box_info none = {0};
    return tma_check_im2col(d, NULL) == TMA_OK ? tma_rule_im2col_box_info(d) : none;
}

tma_status tma_tensor_make_im2col(tma_tensor *t, const tma_im2col_desc *d, tma_diag *diag) {
    if (t == NULL)
        return fail(diag, tma_violation_of(TMA_RULE_ENCODE_NULL_TENSOR, TMA_RULE_ARGS(tma_arg_u(0))));
    const tma_status st = tma_check_im2col(d, diag); /* once, as tma_tensor_make */
    return st != TMA_OK ? st : tma_tensor_make_im2col_prechecked_(t, d, diag);
}

tma_status tma_tensor_make_im2col_prechecked_(tma_tensor *t, const tma_im2col_desc *d, tma_diag *diag) {
    const tma_status st = encode_im2col_checked((struct CUtensorMap_st *)(void *)&t->map, d, diag);
    if (st == TMA_OK)
        t->box = tma_rule_im2col_box_info(d);
    return st;
}
