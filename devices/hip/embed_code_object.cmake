# embed_code_object.cmake - writes a code object into a C source as a byte
# array with its mf_hip_code_object (code_objects.h):
#   cmake -DIN=file.co -DOUT=file.c -DTARGET=gfx90a -P embed_code_object.cmake
# The output is written to a temporary file and renamed.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR size "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* The ${TARGET} wrappers: written by embed_code_object.cmake; do not edit. */\n"
  "#include \"code_objects.h\"\n\n"
  "static const unsigned char code[${size}] = {\n${bytes}\n};\n"
  "const mf_hip_code_object mf_hip_co_${TARGET} = {\"${TARGET}\", code, sizeof code};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
