// SPDX-License-Identifier: MIT
// JSON-RPC 2.0 messages as the pipes carry them, one per line: decoding with the protocol's error
// codes, and encoding of requests, notifications and responses.
#pragma once

#include "lib/json.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace sion::rpc {

// The protocol's error codes.
enum Code : int {
    k_parse_error = -32700,
    k_invalid_request = -32600,
    k_method_not_found = -32601,
    k_invalid_params = -32602,
    k_internal_error = -32603,
};

enum class Kind { request, notification, response, error };

// A well-formed message. The views point into `doc` and stay valid while the Message lives (moving
// it keeps them valid).
struct Message {
    Kind kind = Kind::notification;
    Json doc;
    JsonView id;             // request, response, error (may be null for an error)
    std::string_view method; // request, notification
    JsonView params;         // request, notification; may be empty
    JsonView result;         // response
    int error_code = 0;      // error
    std::string_view error_message;
    JsonView error_data;     // error; may be empty
};

// Why a line is not a message, and what to answer: the code, the message, and the id when one
// could be read from the line (else the answer's id is null).
struct Failure {
    int code;
    std::string message;
    Json id;
};

// A line decoded: a message, or the failure to answer.
struct Decoded {
    std::optional<Message> message;
    std::optional<Failure> failure;
};

// Decodes one line. Not UTF-8 or not JSON: -32700. JSON but not a JSON-RPC 2.0 message (no
// "jsonrpc":"2.0", a batch, an id that is neither a string nor an integer, params that are neither
// an object nor an array, a response with both or neither of result and error): -32600.
[[nodiscard]] Decoded decode(std::string_view line);

// The answer to an over-long line (-32600, id null).
[[nodiscard]] Failure overlong_failure(size_t length, size_t max);

// Encoders: each returns one line, "\n" included. `params`/`data` may be empty views (left out).
[[nodiscard]] std::string encode_request(JsonView id, std::string_view method, JsonView params);
[[nodiscard]] std::string encode_request(int64_t id, std::string_view method, JsonView params);
[[nodiscard]] std::string encode_notification(std::string_view method, JsonView params);
[[nodiscard]] std::string encode_result(JsonView id, JsonView result);
[[nodiscard]] std::string encode_error(JsonView id, int code, std::string_view message,
                                       JsonView data = {});
[[nodiscard]] std::string encode_failure(const Failure& failure);

} // namespace sion::rpc
