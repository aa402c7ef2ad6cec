/* Private to libtma_kernels: how a kernel makes its tensor maps. Its plan builds each descriptor, checks it once
 * through the rules of tma/detail/rules.h (tma_rule_check_tiled / _im2col, the violation quoted as the cause of the
 * kernel's own refusal: kernel_rules.h), then encodes it with the function below, which does not check it again.
 *
 * Library-internal: libtma exports these two functions (src/encode.c) and no installed header declares them; this is
 * the kernels' copy of their declaration in src/internal.h (the kernels may not include src/). Both copies are
 * included in one translation unit by tests/test_kernel_messages.c, so a change to one that is not made to the other
 * fails to compile there. Not installed. */
#ifndef KERNELS_KERNEL_MAPS_H
#define KERNELS_KERNEL_MAPS_H

#include "tma/tma.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tma_tensor_make for a descriptor that passes tma_rules_tiled (the caller checked it; t not NULL): the map's
 * alignment, the driver and its encoding, then t->box. @return TMA_OK or the encoder's / driver's refusal (diag) */
tma_status tma_tensor_make_prechecked_(tma_tensor *t, const tma_tiled_desc *d, tma_diag *diag);

/* tma_tensor_make_im2col for a descriptor that passes tma_rules_im2col (the caller checked it; t not NULL). */
tma_status tma_tensor_make_im2col_prechecked_(tma_tensor *t, const tma_im2col_desc *d, tma_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_KERNEL_MAPS_H */
