/* The libFuzzer targets' input reader (fuzz_tiled.c, fuzz_im2col.c): the fuzzer's bytes taken big-endian, a few at a
 * time, zeros once they run out. Header-only. */
#ifndef TESTS_FUZZ_READER_H
#define TESTS_FUZZ_READER_H

#include <stddef.h>
#include <stdint.h>

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

/* The next `bytes` bytes (at most 8) as an unsigned number. */
static uint64_t take(reader *r, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) {
        v = (v << 8) | (r->n ? *r->p : 0);
        if (r->n) {
            r->p++;
            r->n--;
        }
    }
    return v;
}

#endif /* TESTS_FUZZ_READER_H */
