// SPDX-License-Identifier: MIT
// Unit tests of lib/redact: a secret's long pieces, in any case, split, and in base64.
#include "lib/base64.hpp"
#include "lib/json.hpp"
#include "lib/redact.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion {
namespace {

const std::string k_key = "sk-ant-api03-Zq8v2LmN4xR7tK1pW9yB3cD6fH0jS5gA-abc";

std::string redact(std::string_view text) {
    return redact_secrets(text, {k_key});
}

std::string upper(std::string text) {
    for (char& c : text)
        c = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    return text;
}

TEST(Redact, TheSecretWhole) {
    EXPECT_EQ(redact("Invalid API key: " + k_key), "Invalid API key: [redacted]");
    EXPECT_EQ(redact(k_key + k_key), "[redacted]");
    EXPECT_EQ(redact("a " + k_key + " b " + k_key + "."), "a [redacted] b [redacted].");
}

TEST(Redact, TextWithoutTheSecretIsUnchanged) {
    const std::string text = "HTTP 401: invalid x-api-key\tsk-ant-other sk-ant-api0 Zq8v2LmN4xR";
    EXPECT_EQ(redact(text), text);
    EXPECT_EQ(redact(""), "");
    EXPECT_EQ(Redactor().redact(text), text);
    EXPECT_TRUE(Redactor({"short", "", "1234567"}).empty());
    EXPECT_EQ(redact_secrets("short 1234567", {"short", "1234567"}), "short 1234567");
}

TEST(Redact, TwelveCharactersAtTheStartMiddleAndEnd) {
    // "sk-ant-api03-…abc": the provider's cut, its prefix is 13 of the key's characters.
    EXPECT_EQ(redact("invalid key prefix sk-ant-api03-…abc"), "invalid key prefix [redacted]…abc");
    EXPECT_EQ(redact("got sk-ant-api0 only"), "got sk-ant-api0 only"); // 11: kept
    EXPECT_EQ(redact("got sk-ant-api03 only"), "got [redacted] only"); // 12
    EXPECT_EQ(redact("mid xR7tK1pW9yB3 end"), "mid [redacted] end");
    EXPECT_EQ(redact("mid R7tK1pW9yB3 end"), "mid R7tK1pW9yB3 end"); // 11
    EXPECT_EQ(redact("end: 5gA-abc, fH0jS5gA-abc"), "end: 5gA-abc, [redacted]");
    // Every run of 12 anywhere in the key.
    for (size_t at = 0; at + 12 <= k_key.size(); ++at)
        EXPECT_EQ(redact("<" + k_key.substr(at, 12) + ">"), "<[redacted]>") << at;
}

TEST(Redact, AShortSecretOnlyWhole) {
    const std::vector<std::string> secrets = {"pa55word10"};
    EXPECT_EQ(redact_secrets("pw pa55word10!", secrets), "pw [redacted]!");
    EXPECT_EQ(redact_secrets("pw PA55WORD10!", secrets), "pw [redacted]!");
    EXPECT_EQ(redact_secrets("pw pa55word1!", secrets), "pw pa55word1!");
}

TEST(Redact, AnyCase) {
    EXPECT_EQ(redact("KEY " + upper(k_key)), "KEY [redacted]");
    EXPECT_EQ(redact("prefix SK-ANT-API03-zQ8V…"), "prefix [redacted]…");
    EXPECT_EQ(redact("x=" + upper(k_key.substr(20, 14)) + ";"), "x=[redacted];");
}

TEST(Redact, SplitByWhiteSpace) {
    // Across lines: each piece shorter than twelve, the whole still the secret's.
    std::string lines;
    for (size_t at = 0; at < k_key.size(); at += 7)
        lines += k_key.substr(at, 7) + (at % 14 == 0 ? "\n" : "\r\n");
    EXPECT_EQ(redact("key:\n" + lines + "end"), "key:\n[redacted]\nend");
    // In groups of four with spaces and tabs, as a person copies it.
    std::string groups;
    for (size_t at = 0; at < k_key.size(); at += 4)
        groups += (at == 0 ? "" : at % 8 == 0 ? "\t" : " ") + k_key.substr(at, 4);
    EXPECT_EQ(redact("[" + groups + "]"), "[[redacted]]");
    // A cut piece split in two: "sk-ant" "-api03-Z" is 14 characters of it.
    EXPECT_EQ(redact("prefix sk-ant\n-api03-Z…"), "prefix [redacted]…");
    // Two short pieces of different places of the key, run together, are not the key.
    EXPECT_EQ(redact("sk-ant -abc Zq8v2L"), "sk-ant -abc Zq8v2L");
}

TEST(Redact, Base64AtEachOffset) {
    // The key encoded after 0, 1 and 2 bytes of something else, as in "user:KEY" or a JSON blob.
    for (std::string before : {"", "u", "us", "use", "user:", "{\"key\":\""}) {
        for (std::string after : {"", "\"", "\"}", ":x"}) {
            std::string encoded = base64_encode(before + k_key + after);
            std::string shown = redact("Basic " + encoded);
            EXPECT_EQ(shown.find(encoded.substr(encoded.size() / 2 - 6, 12)), std::string::npos)
                << shown;
            ASSERT_NE(shown.find("[redacted]"), std::string::npos) << shown;
            // What is left of the encoded text is what stands for `before` and `after`, a
            // character or two of the key's own at each end at most.
            EXPECT_LE(shown.size() - std::string("Basic [redacted]").size(),
                      (before.size() + after.size()) * 4 / 3 + 6)
                << shown;
            std::string url = base64url_encode(before + k_key + after);
            EXPECT_NE(redact(url).find("[redacted]"), std::string::npos) << url;
            EXPECT_NE(redact(upper(encoded)).find("[redacted]"), std::string::npos) << encoded;
        }
    }
    // Alone, padding and all.
    EXPECT_EQ(redact("b64 " + base64_encode(k_key) + " ."), "b64 [redacted] .");
    EXPECT_EQ(redact("b64 " + base64url_encode(k_key) + " ."), "b64 [redacted] .");
    // Any 12 characters of an encoded form.
    std::string encoded = base64_encode("xy" + k_key);
    for (size_t at = 4; at + 12 + 2 <= encoded.size(); ++at)
        EXPECT_EQ(redact("<" + encoded.substr(at, 12) + ">"), "<[redacted]>") << at;
}

TEST(Redact, RunsThatTouchAreOneMark) {
    EXPECT_EQ(redact(k_key + upper(k_key) + base64_encode(k_key)), "[redacted]");
    EXPECT_EQ(redact(k_key.substr(0, 20) + " " + k_key.substr(30)), "[redacted] [redacted]");
}

TEST(Redact, SeveralSecrets) {
    const std::vector<std::string> secrets = {k_key, "AKIAIOSFODNN7EXAMPLE", "tok"};
    EXPECT_EQ(redact_secrets("a=" + k_key + " b=AKIAIOSFODNN7EXAM c=tok", secrets),
              "a=[redacted] b=[redacted] c=tok");
}

TEST(Redact, WholeCharactersOfUtf8) {
    // The text's "₁" (E2 82 81) starts as the secret's "€" (E2 82 AC) does: the run that ends
    // inside it takes all of it, so what is left is still UTF-8.
    const std::string secret = "0123456789a\xE2\x82\xACz";
    EXPECT_EQ(redact_secrets("x 0123456789a\xE2\x82\x81 y", {secret}), "x [redacted] y");
    EXPECT_EQ(redact_secrets("x " + secret + " y", {secret}), "x [redacted] y");
}

TEST(Redact, JsonByItsStringsAndMemberNames) {
    auto said = Json::parse(R"({"text":"key )" + k_key + R"(","n":12,"ok":true,"none":null,
        "list":["a",")" + upper(k_key)
                            + R"(",{")" + k_key + R"(":"named"}],")" + k_key.substr(0, 14)
                            + R"(":1,"tail":"\n)" + k_key.substr(5, 10) + R"(\n )"
                            + k_key.substr(15, 10) + R"("})");
    ASSERT_TRUE(said) << said.error().message();
    Json redacted = Redactor({k_key}).redact_json(std::move(*said));
    EXPECT_EQ(
        canonical_json(redacted),
        R"({"[redacted]":1,"list":["a","[redacted]",{"[redacted]":"named"}],"n":12,"none":null,)"
        R"("ok":true,"tail":"\n[redacted]","text":"key [redacted]"})");
    // What comes out is JSON that parses again, with no member twice.
    EXPECT_TRUE(Json::parse(redacted.dump()));
    // Two members whose names become one: the first keeps it.
    auto twice = Json::parse(R"({")" + k_key + R"(":1,")" + upper(k_key) + R"(":2})");
    ASSERT_TRUE(twice);
    EXPECT_EQ(Redactor({k_key}).redact_json(std::move(*twice)).dump(), R"({"[redacted]":1})");
    // Without secrets, or without one in it, the value is as it was.
    auto plain = Json::parse(R"({"a":["b",{"c":"d"}]})");
    ASSERT_TRUE(plain);
    EXPECT_EQ(Redactor().redact_json(Json::copy_of(*plain)).dump(), plain->dump());
    EXPECT_EQ(Redactor({k_key}).redact_json(Json::copy_of(*plain)).dump(), plain->dump());
    EXPECT_FALSE(Redactor({k_key}).redact_json(Json()).exists());
}

} // namespace
} // namespace sion
