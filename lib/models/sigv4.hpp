// SPDX-License-Identifier: MIT
// AWS Signature Version 4 (AWS4-HMAC-SHA256): a request signed in its headers (Authorization) or
// presigned in its query string, as AWS's SDKs and services compute it.
//
// The path is taken as it goes on the wire and encoded once more for the canonical request, as
// every service but S3 wants: a Bedrock model id "m-v1:0" is sent as "/model/m-v1%3A0/converse"
// and signed as "/model/m-v1%253A0/converse". Query parameters are decoded and encoded again, so
// "%E1%88%B4" and the raw UTF-8 it stands for sign alike. Header values are trimmed, folded lines
// joined and runs of spaces made one; a header given several times is signed as its values in
// order, joined by commas.
//
// Nothing here keeps state or fails on a well-formed request; a malformed one (a method or header
// name that is not an HTTP token, a header value with a NUL) is an Error (Exit::data). Secrets go
// into the signature only, never into a message.
#pragma once

#include "lib/http.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace sion::models::sigv4 {

struct Credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token; // "" for long-term keys
};

struct Scope {
    std::string region;   // "us-east-1"
    std::string service;  // "bedrock"
    std::time_t time = 0; // when the request is signed, seconds since the epoch (UTC)
};

struct Options {
    // Remove "." and ".." segments and empty ones ("//") before signing; S3 alone signs the path
    // as it is.
    bool normalize_path = true;
    // Send and sign x-amz-content-sha256 (header form only).
    bool sign_body = false;
    // With a session token: false adds it after signing, unsigned, as STS's older clients did.
    bool sign_session_token = true;
    // How long a presigned request stays good (X-Amz-Expires).
    int64_t expires_seconds = 3600;
};

struct Request {
    std::string method = "GET";
    std::string path = "/"; // as sent: percent-encoded where it needs to be, no query
    std::string query;      // without the '?', as sent; "" for none
    HttpHeaders headers;    // the ones to sign: Host among them; every one given is signed
    std::string body;
};

// What signing worked out, for tests and for messages when a service disagrees.
struct Signature {
    std::string canonical_request;
    std::string string_to_sign;
    std::string signature; // 64 lowercase hex digits
    // Header form: the headers to add to the request, in order (X-Amz-Security-Token,
    // X-Amz-Date, x-amz-content-sha256, Authorization). Query form: empty.
    HttpHeaders added;
    // Query form: the whole query to send, the request's own parameters first (as they were given)
    // and then X-Amz-Algorithm … X-Amz-Signature. Header form: empty.
    std::string query;
};

// Signs `request` in its headers. Host must be among its headers.
[[nodiscard]] Result<Signature> sign_headers(const Request& request, const Credentials& credentials,
                                             const Scope& scope, const Options& options = {});

// Presigns `request` in its query string (a URL anyone may use until it expires).
[[nodiscard]] Result<Signature> sign_query(const Request& request, const Credentials& credentials,
                                           const Scope& scope, const Options& options = {});

} // namespace sion::models::sigv4
