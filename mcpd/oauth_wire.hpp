// SPDX-License-Identifier: MIT
// How the OAuth files send their requests: JSON documents fetched, forms posted, answers read.
// Internal to mcpd/oauth*.cpp; its errors and secrets keep the rules of oauth_types.hpp.
#pragma once

#include "mcpd/oauth_client.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_dpop.hpp"
#include "mcpd/oauth_types.hpp"
#include "mcpd/oauth_url.hpp"

#include "lib/http.hpp"
#include "lib/json.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::mcpd::oauth {

// application/x-www-form-urlencoded fields, in order.
using Form = std::vector<std::pair<std::string, std::string>>;

[[nodiscard]] std::string form_encode(const Form& form);
// The fields of a query or form body, decoded ('+' as a space); a malformed escape is kept as it is.
[[nodiscard]] Form form_decode(std::string_view text);
// The first value of `name` in `form`, or "".
[[nodiscard]] std::string form_value(const Form& form, std::string_view name);

// GET `url` (checked against `server` first) for a JSON object. A status other than 200 comes
// back as the status with an empty Json; a 200 that is no JSON object is Exit::data naming `what`.
struct Fetched {
    int status = 0;
    Json doc;
};
[[nodiscard]] Result<Fetched> get_json(const Url& server, const std::string& url, const char* what,
                                       const Settings& settings);

// POSTs `form` to the token endpoint `url` with the client authentication in `headers`, and reads
// the tokens of a 200, or the server's error (Exit::no_perm, "the token endpoint 'X' refused the
// request: invalid_grant (the code expired)"). With `dpop.key`, each POST carries a proof, and a
// use_dpop_nonce refusal is answered once with its nonce (oauth_client.hpp's Tokens). The token
// must be a Bearer one (or DPoP, when proofs were sent) unless `any_type` (a token exchange's
// answer, whose type is "N_A").
[[nodiscard]] Result<Tokens> post_token(const Url& server, const std::string& url, const Form& form,
                                        const HttpHeaders& headers, const Settings& settings,
                                        DpopSigner dpop = {}, bool any_type = false);

// A JWT's header or claims: base64url of the JSON text.
[[nodiscard]] std::string jwt_part(const Json& json);

// The words of `a`, then those of `b` not among them, space-separated, each once.
[[nodiscard]] std::string words_union(std::string_view a, std::string_view b);

// Adds the client's authentication to a token or revocation request: client_secret_basic in
// `headers`, client_secret_post or none (client_id) in `form`.
void authenticate(const std::string& method, const std::string& client_id,
                  const std::string& secret, Form& form, HttpHeaders& headers);

// How a client authenticates with its secret where the server `m` takes it: client_secret_basic
// where it says so or says nothing (RFC 8414's default), else client_secret_post.
[[nodiscard]] std::string secret_method(const ServerMetadata& m);

// The strings of an array member (non-strings skipped); none when it is absent.
[[nodiscard]] std::vector<std::string> strings_of(JsonView object, std::string_view member);

// Whether `list` holds `item`.
[[nodiscard]] bool contains(const std::vector<std::string>& list, std::string_view item);

// `url` without its trailing slashes (issuers and resources compare so).
[[nodiscard]] std::string_view trimmed(std::string_view url);

// Seconds since the epoch.
[[nodiscard]] int64_t now_s();

} // namespace sion::mcpd::oauth
