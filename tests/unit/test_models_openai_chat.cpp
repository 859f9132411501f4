// SPDX-License-Identifier: MIT
// lib/models/openai_chat: the person's pictures as image_url parts beside a text part, sent to a
// chat completions server on 127.0.0.1 and read back there; words alone stay a string. Answers
// read from that server, streamed and whole, with what they say of themselves.
#include "lib/models/openai_chat.hpp"

#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace sion::models {
namespace {

Json parse(std::string_view text) {
    auto j = Json::parse(text);
    EXPECT_TRUE(j) << text;
    return j ? std::move(*j) : Json();
}

// A local: server that keeps each request's body and refuses it, so that the model's one call
// ends there.
class ChatServer {
public:
    ChatServer()
        : m_server([this](const test::Received& r, int fd, const test::TestServer&) {
              {
                  std::lock_guard lock(m_mutex);
                  m_bodies.push_back(r.body);
              }
              test::TestServer::send_text(
                  fd, test::respond(400, "Bad Request", "Content-Type: application/json\r\n",
                                    R"({"error":{"message":"no"}})"));
          }) {}

    // The "messages" of the body of the only request the server had, after the system's.
    Json messages_of_only_request(const std::vector<Json>& conversation) {
        ::setenv("SION_LOCAL_MODEL_URL", m_server.url("/v1").c_str(), 1);
        ::setenv("SION_LOCAL_MODEL_KEY", "local-key", 1);
        auto model = open_chat(ModelSpec{"local:llava", "local", "llava", {}});
        ::unsetenv("SION_LOCAL_MODEL_URL");
        ::unsetenv("SION_LOCAL_MODEL_KEY");
        EXPECT_TRUE(model) << model.error().message();
        if (!model)
            return Json();
        auto a = (*model)->answer(Request{"", {}, conversation});
        EXPECT_FALSE(a);
        std::lock_guard lock(m_mutex);
        EXPECT_EQ(m_bodies.size(), 1U);
        if (m_bodies.size() != 1)
            return Json();
        return Json::copy_of(parse(m_bodies[0]).get("messages"));
    }

private:
    std::mutex m_mutex;
    std::vector<std::string> m_bodies;
    test::TestServer m_server; // last: its threads stop before the members above go
};

TEST(ChatBody, PicturesAreImageUrlPartsBesideTheText) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "What is this?", "images": [
        {"media_type": "image/png", "data": "iVBORw0K"}, {"media_type": "image/jpeg", "data": "/9j/"}]})"));
    c.push_back(parse(R"({"role": "assistant", "text": "A cat."})"));
    c.push_back(parse(R"({"role": "user", "images": [{"media_type": "image/webp", "data": "UklGRg"}]})"));
    ChatServer server;
    EXPECT_EQ(server.messages_of_only_request(c).dump(),
              R"([{"role":"user","content":[{"type":"text","text":"What is this?"},)"
              R"({"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}},)"
              R"({"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/"}}]},)"
              R"({"role":"assistant","content":"A cat."},)"
              R"({"role":"user","content":[)"
              R"({"type":"image_url","image_url":{"url":"data:image/webp;base64,UklGRg"}}]}])");
}

// A tool message holds only words: a turn's pictures follow its last result, in a user message
// that says whose they are.
TEST(ChatBody, ACallsPicturesFollowTheTurnsResults) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Look"})"));
    c.push_back(parse(R"({"role": "assistant", "calls": [{"id": "c1", "tool": "read_file", "input": {}},
        {"id": "c2", "tool": "shell", "input": {}}]})"));
    c.push_back(parse(R"({"role": "tool", "call": "c1", "tool": "read_file", "text": "a picture",
        "images": [{"media_type": "image/png", "data": "iVBO"}]})"));
    c.push_back(parse(R"({"role": "tool", "call": "c2", "tool": "shell", "text": "ok"})"));
    c.push_back(parse(R"({"role": "user", "text": "Next"})"));
    ChatServer server;
    Json messages = server.messages_of_only_request(c);
    ASSERT_EQ(messages.view().size(), 6u);
    EXPECT_EQ(messages.view().at(2).dump(),
              R"({"role":"tool","tool_call_id":"c1","content":"a picture"})");
    EXPECT_EQ(messages.view().at(3).dump(), R"({"role":"tool","tool_call_id":"c2","content":"ok"})");
    EXPECT_EQ(messages.view().at(4).dump(),
              R"({"role":"user","content":[{"type":"text","text":"The pictures of call c1 (read_file):"},)"
              R"({"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]})");
    EXPECT_EQ(messages.view().at(5).dump(), R"({"role":"user","content":"Next"})");
}

