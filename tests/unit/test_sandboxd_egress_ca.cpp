// SPDX-License-Identifier: MIT
// Unit tests of sandboxd/egress_ca: sion's authority for the egress proxy, made once and kept
// private, and the certificates it makes for hosts, checked as a TLS client checks them.
#include "sandboxd/egress_ca.hpp"
#include "tests/unit/temp_dir.hpp"

#include <mbedtls/x509_crt.h>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sion::sandboxd {
namespace {


struct Certificates {
    Certificates() { mbedtls_x509_crt_init(&crt); }

    Certificates(const Certificates&) = delete;
    Certificates& operator=(const Certificates&) = delete;

    ~Certificates() { mbedtls_x509_crt_free(&crt); }

    bool parse(const std::string& pem) {
        return mbedtls_x509_crt_parse(&crt, reinterpret_cast<const unsigned char*>(pem.c_str()),
                                      pem.size() + 1)
               == 0;
    }

    mbedtls_x509_crt crt;
};

// Whether `chain` verifies against `authority` for `host` (nullptr: any name), as a client does.
bool verifies(const std::string& chain, const std::string& authority, const char* host) {
    Certificates leaf, trusted;
    if (!leaf.parse(chain) || !trusted.parse(authority))
        return false;
    uint32_t flags = 0;
    return mbedtls_x509_crt_verify(&leaf.crt, &trusted.crt, nullptr, host, &flags, nullptr, nullptr)
               == 0
           && flags == 0;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(EgressAuthority, MadeOnceAndKeptPrivate) {
    test::TempDir home;
    auto first = EgressAuthority::open(home.path());
    ASSERT_TRUE(first) << first.error().message();
    const std::string path = home.path() + "/agents/egress-ca.pem";
    EXPECT_EQ((*first)->path(), path);

    struct stat st {};

    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    std::string kept = slurp(path);
    EXPECT_NE(kept.find("-----BEGIN EC PRIVATE KEY-----"), std::string::npos);
    EXPECT_NE(kept.find((*first)->certificate()), std::string::npos);
    EXPECT_EQ((*first)->certificate().rfind("-----BEGIN CERTIFICATE-----", 0), 0U);
    // A CA of its own: it verifies itself.
    EXPECT_TRUE(verifies((*first)->certificate(), (*first)->certificate(), nullptr));
    // Opened again, it is the same one.
    auto second = EgressAuthority::open(home.path());
    ASSERT_TRUE(second) << second.error().message();
    EXPECT_EQ((*second)->certificate(), (*first)->certificate());
    EXPECT_EQ(slurp(path), kept);
}

TEST(EgressAuthority, CertificatesForHostsVerifyAsAClientChecksThem) {
    test::TempDir home;
    auto ca = EgressAuthority::open(home.path());
    ASSERT_TRUE(ca) << ca.error().message();
    auto issued = (*ca)->issue("api.example.test");
    ASSERT_TRUE(issued) << issued.error().message();
    EXPECT_NE((*issued)->key.find("-----BEGIN EC PRIVATE KEY-----"), std::string::npos);
    EXPECT_TRUE(verifies((*issued)->certificate, (*ca)->certificate(), "api.example.test"));
    EXPECT_FALSE(verifies((*issued)->certificate, (*ca)->certificate(), "other.example.test"));
    // Another authority's sandboxes would not trust it.
    test::TempDir elsewhere;
    auto other = EgressAuthority::open(elsewhere.path());
    ASSERT_TRUE(other);
    EXPECT_FALSE(verifies((*issued)->certificate, (*other)->certificate(), "api.example.test"));
    // Asked again, the same certificate; a host of its own for each host.
    auto again = (*ca)->issue("api.example.test");
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *issued);
    auto address = (*ca)->issue("127.0.0.1");
    ASSERT_TRUE(address) << address.error().message();
    EXPECT_TRUE(verifies((*address)->certificate, (*ca)->certificate(), nullptr));
    EXPECT_TRUE((*ca)->issue("::1"));
    // Not a host: refused.
    auto bad = (*ca)->issue("bad host,CN=x");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::usage);
}

TEST(EgressAuthority, AFileThatIsNoAuthorityIsNeverWrittenOver) {
    test::TempDir home;
    std::filesystem::create_directory(home.path() + "/agents");
    const std::string path = home.path() + "/agents/egress-ca.pem";
    {
        std::ofstream out(path);
        out << "not a key\n";
    }
    auto ca = EgressAuthority::open(home.path());
    ASSERT_FALSE(ca);
    EXPECT_EQ(ca.error().exit(), Exit::data);
    EXPECT_EQ(ca.error().message(),
              "'" + path
                  + "' is not sion's egress authority (a P-256 key and its certificate): move it "
                    "away, and one is made again");
    EXPECT_EQ(slurp(path), "not a key\n");
}

} // namespace
} // namespace sion::sandboxd
