/* The seed of a randomized test, for every Criterion suite: TMA_TEST_SEED when it is set and not empty, else a
 * fresh one from the clock; never 0 (the suites' xorshift generators stay at 0). Logged with the test's name, so
 * a failure can be replayed. Header-only. */
#ifndef TESTS_TEST_SEED_H
#define TESTS_TEST_SEED_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <criterion/logging.h>

static inline uint64_t test_seed(const char *what) {
    const char *env = getenv("TMA_TEST_SEED");
    uint64_t seed;
    if (env != NULL && *env != '\0') {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        timespec_get(&ts, TIME_UTC);
        seed = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)clock() << 17);
    }
    if (seed == 0)
        seed = 1;
    cr_log_info("%s: seed %llu (replay with TMA_TEST_SEED=%llu)", what, (unsigned long long)seed,
                (unsigned long long)seed);
    return seed;
}

#endif /* TESTS_TEST_SEED_H */
