// SPDX-License-Identifier: MIT
// The version, from the project() call in CMakeLists.txt.
#include "lib/version.hpp"

namespace sion {

const char* version() { return SION_VERSION_STRING; }

} // namespace sion
