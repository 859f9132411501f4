#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-layers: the tree as it is passes; on a copy, an include or a link across the layers
# is named, one line each, and fails the check (lib/ including an engine, an engine another engine,
# a program another program's engine or files).
. "$(dirname "$0")/lib.sh"

check="$SION_SOURCE_DIR/scripts/check-layers"
expect_exit 0 "$check" "$SION_SOURCE_DIR" && expect_err ""

# fresh: a copy of the sources the check reads, to spoil.
fresh() {
    rm -rf t && mkdir t
    (cd "$SION_SOURCE_DIR" && cp -R lib session sandboxd mcpd hooks cmd "$scratch/t/")
}
cd "$scratch" || exit 1

fresh
expect_exit 0 "$check" t && expect_err ""

fresh
echo '#include "session/store.hpp"' >>t/lib/json.cpp
echo '#include "mcpd/client.hpp"' >>t/hooks/fire.cpp
echo '#include "cmd/sion-run/commands.hpp"' >>t/cmd/sion-hooks/main.cpp
echo '#include "sandboxd/exec.hpp"' >>t/cmd/sion-hooks/main.cpp
expect_exit 1 "$check" t && expect_err "check-layers: lib/json.cpp: includes session/store.hpp
check-layers: hooks/fire.cpp: includes mcpd/client.hpp
check-layers: cmd/sion-hooks/main.cpp: includes cmd/sion-run/commands.hpp
check-layers: cmd/sion-hooks/main.cpp: includes sandboxd/exec.hpp"

fresh
echo 'target_link_libraries(sion_hooks PRIVATE sion::session)' >>t/hooks/CMakeLists.txt
echo 'target_link_libraries(sion-hooks PRIVATE sion::mcpd)' >>t/cmd/sion-hooks/CMakeLists.txt
expect_exit 1 "$check" t && expect_err "check-layers: hooks/CMakeLists.txt: links sion::session
check-layers: cmd/sion-hooks/CMakeLists.txt: links sion::mcpd"

done_testing
