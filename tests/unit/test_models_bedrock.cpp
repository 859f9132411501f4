// SPDX-License-Identifier: MIT
// lib/models/bedrock: the Converse request made from the neutral conversation (roles merged,
// pictures, calls and results, cache points for Claude and Nova only, kept reasoning given back
// only to its own model and endpoint, thinking fields for Claude), the answer read back (text,
// calls, reasoning kept only when signed, usage with cache reads and writes, why it stopped), and
// the settings the environment and AWS's files give; and the model on KeyedModel's answer loop
// against a loopback server, on a clock the test moves: retry hints, API keys that rest, kept
// reasoning let go once refused.
#include "lib/models/bedrock.hpp"
#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <vector>

namespace sion::models {
namespace {

namespace fs = std::filesystem;

Json parse(std::string_view text) {
    auto j = Json::parse(text);
    EXPECT_TRUE(j) << text;
    return j ? std::move(*j) : Json::null();
}

std::vector<Json> conversation(std::initializer_list<std::string_view> messages) {
    std::vector<Json> out;
    for (std::string_view m : messages)
        out.push_back(parse(m));
    return out;
}

BedrockSettings settings_for(std::string model) {
    BedrockSettings s;
    s.model = std::move(model);
    s.region = "us-east-1";
    s.endpoint = "http://127.0.0.1:1";
    return s;
}

const Origin k_origin{"bedrock", "http://127.0.0.1:1", "anthropic.claude-sonnet-4-5-v1:0"};

// The canonical JSON of what `request` becomes.
std::string body_of(const Request& request, const BedrockSettings& settings,
                    bool with_kept = true) {
    return canonical_json(converse_body(request, settings, k_origin, with_kept));
}

TEST(Bedrock, Families) {
    EXPECT_EQ(bedrock_family("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
              BedrockFamily::claude);
    EXPECT_EQ(bedrock_family("amazon.nova-pro-v1:0"), BedrockFamily::nova);
    EXPECT_EQ(bedrock_family("meta.llama3-70b-instruct-v1:0"), BedrockFamily::other);
}

TEST(Bedrock, AToolTurnBecomesConverseMessages) {
    auto conv = conversation({
        R"({"role":"user","text":"Look","images":[{"media_type":"image/png","data":"iVBO"}]})",
        R"({"role":"assistant","text":"Looking.","calls":[{"id":"c.1|x","tool":"shell","input":{"command":"ls"}},{"id":"c2","tool":"shell","input":{"command":"pwd"}}],
            "bedrock":{"by":{"kind":"bedrock","base_url":"http://127.0.0.1:1","model":"anthropic.claude-sonnet-4-5-v1:0"},
                       "blocks":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"s"}}}]}})",
        R"({"role":"tool","call":"c.1|x","tool":"shell","text":"a b","error":false})",
        R"({"role":"tool","call":"c2","tool":"shell","text":"","error":true,"images":[{"media_type":"image/jpeg","data":"/9j/"}]})",
        R"({"role":"user","text":"And now?"})",
    });
    std::vector<ToolSpec> tools;
    tools.push_back(ToolSpec{"shell", "Runs a command", parse(R"({"type":"object"})")});
    Request r{"You are helpful.", tools, conv, 1000};
    auto settings = settings_for(k_origin.model);
    EXPECT_EQ(body_of(r, settings), canonical_json(parse(R"({
        "system":[{"text":"You are helpful."},{"cachePoint":{"type":"default"}}],
        "messages":[
          {"role":"user","content":[{"text":"Look"},{"image":{"format":"png","source":{"bytes":"iVBO"}}}]},
          {"role":"assistant","content":[
             {"reasoningContent":{"reasoningText":{"text":"t","signature":"s"}}},
             {"text":"Looking."},
             {"toolUse":{"toolUseId":"c_1_x","name":"shell","input":{"command":"ls"}}},
             {"toolUse":{"toolUseId":"c2","name":"shell","input":{"command":"pwd"}}}]},
          {"role":"user","content":[
             {"toolResult":{"toolUseId":"c_1_x","content":[{"text":"a b"}],"status":"success"}},
             {"toolResult":{"toolUseId":"c2","content":[{"image":{"format":"jpeg","source":{"bytes":"/9j/"}}}],"status":"error"}},
             {"text":"And now?"},
             {"cachePoint":{"type":"default"}}]}],
        "toolConfig":{"tools":[{"toolSpec":{"name":"shell","description":"Runs a command","inputSchema":{"json":{"type":"object"}}}}]},
        "inferenceConfig":{"maxTokens":1000}})")));
    // Without kept reasoning (sent again after a 400), or to another model or endpoint, none.
    std::string without = body_of(r, settings, false);
    EXPECT_EQ(without.find("reasoningContent"), std::string::npos);
    Json other =
        converse_body(r, settings, Origin{"bedrock", "http://127.0.0.1:2", k_origin.model}, true);
    EXPECT_EQ(other.dump().find("reasoningContent"), std::string::npos);
    // A model that is neither Claude nor Nova is sent no cache point, and no result status.
    std::string llama = body_of(r, settings_for("meta.llama3-70b-instruct-v1:0"));
    EXPECT_EQ(llama.find("cachePoint"), std::string::npos);
    EXPECT_EQ(llama.find("\"status\""), std::string::npos);
}

