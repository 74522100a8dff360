# Run one libFuzzer target for a fixed time from its seed corpus.
#   -DEXE=<target> -DSEEDS=<committed seed corpus> -DWORK=<scratch folder>
#   -DSECONDS=<run time> -DEXTRA=<;-list of more libFuzzer flags>
# New inputs go to WORK/corpus (the committed seeds are only read); a crash,
# leak or timeout leaves WORK/crash-* etc. and fails the test.
# -error_exitcode=1: libFuzzer's default, 77, is CTest's skip code.
file(MAKE_DIRECTORY ${WORK}/corpus)
execute_process(COMMAND ${EXE} -error_exitcode=1 -timeout=25 -rss_limit_mb=2048 -max_total_time=${SECONDS}
                        -print_final_stats=1 -artifact_prefix=${WORK}/ ${EXTRA} ${WORK}/corpus ${SEEDS}
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" runs "${err}")
string(REGEX MATCH "cov: [0-9]+ ft: [0-9]+" cov "${err}")
message(STATUS "${EXE}: ${runs}; last ${cov}")
if(NOT rc EQUAL 0)
  string(LENGTH "${err}" n)
  if(n GREATER 20000)
    math(EXPR start "${n} - 20000")
    string(SUBSTRING "${err}" ${start} -1 err)
  endif()
  message(FATAL_ERROR "${EXE} exited with ${rc}\n${err}")
endif()
