# SPDX-License-Identifier: MIT
# Finds sion's C dependencies, each from its Debian -dev package, and stops with one line naming the
# package to install when one is missing.
# sion_missing(<what> <Debian package>): the one line a user needs, alone on stderr, then stop.
macro(sion_missing what debian)
  message(NOTICE "sion: missing dependency '${what}': install the Debian package ${debian}")
  message(FATAL_ERROR "configuration stopped: a dependency is missing (see the line above)")
endmacro()

find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  sion_missing(pkg-config pkg-config)
endif()

# sion_pkg(<target> <pkg-config name> <Debian package>): an imported target sion::<target>.
function(sion_pkg target module debian)
  pkg_check_modules(SION_PKG_${target} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT SION_PKG_${target}_FOUND)
    sion_missing(${module} ${debian})
  endif()
  add_library(sion::${target} ALIAS PkgConfig::SION_PKG_${target})
endfunction()

sion_pkg(uv libuv libuv1-dev)
sion_pkg(cjson libcjson libcjson-dev)
# libcurl is loaded when a program first makes a request (lib/curl_api.cpp), never linked: the build
# takes only its headers, and the programs that make requests depend on the runtime package.
pkg_check_modules(SION_CURL QUIET libcurl)
if(NOT SION_CURL_FOUND)
  sion_missing(libcurl libcurl4-openssl-dev)
endif()
add_library(sion_curl_headers INTERFACE)
target_include_directories(sion_curl_headers SYSTEM INTERFACE ${SION_CURL_INCLUDE_DIRS})
target_compile_options(sion_curl_headers INTERFACE ${SION_CURL_CFLAGS_OTHER})
add_library(sion::curl_headers ALIAS sion_curl_headers)
sion_pkg(sqlite sqlite3 libsqlite3-dev)
# libarchive (skills' bundles) and libxml2 (fetch_url's HTML parser) are loaded when first needed
# (lib/loaded_libs.cpp), never linked: the build takes only their headers, and sion-run's package
# depends on the runtime packages.
function(sion_pkg_headers target module debian)
  pkg_check_modules(SION_PKG_${target} QUIET ${module})
  if(NOT SION_PKG_${target}_FOUND)
    sion_missing(${module} ${debian})
  endif()
  add_library(sion_${target}_headers INTERFACE)
  target_include_directories(sion_${target}_headers SYSTEM INTERFACE ${SION_PKG_${target}_INCLUDE_DIRS})
  target_compile_options(sion_${target}_headers INTERFACE ${SION_PKG_${target}_CFLAGS_OTHER})
  add_library(sion::${target}_headers ALIAS sion_${target}_headers)
endfunction()
sion_pkg_headers(archive libarchive libarchive-dev)
sion_pkg_headers(xml libxml-2.0 libxml2-dev)
# libedit (a console's line editing and history, lib/line_editor.cpp) likewise: loaded when a
# console first reads at a terminal.
sion_pkg_headers(edit libedit libedit-dev)
# search_files' regular expressions: RE2 matches in time linear in the text, whatever the pattern.
sion_pkg(re2 re2 libre2-dev)
# sion-mail's messages (MIME: encoded words, charsets, multipart, quoted-printable, base64) and
# sion-calendar's iCalendar (recurrences, time zones): linked by those two programs only.
sion_pkg(gmime gmime-3.0 libgmime-3.0-dev)
sion_pkg(ical libical libical-dev)
# The sandbox's seccomp filter, compiled when sion is built (sandboxd/generate/): not linked by any
# program.
sion_pkg(seccomp libseccomp libseccomp-dev)

# Debian 12's mbedTLS 2.28 ships no pkg-config file: find its crypto library and headers directly.
find_path(SION_MBEDTLS_INCLUDE mbedtls/gcm.h)
find_library(SION_MBEDCRYPTO mbedcrypto)
if(NOT SION_MBEDTLS_INCLUDE OR NOT SION_MBEDCRYPTO)
  sion_missing(mbedcrypto libmbedtls-dev)
endif()
add_library(sion_mbedcrypto INTERFACE)
target_include_directories(sion_mbedcrypto SYSTEM INTERFACE ${SION_MBEDTLS_INCLUDE})
target_link_libraries(sion_mbedcrypto INTERFACE ${SION_MBEDCRYPTO})
add_library(sion::mbedcrypto ALIAS sion_mbedcrypto)
# The egress proxy's TLS (sandboxd/egress_*): certificates (mbedx509), and TLS itself (mbedtls).
find_library(SION_MBEDX509 mbedx509)
find_library(SION_MBEDTLS mbedtls)
if(NOT SION_MBEDX509 OR NOT SION_MBEDTLS)
  sion_missing(mbedtls libmbedtls-dev)
endif()
add_library(sion_mbedtls INTERFACE)
target_link_libraries(sion_mbedtls INTERFACE ${SION_MBEDTLS} ${SION_MBEDX509} sion::mbedcrypto)
add_library(sion::mbedtls ALIAS sion_mbedtls)

if(SION_TESTS)
  sion_pkg(gtest gtest_main libgtest-dev)
  sion_pkg(gmock gmock libgtest-dev)
  if(SION_BENCH)
    sion_pkg(benchmark benchmark libbenchmark-dev)
  endif()
endif()
