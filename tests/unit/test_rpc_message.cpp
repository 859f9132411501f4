// SPDX-License-Identifier: MIT
// rpc::decode and the encoders: every kind of message, every failure with its code, message and
// (where one can be read) id, and encoded lines that decode back to what was encoded.
#include "lib/rpc/message.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sion::rpc {
namespace {

Message must_decode(std::string_view line) {
    Decoded d = decode(line);
    EXPECT_FALSE(d.failure) << line << ": " << (d.failure ? d.failure->message : "");
    EXPECT_TRUE(d.message) << line;
    return d.message ? std::move(*d.message) : Message{};
}

Failure must_fail(std::string_view line) {
    Decoded d = decode(line);
    EXPECT_FALSE(d.message) << line;
    EXPECT_TRUE(d.failure) << line;
    return d.failure ? std::move(*d.failure) : Failure{0, {}, {}};
}

// The line an encoder wrote, without its "\n", checked to be one line.
std::string_view body(const std::string& line) {
    EXPECT_TRUE(line.ends_with("\n")) << line;
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
    return std::string_view(line).substr(0, line.size() - 1);
}

TEST(RpcDecode, Requests) {
    Message m =
        must_decode(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}})");
    EXPECT_EQ(m.kind, Kind::request);
    EXPECT_EQ(*m.id.as_int(), 7);
    EXPECT_EQ(m.method, "tools/call");
    EXPECT_EQ(*m.params.string("name"), "x");

    m = must_decode(R"({"jsonrpc":"2.0","id":"abc","method":"m","params":[1,2]})");
    EXPECT_EQ(m.kind, Kind::request);
    EXPECT_EQ(*m.id.as_string(), "abc");
    EXPECT_EQ(m.params.size(), 2u);

    m = must_decode(R"({"method":"m","id":-3,"jsonrpc":"2.0"})");
    EXPECT_EQ(m.kind, Kind::request);
    EXPECT_EQ(*m.id.as_int(), -3);
    EXPECT_FALSE(m.params.exists());

    // Unknown members are ignored.
    m = must_decode(R"({"jsonrpc":"2.0","id":0,"method":"m","extra":{"x":[1]},"_meta":null})");
    EXPECT_EQ(m.kind, Kind::request);
    EXPECT_EQ(*m.id.as_int(), 0);
}

TEST(RpcDecode, Notifications) {
    Message m =
        must_decode(R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"p":0.5}})");
    EXPECT_EQ(m.kind, Kind::notification);
    EXPECT_FALSE(m.id.exists());
    EXPECT_EQ(m.method, "notifications/progress");
    EXPECT_DOUBLE_EQ(*m.params.number("p"), 0.5);
    m = must_decode(R"({"jsonrpc":"2.0","method":"ping"})");
    EXPECT_EQ(m.kind, Kind::notification);
    EXPECT_FALSE(m.params.exists());
}

TEST(RpcDecode, Responses) {
    Message m = must_decode(R"({"jsonrpc":"2.0","id":1,"result":{"ok":true}})");
    EXPECT_EQ(m.kind, Kind::response);
    EXPECT_EQ(*m.id.as_int(), 1);
    EXPECT_TRUE(*m.result.boolean("ok"));
    m = must_decode(R"({"jsonrpc":"2.0","id":"s","result":null})");
    EXPECT_EQ(m.kind, Kind::response);
    EXPECT_TRUE(m.result.exists());
    EXPECT_TRUE(m.result.is_null());
}

TEST(RpcDecode, Errors) {
    Message m = must_decode(
        R"({"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found: x","data":[1]}})");
    EXPECT_EQ(m.kind, Kind::error);
    EXPECT_EQ(*m.id.as_int(), 4);
    EXPECT_EQ(m.error_code, -32601);
    EXPECT_EQ(m.error_message, "method not found: x");
    EXPECT_EQ(m.error_data.dump(), "[1]");
    // An error about a line whose id could not be read has a null id.
    m = must_decode(
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})");
    EXPECT_EQ(m.kind, Kind::error);
    EXPECT_TRUE(m.id.is_null());
    EXPECT_FALSE(m.error_data.exists());
}

