// SPDX-License-Identifier: MIT
// Tests for lib/proto/sandbox_options: the grammar of a sandbox option's values, and the sandbox
// `sion-sandbox describe` prints, read and written back: each line of its fixtures
// (tests/fixtures/lists/sandbox.describe.jsonl, which t0003 checks against
// schemas/sandbox.describe.json) as it was, and malformed descriptions refused with a reason.
#include "lib/proto/sandbox_options.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace sion::proto {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

TEST(ParseBytes, Units) {
    EXPECT_EQ(*parse_bytes("0"), 0U);
    EXPECT_EQ(*parse_bytes("1K"), 1024U);
    EXPECT_EQ(*parse_bytes("256M"), uint64_t{256} << 20);
    EXPECT_EQ(*parse_bytes("4GiB"), uint64_t{4} << 30);
    EXPECT_FALSE(parse_bytes(""));
    EXPECT_FALSE(parse_bytes("M"));
    EXPECT_FALSE(parse_bytes("-1"));
    EXPECT_FALSE(parse_bytes("99999999999999999999"));
}

TEST(ParseMemory, SixteenMegabytesAtLeast) {
    EXPECT_EQ(*parse_memory("16M"), uint64_t{16} << 20);
    auto little = parse_memory("8K");
    ASSERT_FALSE(little);
    EXPECT_EQ(little.error().exit(), Exit::usage);
    EXPECT_EQ(little.error().message(), "'8K' is too little: give 16M or more");
    EXPECT_EQ(size_text(uint64_t{4} << 30), "4 GiB");
    EXPECT_EQ(size_text(1536 * 1024), "1536 KiB");
    EXPECT_EQ(size_text(1000), "1000 bytes");
}

TEST(ParseBackend, PinnedByDigestOrBwrap) {
    Config c;
    ASSERT_OK(parse_backend(c, "docker:alpine@sha256:" + std::string(64, 'a')));
    EXPECT_EQ(c.backend, BackendKind::docker);
    EXPECT_EQ(backend_text(c), "docker:alpine@sha256:" + std::string(64, 'a'));
    auto unpinned = parse_backend(c, "docker:alpine:3.20");
    ASSERT_FALSE(unpinned);
    EXPECT_EQ(unpinned.error().exit(), Exit::config);
    EXPECT_EQ(unpinned.error().message(),
              "alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>");
    ASSERT_OK(parse_backend(c, "bwrap"));
    EXPECT_EQ(backend_text(c), "bwrap");
    auto network = parse_network(c, "sion-egress");
    ASSERT_FALSE(network);
    EXPECT_EQ(network.error().message(),
              "with bubblewrap the network is none, declared or host, not sion-egress");
}

TEST(SandboxDescribe, TheFixturesReadAndWriteBackAsTheyAre) {
    const char* source = std::getenv("SION_TEST_SOURCE_DIR");
    ASSERT_NE(source, nullptr) << "run through ctest";
    std::ifstream in(std::string(source) + "/tests/fixtures/lists/sandbox.describe.jsonl");
    ASSERT_TRUE(in.good());
    int sandboxes = 0;
    for (std::string line; std::getline(in, line);) {
        auto json = Json::parse(line);
        ASSERT_OK(json);
        if (json->get("error").exists())
            continue;
        auto config = config_from_json(json->view());
        ASSERT_OK(config);
        EXPECT_EQ(config_to_json(*config).dump(), line);
        ++sandboxes;
    }
    EXPECT_GE(sandboxes, 3);
}

TEST(SandboxDescribe, WhatItSaysIsWhatTheConfigHolds) {
    Config c;
    c.workspace = "/w";
    c.workspace_as_given = "~/w";
    c.reads = {"/opt"};
    c.reads_as_given = {"/opt"};
    ASSERT_OK(parse_backend(c, "docker:img@sha256:" + std::string(64, '0')));
    ASSERT_OK(parse_network(c, "egress"));
    c.limits.timeout = std::chrono::seconds(5);
    c.limits.memory = uint64_t{8} << 30;
    c.home = "/h";
    c.home_as_given = "/h";
    auto back = config_from_json(config_to_json(c).view());
    ASSERT_OK(back);
    EXPECT_EQ(back->workspace, "/w");
    EXPECT_EQ(back->workspace_as_given, "~/w");
    EXPECT_EQ(back->reads, std::vector<std::string>{"/opt"});
    EXPECT_EQ(back->backend, BackendKind::docker);
    EXPECT_EQ(back->image, "img@sha256:" + std::string(64, '0'));
    EXPECT_EQ(back->network, Network::named);
    EXPECT_EQ(back->network_name, "egress");
    EXPECT_EQ(back->limits.timeout, std::chrono::seconds(5));
    EXPECT_EQ(back->limits.memory, uint64_t{8} << 30);
    EXPECT_EQ(back->limits.cpu, Limits{}.cpu);
    EXPECT_TRUE(back->channel.empty());
}

TEST(SandboxDescribe, MalformedDescriptionsSayWhatIsWrong) {
    const std::string ok_rest =
        R"("reads":[],"reads_as_given":[],"allow_hosts":[],"home":"/h","home_as_given":"/h")";
    struct Case {
        std::string json;
        const char* message;
    };
    for (const Case& c : std::vector<Case>{
             {"[]", "sandbox description: an array, not an object"},
             {R"({"workspace_as_given":"w","backend":"bwrap","network":"none",)" + ok_rest + "}",
              "sandbox description: member 'workspace' is missing"},
             {R"({"workspace":"/w","workspace_as_given":"w","backend":"docker:x","network":"none",)"
                  + ok_rest + "}",
              "sandbox description: x is not pinned by digest: give name@sha256:<64 hex digits>"},
             {R"({"workspace":"/w","workspace_as_given":"w","backend":"bwrap","network":"named","network_name":"n",)"
                  + ok_rest + "}",
              "sandbox description: 'n' is not a network's name"},
             {R"({"workspace":"/w","workspace_as_given":"w","backend":"bwrap","network":"none","reads":"/opt","home":"/h","home_as_given":"/h"})",
              "sandbox description: member 'reads' is a string, not an array of strings"},
             {R"({"workspace":"/w","workspace_as_given":"w","backend":"bwrap","network":"none","limits":{"memory":-1},)"
                  + ok_rest + "}",
              "sandbox description: limit 'memory' is not a whole number of 0 or more"},
             {R"({"workspace":"/w","workspace_as_given":"w","backend":"bwrap","network":"none","limits":{"timeout":1.5},)"
                  + ok_rest + "}",
              "sandbox description: limit 'timeout' is not a whole number of 0 or more"},
         }) {
        auto json = Json::parse(c.json);
        ASSERT_OK(json);
        auto config = config_from_json(json->view());
        ASSERT_FALSE(config) << c.json;
        EXPECT_EQ(config.error().exit(), Exit::data) << c.json;
        EXPECT_EQ(config.error().message(), c.message) << c.json;
    }
}

} // namespace
} // namespace sion::proto
