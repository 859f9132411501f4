// SPDX-License-Identifier: MIT
// Vertex AI: where a model is, the token a request carries (given, or minted from a service
// account's RS256 JWT or a person's refresh token), and Gemini's or Claude's wire format on it.
#include "lib/models/vertex.hpp"

#include "lib/base64.hpp"
#include "lib/fd.hpp"
#include "lib/hash.hpp"
#include "lib/models/anthropic.hpp"
#include "lib/models/gemini.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <mbedtls/pk.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace sion::models {

namespace {

constexpr const char* k_anthropic_version = "vertex-2023-10-16";
constexpr const char* k_scope = "https://www.googleapis.com/auth/cloud-platform";
constexpr const char* k_google_token_uri = "https://oauth2.googleapis.com/token";
constexpr int64_t k_assertion_seconds = 3600;
constexpr size_t k_max_credentials = size_t{1} << 20;

// The credentials file at `path`, checked for what minting a token needs.
Result<Json> read_credentials(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return sys_error(Exit::config, errno, "cannot read Google credentials '%s'", path.c_str());
    auto text = read_all(fd.get(), k_max_credentials);
    if (!text)
        return Error(Exit::config,
                     "cannot read Google credentials '" + path + "': " + text.error().message());
    auto doc = Json::parse(*text);
    wipe(*text);
    if (!doc || !doc->view().is_object())
        return make_error(Exit::config, "Google credentials '%s' are not a JSON object",
                          path.c_str());
    std::string_view type = doc->view().string_or("type", "").value_or("");
    const char* needs[] = {"client_email", "private_key"};
    const char* user_needs[] = {"client_id", "client_secret", "refresh_token"};
    if (type == "service_account") {
        for (const char* m : needs)
            if (!doc->get(m).is_string())
                return make_error(Exit::config, "Google credentials '%s' have no %s", path.c_str(),
                                  m);
    } else if (type == "authorized_user") {
        for (const char* m : user_needs)
            if (!doc->get(m).is_string())
                return make_error(Exit::config, "Google credentials '%s' have no %s", path.c_str(),
                                  m);
    } else {
        return make_error(Exit::config,
                          "Google credentials '%s' are of type '%.*s': sion mints tokens from "
                          "service_account and authorized_user ones",
                          path.c_str(), static_cast<int>(type.size()), type.data());
    }
    return std::move(*doc);
}

// application/x-www-form-urlencoded, as a token endpoint takes it.
std::string form(std::initializer_list<std::pair<const char*, std::string_view>> fields) {
    std::string out;
    for (const auto& [name, value] : fields) {
        if (!out.empty())
            out += '&';
        out += name;
        out += '=';
        out += percent_encode(value);
    }
    return out;
}

// An mbedTLS key, freed with it.
class PrivateKey {
public:
    PrivateKey() { mbedtls_pk_init(&m_pk); }

    PrivateKey(const PrivateKey&) = delete;
    PrivateKey& operator=(const PrivateKey&) = delete;

    ~PrivateKey() { mbedtls_pk_free(&m_pk); }

    mbedtls_pk_context* get() { return &m_pk; }

private:
    mbedtls_pk_context m_pk;
};

// mbedTLS's random source for RSA blinding: the kernel's, through lib/secret_bytes.
int random_source(void* /*unused*/, unsigned char* out, size_t size) noexcept {
    return fill_random(out, size) ? 0 : -1;
}

// RSASSA-PKCS1-v1_5 with SHA-256 of `data` under the PEM key `pem`.
Result<std::string> rs256(std::string_view pem, std::string_view data) {
    PrivateKey key;
    std::string text(pem); // mbedTLS wants the PEM's terminating NUL counted
    int rc = mbedtls_pk_parse_key(key.get(), reinterpret_cast<const unsigned char*>(text.c_str()),
                                  text.size() + 1, nullptr, 0);
    wipe(text);
    if (rc != 0 || mbedtls_pk_get_type(key.get()) != MBEDTLS_PK_RSA)
        return make_error(Exit::config,
                          "the service account's private key is not an RSA key "
                          "mbedTLS can read (error -0x%04x)",
                          static_cast<unsigned>(-rc));
    std::string digest = sha256(data);
    std::string signature(MBEDTLS_PK_SIGNATURE_MAX_SIZE, '\0');
    size_t size = 0;
    rc = mbedtls_pk_sign(key.get(), MBEDTLS_MD_SHA256,
                         reinterpret_cast<const unsigned char*>(digest.data()), digest.size(),
                         reinterpret_cast<unsigned char*>(signature.data()), &size, random_source,
                         nullptr);
    if (rc != 0)
        return make_error(Exit::software,
                          "cannot sign with the service account's key (error -0x%04x)",
                          static_cast<unsigned>(-rc));
    signature.resize(size);
    return signature;
}

bool is_claude(std::string_view model) {
    return model.substr(0, 6) == "claude";
}

} // namespace

