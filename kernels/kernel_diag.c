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

tma_status kd_check_bf16_rows(tma_diag *diag, const char *name, int count, const char *rows_of, const char *pad) {
    const size_t bytes = (size_t)count * 2u;
    if (bytes % TMA_GLOBAL_ALIGN == 0)
        return TMA_OK;
    return kd_fail(diag, TMA_ERR_ARG,
                   "%s = %d: the rows of %s (%s bf16 = %zu bytes) must be a multiple of %u bytes, TMA's stride rule: "
                   "use a %s that is a multiple of %u (%s)",
                   name, count, rows_of, name, bytes, TMA_GLOBAL_ALIGN, name, TMA_GLOBAL_ALIGN / 2u, pad);
}

tma_status kd_ok(tma_diag *diag) {
    if (diag) {
        diag->status = TMA_OK;
        diag->message[0] = '\0';
    }
    return TMA_OK;
}
