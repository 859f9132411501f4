// SPDX-License-Identifier: MIT
// DPoP (RFC 9449): the proofs that bind a login's tokens to a key of its own, and the nonces
// servers hand out for them.
#include "mcpd/oauth_dpop.hpp"

#include "mcpd/oauth_url.hpp"
#include "mcpd/oauth_wire.hpp"

#include "lib/base64.hpp"
#include "lib/hash.hpp"
#include "lib/jws.hpp"
#include "lib/secret_bytes.hpp"

namespace sion::mcpd::oauth {

namespace {

constexpr size_t k_jti_bytes = 16;

// RFC 7235's token68: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
bool is_token68(std::string_view s) {
    size_t end = s.find_last_not_of('=');
    if (end == std::string_view::npos)
        return false;
    for (char c : s.substr(0, end + 1)) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                  || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
        if (!ok)
            return false;
    }
    return true;
}

std::string origin_of(std::string_view url) {
    auto parsed = parse_url(url);
    return parsed ? parsed->origin() : std::string();
}

} // namespace

bool offers_dpop(const ServerMetadata& m) {
    return contains(m.dpop_signing_alg_values_supported, "ES256");
}

bool DpopNonces::keep(std::string_view url, std::string_view nonce) {
    std::string origin = origin_of(url);
    if (origin.empty() || nonce.size() > k_max_size || !is_token68(nonce))
        return false;
    for (auto& [at, value] : m_nonces)
        if (at == origin) {
            value = std::string(nonce);
            return true;
        }
    m_nonces.emplace_back(std::move(origin), std::string(nonce));
    return true;
}

std::string DpopNonces::of(std::string_view url) const {
    std::string origin = origin_of(url);
    for (const auto& [at, value] : m_nonces)
        if (at == origin)
            return value;
    return {};
}

Result<std::string> dpop_proof(std::string_view key_pem, std::string_view method,
                               std::string_view url, std::string_view access_token,
                               std::string_view nonce) {
    SION_TRY(Url target, parse_url(url));
    SION_TRY(EcPoint key, es256_public(key_pem));
    SION_TRY(Json jwk, Json::parse(ec_jwk(key)));
    SION_TRY(std::string jti, random_bytes(k_jti_bytes));
    Json header = Json::object();
    header.set("typ", "dpop+jwt").set("alg", "ES256").set("jwk", std::move(jwk));
    Json claims = Json::object();
    // htu: the URL without query and fragment (section 4.2); parse_url keeps neither in these.
    claims.set("jti", base64url_encode(jti))
        .set("htm", method)
        .set("htu", target.origin() + target.path)
        .set("iat", now_s());
    if (!access_token.empty())
        claims.set("ath", base64url_encode(sha256(access_token)));
    if (!nonce.empty())
        claims.set("nonce", nonce);
    std::string signing_input = jwt_part(header) + "." + jwt_part(claims);
    auto signature = es256_sign(key_pem, signing_input);
    if (!signature)
        return signature.error().context("cannot sign a DPoP proof");
    return signing_input + "." + base64url_encode(*signature);
}

} // namespace sion::mcpd::oauth
