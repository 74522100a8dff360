# No code decides by the position of an architecture in the enum
# (`a >= MF_ARCH_CDNA1`, `for (a = MF_ARCH_CDNA1; a <= MF_ARCH_CDNA3; ...)`):
# the vendor and rule columns of model/arch_table.def decide, so that an
# architecture appended to the table takes its own rules.  Comparisons with
# MF_ARCH_COUNT (the end of the table) are allowed.
file(GLOB_RECURSE srcs ${SRC}/model/*.c ${SRC}/model/*.h ${SRC}/devices/*.c ${SRC}/devices/*.h
     ${SRC}/devices/*.cu ${SRC}/harness/*.c ${SRC}/harness/*.h)
set(bad "")
foreach(f ${srcs})
  file(STRINGS ${f} lines REGEX "[<>]=?[ ]*MF_ARCH_[A-Z]|MF_ARCH_[A-Z0-9_]+[ ]*[<>]")
  foreach(l ${lines})
    if(NOT l MATCHES "MF_ARCH_COUNT")
      string(APPEND bad "${f}: ${l}\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "predicates on the order of mf_arch:\n${bad}")
endif()
message("no predicate on the order of mf_arch in ${SRC}")
