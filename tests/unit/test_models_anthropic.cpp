// SPDX-License-Identifier: MIT
// lib/models/anthropic: the conversation as Messages API turns (merged roles, tool ids, kept
// thinking in its place and only for its origin, cache marks), and answers read from a stream or
// whole (blocks by index, thinking without a signature not kept, calls cut off by max_tokens,
// error events, a stream that ends early, usage with the cache apart).
#include "lib/models/anthropic.hpp"

#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace sion::models {
namespace {

Json parse(std::string_view text) {
    auto j = Json::parse(text);
    EXPECT_TRUE(j) << text;
    return j ? std::move(*j) : Json();
}

const Origin k_origin{"anthropic", "http://127.0.0.1:9", "claude-opus-5-5"};

std::vector<Json> conversation() {
    std::string kept = R"({"by": )" + k_origin.to_json().dump()
                       + R"(, "blocks": [{"at": 0, "block": {"type": "thinking", "thinking": "first", "signature": "s1"}},
                          {"at": 1, "block": {"type": "redacted_thinking", "data": "r1"}}]})";
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Do it"})"));
    c.push_back(parse(R"({"role": "assistant", "text": "On it.", "calls": [
        {"id": "call|1", "tool": "read_file", "input": {"path": "a"}},
        {"id": "toolu_2", "tool": "read_file", "input": {"path": "b"}}], "anthropic": )"
                      + kept + "}"));
    c.push_back(parse(R"({"role": "tool", "call": "call|1", "tool": "read_file", "text": "A", "error": false})"));
    c.push_back(parse(R"({"role": "tool", "call": "toolu_2", "tool": "read_file", "text": "", "error": true})"));
    c.push_back(parse(R"({"role": "user", "text": "And then?"})"));
    return c;
}

TEST(AnthropicBody, TurnsBlocksAndMarks) {
    std::vector<Json> c = conversation();
    std::vector<ToolSpec> tools;
    tools.push_back(ToolSpec{"read_file", "Read", parse(R"({"type": "object"})")});
    tools.push_back(ToolSpec{"write_file", "Write", parse(R"({"type": "object"})")});
    Request r{"You are an agent.", tools, c};
    Json body = anthropic_body(r, Effort{}, 0, k_origin, true);
    EXPECT_EQ(body.get("max_tokens").dump(), "16000");
    EXPECT_FALSE(body.get("thinking").exists());
    EXPECT_EQ(body.get("system").dump(),
              R"([{"type":"text","text":"You are an agent.","cache_control":{"type":"ephemeral"}}])");
    EXPECT_FALSE(body.get("tools").at(0).get("cache_control").exists());
    EXPECT_TRUE(body.get("tools").at(1).get("cache_control").exists());
    EXPECT_EQ(body.get("messages").dump(),
              R"([{"role":"user","content":[{"type":"text","text":"Do it"}]},)"
              R"({"role":"assistant","content":[{"type":"thinking","thinking":"first","signature":"s1"},)"
              R"({"type":"text","text":"On it."},{"type":"redacted_thinking","data":"r1"},)"
              R"({"type":"tool_use","id":"call_1","name":"read_file","input":{"path":"a"}},)"
              R"({"type":"tool_use","id":"toolu_2","name":"read_file","input":{"path":"b"}}]},)"
              R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"A"},)"
              R"({"type":"tool_result","tool_use_id":"toolu_2","is_error":true},)"
              R"({"type":"text","text":"And then?","cache_control":{"type":"ephemeral"}}]}])");
}