TEST(RpcDecode, ViewsSurviveMoves) {
    std::vector<Message> kept;
    for (int i = 0; i < 50; ++i) {
        Decoded d = decode(R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"m)"
                           + std::to_string(i) + R"(","params":{"i":)" + std::to_string(i) + "}}");
        kept.push_back(std::move(*d.message)); // the vector moves them again as it grows
    }
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(*kept[i].id.as_int(), i);
        EXPECT_EQ(kept[i].method, "m" + std::to_string(i));
        EXPECT_EQ(*kept[i].params.integer("i"), i);
    }
}

struct FailCase {
    const char* line;
    int code;
    const char* message;
    const char* id; // the failure's id as JSON text
};

TEST(RpcDecode, EveryFailureWithItsCodeAndId) {
    const std::vector<FailCase> cases = {
        {"", k_parse_error, "parse error: invalid JSON at byte 0", "null"},
        {"not json", k_parse_error, "parse error: invalid JSON at byte 0", "null"},
        {R"({"jsonrpc":"2.0","id":1,"method":"m")", k_parse_error,
         "parse error: invalid JSON at byte 36", "null"},
        {R"({"jsonrpc":"2.0","id":1,"method":"m"} x)", k_parse_error,
         "parse error: invalid JSON at byte 38", "null"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}", k_parse_error,
         "parse error: invalid UTF-8 at byte 34", "null"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}", k_parse_error,
         "parse error: invalid UTF-8 at byte 34", "null"},
        {R"({"jsonrpc":"2.0","id":01,"method":"m"})", k_parse_error,
         "parse error: invalid JSON at byte 23", "null"},
        {R"([{"jsonrpc":"2.0","id":1,"method":"m"}])", k_invalid_request,
         "invalid request: batches are not supported", "null"},
        {"[]", k_invalid_request, "invalid request: batches are not supported", "null"},
        {R"("a string")", k_invalid_request, "invalid request: a message is a JSON object", "null"},
        {"42", k_invalid_request, "invalid request: a message is a JSON object", "null"},
        {"null", k_invalid_request, "invalid request: a message is a JSON object", "null"},
        {R"({"id":5,"method":"m"})", k_invalid_request, "invalid request: jsonrpc must be \"2.0\"",
         "5"},
        {R"({"jsonrpc":"1.0","id":"x","method":"m"})", k_invalid_request,
         "invalid request: jsonrpc must be \"2.0\"", "\"x\""},
        {R"({"jsonrpc":2.0,"id":5,"method":"m"})", k_invalid_request,
         "invalid request: jsonrpc must be \"2.0\"", "5"},
        {R"({"id":{"x":1},"method":"m"})", k_invalid_request,
         "invalid request: jsonrpc must be \"2.0\"", "null"},
        {R"({"id":1.5,"method":"m"})", k_invalid_request,
         "invalid request: jsonrpc must be \"2.0\"", "null"},
        {"{}", k_invalid_request, "invalid request: jsonrpc must be \"2.0\"", "null"},
        {R"({"jsonrpc":"2.0","id":3,"method":1})", k_invalid_request,
         "invalid request: method must be a string", "3"},
        {R"({"jsonrpc":"2.0","id":3,"method":null})", k_invalid_request,
         "invalid request: method must be a string", "3"},
        {R"({"jsonrpc":"2.0","method":["m"]})", k_invalid_request,
         "invalid request: method must be a string", "null"},
        {R"({"jsonrpc":"2.0","id":1.5,"method":"m"})", k_invalid_request,
         "invalid request: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","id":true,"method":"m"})", k_invalid_request,
         "invalid request: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","id":null,"method":"m"})", k_invalid_request,
         "invalid request: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","id":[1],"method":"m"})", k_invalid_request,
         "invalid request: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","id":1e300,"method":"m"})", k_invalid_request,
         "invalid request: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","id":"s","method":"m","params":"x"})", k_invalid_request,
         "invalid request: params must be an object or an array", "\"s\""},
        {R"({"jsonrpc":"2.0","id":2,"method":"m","params":null})", k_invalid_request,
         "invalid request: params must be an object or an array", "2"},
        {R"({"jsonrpc":"2.0","method":"m","params":3})", k_invalid_request,
         "invalid request: params must be an object or an array", "null"},
        {R"({"jsonrpc":"2.0"})", k_invalid_request,
         "invalid response: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","result":1})", k_invalid_request,
         "invalid response: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","id":{},"result":1})", k_invalid_request,
         "invalid response: id must be a string or an integer", "null"},
        {R"({"jsonrpc":"2.0","id":9})", k_invalid_request,
         "invalid response: it needs exactly one of result and error", "9"},
        {R"({"jsonrpc":"2.0","id":9,"result":1,"error":{"code":1,"message":"m"}})",
         k_invalid_request, "invalid response: it needs exactly one of result and error", "9"},
        {R"({"jsonrpc":"2.0","id":null,"result":1})", k_invalid_request,
         "invalid response: a result needs an id", "null"},
        {R"({"jsonrpc":"2.0","id":8,"error":{"message":"m"}})", k_invalid_request,
         "invalid response: error needs an integer code and a message", "8"},
        {R"({"jsonrpc":"2.0","id":8,"error":{"code":"1","message":"m"}})", k_invalid_request,
         "invalid response: error needs an integer code and a message", "8"},
        {R"({"jsonrpc":"2.0","id":8,"error":{"code":1.5,"message":"m"}})", k_invalid_request,
         "invalid response: error needs an integer code and a message", "8"},
        {R"({"jsonrpc":"2.0","id":8,"error":{"code":1}})", k_invalid_request,
         "invalid response: error needs an integer code and a message", "8"},
        {R"({"jsonrpc":"2.0","id":8,"error":"bad"})", k_invalid_request,
         "invalid response: error needs an integer code and a message", "8"},
    };
    for (const FailCase& c : cases) {
        Failure f = must_fail(c.line);
        EXPECT_EQ(f.code, c.code) << c.line;
        EXPECT_EQ(f.message, c.message) << c.line;
        EXPECT_EQ(f.id.dump(), c.id) << c.line;
        // Its answer is one line that decodes as an error to that id.
        std::string answer = encode_failure(f);
        Message m = must_decode(body(answer));
        EXPECT_EQ(m.kind, Kind::error);
        EXPECT_EQ(m.error_code, c.code);
        EXPECT_EQ(m.error_message, c.message);
        EXPECT_EQ(m.id.dump(), c.id);
    }
}

