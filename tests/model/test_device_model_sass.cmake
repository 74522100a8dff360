# The object of devices/cuda/model_device_check.cu holds the SASS of its two
# kernels (mfd_check_eval: mf_eval and mf_output_equal; mfd_check_gen:
# gen_tile): the device-code model compiled.  -DCUOBJDUMP=... -DOBJ=...
if(NOT CUOBJDUMP OR NOT EXISTS "${CUOBJDUMP}")
  message("SKIP: no cuobjdump in this CUDA toolkit (the object compiled: ${OBJ})")
  return()
endif()
execute_process(COMMAND ${CUOBJDUMP} -sass ${OBJ} OUTPUT_VARIABLE sass ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cuobjdump -sass ${OBJ} failed (${rc}): ${err}")
endif()
foreach(kernel mfd_check_eval mfd_check_gen)
  if(NOT sass MATCHES "Function : [^\n]*${kernel}")
    message(FATAL_ERROR "${OBJ}: no SASS for kernel ${kernel}")
  endif()
endforeach()
string(REGEX MATCHALL "arch = sm_[0-9a-z]+" archs "${sass}")
list(REMOVE_DUPLICATES archs)
message(STATUS "model_device_check: SASS of mfd_check_eval and mfd_check_gen (${archs})")
