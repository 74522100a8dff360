# ArchTable.cmake - the one reader of model/arch_table.def for CMake (the
# CUDA and HIP device layers include it).  mf_arch_table_read() sets, in the
# caller's scope:
#   MF_ARCH_NAMES              every architecture's NAME, in the table's order
#   MF_ARCH_VENDOR_<NAME>      NVIDIA or AMD
#   MF_ARCH_TARGET_<NAME>      TARGET ("sm_90a", "gfx942"; "" when none builds it)
#   MF_ARCH_CUDA_ARCHS_<NAME>  CUDA_ARCHS as a list ("80;86")
#   MF_ARCH_HIP_TARGET_<NAME>  HIP_TARGET
#   MF_ARCH_CC_<NAME>          CC as a list ("8.0;8.6;8.7")
# and the two views the device layers build from:
#   MF_CUDA_ALL_TARGETS, MF_CUDA_ARCHS_<target>, MF_CUDA_CC_<target>: the
#     NVIDIA rows with a TARGET;
#   MF_HIP_TARGETS, MF_HIP_ARCH_<target>: the AMD rows with a HIP_TARGET.
# A row spans lines; the rules of the table's own header hold: no ')' inside
# a row, ID to NO_TARGET_WHY as the first fields and CC the row's last.  A
# row this reader cannot read stops the configure (FILE: the row).
function(mf_arch_table_read)
  set(file ${PROJECT_SOURCE_DIR}/model/arch_table.def)
  file(READ ${file} text)
  # ';' (of "80;86") as ',' while the rows are a list
  string(REPLACE ";" "," text "${text}")
  string(REGEX MATCHALL "\nMF_ARCH\\([^)]*\\)" rows "${text}")
  set(names)
  set(cuda_targets)
  set(hip_targets)
  foreach(row ${rows})
    string(REGEX REPLACE "[ \n]+" " " row "${row}")
    if(NOT row MATCHES "^ MF_ARCH\\(([A-Z0-9_]+), *([a-z0-9_]+), *(NVIDIA|AMD), *\"([^\"]*)\", *\"([^\"]*)\", *\"([^\"]*)\", *\"([^\"]*)\",.*\"([^\"]*)\"\\)$")
      message(FATAL_ERROR "mmafuzz: ${file}: cannot read the row '${row}' (expected MF_ARCH(ID, NAME, "
                          "NVIDIA|AMD, \"TARGET\", \"CUDA_ARCHS\", \"HIP_TARGET\", \"NO_TARGET_WHY\", ..., \"CC\"))")
    endif()
    set(name ${CMAKE_MATCH_2})
    set(vendor ${CMAKE_MATCH_3})
    set(target "${CMAKE_MATCH_4}")
    string(REPLACE "," ";" archs "${CMAKE_MATCH_5}")
    set(hip "${CMAKE_MATCH_6}")
    separate_arguments(cc UNIX_COMMAND "${CMAKE_MATCH_8}")
    list(APPEND names ${name})
    set(MF_ARCH_VENDOR_${name} ${vendor} PARENT_SCOPE)
    set(MF_ARCH_TARGET_${name} "${target}" PARENT_SCOPE)
    set(MF_ARCH_CUDA_ARCHS_${name} "${archs}" PARENT_SCOPE)
    set(MF_ARCH_HIP_TARGET_${name} "${hip}" PARENT_SCOPE)
    set(MF_ARCH_CC_${name} "${cc}" PARENT_SCOPE)
    if(vendor STREQUAL "NVIDIA" AND NOT target STREQUAL "")
      list(APPEND cuda_targets ${target})
      set(MF_CUDA_ARCHS_${target} "${archs}" PARENT_SCOPE)
      set(MF_CUDA_CC_${target} "${cc}" PARENT_SCOPE)
    endif()
    if(vendor STREQUAL "AMD" AND NOT hip STREQUAL "")
      list(APPEND hip_targets ${hip})
      set(MF_HIP_ARCH_${hip} ${name} PARENT_SCOPE)
    endif()
  endforeach()
  if(NOT names)
    message(FATAL_ERROR "mmafuzz: ${file}: no MF_ARCH row")
  endif()
  set(MF_ARCH_NAMES "${names}" PARENT_SCOPE)
  set(MF_CUDA_ALL_TARGETS "${cuda_targets}" PARENT_SCOPE)
  set(MF_HIP_TARGETS "${hip_targets}" PARENT_SCOPE)
endfunction()
