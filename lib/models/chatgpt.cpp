// SPDX-License-Identifier: MIT
// ChatGPT sign-in: the issuer's endpoints, the ID token's checks, the sealed tokens and their
// renewal, and the Responses model on the plan.
#include "lib/models/chatgpt.hpp"

#include "lib/base64.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/jws.hpp"
#include "lib/models/openai_responses.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <sys/file.h>
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

using Fields = std::vector<std::pair<std::string_view, std::string_view>>;

// application/x-www-form-urlencoded, each name and value percent-encoded (RFC 3986).
std::string form(const Fields& fields) {
    std::string out;
    for (const auto& [name, value] : fields)
        out += (out.empty() ? "" : "&") + percent_encode(name) + "=" + percent_encode(value);
    return out;
}

bool has_word(std::string_view words, std::string_view word) {
    while (!words.empty()) {
        size_t end = words.find(' ');
        if (words.substr(0, end) == word)
            return true;
        words.remove_prefix(end == std::string_view::npos ? words.size() : end + 1);
    }
    return false;
}

Result<Json> json_reply(Wire& wire, const WireRequest& request, const char* what) {
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

// An exclusive lock on agents/chatgpt.lock, held while the Fd lives.
Result<Fd> lock_renewals(const std::string& home) {
    std::string path = home + "/agents/chatgpt.lock";
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
                                       "https://api.openai.com/v1", Reach::remote));
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
    j.set("scope", std::string_view(scope));
    j.set("subject", std::string_view(subject));
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
                               {"scope", &a.scope},
                               {"subject", &a.subject},
                               {"account_id", &a.account_id},
                               {"email", &a.email},
                               {"plan", &a.plan}}) {
        SION_TRY(std::string_view value, j.string_or(name, ""));
        *field = std::string(value);
    }
    SION_TRY(a.expires_at, j.integer_or("expires_at", 0));
    return a;
}

Json SignIn::to_json() const {
    Json j = Json::object();
    j.set("host_id", std::string_view(host_id));
    j.set("issuer", std::string_view(issuer));
    j.set("client_id", std::string_view(client_id));
    if (account)
        j.set("account", account->to_json());
    return j;
}

Result<SignIn> SignIn::from_json(JsonView j) {
    SignIn s;
    for (auto [name, field] : {std::pair{"host_id", &s.host_id},
                               {"issuer", &s.issuer},
                               {"client_id", &s.client_id}}) {
        SION_TRY(std::string_view value, j.string_or(name, ""));
        *field = std::string(value);
    }
    if (j.get("account").is_object()) {
        SION_TRY(Account account, Account::from_json(j.get("account")));
        s.account = std::move(account);
    }
    return s;
}

Result<TokenStore> TokenStore::open(const std::string& home, bool create) {
    SION_TRY(secrets::SealedDocument file,
             secrets::SealedDocument::open(home, "chatgpt.bin", "the ChatGPT sign-in", create));
    return TokenStore(std::move(file));
}

Result<SignIn> TokenStore::read() const {
    SION_TRY(std::string text, m_file.read());
    if (text.empty())
        return SignIn{};
    auto doc = Json::parse(text);
    wipe(text);
    if (!doc || !doc->view().is_object())
        return m_file.unreadable("not a JSON object");
    auto kept = SignIn::from_json(doc->view());
    if (!kept)
        return m_file.unreadable(kept.error().message());
    return std::move(*kept);
}

Status TokenStore::write(const SignIn& kept) const {
    std::string text = kept.to_json().dump();
    Status written = m_file.write(text);
    wipe(text);
    return written;
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
    IdClaims out;
    out.subject = std::string(c.string_or("sub", "").value_or(""));
    out.email = std::string(c.string_or("email", "").value_or(""));
    out.account_id = std::string(auth.string_or("chatgpt_account_id", "").value_or(""));
    out.plan = std::string(auth.string_or("chatgpt_plan_type", "").value_or(""));
    out.expires_at = exp;
    if (out.subject.empty())
        return make_error(Exit::data, "the ID token names no subject");
    return out;
}

Result<std::string> make_host_id() {
    SION_TRY(std::string b, random_bytes(16));
    b[6] = static_cast<char>((b[6] & 0x0f) | 0x40); // version 4
    b[8] = static_cast<char>((b[8] & 0x3f) | 0x80); // the RFC 9562 variant
    std::string out = "urn:uuid:";
    for (size_t i = 0; i < b.size(); ++i) {
        out += format("%02x", static_cast<unsigned char>(b[i]));
        if (i == 3 || i == 5 || i == 7 || i == 9)
            out += '-';
    }
    return out;
}