TEST(Bedrock, TheBodyOfASecondCallIsWhole) {
    auto conv = conversation({
        R"({"role":"user","text":"hi"})",
        R"({"role":"assistant","text":"Writing.","reasoning":"r","calls":[{"id":"tooluse_Ab3","tool":"write_file","input":{"path":"n","content":"x"}}],
            "bedrock":{"by":{"kind":"bedrock","base_url":"http://127.0.0.1:1","model":"anthropic.claude-sonnet-4-5-v1:0"},
                       "blocks":[{"reasoningContent":{"reasoningText":{"text":"r","signature":"s"}}}]}})",
        R"({"role":"tool","call":"tooluse_Ab3","tool":"write_file","text":"wrote 1 byte to n","error":false})",
    });
    Request r{"sys", {}, conv, 100};
    std::string body = converse_body(r, settings_for(k_origin.model), k_origin, true).dump();
    ASSERT_FALSE(body.empty());
    EXPECT_NE(body.find("\"toolResult\""), std::string::npos) << body;
}

TEST(Bedrock, ClaudeIsToldHowHardToThink) {
    auto conv = conversation({R"({"role":"user","text":"hi"})"});
    Request r{"", {}, conv, 2000};
    auto settings = settings_for("anthropic.claude-opus-4-5-v1:0");
    settings.effort.budget = 8000;
    Json body = converse_body(r, settings, k_origin, true);
    EXPECT_EQ(canonical_json(body.get("additionalModelRequestFields")),
              R"({"thinking":{"budget_tokens":8000,"type":"enabled"}})");
    EXPECT_EQ(body.get("inferenceConfig").integer("maxTokens").value_or(0), 10000);
    settings.effort = Effort{EffortLevel::high, std::nullopt};
    body = converse_body(r, settings, k_origin, true);
    EXPECT_EQ(canonical_json(body.get("additionalModelRequestFields")),
              R"({"output_config":{"effort":"high"},"thinking":{"type":"adaptive"}})");
    // Other models are not asked.
    auto nova = settings_for("amazon.nova-pro-v1:0");
    nova.effort = Effort{EffortLevel::high, std::nullopt};
    body = converse_body(r, nova, k_origin, true);
    EXPECT_FALSE(body.get("additionalModelRequestFields").exists());
    EXPECT_EQ(body.get("inferenceConfig").integer("maxTokens").value_or(0), 2000);
}

