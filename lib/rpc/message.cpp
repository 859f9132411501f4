// SPDX-License-Identifier: MIT
// JSON-RPC 2.0 decoding and encoding. Encoders append text directly: no tree is built to send.
#include "lib/rpc/message.hpp"

#include "lib/text.hpp"

#include <cstdint>

namespace sion::rpc {

namespace {

Decoded fail(int code, std::string message, JsonView id = {}) {
    Decoded d;
    d.failure = Failure{code, std::move(message), id.exists() ? Json::copy_of(id) : Json::null()};
    return d;
}

// An id is a string or an integer; null is accepted only where the protocol answers with one.
bool valid_id(JsonView id) {
    if (id.is_string())
        return true;
    return id.is_number() && id.as_int().has_value();
}

Decoded decode_call(Message m, JsonView root) {
    JsonView method = root.get("method");
    JsonView id = root.get("id");
    if (id.exists() && !valid_id(id))
        return fail(k_invalid_request, "invalid request: id must be a string or an integer");
    if (!method.is_string())
        return fail(k_invalid_request, "invalid request: method must be a string", id);
    JsonView params = root.get("params");
    if (params.exists() && !params.is_object() && !params.is_array())
        return fail(k_invalid_request, "invalid request: params must be an object or an array", id);
    m.kind = id.exists() ? Kind::request : Kind::notification;
    m.id = id;
    m.method = *method.as_string();
    m.params = params;
    Decoded d;
    d.message = std::move(m);
    return d;
}

Decoded decode_answer(Message m, JsonView root) {
    JsonView id = root.get("id");
    JsonView result = root.get("result");
    JsonView error = root.get("error");
    if (!id.exists() || (!id.is_null() && !valid_id(id)))
        return fail(k_invalid_request, "invalid response: id must be a string or an integer");
    if (result.exists() == error.exists())
        return fail(k_invalid_request, "invalid response: it needs exactly one of result and error", id);
    m.id = id;
    if (result.exists()) {
        if (id.is_null())
            return fail(k_invalid_request, "invalid response: a result needs an id");
        m.kind = Kind::response;
        m.result = result;
    } else {
        auto code = error.integer("code");
        auto message = error.string("message");
        if (!code || !message || *code < INT32_MIN || *code > INT32_MAX)
            return fail(k_invalid_request, "invalid response: error needs an integer code and a message", id);
        m.kind = Kind::error;
        m.error_code = static_cast<int>(*code);
        m.error_message = *message;
        m.error_data = error.get("data");
    }
    Decoded d;
    d.message = std::move(m);
    return d;
}

void append_id(std::string& out, JsonView id) {
    if (!id.exists() || id.is_null()) {
        out += "null";
    } else if (id.is_string()) {
        append_json_string(out, *id.as_string());
    } else {
        out += format("%lld", static_cast<long long>(id.as_int().value_or(0)));
    }
}

// The rest of a request or notification: "method", then "params" if there are any, and the end.
void finish_call(std::string& out, std::string_view method, JsonView params) {
    out += "\"method\":";
    append_json_string(out, method);
    if (params.exists()) {
        out += ",\"params\":";
        out += params.dump();
    }
    out += "}\n";
}

} // namespace

Decoded decode(std::string_view line) {
    auto doc = Json::parse(line);
    if (!doc)
        return fail(k_parse_error, "parse error: " + doc.error().message());
    JsonView root = doc->view();
    if (root.is_array())
        return fail(k_invalid_request, "invalid request: batches are not supported");
    if (!root.is_object())
        return fail(k_invalid_request, "invalid request: a message is a JSON object");
    auto version = root.string("jsonrpc");
    if (!version || *version != "2.0") {
        // Answer to the id only when it is one: an object or a fraction is not echoed back.
        JsonView id = root.get("id");
        return fail(k_invalid_request, "invalid request: jsonrpc must be \"2.0\"",
                    valid_id(id) ? id : JsonView());
    }
    Message m;
    m.doc = std::move(*doc);
    if (root.get("method").exists())
        return decode_call(std::move(m), root);
    return decode_answer(std::move(m), root);
}

Failure overlong_failure(size_t length, size_t max) {
    return {k_invalid_request, format("invalid request: line of %zu bytes is longer than %zu", length, max),
            Json::null()};
}

std::string encode_request(JsonView id, std::string_view method, JsonView params) {
    std::string out = "{\"jsonrpc\":\"2.0\",\"id\":";
    append_id(out, id);
    out += ',';
    finish_call(out, method, params);
    return out;
}

std::string encode_request(int64_t id, std::string_view method, JsonView params) {
    Json j = Json::integer(id);
    return encode_request(j.view(), method, params);
}

std::string encode_notification(std::string_view method, JsonView params) {
    std::string out = "{\"jsonrpc\":\"2.0\",";
    finish_call(out, method, params);
    return out;
}

std::string encode_result(JsonView id, JsonView result) {
    std::string out = "{\"jsonrpc\":\"2.0\",\"id\":";
    append_id(out, id);
    out += ",\"result\":";
    out += result.exists() ? result.dump() : std::string("null");
    out += "}\n";
    return out;
}

std::string encode_error(JsonView id, int code, std::string_view message, JsonView data) {
    std::string out = "{\"jsonrpc\":\"2.0\",\"id\":";
    append_id(out, id);
    out += format(",\"error\":{\"code\":%d,\"message\":", code);
    append_json_string(out, message);
    if (data.exists()) {
        out += ",\"data\":";
        out += data.dump();
    }
    out += "}}\n";
    return out;
}

std::string encode_failure(const Failure& failure) {
    return encode_error(failure.id.view(), failure.code, failure.message);
}

} // namespace sion::rpc