TEST(AnthropicBody, KeptThinkingOnlyForItsOrigin) {
    std::vector<Json> c = conversation();
    Request r{"", {}, c};
    for (const Origin& other : {Origin{"anthropic", k_origin.base_url, "claude-haiku-5-5"},
                                Origin{"anthropic", "https://api.anthropic.com", k_origin.model}}) {
        Json body = anthropic_body(r, Effort{}, 0, other, true);
        std::string dump = body.get("messages").at(1).dump();
        EXPECT_EQ(dump.find("thinking"), std::string::npos) << dump;
    }
    Json body = anthropic_body(r, Effort{}, 0, k_origin, false);
    EXPECT_EQ(body.get("messages").at(1).dump().find("thinking"), std::string::npos);
    EXPECT_FALSE(body.get("system").exists());
    EXPECT_FALSE(body.get("tools").exists());
}

SseEvent event(std::string_view data) {
    SseEvent e;
    e.data = std::string(data);
    return e;
}

Result<Answer> read_stream(const std::vector<std::string>& events) {
    AnthropicReader reader(k_origin);
    for (const auto& e : events)
        SION_CHECK(reader.on_event(event(e)));
    return reader.finish();
}

const std::string k_start =
    R"({"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message",)"
    R"("role":"assistant","model":"claude-opus-5-5-20260101","content":[],"stop_reason":null,)"
    R"("usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}})";
const std::string k_stop = R"({"type":"message_stop"})";

std::string delta(int index, std::string_view d) {
    return R"({"type":"content_block_delta","index":)" + std::to_string(index) + R"(,"delta":)"
           + std::string(d) + "}";
}

std::string start(int index, std::string_view block) {
    return R"({"type":"content_block_start","index":)" + std::to_string(index)
           + R"(,"content_block":)" + std::string(block) + "}";
}

TEST(AnthropicReader, AStreamedAnswer) {
    auto a = read_stream({
        k_start,
        R"({"type":"ping"})",
        start(0, R"({"type":"thinking","thinking":""})"),
        delta(0, R"({"type":"thinking_delta","thinking":"Let me "})"),
        delta(0, R"({"type":"thinking_delta","thinking":"see."})"),
        delta(0, R"({"type":"signature_delta","signature":"sig=="})"),
        start(1, R"({"type":"text","text":""})"),
        delta(1, R"({"type":"text_delta","text":"Reading."})"),
        start(2, R"({"type":"tool_use","id":"toolu_1","name":"read_file","input":{}})"),
        delta(2, R"({"type":"input_json_delta","partial_json":"{\"pa"})"),
        delta(2, R"({"type":"input_json_delta","partial_json":"th\": \"a\"}"})"),
        start(3, R"({"type":"tool_use","id":"toolu_2","name":"list","input":{}})"),
        R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42}})",
        k_stop,
    });
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "Reading.");
    EXPECT_EQ(a->reasoning, "Let me see.");
    ASSERT_EQ(a->calls.size(), 2U);
    EXPECT_EQ(a->calls[0].id, "toolu_1");
    EXPECT_EQ(a->calls[0].input.dump(), R"({"path":"a"})");
    EXPECT_EQ(a->calls[1].input.dump(), "{}");
    EXPECT_EQ(a->usage.input_tokens, 115);
    EXPECT_EQ(a->usage.cache_read_tokens, 100);
    EXPECT_EQ(a->usage.cache_write_tokens, 5);
    EXPECT_EQ(a->usage.output_tokens, 42);
    EXPECT_EQ(a->kept.get("anthropic").get("blocks").dump(),
              R"([{"at":0,"block":{"type":"thinking","thinking":"Let me see.","signature":"sig=="}}])");
    EXPECT_EQ(a->kept.get("anthropic").get("by").dump(), k_origin.to_json().dump());
    // What the answer says of itself: message_start's model and id, message_delta's stop_reason.
    EXPECT_EQ(a->model, "claude-opus-5-5-20260101");
    EXPECT_EQ(a->id, "msg_01XFDUDYJgAACzvnptvVoYEL");
    EXPECT_EQ(a->finish_reason, "tool_use");
}

