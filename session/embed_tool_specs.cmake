# SPDX-License-Identifier: MIT
# cmake -DOUT=FILE -DSPECS=a.json;b.json -P embed_tool_specs.cmake: the tools' descriptions and input
# schemas (schemas/tools/*.json, the one source) as C++ raw strings, for tool_specs.cpp.
set(text "// Generated from schemas/tools/ by embed_tool_specs.cmake: edit those files instead.\n")
foreach(spec IN LISTS SPECS)
  get_filename_component(name "${spec}" NAME_WE)
  file(READ "${spec}" body)
  string(APPEND text "{\"${name}\", R\"sion_spec(${body})sion_spec\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
