// SPDX-License-Identifier: MIT
// DPoP (RFC 9449): the proofs that bind a login's tokens to a key of its own, and the nonces
// servers hand out for them. Errors, secrets and threads: as oauth_types.hpp says.
#pragma once

#include "mcpd/oauth_discovery.hpp"

#include "lib/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::mcpd::oauth {

// Whether the authorization server `m` takes DPoP proofs signed with ES256 (the one algorithm
// sion signs them with): then a login makes a key of its own and binds its tokens to it.
[[nodiscard]] bool offers_dpop(const ServerMetadata& m);

// The DPoP-Nonce values servers gave (RFC 9449 sections 8 and 9), the latest per origin.
class DpopNonces {
public:
    static constexpr size_t k_max_size = 512;

    // Keeps `nonce` for the origin of `url`. False, and nothing kept, for a nonce that is empty,
    // longer than k_max_size or not a token68 (RFC 7235), or a `url` that is not http(s).
    bool keep(std::string_view url, std::string_view nonce);
    // The latest nonce kept for the origin of `url`, or "".
    [[nodiscard]] std::string of(std::string_view url) const;

private:
    std::vector<std::pair<std::string, std::string>> m_nonces; // origin, nonce
};

// What signs the proofs of a login's token requests: its key (PEM, P-256; none: no proofs) and
// the nonces the servers gave. Borrowed.
struct DpopSigner {
    std::string_view key;
    DpopNonces* nonces = nullptr;
};

// A DPoP proof (RFC 9449 section 4.2) of a request by `method` to `url`: a JWT with the header
// typ "dpop+jwt", alg "ES256" and the public jwk of `key_pem`, and the claims jti (fresh), htm,
// htu (`url` without its query and fragment), iat, ath (base64url(SHA-256(access_token)), when
// one is given) and nonce (when one is given). Exit::data for a key or URL that is no such thing.
[[nodiscard]] Result<std::string> dpop_proof(std::string_view key_pem, std::string_view method,
                                             std::string_view url, std::string_view access_token,
                                             std::string_view nonce);

} // namespace sion::mcpd::oauth
