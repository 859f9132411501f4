// SPDX-License-Identifier: MIT
// lib/models/openai_responses: the conversation as input items (kept reasoning before what
// followed it, without ids, only for its origin; effort, include, room), and answers read from a
// stream or whole (items by output index, reasoning kept only with its encrypted content, calls
// cut off by the length, failed responses, a stream that ends early, usage with the cache apart,
// the model, id and finish reason the response names).
#include "lib/models/openai_responses.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sion::models {
namespace {

Json parse(std::string_view text) {
    auto j = Json::parse(text);
    EXPECT_TRUE(j) << text;
    return j ? std::move(*j) : Json();
}

const Origin k_origin{"responses", "http://127.0.0.1:9/v1", "gpt-5"};

std::vector<Json> conversation() {
    std::string kept = R"({"by": )" + k_origin.to_json().dump()
                       + R"(, "items": [{"at": 1, "item": {"id": "rs_1", "type": "reasoning",
                          "summary": [], "encrypted_content": "enc-1"}}]})";
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Do it"})"));
    c.push_back(parse(R"({"role": "assistant", "text": "On it.", "calls": [
        {"id": "call_1", "tool": "read_file", "input": {"path": "a"}}], "responses": )"
                      + kept + "}"));
    c.push_back(parse(
        R"({"role": "tool", "call": "call_1", "tool": "read_file", "text": "A", "error": false})"));
    return c;
}

ResponsesOptions options(const Origin& origin) {
    ResponsesOptions o;
    o.model = origin.model;
    o.origin = &origin;
    return o;
}

TEST(ResponsesBody, ItemsReasoningAndAsks) {
    std::vector<Json> c = conversation();
    std::vector<ToolSpec> tools;
    tools.push_back(ToolSpec{"read_file", "Read", parse(R"({"type": "object"})")});
    Request r{"You are an agent.", tools, c};
    ResponsesOptions o = options(k_origin);
    o.effort.level = EffortLevel::max;
    o.max_output_tokens = 48'768;
    Json body = responses_body(r, o);
    EXPECT_EQ(body.get("instructions").dump(), R"("You are an agent.")");
    EXPECT_EQ(
        body.get("input").dump(),
        R"([{"type":"message","role":"user","content":[{"type":"input_text","text":"Do it"}]},)"
        R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"On it."}]},)"
        R"({"type":"reasoning","summary":[],"encrypted_content":"enc-1"},)"
        R"({"type":"function_call","call_id":"call_1","name":"read_file","arguments":"{\"path\":\"a\"}"},)"
        R"({"type":"function_call_output","call_id":"call_1","output":"A"}])");
    EXPECT_EQ(
        body.get("tools").dump(),
        R"([{"type":"function","name":"read_file","description":"Read","parameters":{"type":"object"},"strict":false}])");
    EXPECT_EQ(body.get("reasoning").dump(), R"({"effort":"xhigh","summary":"auto"})");
    EXPECT_EQ(body.get("include").dump(), R"(["reasoning.encrypted_content"])");
    EXPECT_EQ(body.get("max_output_tokens").dump(), "48768");
    EXPECT_EQ(body.get("store").dump(), "false");
    EXPECT_EQ(body.get("stream").dump(), "true");
}

TEST(ResponsesBody, KeptReasoningOnlyForItsOriginAndWhenAsked) {
    std::vector<Json> c = conversation();
    Request r{"", {}, c};
    for (const Origin& other : {Origin{"responses", k_origin.base_url, "gpt-5-mini"},
                                Origin{"chatgpt", k_origin.base_url, k_origin.model},
                                Origin{"responses", "https://api.openai.com/v1", k_origin.model}}) {
        std::string dump = responses_body(r, options(other)).get("input").dump();
        EXPECT_EQ(dump.find("reasoning"), std::string::npos) << dump;
    }
    ResponsesOptions without = options(k_origin);
    without.with_kept = false;
    without.ask_reasoning = false;
    Json body = responses_body(r, without);
    EXPECT_EQ(body.get("input").dump().find("reasoning"), std::string::npos);
    EXPECT_FALSE(body.get("reasoning").exists());
    EXPECT_FALSE(body.get("include").exists());
    EXPECT_FALSE(body.get("instructions").exists());
    EXPECT_FALSE(body.get("tools").exists());
    EXPECT_FALSE(body.get("max_output_tokens").exists());
}