TEST(Bedrock, AnAnswerIsRead) {
    auto answer = converse_answer(R"({
      "output":{"message":{"role":"assistant","content":[
        {"reasoningContent":{"reasoningText":{"text":"first","signature":"sig"}}},
        {"reasoningContent":{"redactedContent":"cmVk"}},
        {"reasoningContent":{"reasoningText":{"text":"cut off"}}},
        {"text":"One."},{"text":"Two."},
        {"toolUse":{"toolUseId":"t1","name":"shell","input":{"command":"ls"}}}]}},
      "stopReason":"tool_use",
      "usage":{"inputTokens":10,"outputTokens":20,"cacheReadInputTokens":300,"cacheWriteInputTokens":40}})",
                                  k_origin);
    ASSERT_TRUE(answer) << answer.error().message();
    EXPECT_EQ(answer->text, "One.\nTwo.");
    EXPECT_EQ(answer->reasoning, "first\ncut off");
    ASSERT_EQ(answer->calls.size(), 1U);
    EXPECT_EQ(answer->calls[0].id, "t1");
    EXPECT_EQ(answer->calls[0].tool, "shell");
    EXPECT_EQ(canonical_json(answer->calls[0].input), R"({"command":"ls"})");
    EXPECT_EQ(answer->usage.input_tokens, 350);
    EXPECT_EQ(answer->usage.output_tokens, 20);
    EXPECT_EQ(answer->usage.cache_read_tokens, 300);
    EXPECT_EQ(answer->usage.cache_write_tokens, 40);
    // Why it stopped; Converse names neither the model nor the answer.
    EXPECT_EQ(answer->finish_reason, "tool_use");
    EXPECT_EQ(answer->model, "");
    EXPECT_EQ(answer->id, "");
    // Only what was signed (or redacted) is kept, for this origin.
    JsonView kept = answer->kept.get("bedrock");
    EXPECT_EQ(
        canonical_json(kept.get("blocks")),
        R"([{"reasoningContent":{"reasoningText":{"signature":"sig","text":"first"}}},{"reasoningContent":{"redactedContent":"cmVk"}}])");
    EXPECT_EQ(canonical_json(kept.get("by")), canonical_json(k_origin.to_json()));
}

TEST(Bedrock, AMalformedAnswerIsTheModelsFailure) {
    for (std::string_view body :
         {"<html>", R"({"output":{}})",
          R"({"output":{"message":{"content":[{"toolUse":{"toolUseId":"x"}}]}}})"}) {
        auto answer = converse_answer(body, k_origin);
        ASSERT_FALSE(answer) << body;
        EXPECT_EQ(answer.error().exit(), Exit::unavailable) << body;
        EXPECT_EQ(answer.error().message().rfind("the answer is malformed: ", 0), 0U)
            << answer.error().message();
    }
}

// --- the model's answer loop ------------------------------------------------------------------

constexpr std::string_view k_answer =
    R"({"output":{"message":{"role":"assistant","content":[{"text":"fine"}]}},"stopReason":"end_turn",)"
    R"("usage":{"inputTokens":10,"outputTokens":2,"cacheReadInputTokens":300,"cacheWriteInputTokens":40}})";

// A Converse endpoint on 127.0.0.1 answering each request with what `answer` makes of it, and
// keeping each for received().
class Converse {
public:
    using Answer = std::function<std::string(const test::Received&)>;

    explicit Converse(Answer answer)
        : m_answer(std::move(answer)),
          m_server([this](const test::Received& r, int fd, const test::TestServer&) {
              {
                  std::lock_guard lock(m_mutex);
                  m_received.push_back(r);
              }
              test::TestServer::send_text(fd, m_answer(r));
          }) {}

    [[nodiscard]] std::string url() const { return m_server.url(); }

