# Sets MMAFUZZ_HAVE_LIBFUZZER when the C compiler links a libFuzzer target
# (clang -fsanitize=fuzzer, or AFL++'s afl-clang-fast / afl-clang-lto).
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
check_c_source_compiles("
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }
" MMAFUZZ_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT MMAFUZZ_HAVE_LIBFUZZER)
  message(STATUS "mmafuzz: ${CMAKE_C_COMPILER} has no -fsanitize=fuzzer; fuzz targets are not built (configure with CC=clang)")
endif()
