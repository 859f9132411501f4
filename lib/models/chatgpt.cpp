// SPDX-License-Identifier: MIT
// ChatGPT sign-in: the issuer's endpoints, the ID token's checks, the sealed tokens and their
// renewal, and the Responses model on the plan.
#include "lib/models/chatgpt.hpp"

#include "lib/crypto.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/models/openai_responses.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace sion::models::chatgpt {

namespace {

constexpr std::string_view k_auth_claim = "https://api.openai.com/auth";
constexpr int64_t k_renew_before_s = 60;

Error refused(const std::string& why) {
    return Error(Exit::no_perm, why);
}

// application/x-www-form-urlencoded, each name and value percent-encoded (RFC 3986).
std::string form(std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
    std::string out;
    for (const auto& [name, value] : fields)
        out += (out.empty() ? "" : "&") + percent_encode(name) + "=" + percent_encode(value);
    return out;
}

Result<Json> json_reply(Wire& wire, WireRequest request, const char* what) {
    auto reply = wire.send(request);
    if (!reply)
        return reply.error().context(what);
    auto doc = Json::parse(reply->body);
    if (!doc || !doc->view().is_object())
        return make_error(Exit::unavailable, "%s: the answer is not a JSON object", what);
    return std::move(*doc);
}

Result<Json> decode_part(std::string_view part, const char* what) {
    auto bytes = base64url_decode(part);
    if (!bytes)
        return make_error(Exit::data, "the ID token's %s is not base64url", what);
    auto doc = Json::parse(*bytes);
    if (!doc || !doc->view().is_object())
        return make_error(Exit::data, "the ID token's %s is not a JSON object", what);
    return std::move(*doc);
}

bool audience_has(JsonView aud, std::string_view client_id) {
    if (auto one = aud.as_string())
        return *one == client_id;
    for (JsonView a : aud)
        if (auto s = a.as_string(); s && *s == client_id)
            return true;
    return false;
}

Status check_signature(std::string_view jwt, JsonView header, JsonView jwks) {
    if (header.string_or("alg", "").value_or("") != "RS256")
        return refused("the ID token is not signed with RS256");
    std::string_view kid = header.string_or("kid", "").value_or("");
    JsonView key;
    for (JsonView k : jwks.get("keys"))
        if (k.string_or("kid", "").value_or("") == kid
            && k.string_or("kty", "").value_or("") == "RSA")
            key = k;
    if (!key.exists())
        return refused("the ID token's key '" + std::string(kid) + "' is not among the issuer's");
    auto n = base64url_decode(key.string_or("n", "").value_or(""));
    auto e = base64url_decode(key.string_or("e", "").value_or(""));
    size_t last_dot = jwt.rfind('.');
    auto signature = base64url_decode(jwt.substr(last_dot + 1));
    if (!n || !e || !signature)
        return refused("the ID token's signature does not verify");
    SION_TRY(bool good, rs256_verify(*n, *e, jwt.substr(0, last_dot), *signature));
    if (!good)
        return refused("the ID token's signature does not verify");
    return {};
}

std::string agents_dir(const std::string& home) {
    return home + "/agents";
}

// An exclusive lock on agents/chatgpt.lock, held while the Fd lives.
Result<Fd> lock_renewals(const std::string& home) {
    std::string path = agents_dir(home) + "/chatgpt.lock";
    Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd)
        return sys_error(Exit::os, errno, "cannot open '%s'", path.c_str());
    while (::flock(fd.get(), LOCK_EX) != 0)
        if (errno != EINTR)
            return sys_error(Exit::os, errno, "cannot lock '%s'", path.c_str());
    return fd;
}

Error not_signed_in() {
    return make_error(Exit::config,
                      "chatgpt: no ChatGPT account is signed in: run 'sion agent chatgpt login'");
}

} // namespace