    [[nodiscard]] std::vector<test::Received> received() const {
        std::lock_guard lock(m_mutex);
        return m_received;
    }

private:
    Answer m_answer;
    mutable std::mutex m_mutex;
    std::vector<test::Received> m_received;
    test::TestServer m_server; // last: its threads stop before the members above go
};

std::string converse_reply(int status, std::string_view body, const std::string& headers = "") {
    return test::respond(status, "X", "Content-Type: application/json\r\n" + headers,
                         std::string(body));
}

bool has(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

struct TestClock {
    int64_t now = 1'000'000;
};

// A Claude model at `url`, signing with an access key, or with `api_keys` when given.
BedrockModel model_at(const std::string& url, TestClock& clock, std::string api_keys = "") {
    BedrockSettings s = settings_for(k_origin.model);
    s.endpoint = url;
    s.credentials = {"AKIDEXAMPLE", "secret", ""};
    s.api_keys = KeyRing("AWS_BEARER_TOKEN_BEDROCK", api_keys);
    return BedrockModel(
        "bedrock:" + k_origin.model, std::move(s), [&clock] { return clock.now; },
        [] { return std::time_t{1'767'225'600}; });
}

TEST(BedrockModel, ASignedCallIsAnsweredWithItsCacheFigures) {
    Converse server([](const test::Received&) { return converse_reply(200, k_answer); });
    TestClock clock;
    BedrockModel model = model_at(server.url(), clock);
    auto conv = conversation({R"({"role":"user","text":"hi"})"});
    auto answer = model.answer(Request{"sys", {}, conv, 100});
    ASSERT_TRUE(answer) << answer.error().message();
    EXPECT_EQ(answer->text, "fine");
    EXPECT_EQ(answer->finish_reason, "end_turn");
    EXPECT_EQ(answer->usage.input_tokens, 350);
    EXPECT_EQ(answer->usage.cache_read_tokens, 300);
    EXPECT_EQ(answer->usage.cache_write_tokens, 40);
    auto got = server.received();
    ASSERT_EQ(got.size(), 1U);
    EXPECT_TRUE(has(got[0].head, "POST /model/anthropic.claude-sonnet-4-5-v1%3A0/converse "))
        << got[0].head;
    EXPECT_TRUE(has(got[0].head, "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"))
        << got[0].head;
}

TEST(BedrockModel, AThrottledModelIsLeftAloneAsItsHintSays) {
    int calls = 0;
    Converse server([&calls](const test::Received&) {
        return ++calls == 1 ? converse_reply(429, R"({"message":"Too many requests"})",
                                             "retry-after: 5\r\nx-amzn-ErrorType: "
                                             "ThrottlingException\r\n")
                            : converse_reply(200, k_answer);
    });
    TestClock clock;
    BedrockModel model = model_at(server.url(), clock);
    auto conv = conversation({R"({"role":"user","text":"hi"})"});
    Request r{"sys", {}, conv, 100};
    auto first = model.answer(r);
    ASSERT_FALSE(first);
    EXPECT_EQ(first.error().exit(), Exit::unavailable);
    EXPECT_EQ(first.error().message(), "HTTP 429: Too many requests");
    // Within the hint it fails at once, asking nothing.
    clock.now += 4'999;
    auto quiet = model.answer(r);
    ASSERT_FALSE(quiet);
    EXPECT_EQ(quiet.error().message(), "HTTP 429: Too many requests");
    EXPECT_EQ(server.received().size(), 1U);
    clock.now += 1;
    auto again = model.answer(r);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(server.received().size(), 2U);
}

TEST(BedrockModel, ARefusedApiKeyRestsAnHourAndTheCallGoesOn) {
    Converse server([](const test::Received& r) {
        return has(r.head, "Bearer refused-1")
                   ? converse_reply(403, R"({"message":"Bearer token is invalid"})")
                   : converse_reply(200, k_answer);
    });
    TestClock clock;
    BedrockModel model = model_at(server.url(), clock, "refused-1, good-2");
    auto conv = conversation({R"({"role":"user","text":"hi"})"});
    Request r{"sys", {}, conv, 100};
    auto authorizations = [&server] {
        std::vector<std::string> out;
        for (const auto& got : server.received())
            out.push_back(has(got.head, "Bearer refused-1") ? "refused-1"
                          : has(got.head, "Bearer good-2")  ? "good-2"
                                                            : "signed");
        return out;
    };
    ASSERT_TRUE(model.answer(r));
    EXPECT_EQ(authorizations(), (std::vector<std::string>{"refused-1", "good-2"}));
    ASSERT_TRUE(model.answer(r));
    EXPECT_EQ(authorizations(), (std::vector<std::string>{"refused-1", "good-2", "good-2"}));
    clock.now += KeyRing::k_refused_rest_ms;
    ASSERT_TRUE(model.answer(r));
    EXPECT_EQ(authorizations().size(), 5U); // refused-1 is tried again, then good-2
}

TEST(BedrockModel, KeptReasoningRefusedIsLetGoAndAMalformedRequestIsNotRetried) {
    Converse server([](const test::Received& r) {
        return has(r.body, "reasoningContent") || has(r.body, "malformed")
                   ? converse_reply(400, R"({"message":"The provided request is not valid"})",
                                    "x-amzn-ErrorType: ValidationException\r\n")
                   : converse_reply(200, k_answer);
    });
    TestClock clock;
    BedrockModel model = model_at(server.url(), clock);
    auto kept = conversation({
        R"({"role":"user","text":"hi"})",
        R"({"role":"assistant","text":"Writing.","bedrock":{"by":{"kind":"bedrock","base_url":")"
            + server.url() + R"(","model":"anthropic.claude-sonnet-4-5-v1:0"},)"
            + R"("blocks":[{"reasoningContent":{"reasoningText":{"text":"r","signature":"s"}}}]}})",
        R"({"role":"user","text":"more"})",
    });
    auto answer = model.answer(Request{"sys", {}, kept, 100});
    ASSERT_TRUE(answer) << answer.error().message();
    auto got = server.received();
    ASSERT_EQ(got.size(), 2U);
    EXPECT_TRUE(has(got[0].body, "reasoningContent"));
    EXPECT_FALSE(has(got[1].body, "reasoningContent"));
    auto plain = conversation({R"({"role":"user","text":"malformed"})"});
    auto refused = model.answer(Request{"sys", {}, plain, 100});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::data);
    EXPECT_EQ(server.received().size(), 3U);
}

