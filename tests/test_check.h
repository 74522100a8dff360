/*
 * test_check.h - the CHECK macro of the C tests: count a failure,
 * print the first 20 with file and line, and go on.
 */
#ifndef MMAFUZZ_TEST_CHECK_H
#define MMAFUZZ_TEST_CHECK_H

#include "gen_rng.h"

#include <stdint.h>
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            if (failures++ < 20) {                                                                           \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
                fprintf(stderr, __VA_ARGS__);                                                                \
                fprintf(stderr, "\n");                                                                       \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

/* The tests' reproducible random inputs, each test with its own state: the
 * project's one PRNG (gen/gen_rng.h).  It only picks inputs; no expected
 * value depends on it. */
static inline uint64_t test_random(uint64_t *state) { return rng_next_u64(state); }

#endif