// The session's note of its MCP servers (model.hpp): after calls, the end of the last result's
// text, so that the server's task goes on; after the person's task, a message of its own.
TEST(ChatBody, TheSessionsNoteEndsTheLastResult) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Do it"})"));
    c.push_back(parse(R"({"role": "assistant", "calls": [{"id": "c1", "tool": "shell", "input": {}}]})"));
    c.push_back(parse(R"({"role": "tool", "call": "c1", "tool": "shell", "text": "ok"})"));
    c.push_back(parse(R"({"role": "user", "text": "## Servers", "note": true})"));
    ChatServer after_calls;
    Json messages = after_calls.messages_of_only_request(c);
    ASSERT_EQ(messages.view().size(), 3u);
    EXPECT_EQ(messages.view().at(2).dump(),
              R"({"role":"tool","tool_call_id":"c1","content":"ok\n\n## Servers"})");
    c.erase(c.begin() + 1, c.begin() + 3);
    ChatServer after_task;
    EXPECT_EQ(after_task.messages_of_only_request(c).dump(),
              R"([{"role":"user","content":"Do it"},{"role":"user","content":"## Servers"}])");
}

TEST(ChatBody, WordsAloneStayAString) {
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Hello"})"));
    c.push_back(parse(R"({"role": "user", "text": "Again", "images": []})"));
    ChatServer server;
    EXPECT_EQ(server.messages_of_only_request(c).dump(),
              R"([{"role":"user","content":"Hello"},{"role":"user","content":"Again"}])");
}

// A streamed answer, as OpenAI's chunks come: id and model on each, finish_reason on the last
// choice, usage in a chunk of no choice.
const std::string k_streamed =
    R"(data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,)"
    R"("model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"role":"assistant",)"
    R"("content":"Listing."},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,)"
    R"("model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,)"
    R"("id":"call_abc","type":"function","function":{"name":"shell","arguments":"{\"command\":"}}]},)"
    R"("finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,)"
    R"("model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,)"
    R"("function":{"arguments":"\"ls\"}"}}]},"finish_reason":null}]})"
    "\n\n"
    R"(data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,)"
    R"("model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})"
    "\n\n"
    R"(data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,)"
    R"("model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9}})"
    "\n\ndata: [DONE]\n\n";

// A whole completion.
const std::string k_whole =
    R"({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion",)"
    R"("created":1741569952,"model":"gpt-4o-2024-08-06","choices":[{"index":0,)"
    R"("message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29}})";

// One that names neither model nor answer, as some local servers answer.
const std::string k_anonymous =
    R"({"choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"length"}]})";

TEST(ChatAnswer, WhatTheAnswerSaysOfItself) {
    std::atomic<int> served = 0;
    test::TestServer server([&served](const test::Received&, int fd, const test::TestServer&) {
        int n = served++;
        test::TestServer::send_text(
            fd, n == 0 ? test::respond(200, "OK", "Content-Type: text/event-stream\r\n", k_streamed)
                       : test::respond(200, "OK", "Content-Type: application/json\r\n",
                                       n == 1 ? k_whole : k_anonymous));
    });
    ::setenv("SION_LOCAL_MODEL_URL", server.url("/v1").c_str(), 1);
    auto model = open_chat(ModelSpec{"local:gpt", "local", "gpt", {}});
    ::unsetenv("SION_LOCAL_MODEL_URL");
    ASSERT_TRUE(model) << model.error().message();
    std::vector<Json> c;
    c.push_back(parse(R"({"role": "user", "text": "Hello"})"));

    auto streamed = (*model)->answer(Request{"", {}, c});
    ASSERT_TRUE(streamed) << streamed.error().message();
    EXPECT_EQ(streamed->text, "Listing.");
    ASSERT_EQ(streamed->calls.size(), 1U);
    EXPECT_EQ(streamed->calls[0].input.dump(), R"({"command":"ls"})");
    EXPECT_EQ(streamed->usage.input_tokens, 20);
    EXPECT_EQ(streamed->model, "gpt-4o-mini-2024-07-18");
    EXPECT_EQ(streamed->id, "chatcmpl-123");
    EXPECT_EQ(streamed->finish_reason, "tool_calls");

    auto whole = (*model)->answer(Request{"", {}, c});
    ASSERT_TRUE(whole) << whole.error().message();
    EXPECT_EQ(whole->text, "Hello.");
    EXPECT_EQ(whole->model, "gpt-4o-2024-08-06");
    EXPECT_EQ(whole->id, "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG");
    EXPECT_EQ(whole->finish_reason, "stop");

    auto anonymous = (*model)->answer(Request{"", {}, c});
    ASSERT_TRUE(anonymous) << anonymous.error().message();
    EXPECT_EQ(anonymous->text, "Hi.");
    EXPECT_EQ(anonymous->model, "");
    EXPECT_EQ(anonymous->id, "");
    EXPECT_EQ(anonymous->finish_reason, "length");
}

} // namespace
} // namespace sion::models