// The environment of one test, put back afterwards.
class BedrockEnvironment : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "sion-test-bedrock.XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        m_dir = tmpl;
        for (const char* name : k_names) {
            const char* v = std::getenv(name);
            m_saved.emplace_back(name, v != nullptr ? std::optional<std::string>(v) : std::nullopt);
            ::unsetenv(name);
        }
        ::setenv("HOME", m_dir.c_str(), 1);
        ::setenv("SION_HOME", (m_dir / "sion").c_str(), 1);
        fs::create_directories(m_dir / ".aws");
    }

    void TearDown() override {
        for (const auto& [name, value] : m_saved)
            value ? ::setenv(name, value->c_str(), 1) : ::unsetenv(name);
        fs::remove_all(m_dir);
    }

    void write(const char* name, std::string_view text) {
        std::ofstream(m_dir / ".aws" / name) << text;
    }

    static constexpr const char* k_names[] = {"HOME",
                                              "SION_HOME",
                                              "AWS_REGION",
                                              "AWS_DEFAULT_REGION",
                                              "AWS_PROFILE",
                                              "AWS_DEFAULT_PROFILE",
                                              "AWS_ACCESS_KEY_ID",
                                              "AWS_SECRET_ACCESS_KEY",
                                              "AWS_SESSION_TOKEN",
                                              "AWS_BEARER_TOKEN_BEDROCK",
                                              "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
                                              "AWS_SHARED_CREDENTIALS_FILE",
                                              "AWS_CONFIG_FILE"};
    fs::path m_dir;
    std::vector<std::pair<const char*, std::optional<std::string>>> m_saved;
};