Result<Callback> read_callback(std::string_view address, std::string_view state,
                               std::string_view issuer, std::string_view client_id) {
    using oauth_loopback::query_value;
    if (!constant_time_equal(query_value(address, "state"), state))
        return refused("the sign-in came back with another state");
    std::string iss = query_value(address, "iss");
    if (!iss.empty() && iss != issuer)
        return refused("the sign-in came back from issuer '" + iss + "', not '"
                       + std::string(issuer) + "'");
    if (std::string error = query_value(address, "error"); !error.empty())
        return refused("the sign-in was refused: " + error);
    Callback cb;
    cb.code = query_value(address, "code");
    if (cb.code.empty())
        return make_error(Exit::data, "the sign-in came back with no code");
    // A registration's first way back names the client OpenAI issued; a later one, if it names
    // one at all, names the same.
    std::string named = query_value(address, "client_id");
    if (client_id.empty() && (named.empty() || named == k_dynamic_client))
        return refused("the sign-in came back with no client id");
    if (!client_id.empty() && !named.empty() && named != client_id)
        return refused("the sign-in came back for client '" + named + "', not '"
                       + std::string(client_id) + "'");
    cb.client_id = client_id.empty() ? named : std::string(client_id);
    return cb;
}

// --- the issuer -----------------------------------------------------------------------------

Result<IssuerMetadata> Issuer::metadata() {
    if (m_metadata)
        return *m_metadata;
    WireRequest w;
    w.method = "GET";
    w.url = m_endpoints.issuer + "/.well-known/openid-configuration";
    const char* what = "cannot read the issuer's OpenID configuration";
    SION_TRY(Json doc, json_reply(m_wire, std::move(w), what));
    JsonView d = doc.view();
    if (d.string_or("issuer", "").value_or("") != m_endpoints.issuer)
        return make_error(Exit::unavailable, "%s: it names another issuer", what);
    IssuerMetadata m;
    for (auto [name, field] : {std::pair{"authorization_endpoint", &m.authorization_endpoint},
                               {"token_endpoint", &m.token_endpoint},
                               {"jwks_uri", &m.jwks_uri},
                               {"revocation_endpoint", &m.revocation_endpoint}}) {
        *field = std::string(d.string_or(name, "").value_or(""));
        if (field->empty() && field != &m.revocation_endpoint)
            return make_error(Exit::unavailable, "%s: it has no %s", what, name);
    }
    m_metadata = m;
    return m;
}

Result<std::string> Issuer::authorize_url(std::string_view client_id, std::string_view host_id,
                                          std::string_view redirect_uri,
                                          const oauth_loopback::Pkce& pkce,
                                          std::string_view nonce) {
    SION_TRY(IssuerMetadata m, metadata());
    bool registering = client_id.empty();
    Fields fields = {{"client_id", registering ? k_dynamic_client : client_id},
                     {"ext_agent_host_id", host_id},
                     {"response_type", "code"},
                     {"redirect_uri", redirect_uri},
                     {"scope", k_scopes},
                     {"resource", k_resource},
                     {"state", pkce.state},
                     {"nonce", nonce},
                     {"code_challenge_method", "S256"},
                     {"code_challenge", pkce.challenge}};
    if (registering)
        fields.emplace_back("agent_name_hint", k_client_name);
    const std::string& at = m.authorization_endpoint;
    return at + (at.find('?') == std::string::npos ? "?" : "&") + form(fields);
}

Result<Account> Issuer::exchange_code(std::string_view client_id, std::string_view code,
                                      std::string_view redirect_uri,
                                      const oauth_loopback::Pkce& pkce, std::string_view nonce) {
    Account account;
    account.issuer = m_endpoints.issuer;
    account.client_id = std::string(client_id);
    return read_tokens(form({{"grant_type", "authorization_code"},
                             {"code", code},
                             {"redirect_uri", redirect_uri},
                             {"client_id", client_id},
                             {"code_verifier", pkce.verifier},
                             {"resource", k_resource}}),
                       std::move(account), nonce, {std::string(code), pkce.verifier});
}

