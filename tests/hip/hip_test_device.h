/*
 * hip_test_device.h - opening the AMD GPU for the gpu-labelled HIP tests.
 * Without one the tests skip (exit 77); with MMAFUZZ_REQUIRE_GPU=1 they fail.
 */
#ifndef MMAFUZZ_HIP_TEST_DEVICE_H
#define MMAFUZZ_HIP_TEST_DEVICE_H

#include "mf_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MF_TEST_SKIP 77

/* Open the device named by MMAFUZZ_HIP_DEVICE (default "hip").
 * @return the device, or NULL with *status set to the exit code to use. */
static inline mf_device *hip_test_open(const char *test, int *status)
{
    const char *spec = getenv("MMAFUZZ_HIP_DEVICE");
    const char *req = getenv("MMAFUZZ_REQUIRE_GPU");
    int required = req && !strcmp(req, "1");
    mf_device *dev = NULL;
    char err[512];
    int rc = mf_device_open(spec && *spec ? spec : "hip", &dev, err, sizeof err);
    if (rc == MF_DEV_OK)
        return dev;
    if (rc == MF_DEV_ERR_NO_DEVICE && !required) {
        printf("%s: SKIP: %s\n", test, err);
        *status = MF_TEST_SKIP;
    } else {
        fprintf(stderr, "%s: FAIL: %s%s\n", test, err, required ? " (MMAFUZZ_REQUIRE_GPU=1)" : "");
        *status = 1;
    }
    return NULL;
}

#endif
