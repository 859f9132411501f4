// SPDX-License-Identifier: MIT
// A directory of a test's own under $TMPDIR (or /tmp), removed with all it holds at the end.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <stdlib.h>

namespace sion::test {

class TempDir {
public:
    TempDir() {
        const char* tmp = std::getenv("TMPDIR"); // NOLINT(concurrency-mt-unsafe)
        m_path = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/sion-test.XXXXXX";
        if (::mkdtemp(m_path.data()) == nullptr)
            m_path.clear();
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        if (!m_path.empty())
            std::filesystem::remove_all(m_path, ignored);
    }

    // Empty when it could not be made.
    [[nodiscard]] const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

} // namespace sion::test