TEST(ResponsesBody, ToolsInAnInputItemForAPlan) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Do it"})"));
    std::vector<ToolSpec> tools;
    tools.push_back(ToolSpec{"read_file", "Read", parse(R"({"type": "object"})")});
    Request r{"", tools, c};
    ResponsesOptions o = options(k_origin);
    o.tools_in_input = true;
    Json body = responses_body(r, o);
    EXPECT_FALSE(body.get("tools").exists());
    EXPECT_FALSE(body.get("tool_choice").exists());
    EXPECT_EQ(
        body.get("input").dump(),
        R"([{"type":"additional_tools","role":"developer","tools":[{"type":"function","name":"read_file","description":"Read","parameters":{"type":"object"},"strict":false}]},)"
        R"({"type":"message","role":"user","content":[{"type":"input_text","text":"Do it"}]}])");
    Request bare{"", {}, c};
    EXPECT_EQ(responses_body(bare, o).get("input").size(), 1U);
}

TEST(ResponsesBody, PicturesAsInputImages) {
    std::vector<Json> c;
    c.push_back(parse(
        R"({"role":"user","text":"Look","images":[{"media_type":"image/png","data":"iVBO"},{"media_type":"image/jpeg","data":"/9j/"}]})"));
    c.push_back(parse(R"({"role":"user","images":[{"media_type":"image/webp","data":"UklG"}]})"));
    Request r{"", {}, c};
    EXPECT_EQ(
        responses_body(r, options(k_origin)).get("input").dump(),
        R"([{"type":"message","role":"user","content":[{"type":"input_text","text":"Look"},)"
        R"({"type":"input_image","image_url":"data:image/png;base64,iVBO","detail":"auto"},)"
        R"({"type":"input_image","image_url":"data:image/jpeg;base64,/9j/","detail":"auto"}]},)"
        R"({"type":"message","role":"user","content":[)"
        R"({"type":"input_image","image_url":"data:image/webp;base64,UklG","detail":"auto"}]}])");
}

// A call's pictures are in its output, after its words.
TEST(ResponsesBody, ACallsPicturesAreInItsOutput) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role":"tool","call":"c1","tool":"read_file","text":"a picture","images":[{"media_type":"image/gif","data":"R0lG"}]})"));
    c.push_back(parse(R"({"role":"tool","call":"c2","tool":"shell","text":"ok"})"));
    Request r{"", {}, c};
    EXPECT_EQ(responses_body(r, options(k_origin)).get("input").dump(),
              R"([{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"a picture"},)"
              R"({"type":"input_image","image_url":"data:image/gif;base64,R0lG","detail":"auto"}]},)"
              R"({"type":"function_call_output","call_id":"c2","output":"ok"}])");
}

SseEvent event(std::string_view data) {
    SseEvent e;
    e.data = std::string(data);
    return e;
}

Result<Answer> read_stream(const std::vector<std::string>& events) {
    ResponsesReader reader(k_origin);
    for (const auto& e : events)
        SION_CHECK(reader.on_event(event(e)));
    return reader.finish();
}

const std::string k_completed =
    R"({"type":"response.completed","response":{"id":"resp_67ccd2bed1ec8190","object":"response","model":"gpt-5.2-2025-12-11","status":"completed","usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":100},"output_tokens":30}}})";

TEST(ResponsesReader, AStreamedAnswer) {
    auto a = read_stream({
        R"({"type":"response.created","response":{"id":"resp_67ccd2bed1ec8190","object":"response","model":"gpt-5.2-2025-12-11","status":"in_progress"}})",
        R"({"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}})",
        R"({"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":0})",
        R"({"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"Read "})",
        R"({"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"a first."})",
        R"({"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Read a first."}],"encrypted_content":"enc-1"}})",
        R"({"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","content":[]}})",
        R"({"type":"response.output_text.delta","output_index":1,"delta":"Reading"})",
        R"({"type":"response.output_text.delta","output_index":1,"delta":"."})",
        R"({"type":"response.output_item.added","output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"read_file","arguments":""}})",
        R"({"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_1","delta":"{\"path\""})",
        R"({"type":"response.function_call_arguments.delta","output_index":2,"item_id":"fc_1","delta":": \"a\"}"})",
        k_completed,
    });
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "Reading.");
    EXPECT_EQ(a->reasoning, "Read a first.");
    ASSERT_EQ(a->calls.size(), 1U);
    EXPECT_EQ(a->calls[0].id, "call_1");
    EXPECT_EQ(a->calls[0].tool, "read_file");
    EXPECT_EQ(a->calls[0].input.dump(), R"({"path":"a"})");
    EXPECT_EQ(a->usage.input_tokens, 120);
    EXPECT_EQ(a->usage.cache_read_tokens, 100);
    EXPECT_EQ(a->usage.output_tokens, 30);
    EXPECT_EQ(
        a->kept.get("responses").get("items").dump(),
        R"([{"at":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Read a first."}],"encrypted_content":"enc-1"}}])");
    EXPECT_EQ(a->kept.get("responses").get("by").dump(), k_origin.to_json().dump());
    EXPECT_EQ(a->model, "gpt-5.2-2025-12-11");
    EXPECT_EQ(a->id, "resp_67ccd2bed1ec8190");
    EXPECT_EQ(a->finish_reason, "completed");
}