Result<std::string> service_account_assertion(JsonView key, std::time_t now) {
    auto email = key.string("client_email");
    auto pem = key.string("private_key");
    if (!email || !pem)
        return make_error(Exit::config,
                          "the service account's key has no client_email or private_key");
    Json header = Json::object();
    header.set("alg", "RS256");
    header.set("typ", "JWT");
    if (auto id = key.string("private_key_id"))
        header.set("kid", *id);
    Json claims = Json::object();
    claims.set("iss", *email);
    claims.set("scope", k_scope);
    claims.set("aud", key.string_or("token_uri", k_google_token_uri).value_or(k_google_token_uri));
    claims.set("iat", static_cast<int64_t>(now));
    claims.set("exp", static_cast<int64_t>(now) + k_assertion_seconds);
    std::string signing_input =
        base64url_encode(header.dump()) + "." + base64url_encode(claims.dump());
    SION_TRY(std::string signature, rs256(*pem, signing_input));
    return signing_input + "." + base64url_encode(signature);
}

Result<VertexSettings> vertex_settings(std::string model) {
    VertexSettings s;
    s.claude = is_claude(model);
    s.model = std::move(model);
    s.project = env_or("GOOGLE_CLOUD_PROJECT", env_or("ANTHROPIC_VERTEX_PROJECT_ID", ""));
    s.location = env_or("GOOGLE_CLOUD_LOCATION", env_or("CLOUD_ML_REGION", "global"));
    std::string host = s.location == "global"
                           ? "https://aiplatform.googleapis.com"
                           : "https://" + s.location + "-aiplatform.googleapis.com";
    SION_TRY(s.base_url, base_url_from("VERTEX_BASE_URL", host, Reach::remote));
    if (s.project.empty()) {
        if (s.claude)
            return make_error(Exit::config,
                              "vertex:%s needs a project: set GOOGLE_CLOUD_PROJECT "
                              "(Claude is reached on Vertex AI only in a project)",
                              s.model.c_str());
        SION_TRY(std::string keys, credential("GOOGLE_API_KEY"));
        s.api_keys = KeyRing("GOOGLE_API_KEY", keys);
        if (s.api_keys.empty())
            return make_error(Exit::config,
                              "vertex:%s needs a project (GOOGLE_CLOUD_PROJECT) or, for express "
                              "mode, a key in GOOGLE_API_KEY",
                              s.model.c_str());
        return s;
    }
    SION_TRY(s.token, credential("GOOGLE_OAUTH_ACCESS_TOKEN"));
    if (!s.token.empty())
        return s;
    std::string gcloud = env_or("CLOUDSDK_CONFIG", env_or("HOME", "") + "/.config/gcloud");
    s.credentials_path =
        env_or("GOOGLE_APPLICATION_CREDENTIALS", gcloud + "/application_default_credentials.json");
    if (std::getenv("GOOGLE_APPLICATION_CREDENTIALS") == nullptr
        && ::access(s.credentials_path.c_str(), F_OK) != 0)
        return make_error(Exit::config,
                          "vertex:%s needs a token: set GOOGLE_OAUTH_ACCESS_TOKEN or "
                          "GOOGLE_APPLICATION_CREDENTIALS, or run 'gcloud auth "
                          "application-default login'",
                          s.model.c_str());
    SION_TRY(s.credentials, read_credentials(s.credentials_path));
    return s;
}

std::string vertex_url(const VertexSettings& s) {
    std::string publisher = s.claude ? "anthropic" : "google";
    std::string method = s.claude ? ":streamRawPredict" : ":streamGenerateContent?alt=sse";
    std::string where =
        s.project.empty() ? std::string() : "/projects/" + s.project + "/locations/" + s.location;
    return s.base_url + "/v1" + where + "/publishers/" + publisher + "/models/" + s.model + method;
}

Result<std::string> VertexTokens::token(Wire& wire) {
    if (!m_settings.token.empty())
        return m_settings.token;
    if (m_token.empty() || wire.now() >= m_good_until) {
        SION_TRY(m_token, mint(wire));
    }
    return m_token;
}

bool VertexTokens::forget() {
    if (m_token.empty())
        return false;
    wipe(m_token);
    return true;
}