Result<Account> Issuer::renew(const Account& account) {
    auto renewed = read_tokens(form({{"grant_type", "refresh_token"},
                                     {"client_id", account.client_id},
                                     {"refresh_token", account.refresh_token},
                                     {"resource", k_resource}}),
                               account, "", {account.refresh_token});
    if (!renewed)
        return renewed.error().context("cannot renew the ChatGPT sign-in");
    return renewed;
}

Status Issuer::revoke(const Account& account) {
    SION_TRY(IssuerMetadata m, metadata());
    if (m.revocation_endpoint.empty())
        return {};
    WireRequest w;
    w.url = m.revocation_endpoint;
    w.headers.add("Content-Type", "application/x-www-form-urlencoded");
    w.body = form({{"token", account.refresh_token},
                   {"token_type_hint", "refresh_token"},
                   {"client_id", account.client_id}});
    w.secrets = {account.refresh_token};
    auto reply = m_wire.send(w);
    wipe(w.body);
    wipe(w.secrets.front());
    if (!reply)
        return reply.error().context("cannot revoke the ChatGPT sign-in");
    return {};
}

Result<Account> Issuer::read_tokens(std::string form_body, Account account,
                                    std::string_view nonce, std::vector<std::string> secrets) {
    SION_TRY(IssuerMetadata m, metadata());
    WireRequest w;
    w.url = m.token_endpoint;
    w.headers.add("Content-Type", "application/x-www-form-urlencoded");
    w.body = std::move(form_body);
    w.secrets = std::move(secrets);
    auto replied = json_reply(m_wire, w, "the token endpoint");
    wipe(w.body);
    for (std::string& secret : w.secrets)
        wipe(secret);
    SION_TRY(Json reply, std::move(replied));
    JsonView r = reply.view();
    auto access = r.string("access_token");
    if (!access || access->empty())
        return make_error(Exit::unavailable, "the token endpoint gave no access token");
    account.access_token = std::string(*access);
    if (auto refresh = r.string("refresh_token"); refresh && !refresh->empty())
        account.refresh_token = std::string(*refresh);
    account.expires_at = unix_now() + r.integer_or("expires_in", 3600).value_or(3600);
    // The plan is used only as granted: the answer's scopes say so (a renewal may leave them out).
    if (auto granted = r.string("scope"))
        account.scope = std::string(*granted);
    if (!has_word(account.scope, k_use_scope))
        return refused("the plan may not be used by other apps: allow " + std::string(k_use_scope)
                       + " when signing in");
    auto id_token = r.string("id_token");
    if (!id_token && !nonce.empty())
        return make_error(Exit::unavailable, "the token endpoint gave no ID token");
    if (id_token) {
        WireRequest keys;
        keys.method = "GET";
        keys.url = m.jwks_uri;
        SION_TRY(Json jwks, json_reply(m_wire, std::move(keys), "cannot fetch the issuer's keys"));
        SION_TRY(IdClaims claims, verify_id_token(*id_token, jwks.view(), m_endpoints.issuer,
                                                  account.client_id, nonce, unix_now()));
        if (!account.subject.empty() && claims.subject != account.subject)
            return refused("the renewed ID token is for another person");
        account.id_token = std::string(*id_token);
        account.subject = claims.subject;
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
    SION_TRY(SignIn kept, store.read());
    if (!kept.account)
        return not_signed_in();
    if (!needs_renewal(*kept.account, refused_token))
        return std::move(*kept.account);
    SION_TRY(Fd lock, lock_renewals(home));
    // Another session may have renewed it while this one waited.
    SION_TRY(kept, store.read());
    if (!kept.account)
        return not_signed_in();
    if (!needs_renewal(*kept.account, refused_token))
        return std::move(*kept.account);
    SION_TRY(Account renewed, issuer.renew(*kept.account));
    kept.account = renewed;
    SION_CHECK(store.write(kept));
    return renewed;
}

namespace {

HttpHeaders plan_headers(const Account& a) {
    HttpHeaders h;
    h.add("Authorization", "Bearer " + a.access_token);
    if (!a.account_id.empty())
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
        if (auto slug = m.string("slug"); slug && m.string_or("visibility", "").value_or("") == "list")
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
          m_home(std::move(home)), m_issuer(std::move(endpoints)) {
        m_tools_in_input = true;
    }

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
    SION_TRY(SignIn kept, store.read());
    if (!kept.account)
        return not_signed_in();
    return std::unique_ptr<Model>(
        new ChatgptModel(spec.name, spec.model, std::move(home), std::move(endpoints)));
}

} // namespace sion::models::chatgpt