TEST(ResponsesReader, ReasoningWithoutEncryptedContentAndCutCallsAreNotKept) {
    auto a = read_stream({
        R"({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","summary":[{"type":"summary_text","text":"Hm."}]}})",
        R"({"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"call_1","name":"write_file"}})",
        R"({"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"pa"})",
        R"({"type":"response.incomplete","response":{"id":"resp_2","model":"gpt-5.2","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}})",
    });
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_TRUE(a->calls.empty());
    EXPECT_FALSE(a->kept.exists());
    // Why it is incomplete, rather than that it is.
    EXPECT_EQ(a->finish_reason, "max_output_tokens");
    EXPECT_EQ(a->model, "gpt-5.2");
    EXPECT_EQ(a->id, "resp_2");
}

TEST(ResponsesReader, FailuresInTheStream) {
    auto limit = read_stream(
        {R"({"type":"response.failed","response":{"status":"failed","error":{"code":"usage_limit_reached","message":"The usage limit has been reached"}}})"});
    ASSERT_FALSE(limit);
    EXPECT_EQ(limit.error().exit(), Exit::unavailable);
    EXPECT_EQ(limit.error().message(),
              "the response failed: usage_limit_reached: The usage limit has been reached");
    auto error = read_stream({R"({"type":"error","code":"server_error","message":"boom"})"});
    ASSERT_FALSE(error);
    EXPECT_EQ(error.error().message(), "the response failed: server_error: boom");
    auto cut =
        read_stream({R"({"type":"response.output_text.delta","output_index":0,"delta":"Hal"})"});
    ASSERT_FALSE(cut);
    EXPECT_EQ(cut.error().exit(), Exit::unavailable);
    EXPECT_EQ(cut.error().message(), "the answer was cut off before its end");
    auto bad = read_stream({"not json"});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::unavailable);
    auto args = read_stream({
        R"({"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c","name":"x","arguments":"[1]"}})",
        k_completed,
    });
    ASSERT_FALSE(args);
    EXPECT_EQ(args.error().message(),
              "the answer is malformed: the arguments of call 'x' are not a JSON object");
}

TEST(ResponsesReader, AWholeAnswer) {
    ResponsesReader reader(k_origin);
    auto a = reader.whole(
        R"({"id":"resp_3","object":"response","model":"o4-mini-2025-04-16","status":"completed","output":[{"id":"rs_2","type":"reasoning","summary":[{"type":"summary_text","text":"Short."}],"encrypted_content":"enc-2"},
        {"type":"function_call","call_id":"call_9","name":"list","arguments":"{}"},
        {"type":"message","content":[{"type":"output_text","text":"Done."}]}],
        "usage":{"input_tokens":5,"output_tokens":2}})");
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "Done.");
    EXPECT_EQ(a->reasoning, "Short.");
    ASSERT_EQ(a->calls.size(), 1U);
    EXPECT_EQ(a->calls[0].id, "call_9");
    EXPECT_EQ(a->kept.get("responses").get("items").at(0).get("at").dump(), "0");
    EXPECT_EQ(a->usage.input_tokens, 5);
    EXPECT_EQ(a->usage.cache_read_tokens, 0);
    EXPECT_EQ(a->model, "o4-mini-2025-04-16");
    EXPECT_EQ(a->id, "resp_3");
    EXPECT_EQ(a->finish_reason, "completed");
    ResponsesReader other(k_origin);
    auto bad = other.whole(R"({"status":"completed"})");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message(), "the answer is malformed: it has no output");
}

} // namespace
} // namespace sion::models
