/*
 * test_check.h - the CHECK macro of the model's C tests: count a failure,
 * print the first 20 with file and line, and go on.
 */
#ifndef MMAFUZZ_TEST_CHECK_H
#define MMAFUZZ_TEST_CHECK_H

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

/* splitmix64 (Steele, Lea, Flood 2014): the tests' reproducible random
 * inputs, each test with its own state. */
static inline uint64_t test_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
