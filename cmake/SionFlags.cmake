# SPDX-License-Identifier: MIT
# Warnings and hardening for every target of the project (STYLE.md, "Toolchain").
add_library(sion_flags INTERFACE)
target_compile_options(sion_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wformat=2 -Wimplicit-fallthrough
  -fstack-protector-strong)
if(SION_WERROR)
  target_compile_options(sion_flags INTERFACE -Werror)
endif()
# GCC 12 at -O2 warns of overlapping copies in std::string's operator+ that cannot happen (GCC bug
# 105329): with -Werror the release build would not build.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(sion_flags INTERFACE -Wno-restrict)
endif()
# Fortify needs optimisation and gets in the sanitizers' way.
if(NOT SION_SANITIZE AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_definitions(sion_flags INTERFACE _FORTIFY_SOURCE=2)
endif()
target_link_options(sion_flags INTERFACE -Wl,-z,relro -Wl,-z,now -pie)
if(SION_SANITIZE)
  target_compile_options(sion_flags INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(sion_flags INTERFACE -fsanitize=address,undefined)
endif()
# Includes are relative to the repository root: #include "lib/fd.hpp".
target_include_directories(sion_flags INTERFACE ${PROJECT_SOURCE_DIR})
