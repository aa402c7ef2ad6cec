/* What each shared-memory row of an im2col load holds (tma-explain --mode im2col --coord ...): the input pixel
 * and channels of every row, and which logical 16-byte chunk sits in each physical slot. Derived from the CPU
 * model (tma_model_load_im2col) on a tensor whose every element encodes its own index, so the drawing can never
 * disagree with the model. */
#ifndef TOOLS_IM2COL_ROWS_H
#define TOOLS_IM2COL_ROWS_H

#include <stdint.h>

#include "tma/tma.h"

/** Print the rows of the im2col load of `d` (which passes tma_check_im2col) at coord / offset into shared memory
 *  at `base` (a multiple of 128) on stdout. @return TMA_OK, or the per-copy rule it breaks (message in diag),
 *  or TMA_ERR_UNSUPPORTED (message in diag) for a tensor too large to model on the host or an interleaved one */
tma_status im2col_rows_print(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3], uint32_t base,
                             tma_diag *diag);

#endif /* TOOLS_IM2COL_ROWS_H */