Result<std::string> VertexTokens::mint(Wire& wire) {
    JsonView c = m_settings.credentials;
    std::string_view uri =
        c.string_or("token_uri", k_google_token_uri).value_or(k_google_token_uri);
    WireRequest w;
    w.url = std::string(uri);
    w.headers.add("Content-Type", "application/x-www-form-urlencoded");
    w.headers.add("Accept", "application/json");
    if (c.string_or("type", "").value_or("") == "service_account") {
        SION_TRY(std::string assertion, service_account_assertion(c, std::time(nullptr)));
        w.body = form({{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
                       {"assertion", assertion}});
        w.secrets = {assertion};
        wipe(assertion);
    } else {
        w.body = form({{"grant_type", "refresh_token"},
                       {"client_id", c.string_or("client_id", "").value_or("")},
                       {"client_secret", c.string_or("client_secret", "").value_or("")},
                       {"refresh_token", c.string_or("refresh_token", "").value_or("")}});
        w.secrets = {std::string(c.string_or("client_secret", "").value_or("")),
                     std::string(c.string_or("refresh_token", "").value_or(""))};
    }
    std::string what = format("cannot get a token for Vertex AI from '%s' with '%s'",
                              redact_url(uri).c_str(), m_settings.credentials_path.c_str());
    int64_t asked = wire.now();
    auto reply = wire.send(w);
    wipe(w.body);
    for (std::string& secret : w.secrets)
        wipe(secret);
    if (!reply)
        return reply.error().context(what);
    auto doc = Json::parse(reply->body);
    std::optional<std::string_view> token;
    if (doc)
        token = doc->view().string("access_token").value_or("");
    if (!token || token->empty())
        return Error(Exit::unavailable, what + ": the answer has no access_token");
    int64_t lasts = doc->view().integer_or("expires_in", 3600).value_or(3600);
    m_good_until = asked + lasts * 1000 - k_margin_ms;
    return std::string(*token);
}

namespace {

// Its KeyRing is express mode's keys, empty in a project, where each call carries a token.
class VertexModel final : public KeyedModel {
public:
    VertexModel(std::string name, VertexSettings settings)
        : KeyedModel(std::move(name), settings.claude ? "anthropic" : "gemini",
                     {settings.claude ? "vertex-claude" : "vertex-gemini", settings.base_url,
                      settings.model},
                     std::move(settings.api_keys), Reach::remote),
          m_settings(std::move(settings)), m_tokens(m_settings) {}

private:
    Result<Answer> call(const Request& request, const std::string& key, bool with_kept) override {
        auto answer = call_once(request, key, with_kept);
        // A minted token the API refuses is minted again, once.
        if (!answer && wire().last_status() == 401 && key.empty() && m_tokens.forget())
            answer = call_once(request, key, with_kept);
        return answer;
    }

    Result<Answer> call_once(const Request& request, const std::string& key, bool with_kept) {
        SION_CHECK(m_settings.claude ? messages_api_takes_pictures(request.conversation)
                                     : gemini_takes_pictures(request.conversation));
        WireRequest w;
        w.url = vertex_url(m_settings);
        if (!key.empty()) {
            w.headers.add("x-goog-api-key", key);
        } else {
            SION_TRY(std::string token, m_tokens.token(wire()));
            w.headers.add("Authorization", "Bearer " + token);
            if (auto quota = m_settings.credentials.view().string("quota_project_id"))
                w.headers.add("x-goog-user-project", std::string(*quota));
        }
        w.headers.add("Content-Type", "application/json");
        w.headers.add("Accept", "text/event-stream");
        if (m_settings.claude)
            return claude(request, w, with_kept);
        w.body = gemini_body(request, effort(), thinking_room(), origin(), with_kept).dump();
        GeminiReader reader(origin());
        return send_streamed(wire(), w, reader, request);
    }

    // Anthropic's body, Vertex AI's version in it, cached at two breakpoints: the system prompt
    // and the conversation's last block (the one on the tools is taken off).
    Result<Answer> claude(const Request& request, WireRequest& w, bool with_kept) {
        Json body = anthropic_body(request, effort(), thinking_room(), origin(), with_kept);
        // Replaced where they are, before the conversation, so that each call starts the same.
        if (JsonView tools = body.get("tools"); tools.exists()) {
            Json plain = Json::array();
            for (JsonView tool : tools) {
                Json t = Json::copy_of(tool);
                (void)t.take("cache_control");
                plain.push(std::move(t));
            }
            body.set("tools", std::move(plain));
        }
        body.set("anthropic_version", k_anthropic_version);
        body.set("stream", true);
        w.body = body.dump();
        AnthropicReader reader(origin());
        return send_streamed(wire(), w, reader, request);
    }

    VertexSettings m_settings;
    VertexTokens m_tokens;
};

} // namespace

Result<std::unique_ptr<Model>> open_vertex(const ModelSpec& spec) {
    SION_TRY(VertexSettings settings, vertex_settings(spec.model));
    return std::unique_ptr<Model>(new VertexModel(spec.name, std::move(settings)));
}

} // namespace sion::models