TEST(RpcDecode, DeepNestingIsAParseError) {
    std::string line = R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" + std::string(5000, '[')
                       + std::string(5000, ']') + "}";
    Failure f = must_fail(line);
    EXPECT_EQ(f.code, k_parse_error);
    EXPECT_EQ(f.message, "parse error: invalid JSON at byte 1045: nested deeper than 1000");
}

TEST(RpcEncode, ExactLines) {
    Json params = Json::object();
    params.set("a", 1);
    EXPECT_EQ(encode_request(1, "m", params),
              R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}})"
              "\n");
    EXPECT_EQ(encode_request(Json::string("x").view(), "m", {}),
              R"({"jsonrpc":"2.0","id":"x","method":"m"})"
              "\n");
    EXPECT_EQ(encode_notification("n", {}), R"({"jsonrpc":"2.0","method":"n"})"
                                            "\n");
    EXPECT_EQ(encode_result(Json::integer(3).view(), {}),
              R"({"jsonrpc":"2.0","id":3,"result":null})"
              "\n");
    EXPECT_EQ(encode_error({}, k_parse_error, "parse error"),
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})"
              "\n");
    EXPECT_EQ(encode_error(Json::integer(2).view(), 5, "m", Json::array().view()),
              R"({"jsonrpc":"2.0","id":2,"error":{"code":5,"message":"m","data":[]}})"
              "\n");
}

