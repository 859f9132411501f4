// SPDX-License-Identifier: MIT
// Grants as sion-sandbox run reads them (--grants-fd): their grammar, their limits, that no
// message holds a value, and that each one's host must be declared.
#include "lib/fd.hpp"
#include "sandboxd/grants.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::sandboxd {
namespace {

std::string error_of(std::string_view text) {
    auto r = parse_grants(text);
    EXPECT_FALSE(r);
    if (r)
        return {};
    EXPECT_EQ(r.error().exit(), Exit::data);
    return r.error().message();
}

TEST(Grants, DefaultsAreHttpsTheWholeHostAndAuthorization) {
    auto r = parse_grants("{\"host\":\"API.Example.ORG.\",\"value\":\"Bearer t\"}\n\n");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->size(), 1U);
    const Grant& g = r->front();
    EXPECT_EQ(g.host, "api.example.org");
    EXPECT_EQ(g.port, 443);
    EXPECT_TRUE(g.tls);
    EXPECT_EQ(g.path, "/");
    EXPECT_EQ(g.header, "Authorization");
    EXPECT_EQ(g.value, "Bearer t");
    EXPECT_EQ(grant_url(g), "https://api.example.org/");
}

TEST(Grants, EveryMemberGiven) {
    auto r = parse_grants(
        "{\"scheme\":\"http\",\"host\":\"::1\",\"port\":8080,\"path\":\"/v1\","
        "\"header\":\"X-Api-Key\",\"value\":\"k\"}\n"
        "{\"host\":\"10.0.0.5\",\"port\":443,\"value\":\"v\"}");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->size(), 2U);
    EXPECT_FALSE((*r)[0].tls);
    EXPECT_EQ((*r)[0].port, 8080);
    EXPECT_EQ((*r)[0].header, "X-Api-Key");
    EXPECT_EQ(grant_url((*r)[0]), "http://[::1]:8080/v1");
    EXPECT_EQ(grant_url((*r)[1]), "https://10.0.0.5/");
}

TEST(Grants, MalformedOnesAreRefusedByLine) {
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"v\"}\n[1]"), "grant 2: not a JSON object");
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"v\""), "grant 1: invalid JSON at byte 28");
    EXPECT_EQ(error_of("{\"value\":\"v\"}"), "grant 1: member 'host' is missing");
    EXPECT_EQ(error_of("{\"host\":\"a.test\"}"), "grant 1: member 'value' is missing");
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"v\",\"port\":0}"),
              "grant 1: 'port' is 0: give 1-65535");
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"v\",\"scheme\":\"ftp\"}"),
              "grant 1: 'scheme' is https or http, not 'ftp'");
    EXPECT_NE(error_of("{\"host\":\"a..test\",\"value\":\"v\"}").find("grant 1: 'host' "),
              std::string::npos);
    EXPECT_NE(error_of("{\"host\":\"127.1\",\"value\":\"v\"}").find("grant 1: 'host' "),
              std::string::npos);
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"v\",\"header\":\"Bad Name\"}"),
              "grant 1: 'header' is a header's name, not 'Bad Name'");
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"v\",\"extra\":1}"),
              "grant 1: a member other than scheme, host, port, path, header and value");
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"v\"}\n{\"host\":\"a.test\",\"value\":\"w\","
                       "\"path\":\"/x\"}"),
              "grant 2: a second grant for https://a.test/x's host: give one for each scheme, "
                       "host and port");
}

TEST(Grants, APathThatCouldMeanAnotherIsRefused) {
    for (const char* path : {"v1", "/v1/../admin", "/./v1", "/v1%2f..", "/v1?q", "/v1#f", "/a b",
                             "/a\\\\b", ""}) {
        std::string line = std::string("{\"host\":\"a.test\",\"value\":\"v\",\"path\":\"") + path
                           + "\"}";
        EXPECT_NE(error_of(line).find("grant 1: 'path' is a path starting with '/'"),
                  std::string::npos)
            << path;
    }
}

// A value that could split a head, or end it, is refused, and no message ever holds it.
TEST(Grants, AValueIsOneLineAndNeverShown) {
    for (const char* value : {"s3cret\\r\\nX-Evil: 1", "s3cret\\n", "\\u007fs3cret", " s3cret",
                              "s3cret\\t", ""}) {
        std::string line = std::string("{\"host\":\"a.test\",\"value\":\"") + value + "\"}";
        std::string why = error_of(line);
        EXPECT_EQ(why, "grant 1: 'value' is not one line of visible text") << value;
        EXPECT_EQ(why.find("s3cret"), std::string::npos);
    }
    std::string big(16 * 1024 + 1, 'k');
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"" + big + "\"}"),
              "grant 1: 'value' is longer than 16384 bytes");
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":7}").find("7"), std::string::npos);
    EXPECT_EQ(error_of("{\"host\":\"a.test\",\"value\":\"\\u0000s3cret\"}").find("s3cret"),
              std::string::npos);
}

TEST(Grants, AtMostSixtyFour) {
    std::string text;
    for (int i = 0; i <= 64; ++i)
        text += "{\"host\":\"h" + std::to_string(i) + ".test\",\"value\":\"v\"}\n";
    EXPECT_EQ(error_of(text), "more than 64 grants");
}

TEST(Grants, ReadFromADescriptorToItsEnd) {
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    ASSERT_TRUE(write_all(pipe->write.get(), "{\"host\":\"a.test\",\"value\":\"v\"}\n"));
    pipe->write.reset();
    auto r = read_grants(pipe->read.release());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->size(), 1U);
    auto closed = read_grants(1000);
    ASSERT_FALSE(closed);
    EXPECT_EQ(closed.error().exit(), Exit::usage);
    EXPECT_EQ(closed.error().message(), "--grants-fd 1000 is not an open descriptor");
}

TEST(Grants, EachHostMustBeDeclared) {
    Config c;
    c.network = Network::declared;
    c.allow_hosts = {"api.example.org", "10.0.0.5:8443"};
    auto grants = parse_grants("{\"host\":\"api.example.org\",\"value\":\"v\"}\n"
                               "{\"host\":\"10.0.0.5\",\"port\":8443,\"value\":\"v\"}");
    ASSERT_TRUE(grants);
    EXPECT_TRUE(check_grants_declared(*grants, c));
    auto other = parse_grants("{\"host\":\"other.example.org\",\"path\":\"/v1\",\"value\":\"v\"}");
    ASSERT_TRUE(other);
    Status st = check_grants_declared(*other, c);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().exit(), Exit::config);
    EXPECT_EQ(st.error().message(),
              "the grant for https://other.example.org/v1 needs its host declared: add --network "
              "declared --allow-host other.example.org");
    c.network = Network::none;
    st = check_grants_declared(*grants, c);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().message(),
              "the grant for https://api.example.org/ needs its host declared: add --network "
              "declared --allow-host api.example.org");
    auto v6 = parse_grants("{\"host\":\"::1\",\"port\":8443,\"value\":\"v\"}");
    ASSERT_TRUE(v6);
    EXPECT_NE(check_grants_declared(*v6, c).error().message().find("--allow-host [::1]:8443"),
              std::string::npos);
}

} // namespace
} // namespace sion::sandboxd
