// SPDX-License-Identifier: MIT
// A command's output as a sandbox answers with it: each stream cut at the output cap
// (Limits::output), with a line that says how much was cut.
#pragma once

#include <cstdint>
#include <string>

namespace sion::sandboxd {

// Cuts `text` (the first bytes of `total_bytes` written) at `cap` bytes, backing up to a UTF-8
// boundary, and adds the line that says how much was cut: "[... 12345 more bytes cut]" (after a
// newline if the kept text does not end with one). Returns whether it cut. `text` longer than
// `cap` is cut even when `total_bytes` is smaller.
bool cut_output(std::string& text, uint64_t cap, uint64_t total_bytes);

} // namespace sion::sandboxd
