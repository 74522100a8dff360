/*
 * test_check.h - the CHECK macro of the model's C tests: count a failure,
 * print the first 20 with file and line, and go on.
 */
#ifndef MMAFUZZ_TEST_CHECK_H
#define MMAFUZZ_TEST_CHECK_H

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

#endif
