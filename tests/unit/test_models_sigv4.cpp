// SPDX-License-Identifier: MIT
// lib/models/sigv4: every case of AWS's own test suite (tests/fixtures/sigv4/, from aws-c-auth,
// Apache-2.0, LICENSE beside it) signed in the header and the query form, each step compared —
// the canonical request, the string to sign, the signature and the signed request — and a Bedrock
// model id with ':' signed as AWS's SDKs sign it.
#include "lib/json.hpp"
#include "lib/models/sigv4.hpp"
#include "lib/text.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sion::models::sigv4 {
namespace {

namespace fs = std::filesystem;

fs::path fixtures() {
    const char* root = std::getenv("SION_TEST_SOURCE_DIR");
    return fs::path(root != nullptr ? root : ".") / "tests" / "fixtures" / "sigv4";
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string chomp(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// request.txt: "METHOD PATH HTTP/1.1", header lines (a line that starts with a space continues the
// one before, as a folded header), a blank line and the body.
struct Parsed {
    Request request;
    std::vector<std::string> lines; // the head's lines as written, for the signed request
};

Parsed parse_request(const std::string& text) {
    Parsed out;
    size_t head_end = text.find("\n\n");
    std::string head = text.substr(0, head_end);
    if (head_end != std::string::npos)
        out.request.body = text.substr(head_end + 2);
    std::istringstream lines(head);
    std::string line;
    std::getline(lines, line);
    out.lines.push_back(line);
    size_t space = line.find(' ');
    out.request.method = line.substr(0, space);
    std::string target = line.substr(space + 1, line.rfind(" HTTP/") - space - 1);
    size_t q = target.find('?');
    out.request.path = target.substr(0, q);
    if (q != std::string::npos)
        out.request.query = target.substr(q + 1);
    std::vector<std::pair<std::string, std::string>> headers;
    while (std::getline(lines, line)) {
        out.lines.push_back(line);
        if (!line.empty() && (line[0] == ' ' || line[0] == '\t') && !headers.empty()) {
            headers.back().second += "\n" + line;
            continue;
        }
        size_t colon = line.find(':');
        headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
    }
    for (auto& [name, value] : headers)
        out.request.headers.add(name, value);
    return out;
}

struct Case {
    std::string name;
    Parsed parsed;
    Credentials credentials;
    Scope scope;
    Options options;
};

Case load(const fs::path& dir) {
    Case c;
    c.name = dir.filename().string();
    c.parsed = parse_request(slurp(dir / "request.txt"));
    auto context = Json::parse(slurp(dir / "context.json"));
    EXPECT_TRUE(context) << c.name;
    if (!context)
        return c;
    JsonView creds = context->get("credentials");
    c.credentials.access_key_id = std::string(creds.string("access_key_id").value_or(""));
    c.credentials.secret_access_key = std::string(creds.string("secret_access_key").value_or(""));
    c.credentials.session_token = std::string(creds.string_or("token", "").value_or(""));
    c.scope.region = std::string(context->view().string("region").value_or(""));
    c.scope.service = std::string(context->view().string("service").value_or(""));
    std::tm tm{};
    std::string stamp(context->view().string("timestamp").value_or(""));
    EXPECT_NE(::strptime(stamp.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm), nullptr) << c.name;
    c.scope.time = ::timegm(&tm);
    c.options.normalize_path = context->view().boolean_or("normalize", true).value_or(true);
    c.options.sign_body = context->view().boolean_or("sign_body", false).value_or(false);
    c.options.sign_session_token =
        !context->view().boolean_or("omit_session_token", false).value_or(false);
    c.options.expires_seconds =
        context->view().integer_or("expiration_in_seconds", 3600).value_or(3600);
    return c;
}

std::vector<fs::path> case_dirs() {
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(fixtures()))
        if (entry.is_directory())
            dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

TEST(Sigv4, TheSuiteIsThere) {
    // Every case of the suite, so that a lost fixture fails here rather than passing unnoticed.
    EXPECT_EQ(case_dirs().size(), 38U) << fixtures();
}

TEST(Sigv4, HeaderFormOfEveryCase) {
    for (const fs::path& dir : case_dirs()) {
        Case c = load(dir);
        auto s = sign_headers(c.parsed.request, c.credentials, c.scope, c.options);
        ASSERT_TRUE(s) << c.name << ": " << s.error().message();
        EXPECT_EQ(s->canonical_request, chomp(slurp(dir / "header-canonical-request.txt")))
            << c.name;
        EXPECT_EQ(s->string_to_sign, chomp(slurp(dir / "header-string-to-sign.txt"))) << c.name;
        EXPECT_EQ(s->signature, chomp(slurp(dir / "header-signature.txt"))) << c.name;
        // The signed request: the request as it was, then the headers signing added.
        std::string want = chomp(slurp(dir / "header-signed-request.txt"));
        std::string got;
        for (const std::string& line : c.parsed.lines)
            got += line + "\n";
        for (const auto& [name, value] : s->added.entries())
            got += name + ":" + value + "\n";
        got += "\n" + c.parsed.request.body;
        EXPECT_EQ(chomp(got), want) << c.name;
    }
}

TEST(Sigv4, QueryFormOfEveryCase) {
    for (const fs::path& dir : case_dirs()) {
        Case c = load(dir);
        auto s = sign_query(c.parsed.request, c.credentials, c.scope, c.options);
        ASSERT_TRUE(s) << c.name << ": " << s.error().message();
        EXPECT_EQ(s->canonical_request, chomp(slurp(dir / "query-canonical-request.txt")))
            << c.name;
        EXPECT_EQ(s->string_to_sign, chomp(slurp(dir / "query-string-to-sign.txt"))) << c.name;
        EXPECT_EQ(s->signature, chomp(slurp(dir / "query-signature.txt"))) << c.name;
        EXPECT_TRUE(s->added.entries().empty()) << c.name;
        std::string first = chomp(slurp(dir / "query-signed-request.txt"));
        first = first.substr(0, first.find('\n'));
        EXPECT_EQ(first, c.parsed.request.method + " " + c.parsed.request.path + "?" + s->query
                             + " HTTP/1.1")
            << c.name;
    }
}

// A model id with ':' goes on the wire encoded once and is signed encoded twice, as botocore and
// the other SDKs do for every service but S3; recomputed independently with Python's hmac.
TEST(Sigv4, BedrockModelIdIsEncodedTwice) {
    Request r;
    r.method = "POST";
    r.path = "/model/" + percent_encode("anthropic.claude-3-haiku-20240307-v1:0") + "/converse";
    EXPECT_EQ(r.path, "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
    r.headers.add("Host", "bedrock-runtime.us-east-1.amazonaws.com");
    r.headers.add("Content-Type", "application/json");
    r.body = R"({"messages":[]})";
    Credentials creds{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
    Scope scope{"us-east-1", "bedrock", 1440938160};
    auto s = sign_headers(r, creds, scope);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->canonical_request.substr(0, s->canonical_request.find('\n', 5)),
              "POST\n/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse");
    EXPECT_EQ(s->signature, "dba7f2f77cc33808be655f27b8ebf1d1b1d77751fc96dad0bd71e020cb07c442");
}

TEST(Sigv4, EncodesAsSigv4Wants) {
    EXPECT_EQ(percent_encode("a b+c/d~e_f.g-h"), "a%20b%2Bc%2Fd~e_f.g-h");
    EXPECT_EQ(percent_encode("a b/c", true), "a%20b/c");
    EXPECT_EQ(percent_encode("\xe1\x88\xb4"), "%E1%88%B4");
}

TEST(Sigv4, RefusesWhatCannotBeSigned) {
    Request r;
    r.headers.add("Host", "example.amazonaws.com");
    r.method = "GE T";
    auto bad_method = sign_headers(r, {}, {});
    ASSERT_FALSE(bad_method);
    EXPECT_EQ(bad_method.error().exit(), Exit::data);
    EXPECT_EQ(bad_method.error().message(), "cannot sign a request whose method is 'GE T'");
    r.method = "GET";
    r.headers.add("Bad Name", "x");
    auto bad_header = sign_query(r, {}, {});
    ASSERT_FALSE(bad_header);
    EXPECT_EQ(bad_header.error().message(),
              "cannot sign header 'Bad Name': its name is not a token");
}

TEST(Sigv4, TheSecretIsInNoOutputButTheSignature) {
    Request r;
    r.headers.add("Host", "example.amazonaws.com");
    Credentials creds{"AKIDEXAMPLE", "very-secret-key", "session"};
    auto s = sign_headers(r, creds, Scope{"us-east-1", "service", 0});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->canonical_request.find("very-secret-key"), std::string::npos);
    for (const auto& [name, value] : s->added.entries())
        EXPECT_EQ(value.find("very-secret-key"), std::string::npos) << name;
}

} // namespace
} // namespace sion::models::sigv4