TEST(AnthropicReader, CutOffThinkingAndCallsAreNotKept) {
    auto a = read_stream({
        k_start,
        start(0, R"({"type":"thinking","thinking":""})"),
        delta(0, R"({"type":"thinking_delta","thinking":"Half a thou"})"),
        start(1, R"({"type":"tool_use","id":"toolu_1","name":"write_file","input":{}})"),
        delta(1, R"({"type":"input_json_delta","partial_json":"{\"content\": \"abc"})"),
        R"({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}})",
        k_stop,
    });
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->reasoning, "Half a thou");
    EXPECT_TRUE(a->calls.empty());
    EXPECT_FALSE(a->kept.exists());
    EXPECT_EQ(a->finish_reason, "max_tokens");
    // Broken input otherwise is a malformed answer.
    auto b = read_stream({
        k_start,
        start(0, R"({"type":"tool_use","id":"toolu_1","name":"write_file","input":{}})"),
        delta(0, R"({"type":"input_json_delta","partial_json":"[1]"})"),
        k_stop,
    });
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().exit(), Exit::unavailable);
    EXPECT_EQ(b.error().message(),
              "the answer is malformed: the input of call 'write_file' is not a JSON object");
}

TEST(AnthropicReader, ErrorsInTheStream) {
    auto busy = read_stream(
        {k_start, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"});
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.error().exit(), Exit::unavailable);
    EXPECT_EQ(busy.error().message(), "overloaded_error: Overloaded");
    auto bad = read_stream(
        {k_start, R"({"type":"error","error":{"type":"invalid_request_error","message":"no"}})"});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::data);
    auto cut = read_stream({k_start, start(0, R"({"type":"text","text":"x"})")});
    ASSERT_FALSE(cut);
    EXPECT_EQ(cut.error().message(), "the answer was cut off before its end");
    auto stray = read_stream({k_start, delta(5, R"({"type":"text_delta","text":"x"})")});
    ASSERT_FALSE(stray);
    EXPECT_EQ(stray.error().message(),
              "the answer is malformed: event 'content_block_delta': a delta for block 5, which "
              "did not start");
    auto junk = read_stream({"{not json"});
    ASSERT_FALSE(junk);
    EXPECT_EQ(junk.error().exit(), Exit::unavailable);
}

TEST(AnthropicReader, AWholeAnswer) {
    AnthropicReader reader(k_origin);
    auto a = reader.whole(R"({"id":"msg_9","type":"message","role":"assistant",
        "model":"claude-haiku-5-5","content":[
        {"type":"redacted_thinking","data":"opaque"},
        {"type":"text","text":"Hi"},
        {"type":"tool_use","id":"toolu_9","name":"shell","input":{"command":"ls"}}],
        "stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}})");
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "Hi");
    ASSERT_EQ(a->calls.size(), 1U);
    EXPECT_EQ(a->calls[0].input.dump(), R"({"command":"ls"})");
    EXPECT_EQ(a->kept.get("anthropic").get("blocks").dump(),
              R"([{"at":0,"block":{"type":"redacted_thinking","data":"opaque"}}])");
    EXPECT_EQ(a->usage.input_tokens, 3);
    EXPECT_EQ(a->model, "claude-haiku-5-5");
    EXPECT_EQ(a->id, "msg_9");
    EXPECT_EQ(a->finish_reason, "tool_use");
    AnthropicReader other(k_origin);
    auto b = other.whole(R"({"content": "not blocks"})");
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().exit(), Exit::unavailable);
}

TEST(AnthropicBody, PicturesGoBeforeTheWords) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "What is this?", "images": [
        {"media_type": "image/png", "data": "iVBORw0K"}, {"media_type": "image/webp", "data": "UklGRg"}]})"));
    c.push_back(parse(R"({"role": "assistant", "text": "A cat."})"));
    c.push_back(parse(R"({"role": "user", "images": [{"media_type": "image/jpeg", "data": "/9j/"}]})"));
    Request r{"", {}, c};
    Json body = anthropic_body(r, Effort{}, 0, k_origin, false);
    EXPECT_EQ(body.get("messages").dump(),
              R"([{"role":"user","content":[)"
              R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}},)"
              R"({"type":"image","source":{"type":"base64","media_type":"image/webp","data":"UklGRg"}},)"
              R"({"type":"text","text":"What is this?"}]},)"
              R"({"role":"assistant","content":[{"type":"text","text":"A cat."}]},)"
              R"({"role":"user","content":[{"type":"image","source":{"type":"base64",)"
              R"("media_type":"image/jpeg","data":"/9j/"},"cache_control":{"type":"ephemeral"}}]}])");
}