int64_t unix_now() {
    using namespace std::chrono;
    return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

Result<Endpoints> Endpoints::from_environment() {
    Endpoints e;
    SION_TRY(e.issuer,
             base_url_from("SION_CHATGPT_ISSUER", "https://auth.openai.com", Reach::remote));
    SION_TRY(e.api_base, base_url_from("SION_CHATGPT_BASE_URL",
                                       "https://chatgpt.com/backend-api/codex", Reach::remote));
    return e;
}

// --- what is kept ---------------------------------------------------------------------------

Json Account::to_json() const {
    Json j = Json::object();
    j.set("issuer", std::string_view(issuer));
    j.set("client_id", std::string_view(client_id));
    j.set("id_token", std::string_view(id_token));
    j.set("access_token", std::string_view(access_token));
    j.set("refresh_token", std::string_view(refresh_token));
    j.set("expires_at", expires_at);
    j.set("account_id", std::string_view(account_id));
    j.set("email", std::string_view(email));
    j.set("plan", std::string_view(plan));
    return j;
}

Result<Account> Account::from_json(JsonView j) {
    Account a;
    for (auto [name, field] : {std::pair{"issuer", &a.issuer},
                               {"client_id", &a.client_id},
                               {"id_token", &a.id_token},
                               {"access_token", &a.access_token},
                               {"refresh_token", &a.refresh_token},
                               {"account_id", &a.account_id},
                               {"email", &a.email},
                               {"plan", &a.plan}}) {
        SION_TRY(std::string_view value, j.string_or(name, ""));
        *field = std::string(value);
    }
    SION_TRY(a.expires_at, j.integer_or("expires_at", 0));
    return a;
}

Result<TokenStore> TokenStore::open(const std::string& home, bool create) {
    std::string agents = agents_dir(home);
    if (create && ::mkdir(agents.c_str(), 0700) != 0 && errno != EEXIST)
        return sys_error(Exit::os, errno, "cannot create directory '%s'", agents.c_str());
    return TokenStore(home, agents + "/chatgpt.bin");
}

Result<std::optional<Account>> TokenStore::read() const {
    struct stat st {};

    if (::lstat(m_path.c_str(), &st) != 0 && errno == ENOENT)
        return std::optional<Account>();
    std::string key_path = agents_dir(m_home) + "/secrets.key";
    if (::lstat(key_path.c_str(), &st) != 0)
        return make_error(Exit::data,
                          "cannot read the ChatGPT sign-in '%s': its key file "
                          "secrets.key is missing",
                          m_path.c_str());
    SION_TRY(SealingKey key, SealingKey::from_file(key_path));
    SealedFile file(m_path, std::move(key));
    auto text = file.read();
    if (!text)
        return text.error().context("cannot read the ChatGPT sign-in '" + m_path + "'");
    auto doc = Json::parse(*text);
    wipe(*text);
    if (!doc || !doc->view().is_object())
        return make_error(Exit::data, "cannot read the ChatGPT sign-in '%s': not a JSON object",
                          m_path.c_str());
    auto account = Account::from_json(doc->view());
    if (!account)
        return account.error().context("cannot read the ChatGPT sign-in '" + m_path + "'");
    return std::optional<Account>(std::move(*account));
}

Status TokenStore::write(const Account& account) const {
    SION_TRY(SealingKey key, SealingKey::from_file(agents_dir(m_home) + "/secrets.key"));
    std::string text = account.to_json().dump();
    Status written = SealedFile(m_path, std::move(key)).write(text);
    wipe(text);
    return written;
}

Result<bool> TokenStore::remove() const {
    if (::unlink(m_path.c_str()) == 0)
        return true;
    if (errno == ENOENT)
        return false;
    return sys_error(Exit::os, errno, "cannot remove '%s'", m_path.c_str());
}

// --- the ID token ---------------------------------------------------------------------------

Result<IdClaims> verify_id_token(std::string_view jwt, JsonView jwks, std::string_view issuer,
                                 std::string_view client_id, std::string_view nonce, int64_t now) {
    size_t first = jwt.find('.');
    size_t last = jwt.rfind('.');
    if (first == std::string_view::npos || first == last)
        return make_error(Exit::data, "the ID token is not a JWT");
    SION_TRY(Json header, decode_part(jwt.substr(0, first), "header"));
    SION_TRY(Json claims, decode_part(jwt.substr(first + 1, last - first - 1), "claims"));
    SION_CHECK(check_signature(jwt, header.view(), jwks));
    JsonView c = claims.view();
    std::string_view iss = c.string_or("iss", "").value_or("");
    if (iss != issuer)
        return refused("the ID token's issuer '" + std::string(iss) + "' is not '"
                       + std::string(issuer) + "'");
    if (!audience_has(c.get("aud"), client_id))
        return refused("the ID token is for audience '" + c.get("aud").dump() + "', not '"
                       + std::string(client_id) + "'");
    int64_t exp = c.integer_or("exp", 0).value_or(0);
    if (exp <= now)
        return refused("the ID token has expired");
    if (!nonce.empty() && c.string_or("nonce", "").value_or("") != nonce)
        return refused("the ID token's nonce does not match");
    JsonView auth = c.get(k_auth_claim);
    bool allowed = false;
    for (JsonView s : auth.get("scp"))
        allowed = allowed || (s.as_string() && *s.as_string() == k_use_scope);
    if (!allowed)
        return refused("the plan may not be used by other apps: allow " + std::string(k_use_scope)
                       + " when signing in");
    IdClaims out;
    out.email = std::string(c.string_or("email", "").value_or(""));
    out.account_id = std::string(auth.string_or("chatgpt_account_id", "").value_or(""));
    out.plan = std::string(auth.string_or("chatgpt_plan_type", "").value_or(""));
    out.expires_at = exp;
    if (out.account_id.empty())
        return make_error(Exit::data, "the ID token names no ChatGPT account");
    return out;
}

Result<Pkce> Pkce::make() {
    SION_TRY(std::string bytes, random_bytes(32));
    Pkce p;
    p.verifier = base64url_encode(bytes);
    p.challenge = base64url_encode(sha256(p.verifier));
    return p;
}

// --- the issuer -----------------------------------------------------------------------------

Result<std::string> Issuer::register_client(std::string_view redirect_uri) {
    Json body = Json::object();
    body.set("client_name", k_client_name);
    Json uris = Json::array();
    uris.push(Json::string(redirect_uri));
    body.set("redirect_uris", std::move(uris));
    body.set("token_endpoint_auth_method", "none");
    Json grants = Json::array();
    grants.push(Json::string("authorization_code"));
    grants.push(Json::string("refresh_token"));
    body.set("grant_types", std::move(grants));
    body.set("scope", k_scopes);
    WireRequest w;
    w.url = m_endpoints.issuer + "/oauth/register";
    w.headers.add("Content-Type", "application/json");
    w.body = body.dump();
    SION_TRY(Json reply, json_reply(m_wire, std::move(w), "cannot register with the issuer"));
    auto id = reply.view().string("client_id");
    if (!id || id->empty())
        return make_error(Exit::unavailable, "cannot register with the issuer: no client_id");
    return std::string(*id);
}

std::string Issuer::authorize_url(std::string_view client_id, std::string_view redirect_uri,
                                  const Pkce& pkce, std::string_view state,
                                  std::string_view nonce) const {
    return m_endpoints.issuer + "/oauth/authorize?"
           + form({{"response_type", "code"},
                   {"client_id", client_id},
                   {"redirect_uri", redirect_uri},
                   {"scope", k_scopes},
                   {"code_challenge", pkce.challenge},
                   {"code_challenge_method", "S256"},
                   {"state", state},
                   {"nonce", nonce}});
}

Result<Account> Issuer::exchange_code(std::string_view client_id, std::string_view code,
                                      std::string_view redirect_uri, const Pkce& pkce,
                                      std::string_view nonce) {
    Account account;
    account.issuer = m_endpoints.issuer;
    account.client_id = std::string(client_id);
    return read_tokens(form({{"grant_type", "authorization_code"},
                             {"code", code},
                             {"redirect_uri", redirect_uri},
                             {"client_id", client_id},
                             {"code_verifier", pkce.verifier}}),
                       std::move(account), nonce);
}

Result<Account> Issuer::renew(const Account& account) {
    auto renewed = read_tokens(form({{"grant_type", "refresh_token"},
                                     {"refresh_token", account.refresh_token},
                                     {"client_id", account.client_id}}),
                               account, "");
    if (!renewed)
        return renewed.error().context("cannot renew the ChatGPT sign-in");
    return renewed;
}

Result<Account> Issuer::read_tokens(std::string_view form_body, Account account,
                                    std::string_view nonce) {
    WireRequest w;
    w.url = m_endpoints.issuer + "/oauth/token";
    w.headers.add("Content-Type", "application/x-www-form-urlencoded");
    w.body = std::string(form_body);
    SION_TRY(Json reply, json_reply(m_wire, std::move(w), "the token endpoint"));
    JsonView r = reply.view();
    auto access = r.string("access_token");
    if (!access || access->empty())
        return make_error(Exit::unavailable, "the token endpoint gave no access token");
    account.access_token = std::string(*access);
    if (auto refresh = r.string("refresh_token"); refresh && !refresh->empty())
        account.refresh_token = std::string(*refresh);
    account.expires_at = unix_now() + r.integer_or("expires_in", 3600).value_or(3600);
    auto id_token = r.string("id_token");
    if (!id_token && !nonce.empty())
        return make_error(Exit::unavailable, "the token endpoint gave no ID token");
    if (id_token) {
        WireRequest keys;
        keys.method = "GET";
        keys.url = m_endpoints.issuer + "/.well-known/jwks.json";
        SION_TRY(Json jwks, json_reply(m_wire, std::move(keys), "cannot fetch the issuer's keys"));
        SION_TRY(IdClaims claims, verify_id_token(*id_token, jwks.view(), m_endpoints.issuer,
                                                  account.client_id, nonce, unix_now()));
        account.id_token = std::string(*id_token);
        account.account_id = claims.account_id;
        account.email = claims.email;
        account.plan = claims.plan;
    }
    if (account.refresh_token.empty())
        return make_error(Exit::unavailable, "the token endpoint gave no refresh token");
    return account;
}

// --- the account in use ---------------------------------------------------------------------

namespace {

bool needs_renewal(const Account& a, std::string_view refused_token) {
    return a.expires_at - k_renew_before_s <= unix_now()
           || (!refused_token.empty() && a.access_token == refused_token);
}

} // namespace

Result<Account> current_account(const std::string& home, Issuer& issuer,
                                std::string_view refused_token) {
    SION_TRY(TokenStore store, TokenStore::open(home, false));
    SION_TRY(auto kept, store.read());
    if (!kept)
        return not_signed_in();
    if (!needs_renewal(*kept, refused_token))
        return std::move(*kept);
    SION_TRY(Fd lock, lock_renewals(home));
    // Another session may have renewed it while this one waited.
    SION_TRY(kept, store.read());
    if (!kept)
        return not_signed_in();
    if (!needs_renewal(*kept, refused_token))
        return std::move(*kept);
    SION_TRY(Account renewed, issuer.renew(*kept));
    SION_CHECK(store.write(renewed));
    return renewed;
}

namespace {

HttpHeaders plan_headers(const Account& a) {
    HttpHeaders h;
    h.add("Authorization", "Bearer " + a.access_token);
    h.add("ChatGPT-Account-Id", a.account_id);
    return h;
}

} // namespace

Result<std::vector<std::string>> plan_models(const std::string& home) {
    SION_TRY(Endpoints endpoints, Endpoints::from_environment());
    Issuer issuer(endpoints);
    Wire wire(Reach::remote);
    SION_TRY(Account account, current_account(home, issuer, ""));
    WireRequest w;
    w.method = "GET";
    w.url = endpoints.api_base + "/models";
    w.headers = plan_headers(account);
    auto reply = wire.send(w);
    if (!reply && wire.last_status() == 401) {
        SION_TRY(account, current_account(home, issuer, account.access_token));
        w.headers = plan_headers(account);
        reply = wire.send(w);
    }
    if (!reply)
        return reply.error().context("cannot list the plan's models");
    auto doc = Json::parse(reply->body);
    if (!doc)
        return make_error(Exit::unavailable, "cannot list the plan's models: not JSON");
    std::vector<std::string> out;
    for (JsonView m : doc->view().get("models"))
        if (auto slug = m.string("slug"))
            out.emplace_back(*slug);
    return out;
}

// --- the model ------------------------------------------------------------------------------

namespace {

class ChatgptModel final : public ResponsesModel {
public:
    ChatgptModel(std::string name, std::string model, std::string home, Endpoints endpoints)
        : ResponsesModel(std::move(name), "chatgpt", std::move(model), endpoints.api_base,
                         KeyRing(), false),
          m_home(std::move(home)), m_issuer(std::move(endpoints)) {}

private:
    Result<Answer> call(const Request& request, const std::string& /*key*/,
                        bool with_kept) override {
        SION_TRY(Account account, current_account(m_home, m_issuer, ""));
        auto answer = call_with(request, plan_headers(account), with_kept);
        if (!answer && wire().last_status() == 401) {
            SION_TRY(account, current_account(m_home, m_issuer, account.access_token));
            answer = call_with(request, plan_headers(account), with_kept);
        }
        return answer;
    }

    std::string m_home;
    Issuer m_issuer;
};

} // namespace

Result<std::unique_ptr<Model>> open_chatgpt(const ModelSpec& spec) {
    SION_TRY(std::string home, resolve_home());
    SION_TRY(Endpoints endpoints, Endpoints::from_environment());
    SION_TRY(TokenStore store, TokenStore::open(home, false));
    SION_TRY(auto kept, store.read());
    if (!kept)
        return not_signed_in();
    return std::unique_ptr<Model>(
        new ChatgptModel(spec.name, spec.model, std::move(home), std::move(endpoints)));
}

} // namespace sion::models::chatgpt
