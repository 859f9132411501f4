// SPDX-License-Identifier: MIT
// lib/models/gemini: the generateContent body made from the neutral conversation (turns merged,
// pictures, calls with Google's value for unsigned ones, kept parts given back as they came to
// their own model only, function responses naming Gemini's own ids), effort as thinkingConfig;
// and the stream read back: text runs joined with their signatures, thought summaries shown but
// kept only when signed, calls, usage, the model, id and finish reason the answer names, errors in
// the stream, a cut or blocked answer.
#include "lib/models/gemini.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sion::models {
namespace {

Json parse(std::string_view text) {
    auto j = Json::parse(text);
    EXPECT_TRUE(j) << text;
    return j ? std::move(*j) : Json::null();
}

const Origin k_origin{"gemini", "http://127.0.0.1:1", "gemini-3-pro-preview"};

SseEvent event(std::string data) {
    SseEvent e;
    e.data = std::move(data);
    return e;
}

TEST(Gemini, AConversationBecomesContents) {
    std::vector<Json> conv;
    conv.push_back(parse(
        R"({"role":"user","text":"Look","images":[{"media_type":"image/png","data":"iVBO"}]})"));
    // Gemini's own turn, kept: its parts go back as they came.
    conv.push_back(
        parse(R"({"role":"assistant","text":"A","calls":[{"id":"g1","tool":"shell","input":{}}],
        "gemini":{"by":{"kind":"gemini","base_url":"http://127.0.0.1:1","model":"gemini-3-pro-preview"},
                  "parts":[{"text":"A"},{"functionCall":{"id":"g1","name":"shell","args":{}},"thoughtSignature":"S1"}]}})"));
    conv.push_back(
        parse(R"({"role":"tool","call":"g1","tool":"shell","text":"out","error":false})"));
    // Another model's turn: rebuilt, its call with the value for an unsigned one.
    conv.push_back(parse(
        R"({"role":"assistant","calls":[{"id":"toolu_1","tool":"shell","input":{"command":"ls"}}]})"));
    conv.push_back(
        parse(R"({"role":"tool","call":"toolu_1","tool":"shell","text":"bad","error":true})"));
    std::vector<ToolSpec> tools;
    tools.push_back(ToolSpec{"shell", "Runs", parse(R"({"type":"object"})")});
    Request r{"Be brief.", tools, conv, 1000};
    Json body = gemini_body(r, {}, 0, k_origin, true);
    EXPECT_EQ(canonical_json(body), canonical_json(parse(R"({
      "systemInstruction":{"parts":[{"text":"Be brief."}]},
      "contents":[
        {"role":"user","parts":[{"text":"Look"},{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]},
        {"role":"model","parts":[{"text":"A"},{"functionCall":{"id":"g1","name":"shell","args":{}},"thoughtSignature":"S1"}]},
        {"role":"user","parts":[{"functionResponse":{"id":"g1","name":"shell","response":{"result":"out"}}}]},
        {"role":"model","parts":[{"functionCall":{"name":"shell","args":{"command":"ls"}},"thoughtSignature":"skip_thought_signature_validator"}]},
        {"role":"user","parts":[{"functionResponse":{"name":"shell","response":{"error":"bad"}}}]}],
      "tools":[{"functionDeclarations":[{"name":"shell","description":"Runs","parametersJsonSchema":{"type":"object"}}]}],
      "generationConfig":{"maxOutputTokens":1000}})")));
    // To another model (or without kept parts) the kept turn is rebuilt.
    Json other =
        gemini_body(r, {}, 0, Origin{"gemini", "http://127.0.0.1:1", "gemini-2.5-pro"}, true);
    EXPECT_EQ(other.dump().find("S1"), std::string::npos);
    EXPECT_EQ(gemini_body(r, {}, 0, k_origin, false).dump().find("S1"), std::string::npos);
}

TEST(Gemini, EffortIsThinkingConfig) {
    Request r;
    auto config = [&](Effort e, int64_t room) {
        return canonical_json(gemini_body(r, e, room, k_origin, true).get("generationConfig"));
    };
    EXPECT_EQ(
        config({EffortLevel::max, std::nullopt}, 60000),
        R"({"maxOutputTokens":64000,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"high"}})");
    EXPECT_EQ(
        config({EffortLevel::none, std::nullopt}, 0),
        R"({"maxOutputTokens":16000,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"minimal"}})");
    EXPECT_EQ(
        config({EffortLevel::low, std::nullopt}, 4096),
        R"({"maxOutputTokens":20096,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"low"}})");
    EXPECT_EQ(
        config({std::nullopt, 0}, 0),
        R"({"maxOutputTokens":16000,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":0}})");
}

TEST(Gemini, AStreamIsRead) {
    GeminiReader reader(k_origin);
    for (
        const char* data : {
            R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Plan ","thought":true}]}}],"modelVersion":"gemini-2.5-pro","responseId":"mGTUaI2bJ9SzkdUPqcLVsAQ"})",
            R"({"candidates":[{"content":{"role":"model","parts":[{"text":"it.","thought":true}]}}],"modelVersion":"gemini-2.5-pro","responseId":"mGTUaI2bJ9SzkdUPqcLVsAQ"})",
            R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"modelVersion":"gemini-2.5-pro","responseId":"mGTUaI2bJ9SzkdUPqcLVsAQ"})",
            R"({"candidates":[{"content":{"role":"model","parts":[{"text":"lo","thoughtSignature":"T"}]}}],"modelVersion":"gemini-2.5-pro","responseId":"mGTUaI2bJ9SzkdUPqcLVsAQ"})",
            R"({"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"shell","args":{"command":"ls"}},"thoughtSignature":"C"},{"functionCall":{"name":"shell","args":{"command":"pwd"}}}]}}],"modelVersion":"gemini-2.5-pro","responseId":"mGTUaI2bJ9SzkdUPqcLVsAQ"})",
            R"({"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}],
                 "usageMetadata":{"promptTokenCount":500,"cachedContentTokenCount":400,"candidatesTokenCount":7,"thoughtsTokenCount":3},"modelVersion":"gemini-2.5-pro","responseId":"mGTUaI2bJ9SzkdUPqcLVsAQ"})",
        })
        ASSERT_TRUE(reader.on_event(event(data))) << data;
    auto answer = reader.finish();
    ASSERT_TRUE(answer) << answer.error().message();
    EXPECT_EQ(answer->reasoning, "Plan it.");
    EXPECT_EQ(answer->text, "Hello");
    ASSERT_EQ(answer->calls.size(), 2U);
    EXPECT_EQ(answer->calls[0].id, "call_1");
    EXPECT_EQ(answer->calls[1].id, "call_2");
    EXPECT_EQ(canonical_json(answer->calls[1].input), R"({"command":"pwd"})");
    EXPECT_EQ(answer->usage.input_tokens, 500);
    EXPECT_EQ(answer->usage.cache_read_tokens, 400);
    EXPECT_EQ(answer->usage.output_tokens, 10);
    EXPECT_EQ(answer->model, "gemini-2.5-pro");
    EXPECT_EQ(answer->id, "mGTUaI2bJ9SzkdUPqcLVsAQ");
    EXPECT_EQ(answer->finish_reason, "STOP");
    // The unsigned summary is left out; the rest as it came, the text run joined.
    EXPECT_EQ(canonical_json(answer->kept.get("gemini").get("parts")),
              canonical_json(parse(R"([{"text":"Hello","thoughtSignature":"T"},
                {"functionCall":{"name":"shell","args":{"command":"ls"}},"thoughtSignature":"C"},
                {"functionCall":{"name":"shell","args":{"command":"pwd"}}},{"text":""}])")));
}