TEST_F(BedrockEnvironment, KeysFromTheEnvironmentWin) {
    ::setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "env-secret", 1);
    ::setenv("AWS_SESSION_TOKEN", "env-token", 1);
    ::setenv("AWS_DEFAULT_REGION", "eu-central-1", 1);
    write("credentials", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file\n");
    auto s = bedrock_settings("amazon.nova-lite-v1:0", {});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->credentials.access_key_id, "AKIDENV");
    EXPECT_EQ(s->credentials.session_token, "env-token");
    EXPECT_EQ(s->region, "eu-central-1");
    EXPECT_EQ(s->endpoint, "https://bedrock-runtime.eu-central-1.amazonaws.com");
    EXPECT_TRUE(s->api_keys.empty());
}

TEST_F(BedrockEnvironment, AProfileFromAwsFiles) {
    write("credentials",
          "# keys\n[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = d\n"
          "[dev]\naws_access_key_id=AKIDDEV\naws_secret_access_key=dev-secret\n"
          "aws_session_token = dev-token\n");
    write("config", "[default]\nregion = us-west-2\n[profile dev]\nregion = ap-south-1\n"
                    "s3 =\n  region = nowhere\n");
    auto s = bedrock_settings("m", {});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->credentials.access_key_id, "AKIDDEF");
    EXPECT_EQ(s->region, "us-west-2");
    ::setenv("AWS_PROFILE", "dev", 1);
    s = bedrock_settings("m", {});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->credentials.access_key_id, "AKIDDEV");
    EXPECT_EQ(s->credentials.secret_access_key, "dev-secret");
    EXPECT_EQ(s->credentials.session_token, "dev-token");
    EXPECT_EQ(s->region, "ap-south-1");
    ::setenv("AWS_REGION", "sa-east-1", 1);
    ::setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:4566/", 1);
    s = bedrock_settings("m", {});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->region, "sa-east-1");
    EXPECT_EQ(s->endpoint, "http://127.0.0.1:4566");
}

TEST_F(BedrockEnvironment, AnApiKeyNeedsNoAccessKey) {
    ::setenv("AWS_BEARER_TOKEN_BEDROCK", "k1,k2", 1);
    auto s = bedrock_settings("m", {});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->api_keys.size(), 2U);
    EXPECT_EQ(s->region, "us-east-1");
}

TEST_F(BedrockEnvironment, WhatCannotSignIsRefused) {
    auto none = bedrock_settings("m", {});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::config);
    EXPECT_EQ(none.error().message(),
              "no credentials for bedrock: set AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and "
              "AWS_SECRET_ACCESS_KEY, or a profile's keys in ~/.aws/credentials");
    write("config", "[profile corp]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n");
    ::setenv("AWS_PROFILE", "corp", 1);
    auto role = bedrock_settings("m", {});
    ASSERT_FALSE(role);
    EXPECT_EQ(role.error().exit(), Exit::config);
    EXPECT_EQ(role.error().message(),
              "AWS profile 'corp' signs in with a role (role_arn), which sion does not follow: put "
              "its credentials in the environment first (eval \"$(aws configure "
              "export-credentials --format env)\")");
    ::setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "ftp://x", 1);
    ::setenv("AWS_BEARER_TOKEN_BEDROCK", "k", 1);
    auto url = bedrock_settings("m", {});
    ASSERT_FALSE(url);
    EXPECT_EQ(url.error().exit(), Exit::config);
    EXPECT_EQ(url.error().message(),
              "AWS_ENDPOINT_URL_BEDROCK_RUNTIME 'ftp://x' is not an http or https URL");
}

} // namespace
} // namespace sion::models
