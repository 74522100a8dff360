/*
 * grow.h - the one growable array of the harness: room for one more
 * element, doubling the allocation (from 64 elements).
 */
#ifndef MMAFUZZ_GROW_H
#define MMAFUZZ_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Make room for element n of the array *arr (a T *, passed as &arr) of *cap
 * allocated elements of elem bytes each, n <= *cap: nothing to do when
 * n < *cap, else the allocation doubles (64 elements the first time).
 * @return 0, or -1 when out of memory (the array and *cap unchanged). */
static inline int grow_room(void *arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 64;
    if (c < *cap || c > SIZE_MAX / elem)
        return -1;
    void *old;
    memcpy(&old, arr, sizeof old);
    void *p = realloc(old, c * elem);
    if (!p)
        return -1;
    memcpy(arr, &p, sizeof p);
    *cap = c;
    return 0;
}

#endif
