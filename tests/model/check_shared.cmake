# Run `mmafuzz check` over the shared vectors (WHICH=peer: the top folder's
# files; WHICH=hw: hw/ and its subfolders).  Without them it prints
# "SKIP: ..." and stops: a skip for CTest (SKIP_REGULAR_EXPRESSION; a script
# cannot exit 77 before CMake 3.29).
# OVERRIDES: override files, separated by '|'.  SKIPPED: the exact number of
# cases of instructions the table no longer has (--skip-unknown); the summary
# must name exactly that many skipped cases.
if(NOT IS_DIRECTORY "${DIR}")
  message("SKIP: shared vectors not found at ${DIR} (they live beside the checkout, ../shared; "
          "configure with -DMMAFUZZ_SHARED_DIR=PATH)")
  return()
endif()
if(WHICH STREQUAL "hw")
  file(GLOB_RECURSE files "${DIR}/hw/*.vec.gz" "${DIR}/hw/*.vec")
else()
  file(GLOB files "${DIR}/*.vec.gz" "${DIR}/*.vec")
endif()
list(SORT files)
list(LENGTH files n)
if(n EQUAL 0)
  message("SKIP: no .vec files under ${DIR}")
  return()
endif()
set(extra)
if(OVERRIDES)
  # peer cases whose d a hardware measurement or a newer peer supersedes
  string(REPLACE "|" ";" OVERRIDES "${OVERRIDES}")
  foreach(o ${OVERRIDES})
    list(APPEND extra --override ${o})
  endforeach()
endif()
set(tail "")
if(SKIPPED)
  list(APPEND extra --skip-unknown)
  set(tail ", ${SKIPPED} skipped")
endif()
execute_process(COMMAND ${MMAFUZZ} check -errors 10 ${extra} ${files}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mmafuzz check failed (exit ${rc}) on ${n} files")
endif()
if(NOT out MATCHES "\n[0-9]+ passed, 0 failed${tail}\n$")
  message(FATAL_ERROR "unexpected summary (expected 'N passed, 0 failed${tail}')")
endif()
