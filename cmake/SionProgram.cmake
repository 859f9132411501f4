# SPDX-License-Identifier: MIT
# sion_program(<name> SOURCES <files>... [LIBS <targets>...] [DEBIAN_DEPENDS <packages>...]
# [DEBIAN_RECOMMENDS <packages>...]): one of sion's programs, installed into the bin directory with
# its man pages (man/<name>.<section>) and its shell completions as the Debian package <name>, which
# depends on the packages named (beside the libraries dpkg-shlibdeps finds) and recommends those
# named so.
# This is the only thing a new program needs from the build.
function(sion_program name)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS;DEBIAN_DEPENDS;DEBIAN_RECOMMENDS" ${ARGN})
  add_executable(${name} ${P_SOURCES})
  target_link_libraries(${name} PRIVATE sion_flags sion::lib ${P_LIBS})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${name})
  # Man pages are installed gzipped (gzip -9n, no name or time stamp), as Debian policy has them.
  file(GLOB pages CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/man/${name}.[1-9]")
  set(gzipped "")
  foreach(page IN LISTS pages)
    get_filename_component(file "${page}" NAME)
    get_filename_component(ext "${page}" LAST_EXT)
    string(SUBSTRING "${ext}" 1 1 section)
    set(out "${PROJECT_BINARY_DIR}/man/${file}")
    add_custom_command(OUTPUT "${out}.gz"
      COMMAND ${CMAKE_COMMAND} -E copy "${page}" "${out}"
      COMMAND gzip -9nf "${out}"
      DEPENDS "${page}" VERBATIM)
    list(APPEND gzipped "${out}.gz")
    install(FILES "${out}.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man${section}" COMPONENT ${name})
  endforeach()
  if(gzipped)
    add_custom_target(${name}-man DEPENDS ${gzipped})
    add_dependencies(${name} ${name}-man)
  endif()
  # Shell completions, made by the front door (cmd/sion): bash and fish look for a file named after
  # the command, zsh's _sion names every program and comes with sion.
  set(completions "${PROJECT_BINARY_DIR}/completions")
  install(FILES "${completions}/sion.bash" RENAME ${name}
    DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" COMPONENT ${name})
  install(FILES "${completions}/sion.fish" RENAME ${name}.fish
    DESTINATION "${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d" COMPONENT ${name})
  if(name STREQUAL "sion")
    install(FILES "${completions}/_sion"
      DESTINATION "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions" COMPONENT ${name})
  endif()
  set_property(GLOBAL APPEND PROPERTY SION_PROGRAMS ${name})
  set_property(GLOBAL PROPERTY SION_DEBIAN_DEPENDS_${name} ${P_DEBIAN_DEPENDS})
  set_property(GLOBAL PROPERTY SION_DEBIAN_RECOMMENDS_${name} ${P_DEBIAN_RECOMMENDS})
endfunction()
