// SPDX-License-Identifier: MIT
// The codec and the envelope schema agree: every fixture line the schema accepts decodes, and every
// one it rejects is answered with -32600 or -32700 (tests/e2e/t0003-schemas.sh checks the schema side).
#include "lib/rpc/message.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sion::rpc {
namespace {

namespace fs = std::filesystem;

fs::path source_dir() {
    const char* dir = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    return dir != nullptr ? fs::path(dir) : fs::path(".");
}

// Every line of every .jsonl file under `dir`, named "file:line".
std::vector<std::pair<std::string, std::string>> lines_under(const fs::path& dir) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".jsonl")
            continue;
        std::ifstream in(entry.path());
        std::string line;
        for (int n = 1; std::getline(in, line); ++n)
            out.emplace_back(entry.path().filename().string() + ":" + std::to_string(n), line);
    }
    return out;
}

TEST(RpcFixtures, ValidLinesDecode) {
    auto lines = lines_under(source_dir() / "tests/fixtures/envelope");
    auto examples = lines_under(source_dir() / "examples");
    lines.insert(lines.end(), examples.begin(), examples.end());
    ASSERT_GT(lines.size(), 5U) << "fixtures not found under " << source_dir();
    for (const auto& [where, text] : lines) {
        Decoded d = decode(text);
        EXPECT_TRUE(d.message.has_value())
            << where << ": " << (d.failure ? d.failure->message : std::string()) << "\n" << text;
    }
}

TEST(RpcFixtures, InvalidLinesAreAnsweredWithAProtocolError) {
    auto lines = lines_under(source_dir() / "tests/fixtures/envelope-invalid");
    ASSERT_GT(lines.size(), 5U) << "fixtures not found under " << source_dir();
    for (const auto& [where, text] : lines) {
        Decoded d = decode(text);
        ASSERT_TRUE(d.failure.has_value()) << where << " decoded: " << text;
        EXPECT_TRUE(d.failure->code == k_invalid_request || d.failure->code == k_parse_error)
            << where << ": code " << d.failure->code;
    }
}

} // namespace
} // namespace sion::rpc
