# One row of python/tests/data/kernels/models.tsv: `mmafuzz check --kernel`
# with the row's model must reproduce every recorded output of its shipped
# recording (expected values: the GPU's d), and with the row's neighbouring
# "wrong" model must not (exit 1, some output failed).
#   -DEXE=mmafuzz -DTSV=models.tsv -DROW=<file name of the row> -DWORK=<scratch folder>
file(STRINGS ${TSV} lines)
set(model "")
foreach(line IN LISTS lines)
  if(line MATCHES "^${ROW}\t([^\t]*)\t([^\t]*)$")
    set(model "${CMAKE_MATCH_1}")
    set(wrong "${CMAKE_MATCH_2}")
  endif()
endforeach()
if(model STREQUAL "")
  message(FATAL_ERROR "${TSV}: no row for ${ROW}")
endif()
get_filename_component(dir ${TSV} DIRECTORY)
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/${ROW}.right "${model}\n")
file(WRITE ${WORK}/${ROW}.wrong "${wrong}\n")
execute_process(COMMAND ${EXE} check --kernel ${WORK}/${ROW}.right -jobs 2 ${dir}/${ROW}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES ": ([0-9]+) passed 0 failed\n" OR CMAKE_MATCH_1 LESS 1)
  message(FATAL_ERROR "model ${model}: exit ${rc}, expected 0 and every output passed\n${out}\n${err}")
endif()
execute_process(COMMAND ${EXE} check --kernel ${WORK}/${ROW}.wrong -jobs 2 -errors 3 ${dir}/${ROW}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT out MATCHES ": [0-9]+ passed [1-9][0-9]* failed\n" OR NOT out MATCHES "d\\[[0-9]+, [0-9]+\\] => 0x")
  message(FATAL_ERROR "wrong model ${wrong}: exit ${rc}, expected 1 with failures listed\n${out}\n${err}")
endif()