TEST(Gemini, NothingSignedIsNothingKept) {
    GeminiReader reader(k_origin);
    auto answer = reader.whole(
        R"([{"candidates":[{"content":{"parts":[{"text":"a"}]}}]},{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"MAX_TOKENS"}]}])");
    ASSERT_TRUE(answer) << answer.error().message();
    EXPECT_EQ(answer->text, "ab");
    EXPECT_FALSE(answer->kept.exists());
    // An answer that names neither its model nor itself.
    EXPECT_EQ(answer->model, "");
    EXPECT_EQ(answer->id, "");
    EXPECT_EQ(answer->finish_reason, "MAX_TOKENS");
}

TEST(Gemini, FailuresInTheStream) {
    GeminiReader busy(k_origin);
    auto s = busy.on_event(event(
        R"({"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}})"));
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().exit(), Exit::unavailable);
    EXPECT_EQ(s.error().message(), "HTTP 503: The model is overloaded.");
    GeminiReader bad(k_origin);
    s = bad.on_event(event(R"({"error":{"code":400,"status":"INVALID_ARGUMENT"}})"));
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().exit(), Exit::data);
    EXPECT_EQ(s.error().message(), "HTTP 400: INVALID_ARGUMENT");
    GeminiReader cut(k_origin);
    ASSERT_TRUE(cut.on_event(event(R"({"candidates":[{"content":{"parts":[{"text":"half"}]}}]})")));
    auto answer = cut.finish();
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().exit(), Exit::unavailable);
    EXPECT_EQ(answer.error().message(),
              "the answer was cut off: the stream ended before it finished");
    GeminiReader blocked(k_origin);
    s = blocked.on_event(event(R"({"promptFeedback":{"blockReason":"SAFETY"}})"));
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(), "the prompt was blocked: SAFETY");
    GeminiReader garbled(k_origin);
    s = garbled.on_event(event("{"));
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().exit(), Exit::unavailable);
    GeminiReader nameless(k_origin);
    ASSERT_TRUE(nameless.on_event(event(
        R"({"candidates":[{"content":{"parts":[{"functionCall":{"args":{}}}]},"finishReason":"STOP"}]})")));
    EXPECT_FALSE(nameless.finish());
}

} // namespace
} // namespace sion::models
