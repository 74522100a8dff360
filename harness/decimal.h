/*
 * decimal.h - exact decimal rendering of a bit pattern for display.
 */
#ifndef MMAFUZZ_DECIMAL_H
#define MMAFUZZ_DECIMAL_H

#include "mmafuzz_model.h"

#include <stddef.h>

/* Write the value of bit pattern `bits` of format f in decimal, rounded to
 * at most sig_digits significant digits (half up), e.g. "1.5", "-2.5e-45",
 * "inf", "nan". */
void mf_decimal(mf_format f, uint64_t bits, int sig_digits, char *buf, size_t len);

#endif
