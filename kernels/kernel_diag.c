/* The kernels' host-side reporting (kernel_diag.h): plain C, part of the CPU-model objects too. */
#include "kernel_diag.h"

#include <stdarg.h>
#include <stdio.h>

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

tma_status kd_ok(tma_diag *diag) {
    if (diag) {
        diag->status = TMA_OK;
        diag->message[0] = '\0';
    }
    return TMA_OK;
}
