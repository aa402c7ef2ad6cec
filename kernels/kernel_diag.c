/* The kernels' host-side reporting (kernel_diag.h): plain C, part of the CPU-model objects too. */
#include "kernel_diag.h"

#include <stdlib.h>
#include <string.h>

/* strlen of s, at most cap (C11 has no strnlen). */
static size_t kd_length(const char *s, size_t cap) {
    size_t n = 0;
    while (n < cap && s[n] != '\0')
        n++;
    return n;
}

tma_status kd_fail_rule(tma_diag *diag, tma_status status, tma_violation v, const tma_violation *cause) {
    const tma_status st = status != TMA_OK ? status : kd_rule_status_of(&v, cause);
    if (diag) {
        memset(diag, 0, sizeof *diag); /* no stale bytes after the text, as libtma's diagnostics */
        diag->status = st;
        kd_rule_format(&v, cause, diag->message, sizeof diag->message);
    }
    return st;
}

tma_status kd_relay(tma_diag *diag, tma_status status, const char *message) {
    if (diag) {
        memset(diag, 0, sizeof *diag);
        diag->status = status;
        const size_t n = kd_length(message, sizeof diag->message - 1);
        memcpy(diag->message, message, n);
    }
    return status;
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

/* A reason's row into out[0..cap). */
static bool kd_reason(tma_violation v, char *out, size_t cap) {
    kd_rule_format(&v, NULL, out, cap);
    return true;
}

bool kd_no_gpu_reason(cudaError_t e, int driver, int runtime, char *out, size_t cap) {
    const tma_rule_arg rt_major = tma_arg_i(runtime / 1000), rt_minor = tma_arg_i(runtime % 1000 / 10);
    const tma_rule_arg dr_major = tma_arg_i(driver / 1000), dr_minor = tma_arg_i(driver % 1000 / 10);
    switch (e) {
    case cudaErrorInsufficientDriver:
        if (driver == 0)
            return kd_reason(KD_VIOLATION(NO_DRIVER, tma_arg_u(0)), out, cap);
        return kd_reason(KD_VIOLATION(OLD_DRIVER, dr_major, dr_minor, rt_major, rt_minor), out, cap);
    case cudaErrorNoDevice: {
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        if (visible == NULL)
            return kd_reason(KD_VIOLATION(NO_DEVICE, dr_major, dr_minor), out, cap);
        char shown[65]; /* a runaway variable is quoted up to 64 characters */
        const size_t n = kd_length(visible, sizeof shown - 1);
        memcpy(shown, visible, n);
        shown[n] = '\0';
        return kd_reason(KD_VIOLATION(NO_DEVICE_VISIBLE, dr_major, dr_minor, tma_arg_s(shown)), out, cap);
    }
    case cudaErrorDevicesUnavailable: return kd_reason(KD_VIOLATION(DEVICES_BUSY, tma_arg_u(0)), out, cap);
    case cudaErrorSystemDriverMismatch: return kd_reason(KD_VIOLATION(DRIVER_MISMATCH, tma_arg_u(0)), out, cap);
    case cudaErrorCompatNotSupportedOnDevice:
        return kd_reason(KD_VIOLATION(COMPAT_UNSUPPORTED, tma_arg_u(0)), out, cap);
    default: return false;
    }
}
