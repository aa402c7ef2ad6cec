/* A consumer of the installed libtma: checks a descriptor and prints its footprint. */
#include <stdio.h>
#include <string.h>

#include <tma/tma.h>

int main(void) {
    static _Alignas(128) unsigned char tensor[64 * 128];
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, tensor, 64, 64, 128, 64, 64, TMA_SWIZZLE_128B);
    tma_diag diag;
    if (tma_check_tiled(&d, &diag) != TMA_OK) {
        fprintf(stderr, "consumer: %s: %s\n", tma_status_name(diag.status), diag.message);
        return 1;
    }
    if (tma_box_tx_bytes(&d) != 64 * 64 * 2 || tma_swizzle_addr(TMA_SWIZZLE_128B, 128 + 16) != 128) {
        fprintf(stderr, "consumer: wrong footprint or swizzle\n");
        return 1;
    }
    printf("consumer: ok, %zu bytes per box\n", tma_box_tx_bytes(&d));
    return 0;
}
