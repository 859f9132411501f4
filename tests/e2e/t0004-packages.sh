#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages: `cpack -G DEB` makes one package per program of the build, each depending on
# what dpkg-shlibdeps found (libc6 at least), holding its binary in usr/bin and its man pages gzipped
# in usr/share/man; the programs run from an unpacked root. cpack works in this suite's scratch
# directory, and nothing is left in the source tree. First, no program of the build is linked
# against libcurl, directly or through another library: it is loaded on first use (lib/curl_api).
. "$(dirname "$0")/lib.sh"

: "${SION_BUILD_DIR:?run the suites through ctest}"
command -v readelf >/dev/null || skip "readelf is not installed (Debian package binutils)"
command -v ldd >/dev/null || skip "ldd is not installed (Debian package libc-bin)"

version=$(sed -n 's/^project(sion VERSION \([0-9.]*\).*/\1/p' "$SION_SOURCE_DIR/CMakeLists.txt")
programs=()
if [ -f "$SION_BUILD_DIR/sion-programs.txt" ]; then
    while read -r p; do [ -n "$p" ] && programs+=("$p"); done <"$SION_BUILD_DIR/sion-programs.txt"
fi
[ ${#programs[@]} -gt 0 ] && ok || fail "the build lists no programs in $SION_BUILD_DIR/sion-programs.txt"
case " ${programs[*]} " in
*" sion "*) ok ;;
*) fail "the build's programs do not include the front door, sion: ${programs[*]}" ;;
esac

# What a program needs: its own NEEDED entries (readelf), and all that the loader would load (ldd).
for prog in "${programs[@]}"; do
    bin="$SION_BIN/$prog"
    if [ ! -x "$bin" ]; then
        fail "$prog is not in the build's $SION_BIN"
        continue
    fi
    if ! readelf -d "$bin" >"$scratch/dynamic" || ! grep -q '(NEEDED)' "$scratch/dynamic"; then
        fail "readelf -d $bin shows no NEEDED libraries"
        continue
    fi
    ldd "$bin" >"$scratch/ldd" 2>&1 || fail "ldd $bin"
    if grep -ho 'libcurl[^] ]*' "$scratch/dynamic" "$scratch/ldd" >"$scratch/curl"; then
        fail "$prog is linked against $(head -n 1 "$scratch/curl"), which is loaded on first use (lib/curl_api)"
    else
        ok
    fi
done

# need TOOL WHY: the packaging checks skip without TOOL, unless a check above failed already.
need() {
    command -v "$1" >/dev/null && return
    [ "$failures" -eq 0 ] || { done_testing; exit; }
    skip "$1 is not installed ($2)"
}
need cpack "Debian package cmake"
need dpkg-deb "Debian package dpkg"
need dpkg-shlibdeps "Debian package dpkg-dev"
need file "Debian package file, which cpack's DEB generator runs"

# What packaging could leave in the source tree (outside build directories): there before, there after.
leftovers() {
    find "$SION_SOURCE_DIR" \( -path "$SION_SOURCE_DIR/.git" -o -path "$SION_SOURCE_DIR/build" \
        -o -path "$SION_BUILD_DIR" \) -prune -o \
        \( -name '*.deb' -o -name '_CPack_Packages' -o -name 'install_manifest*.txt' \) -print | sort
}
before=$(leftovers)

# cpack installs each program's component into its own staging directory under -B, then packs it.
out="$scratch/packages"
cd "$scratch" || exit 1
if ! expect_exit 0 cpack -G DEB --config "$SION_BUILD_DIR/CPackConfig.cmake" -B "$out"; then
    sed 's/^/  cpack: /' "$scratch/out" >&2
    done_testing
    exit
fi