TEST(RpcEncode, OverlongFailure) {
    Failure f = overlong_failure(2000000, size_t{1} << 20);
    EXPECT_EQ(f.code, k_invalid_request);
    EXPECT_EQ(f.message, "invalid request: line of 2000000 bytes is longer than 1048576");
    EXPECT_EQ(
        encode_failure(f),
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 2000000 bytes is longer than 1048576"}})"
        "\n");
}

TEST(RpcEncode, LinesDecodeBack) {
    const std::string method = "we\"ird\\name\n\t\x01 \xc3\xa9";
    auto params =
        Json::parse(R"({"text":"line one\nline two","list":[1,2.5,null,true,{"k":"\u00e9"}]})");
    ASSERT_TRUE(params);

    Message m =
        must_decode(body(encode_request(int64_t{9007199254740992}, method, params->view())));
    EXPECT_EQ(m.kind, Kind::request);
    EXPECT_EQ(*m.id.as_int(), 9007199254740992);
    EXPECT_EQ(m.method, method);
    EXPECT_EQ(m.params.dump(), params->dump());

    Json sid = Json::string("id with \"quotes\"\n");
    m = must_decode(body(encode_request(sid.view(), method, {})));
    EXPECT_EQ(m.kind, Kind::request);
    EXPECT_EQ(*m.id.as_string(), "id with \"quotes\"\n");
    EXPECT_FALSE(m.params.exists());

    m = must_decode(body(encode_notification(method, Json::array().view())));
    EXPECT_EQ(m.kind, Kind::notification);
    EXPECT_EQ(m.method, method);
    EXPECT_EQ(m.params.dump(), "[]");

    m = must_decode(body(encode_result(sid.view(), params->view())));
    EXPECT_EQ(m.kind, Kind::response);
    EXPECT_EQ(*m.id.as_string(), *sid.view().as_string());
    EXPECT_EQ(m.result.dump(), params->dump());

    m = must_decode(
        body(encode_error(Json::integer(-1).view(), k_method_not_found, method, params->view())));
    EXPECT_EQ(m.kind, Kind::error);
    EXPECT_EQ(*m.id.as_int(), -1);
    EXPECT_EQ(m.error_code, k_method_not_found);
    EXPECT_EQ(m.error_message, method);
    EXPECT_EQ(m.error_data.dump(), params->dump());

    // A decoded message's own views encode back to the same message.
    Message req =
        must_decode(R"({"jsonrpc":"2.0","id":"r1","method":"echo/say","params":{"x":[1]}})");
    Message again = must_decode(body(encode_request(req.id, req.method, req.params)));
    EXPECT_EQ(*again.id.as_string(), "r1");
    EXPECT_EQ(again.method, "echo/say");
    EXPECT_EQ(again.params.dump(), R"({"x":[1]})");
}

} // namespace
} // namespace sion::rpc

namespace sion::rpc {
namespace {

// An error code outside int's range is not wrapped into another code.
TEST(RpcErrorCode, OutOfRangeCodesAreInvalid) {
    for (const char* line : {R"({"jsonrpc":"2.0","id":1,"error":{"code":4294934696,"message":"x"}})",
                             R"({"jsonrpc":"2.0","id":1,"error":{"code":-2147483649,"message":"x"}})"}) {
        Decoded d = decode(line);
        ASSERT_TRUE(d.failure) << line;
        EXPECT_EQ(d.failure->code, k_invalid_request);
    }
    Decoded ok = decode(R"({"jsonrpc":"2.0","id":1,"error":{"code":-2147483648,"message":"x"}})");
    ASSERT_TRUE(ok.message);
    EXPECT_EQ(ok.message->error_code, INT32_MIN);
}

TEST(RpcNul, MethodWithEscapedNulIsAParseError) {
    Decoded d = decode(R"({"jsonrpc":"2.0\u0000junk","id":1,"method":"tools/call\u0000/../admin"})");
    ASSERT_TRUE(d.failure);
    EXPECT_EQ(d.failure->code, k_parse_error);
}

} // namespace
} // namespace sion::rpc
