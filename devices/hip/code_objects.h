/*
 * code_objects.h - the GPU code objects of the HIP wrappers, embedded in the
 * library at build time (one per target built: gfx908, gfx90a, gfx942).
 * embed_code_object.cmake writes each one; CMake writes the list
 * (code_objects.c) from the targets it could compile.
 */
#ifndef MMAFUZZ_HIP_CODE_OBJECTS_H
#define MMAFUZZ_HIP_CODE_OBJECTS_H

#include <stddef.h>

typedef struct mf_hip_code_object {
    const char *target;        /* "gfx90a" */
    const unsigned char *data; /* an AMDGPU ELF code object */
    size_t size;
} mf_hip_code_object;

/* The code objects built, one per target. */
extern const mf_hip_code_object *const mf_hip_code_objects[];
extern const size_t mf_hip_code_object_count;

#endif