// A call's pictures go in its tool_result, after its words.
TEST(AnthropicBody, ACallsPicturesAreInItsResult) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Look at shot.png"})"));
    c.push_back(parse(R"({"role": "assistant", "calls": [{"id": "c1", "tool": "read_file", "input": {}}]})"));
    c.push_back(parse(R"({"role": "tool", "call": "c1", "tool": "read_file", "text": "shot.png: a picture",
        "error": false, "images": [{"media_type": "image/png", "data": "iVBORw0K", "name": "shot.png"}]})"));
    Request r{"", {}, c};
    Json body = anthropic_body(r, Effort{}, 0, k_origin, false);
    EXPECT_EQ(body.get("messages").at(2).dump(),
              R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[)"
              R"({"type":"text","text":"shot.png: a picture"},)"
              R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}],)"
              R"("cache_control":{"type":"ephemeral"}}]})");
}

// A picture of a kind the API does not take is refused by name and sent nowhere; one it takes
// reaches the server.
TEST(AnthropicModel, APictureOfAnotherKindIsRefusedUnsent) {
    test::TestServer server([](const test::Received&, int fd, const test::TestServer&) {
        test::TestServer::send_text(
            fd, test::respond(400, "Bad Request", "Content-Type: application/json\r\n",
                              R"({"type":"error","error":{"type":"invalid_request_error","message":"no"}})"));
    });
    ::setenv("ANTHROPIC_API_KEY", "sk-ant-test", 1);
    ::setenv("ANTHROPIC_BASE_URL", server.url().c_str(), 1);
    auto model =
        open_anthropic(ModelSpec{"anthropic:claude-opus-5-5", "anthropic", "claude-opus-5-5", {}});
    ::unsetenv("ANTHROPIC_API_KEY");
    ::unsetenv("ANTHROPIC_BASE_URL");
    ASSERT_TRUE(model) << model.error().message();
    auto ask = [&](std::string_view type) {
        std::vector<Json> c;
        c.push_back(parse(R"({"role": "user", "text": "Look", "images": [{"media_type": ")"
                          + std::string(type) + R"(", "data": "Qk0="}]})"));
        return (*model)->answer(Request{"", {}, c});
    };
    auto refused = ask("image/bmp");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::data);
    EXPECT_EQ(refused.error().message(),
              "cannot send a picture of type 'image/bmp': the Messages API takes only image/jpeg, "
              "image/png, image/gif and image/webp");
    EXPECT_EQ(server.requests(), 0);
    std::vector<Json> tool;
    tool.push_back(parse(R"({"role": "user", "text": "Look"})"));
    tool.push_back(parse(R"({"role": "assistant", "calls": [{"id": "c1", "tool": "t", "input": {}}]})"));
    tool.push_back(parse(R"({"role": "tool", "call": "c1", "tool": "t", "text": "",
        "images": [{"media_type": "image/tiff", "data": "SUkq"}]})"));
    auto refused_tool = (*model)->answer(Request{"", {}, tool});
    ASSERT_FALSE(refused_tool);
    EXPECT_EQ(refused_tool.error().exit(), Exit::data);
    EXPECT_EQ(server.requests(), 0);
    auto sent = ask("image/gif");
    ASSERT_FALSE(sent);
    EXPECT_EQ(sent.error().exit(), Exit::data);
    EXPECT_TRUE(server.wait_for([&] { return server.requests() == 1; }));
}

} // namespace
} // namespace sion::models
