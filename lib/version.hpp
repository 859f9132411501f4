// SPDX-License-Identifier: MIT
// The version every program prints for --version.
#pragma once

namespace sion {

[[nodiscard]] const char* version();

} // namespace sion
