// SPDX-License-Identifier: MIT
// AWS Signature Version 4: the canonical request, the string to sign and the signing key chain.
#include "lib/models/sigv4.hpp"

#include "lib/hash.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace sion::models::sigv4 {

namespace {

constexpr std::string_view k_algorithm = "AWS4-HMAC-SHA256";

using Pairs = std::vector<std::pair<std::string, std::string>>;

// The path without "." and ".." segments or empty ones, a trailing '/' kept.
std::string normalized_path(std::string_view path) {
    std::vector<std::string_view> kept;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        std::string_view segment = path.substr(
            start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (segment == "..") {
            if (!kept.empty())
                kept.pop_back();
        } else if (!segment.empty() && segment != ".") {
            kept.push_back(segment);
        }
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    std::string out;
    for (std::string_view segment : kept) {
        out += '/';
        out += segment;
    }
    if (out.empty() || (path.ends_with('/') && !kept.empty()))
        out += '/';
    return out;
}

std::string canonical_uri(std::string_view path, bool normalize) {
    if (path.empty())
        path = "/";
    return percent_encode(normalize ? normalized_path(path) : std::string(path), true);
}

// The query's parameters, decoded and encoded again, sorted by name and then value.
std::string canonical_query(std::string_view query, const Pairs& extra) {
    Pairs params;
    size_t start = 0;
    while (start < query.size()) {
        size_t amp = query.find('&', start);
        std::string_view piece = query.substr(
            start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
        if (!piece.empty()) {
            size_t eq = piece.find('=');
            std::string_view name = piece.substr(0, eq);
            std::string_view value =
                eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1);
            params.emplace_back(percent_encode(percent_decode(name)),
                                percent_encode(percent_decode(value)));
        }
        if (amp == std::string_view::npos)
            break;
        start = amp + 1;
    }
    for (const auto& [name, value] : extra)
        params.emplace_back(percent_encode(name), percent_encode(value));
    std::sort(params.begin(), params.end());
    std::string out;
    for (const auto& [name, value] : params) {
        if (!out.empty())
            out += '&';
        out += name;
        out += '=';
        out += value;
    }
    return out;
}

// A header's value as signed: line breaks (of a folded header) and runs of spaces and tabs made
// one space, the ends trimmed.
std::string canonical_value(std::string_view value) {
    std::string out;
    bool space = false;
    for (char c : value) {
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            space = true;
            continue;
        }
        if (space && !out.empty())
            out += ' ';
        space = false;
        out += c;
    }
    return out;
}

struct CanonicalHeaders {
    std::string text;         // "name:value\n" each
    std::string signed_names; // "name;name"
};

Result<CanonicalHeaders> canonical_headers(const HttpHeaders& headers) {
    Pairs merged; // lowercase name, values joined by ','
    for (const auto& [name, value] : headers.entries()) {
        if (!is_http_token(name))
            return make_error(Exit::data, "cannot sign header '%s': its name is not a token",
                              name.c_str());
        if (value.find('\0') != std::string::npos)
            return make_error(Exit::data, "cannot sign header '%s': its value holds a NUL",
                              name.c_str());
        std::string lower = ascii_lower(name);
        auto same = std::find_if(merged.begin(), merged.end(),
                                 [&](const auto& p) { return p.first == lower; });
        if (same == merged.end())
            merged.emplace_back(std::move(lower), canonical_value(value));
        else
            same->second += "," + canonical_value(value);
    }
    std::sort(merged.begin(), merged.end());
    CanonicalHeaders out;
    for (const auto& [name, value] : merged) {
        out.text += name + ":" + value + "\n";
        if (!out.signed_names.empty())
            out.signed_names += ';';
        out.signed_names += name;
    }
    return out;
}

struct Stamp {
    std::string date_time; // 20150830T123600Z
    std::string date;      // 20150830
};

Stamp stamp(std::time_t when) {
    std::tm utc{};
    ::gmtime_r(&when, &utc);
    Stamp s;
    s.date_time = format("%04d%02d%02dT%02d%02d%02dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                         utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
    s.date = s.date_time.substr(0, 8);
    return s;
}

std::string credential_scope(const Stamp& when, const Scope& scope) {
    return when.date + "/" + scope.region + "/" + scope.service + "/aws4_request";
}

// Fills in the string to sign and the signature of a canonical request.
void finish(Signature& out, const Credentials& credentials, const Scope& scope, const Stamp& when) {
    out.string_to_sign = std::string(k_algorithm) + "\n" + when.date_time + "\n"
                         + credential_scope(when, scope) + "\n" + sha256_hex(out.canonical_request);
    std::string secret = "AWS4" + credentials.secret_access_key;
    std::string key = hmac_sha256(secret, when.date);
    wipe(secret);
    key = hmac_sha256(key, scope.region);
    key = hmac_sha256(key, scope.service);
    key = hmac_sha256(key, "aws4_request");
    out.signature = hmac_sha256_hex(key, out.string_to_sign);
    wipe(key);
}

Status check_method(const Request& request) {
    if (!is_http_token(request.method))
        return make_error(Exit::data, "cannot sign a request whose method is '%s'",
                          request.method.c_str());
    return {};
}

std::string canonical_request(const Request& request, const Options& options,
                              const std::string& query, const CanonicalHeaders& headers,
                              const std::string& payload_hash) {
    return request.method + "\n" + canonical_uri(request.path, options.normalize_path) + "\n"
           + query + "\n" + headers.text + "\n" + headers.signed_names + "\n" + payload_hash;
}

} // namespace

Result<Signature> sign_headers(const Request& request, const Credentials& credentials,
                               const Scope& scope, const Options& options) {
    SION_CHECK(check_method(request));
    Stamp when = stamp(scope.time);
    std::string payload_hash = sha256_hex(request.body);
    Signature out;
    bool token = !credentials.session_token.empty();
    if (token)
        out.added.add("X-Amz-Security-Token", credentials.session_token);
    out.added.add("X-Amz-Date", when.date_time);
    if (options.sign_body)
        out.added.add("x-amz-content-sha256", payload_hash);
    HttpHeaders signed_headers = request.headers;
    for (const auto& [name, value] : out.added.entries())
        if (name != "X-Amz-Security-Token" || options.sign_session_token)
            signed_headers.add(name, value);
    SION_TRY(CanonicalHeaders headers, canonical_headers(signed_headers));
    out.canonical_request = canonical_request(request, options, canonical_query(request.query, {}),
                                              headers, payload_hash);
    finish(out, credentials, scope, when);
    out.added.add("Authorization",
                  std::string(k_algorithm) + " Credential=" + credentials.access_key_id + "/"
                      + credential_scope(when, scope) + ", SignedHeaders=" + headers.signed_names
                      + ", Signature=" + out.signature);
    return out;
}

Result<Signature> sign_query(const Request& request, const Credentials& credentials,
                             const Scope& scope, const Options& options) {
    SION_CHECK(check_method(request));
    Stamp when = stamp(scope.time);
    SION_TRY(CanonicalHeaders headers, canonical_headers(request.headers));
    Pairs added{
        {"X-Amz-Algorithm", std::string(k_algorithm)},
        {"X-Amz-Credential", credentials.access_key_id + "/" + credential_scope(when, scope)},
        {"X-Amz-Date", when.date_time},
        {"X-Amz-SignedHeaders", headers.signed_names},
        {"X-Amz-Expires", std::to_string(options.expires_seconds)},
    };
    bool token = !credentials.session_token.empty();
    if (token && options.sign_session_token)
        added.emplace_back("X-Amz-Security-Token", credentials.session_token);
    Signature out;
    out.canonical_request = canonical_request(
        request, options, canonical_query(request.query, added), headers, sha256_hex(request.body));
    finish(out, credentials, scope, when);
    if (token && !options.sign_session_token)
        added.emplace_back("X-Amz-Security-Token", credentials.session_token);
    added.emplace_back("X-Amz-Signature", out.signature);
    out.query = request.query;
    for (const auto& [name, value] : added) {
        if (!out.query.empty())
            out.query += '&';
        out.query += name + "=" + percent_encode(value);
    }
    return out;
}

} // namespace sion::models::sigv4
