// SPDX-License-Identifier: MIT
// What the parts of logging in to MCP servers over HTTP share: the settings of their requests, and
// the rules they all keep. The parts: addresses (oauth_url.hpp), discovery (oauth_discovery.hpp),
// the client and its tokens (oauth_client.hpp), the person's consent (oauth_consent.hpp), DPoP
// (oauth_dpop.hpp), and logging in, renewing and logging out (oauth_login.hpp).
//
// Everything is synchronous, over lib/http.hpp. None of them prints but the terminal consent
// (oauth_consent.hpp), which writes to the fd it is given. Secrets (tokens, client secrets, PKCE verifiers, private
// keys) never appear in an Error's message.
//
// Errors: a peer that breaks the rules (metadata naming another issuer or resource, no PKCE S256,
// an answer with another state or iss, a malformed document) is Exit::data; an address the rules
// forbid (plain HTTP, or a private address, away from the MCP server's own) is Exit::no_perm; an
// authorization server that refuses (a token request's error, a consent declined) is
// Exit::no_perm; unreachable peers Exit::unavailable and time limits Exit::timeout (lib/http's).
//
// Threads: one login or renewal at a time per AuthStore; different stores may be used by
// different threads.
#pragma once

#include <chrono>

namespace sion::mcpd::oauth {

struct Settings {
    // Each request to a metadata, registration, token or revocation endpoint.
    std::chrono::milliseconds timeout{30000};
};

} // namespace sion::mcpd::oauth
