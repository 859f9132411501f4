#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configuring without a dependency stops with one line naming the Debian package to install.
. "$(dirname "$0")/lib.sh"

mkdir -p "$scratch/no-pc"
# pkg-config finds nothing: the first library looked for is named.
PKG_CONFIG_LIBDIR="$scratch/no-pc" PKG_CONFIG_PATH= expect_exit 1 \
    cmake -S "$SION_SOURCE_DIR" -B "$scratch/build" -DSION_TESTS=OFF
expect_grep "^sion: missing dependency 'libuv': install the Debian package libuv1-dev$" "$scratch/err"
[ "$(grep -c '^sion: missing dependency' "$scratch/err")" -eq 1 ] && ok || fail "more than one missing-dependency line"

# Only mbedTLS missing: its headers are looked for outside pkg-config.
expect_exit 1 cmake -S "$SION_SOURCE_DIR" -B "$scratch/build2" -DSION_TESTS=OFF \
    -DSION_MBEDTLS_INCLUDE=SION_MBEDTLS_INCLUDE-NOTFOUND -DCMAKE_INCLUDE_PATH="$scratch/no-pc" \
    -DCMAKE_FIND_ROOT_PATH="$scratch/no-pc" -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY
expect_grep "^sion: missing dependency 'mbedcrypto': install the Debian package libmbedtls-dev$" "$scratch/err"

done_testing