shopt -s nullglob
debs=("$out"/*.deb)
[ ${#debs[@]} -eq ${#programs[@]} ] && ok ||
    fail "${#debs[@]} packages for ${#programs[@]} programs: $(cd "$out" && echo *.deb)"

root="$scratch/root"
mkdir -p "$root"
for prog in "${programs[@]}"; do
    set -- "$out/${prog}_${version}_"*.deb
    if [ $# -ne 1 ] || [ ! -f "$1" ]; then
        fail "no package ${prog}_${version}_<arch>.deb for $prog"
        continue
    fi
    deb=$1
    ok

    # The control file: name, version, and the libraries dpkg-shlibdeps found.
    dpkg-deb -I "$deb" >"$scratch/info" || fail "dpkg-deb -I $deb"
    expect_grep "^ Package: $prog\$" "$scratch/info"
    expect_grep "^ Version: $version\$" "$scratch/info"
    expect_grep '^ Depends: (.*, )?libc6 \(>= [0-9]' "$scratch/info"
    if [ "$prog" != sion ]; then
        expect_grep "^ Depends: (.*, )?sion \(= $version\)" "$scratch/info"
    fi
    if [ "$prog" = sion-documents ]; then # its PDFs through pdftotext
        expect_grep '^ Depends: (.*, )?libarchive13(, |$)' "$scratch/info"
        expect_grep '^ Recommends: poppler-utils$' "$scratch/info"
    fi

    # The files: the binary in usr/bin, each man page man/<prog>.<n> gzipped in usr/share/man/man<n>.
    dpkg-deb -c "$deb" >"$scratch/contents" || fail "dpkg-deb -c $deb"
    expect_grep "^-rwxr-xr-x root/root .* \./usr/bin/$prog\$" "$scratch/contents"
    if grep -E '\./usr/share/man/.*\.[1-9]$' "$scratch/contents" >"$scratch/plain"; then
        fail "$prog's package has man pages that are not gzipped: $(awk '{print $NF}' "$scratch/plain")"
    else
        ok
    fi
    pages=0
    for page in "$SION_SOURCE_DIR/man/$prog".[1-9]; do
        name=$(basename "$page")
        expect_grep "^-rw-r--r-- root/root .* \./usr/share/man/man${name##*.}/$name\.gz\$" "$scratch/contents"
        pages=$((pages + 1))
    done
    [ "$pages" -gt 0 ] && ok || fail "$prog has no man page in man/"
    # Its shell completions, where bash-completion and fish look for the command's name.
    expect_grep "^-rw-r--r-- root/root .* \./usr/share/bash-completion/completions/$prog\$" "$scratch/contents"
    expect_grep "^-rw-r--r-- root/root .* \./usr/share/fish/vendor_completions\.d/$prog\.fish\$" "$scratch/contents"

    dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb"
done

# The front door's package holds zsh's completions for every program, sion(1) and sion(7).
expect_grep '^#compdef sion sion-run ' "$root/usr/share/zsh/vendor-completions/_sion"
for name in man1/sion.1 man7/sion.7; do
    gz="$root/usr/share/man/$name.gz"
    if [ ! -f "$gz" ]; then
        fail "the package sion has no usr/share/man/$name.gz"
        continue
    fi
    # gzip -9n, as Debian policy has it: no file name or time stamp, so builds are reproducible.
    [ "$(od -An -tx1 -N8 "$gz" | tr -d ' \n')" = 1f8b080000000000 ] && ok ||
        fail "usr/share/man/$name.gz has a name or time stamp in its gzip header (want gzip -n)"
    zcat "$gz" | cmp -s - "$SION_SOURCE_DIR/man/${name#*/}" && ok ||
        fail "usr/share/man/$name.gz is not man/${name#*/}"
done

# The programs run from the unpacked root.
for prog in "${programs[@]}"; do
    [ -x "$root/usr/bin/$prog" ] || continue
    expect_exit 0 "$root/usr/bin/$prog" --version && expect_out "$prog $version"
done

cd "$SION_SOURCE_DIR" || exit 1
after=$(leftovers)
[ "$after" = "$before" ] && ok || fail "packaging left files in the source tree: $(comm -13 <(echo "$before") <(echo "$after"))"

done_testing
