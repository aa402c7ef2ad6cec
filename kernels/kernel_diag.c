/* The kernels' host-side reporting (kernel_diag.h): plain C, part of the CPU-model objects too. */
#include "kernel_diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tma_status kd_fail(tma_diag *diag, tma_status status, const char *fmt, ...) {
    if (diag) {
        diag->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diag->message, sizeof diag->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

tma_status kd_fail_violation(tma_diag *diag, const tma_violation *v, const char *what) {
    char why[TMA_DIAG_MESSAGE_BYTES];
    tma_violation_format(v, why, sizeof why);
    return kd_fail(diag, tma_violation_status(v), "%s: %s", what, why);
}

tma_status kd_check_bf16_rows(tma_diag *diag, const char *name, int count, const char *rows_of, const char *pad) {
    const size_t bytes = (size_t)count * 2u;
    if (bytes % TMA_GLOBAL_ALIGN == 0)
        return TMA_OK;
    return kd_fail(diag, TMA_ERR_ARG,
                   "%s = %d: the rows of %s (%s bf16 = %zu bytes) must be a multiple of %u bytes, TMA's stride rule: "
                   "use a %s that is a multiple of %u (%s)",
                   name, count, rows_of, name, bytes, TMA_GLOBAL_ALIGN, name, TMA_GLOBAL_ALIGN / 2u, pad);
}

static bool kd_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* One term through the message: src into dst[0..cap), NUL-terminated. */
static void kd_rename_one(const char *src, const kd_term *t, char *dst, size_t cap) {
    const size_t flen = strlen(t->from), tlen = strlen(t->to);
    const bool word_start = flen && kd_word_char(t->from[0]), word_end = flen && kd_word_char(t->from[flen - 1]);
    size_t at = 0;
    for (const char *p = src; *p != '\0' && at + 1 < cap;) {
        const bool here = flen && strncmp(p, t->from, flen) == 0 && !(word_start && p > src && kd_word_char(p[-1])) &&
                          !(word_end && kd_word_char(p[flen]));
        if (!here) {
            dst[at++] = *p++;
            continue;
        }
        const size_t n = tlen < cap - 1 - at ? tlen : cap - 1 - at;
        memcpy(dst + at, t->to, n);
        at += n;
        p += flen;
    }
    dst[at] = '\0';
}

void kd_rename(tma_diag *diag, const kd_term *terms, size_t n) {
    if (diag == NULL)
        return;
    char buf[sizeof diag->message];
    for (size_t i = 0; i < n; i++) {
        kd_rename_one(diag->message, &terms[i], buf, sizeof buf);
        memcpy(diag->message, buf, sizeof buf);
    }
}

tma_status kd_ok(tma_diag *diag) {
    if (diag) {
        diag->status = TMA_OK;
        diag->message[0] = '\0';
    }
    return TMA_OK;
}

bool kd_no_gpu_reason(cudaError_t e, int driver, int runtime, char *out, size_t cap) {
    const int rt_major = runtime / 1000, rt_minor = runtime % 1000 / 10;
    const int dr_major = driver / 1000, dr_minor = driver % 1000 / 10;
    switch (e) {
    case cudaErrorInsufficientDriver:
        if (driver == 0)
            snprintf(out, cap, "no NVIDIA driver found (the CUDA runtime could not load libcuda.so.1), so no GPU "
                               "either: run on a machine with the GPU and the NVIDIA driver installed");
        else
            snprintf(out, cap, "the NVIDIA driver supports CUDA up to %d.%d, older than the CUDA %d.%d runtime "
                               "libtma_kernels was built with: update the driver to one for CUDA %d.%d or newer",
                     dr_major, dr_minor, rt_major, rt_minor, rt_major, rt_minor);
        return true;
    case cudaErrorNoDevice: {
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        if (visible != NULL)
            snprintf(out, cap, "no CUDA GPU found: the NVIDIA driver (CUDA %d.%d) sees no device with "
                               "CUDA_VISIBLE_DEVICES=\"%.64s\": list the Hopper GPU's index there, or unset it",
                     dr_major, dr_minor, visible);
        else
            snprintf(out, cap, "no CUDA GPU found: the NVIDIA driver (CUDA %d.%d) is installed but sees no device",
                     dr_major, dr_minor);
        return true;
    }
    case cudaErrorDevicesUnavailable:
        snprintf(out, cap, "every CUDA GPU is busy or unavailable (a GPU in exclusive-process mode is held by another "
                           "process?): free one, or check nvidia-smi's compute mode");
        return true;
    case cudaErrorSystemDriverMismatch:
        snprintf(out, cap, "the NVIDIA kernel module and the user-space driver (libcuda) are of different versions "
                           "(a driver update without a reboot?): reboot, or reinstall the driver");
        return true;
    case cudaErrorCompatNotSupportedOnDevice:
        snprintf(out, cap, "the CUDA forward-compatibility driver in use does not support this GPU: use the driver "
                           "that came with the GPU's kernel module");
        return true;
    default: return false;
    }
}
