// SPDX-License-Identifier: MIT
// lib/secrets: the sealed documents of agents/ (made with `create`, empty and read-only without a
// key file, a changed one refused naming it and its contents left as they were, removed whole),
// and the credential store on top of one.
#include "lib/secrets.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sion::secrets {
namespace {

namespace fs = std::filesystem;

class SecretsTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/sion-secrets-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        m_home = tmpl;
    }

    void TearDown() override { fs::remove_all(m_home); }

    static std::string bytes_of(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    std::string m_home;
};

TEST_F(SecretsTest, ADocumentMadeSealedAndRemoved) {
    auto none = SealedDocument::open(m_home, "notes.bin", "the notes", false);
    ASSERT_TRUE(none);
    EXPECT_EQ(*none->read(), "");
    auto refused = none->write("x");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::config);
    EXPECT_FALSE(fs::exists(m_home + "/agents"));

    auto doc = SealedDocument::open(m_home, "notes.bin", "the notes", true);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc->path(), m_home + "/agents/notes.bin");
    ASSERT_TRUE(doc->write("a secret"));
    EXPECT_TRUE(fs::exists(m_home + "/agents/secrets.key"));
    EXPECT_EQ(bytes_of(doc->path()).find("a secret"), std::string::npos);
    EXPECT_EQ(*doc->read(), "a secret");
    // Opened again without `create`, the key file is there: it reads and writes.
    auto again = SealedDocument::open(m_home, "notes.bin", "the notes", false);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again->read(), "a secret");
    EXPECT_TRUE(*doc->remove());
    EXPECT_FALSE(*doc->remove());
    EXPECT_EQ(*doc->read(), "");
}

TEST_F(SecretsTest, AChangedDocumentIsRefusedNamingIt) {
    auto doc = SealedDocument::open(m_home, "notes.bin", "the notes", true);
    ASSERT_TRUE(doc);
    ASSERT_TRUE(doc->write("a secret"));
    std::string sealed = bytes_of(doc->path());
    sealed[sealed.size() / 2] ^= 1;
    std::ofstream(doc->path(), std::ios::binary | std::ios::trunc) << sealed;
    auto read = doc->read();
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().exit(), Exit::data);
    EXPECT_EQ(read.error().message().rfind("cannot read the notes '" + doc->path() + "': ", 0), 0U)
        << read.error().message();
    EXPECT_EQ(bytes_of(doc->path()), sealed);
    // Its key file gone, it is refused too.
    fs::remove(m_home + "/agents/secrets.key");
    auto keyless = SealedDocument::open(m_home, "notes.bin", "the notes", false);
    ASSERT_TRUE(keyless);
    EXPECT_EQ(keyless->read().error().message(),
              "cannot read the notes '" + doc->path() + "': its key file secrets.key is missing");
    EXPECT_EQ(doc->unreadable("why").message(), "cannot read the notes '" + doc->path() + "': why");
}

TEST_F(SecretsTest, TheCredentialStoreIsOneOfThem) {
    auto store = Store::open(m_home, true);
    ASSERT_TRUE(store);
    EXPECT_EQ(store->path(), m_home + "/agents/secrets.bin");
    ASSERT_TRUE(store->set("B_KEY", "b"));
    ASSERT_TRUE(store->set("A_KEY", "a"));
    EXPECT_EQ(*store->names(), (std::vector<std::string>{"A_KEY", "B_KEY"}));
    EXPECT_EQ(**store->get("A_KEY"), "a");
    EXPECT_TRUE(*store->remove("A_KEY"));
    EXPECT_FALSE(*store->remove("A_KEY"));
    EXPECT_EQ(store->set("a-key", "x").error().exit(), Exit::usage);
    std::string sealed = SecretsTest::bytes_of(store->path());
    sealed[sealed.size() / 2] ^= 1;
    std::ofstream(store->path(), std::ios::binary | std::ios::trunc) << sealed;
    auto names = store->names();
    ASSERT_FALSE(names);
    EXPECT_EQ(names.error().message().rfind("cannot read credentials '" + store->path() + "': ", 0),
              0U);
    EXPECT_EQ(store->set("C_KEY", "c").error().exit(), Exit::data);
    EXPECT_EQ(SecretsTest::bytes_of(store->path()), sealed); // never written over
}

} // namespace
} // namespace sion::secrets
