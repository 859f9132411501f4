# SPDX-License-Identifier: MIT
# sion_program(<name> SOURCES <files>... [LIBS <targets>...]): one of sion's programs, installed into
# the bin directory with its man pages (man/<name>.<section>) as the Debian package <name>. This is the
# only thing a new program needs from the build.
function(sion_program name)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${P_SOURCES})
  target_link_libraries(${name} PRIVATE sion_flags sion::lib ${P_LIBS})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${name})
  file(GLOB pages "${PROJECT_SOURCE_DIR}/man/${name}.[1-9]")
  foreach(page IN LISTS pages)
    get_filename_component(ext "${page}" LAST_EXT)
    string(SUBSTRING "${ext}" 1 1 section)
    install(FILES "${page}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man${section}" COMPONENT ${name})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY SION_PROGRAMS ${name})
endfunction()
