// SPDX-License-Identifier: MIT
// sion's own certificate authority, for the egress proxy that writes the keys sandboxed programs
// need into their requests (seed 002): to add a credential to a request over TLS, the proxy ends
// the program's TLS itself, with a certificate for the host it asked for, signed here; sandboxes
// trust this authority's certificate, and nothing else of it leaves the machine's $SION_HOME.
//
// The authority is a P-256 key and a self-signed certificate (CA:TRUE, path length 0, keyCertSign
// and cRLSign, ten years), made once and kept together in $SION_HOME/agents/egress-ca.pem, mode
// 0600, beside the sealed tokens. Two processes that make it at once keep one of theirs, the
// other reads it (create_private_file). A file that is there but is not one is an error naming it
// (Exit::data), never made again over it.
//
// A host's certificate: a P-256 key of its own, subject CN=host, the host as its one
// subjectAltName (a DNS name, or an IP address for an address), serverAuth, valid from an hour ago
// for seven days, a random serial; made when first asked for, kept in memory for the process's
// life. Threads: one authority is used by one thread at a time.
#pragma once

#include "lib/result.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace sion::sandboxd {

class EgressAuthority {
public:
    // The file, made when missing: $SION_HOME/agents/egress-ca.pem.
    [[nodiscard]] static Result<std::unique_ptr<EgressAuthority>> open(const std::string& home);

    [[nodiscard]] const std::string& path() const { return m_path; }

    // The authority's certificate, PEM: what sandboxes trust.
    [[nodiscard]] const std::string& certificate() const { return m_certificate; }

    struct Issued {
        std::string certificate; // PEM: the host's, then the authority's
        std::string key;         // PEM (SEC1): the host's key
    };

    // The certificate for `host` (a DNS name, or an IPv4 or IPv6 address without brackets).
    // Exit::usage for a host that is neither.
    [[nodiscard]] Result<const Issued*> issue(std::string_view host);

private:
    EgressAuthority(std::string path, std::string key, std::string certificate)
        : m_path(std::move(path)), m_key(std::move(key)), m_certificate(std::move(certificate)) {}

    std::string m_path;
    std::string m_key; // the authority's, PEM
    std::string m_certificate;
    std::map<std::string, Issued, std::less<>> m_issued;
};

} // namespace sion::sandboxd
