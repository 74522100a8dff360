# A test that cannot run on this machine or in this build: it is registered
# all the same and prints why, which CTest reports as skipped
# (SKIP_REGULAR_EXPRESSION "SKIP: ", set by mf_skip_test in tests/CMakeLists.txt).
#   -DWHY=...   the reason, with what would make the test run
#   -DGPU=1     a gpu test: with MMAFUZZ_REQUIRE_GPU=1 it fails instead
# (A script cannot exit 77 before CMake 3.29's cmake_language(EXIT); the
# project's minimum is 3.25.)
if(GPU AND "$ENV{MMAFUZZ_REQUIRE_GPU}" STREQUAL "1")
  message(FATAL_ERROR "MMAFUZZ_REQUIRE_GPU=1, but this test cannot run: ${WHY}")
endif()
message("SKIP: ${WHY}")
