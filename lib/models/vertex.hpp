// SPDX-License-Identifier: MIT
// `vertex:MODEL`: Google Vertex AI, streamed: Gemini (streamGenerateContent, gemini.hpp's body and
// reader) and Claude (streamRawPredict, anthropic.hpp's, with "anthropic_version":
// "vertex-2023-10-16" and no "model"; its prompt cached at a breakpoint on the system prompt and
// one on the conversation's last block). A model whose id starts with "claude" is Claude's.
//
// Where: the project in GOOGLE_CLOUD_PROJECT (else ANTHROPIC_VERTEX_PROJECT_ID), at
// GOOGLE_CLOUD_LOCATION (else CLOUD_ML_REGION, else global), at VERTEX_BASE_URL, else
// https://aiplatform.googleapis.com for global and https://LOCATION-aiplatform.googleapis.com
// otherwise: .../v1/projects/P/locations/L/publishers/{google,anthropic}/models/MODEL:…
//
// As whom, in a project: a token given in GOOGLE_OAUTH_ACCESS_TOKEN (gcloud auth
// print-access-token), or one minted when needed and kept until a minute before it lapses, from
// the credentials file at GOOGLE_APPLICATION_CREDENTIALS, else gcloud's application-default one
// ($CLOUDSDK_CONFIG, by default ~/.config/gcloud, /application_default_credentials.json): a
// service account's key (type "service_account": a JWT signed with its RSA key, RS256, exchanged
// at its token_uri), or a person's own sign-in (type "authorized_user": its refresh token
// exchanged at its token_uri, by default Google's; its quota_project_id sent as
// x-goog-user-project). A token the API refuses (401) is minted again once. Without a project,
// Gemini is reached in express mode (.../v1/publishers/google/models/MODEL:…) with the key in
// GOOGLE_API_KEY (x-goog-api-key; a comma-separated list rotates); Claude only in a project.
// Missing or unreadable credentials stop the session before it starts (Exit::config).
//
// What it thought goes back as gemini.hpp and anthropic.hpp say, only to the same kind (Vertex's
// Gemini or Claude), base URL and model. Threads: a model is used by one thread at a time.
#pragma once

#include "lib/models/model.hpp"
#include "lib/models/wire.hpp"

#include <ctime>

namespace sion::models {

[[nodiscard]] Result<std::unique_ptr<Model>> open_vertex(const ModelSpec& spec);

struct VertexSettings {
    std::string model;
    bool claude = false;
    std::string project;  // "" in express mode
    std::string location; // "global"
    std::string base_url; // no trailing '/'
    std::string token;    // a token given; "" when one is minted or in express mode
    Json credentials;     // the credentials file's, when a token is minted
    std::string credentials_path;
    KeyRing api_keys; // express mode's
};

// The settings the environment gives `model` (see above).
[[nodiscard]] Result<VertexSettings> vertex_settings(std::string model);

// The URL of a streamed answer from `settings`' model.
[[nodiscard]] std::string vertex_url(const VertexSettings& settings);

// The signed JWT a service account's key (the credentials file's JSON) exchanges for a token:
// {"alg":"RS256","typ":"JWT","kid":private_key_id}.{"iss":client_email,"scope":…cloud-platform,
// "aud":token_uri,"iat":now,"exp":now+3600}, RSASSA-PKCS1-v1_5 with SHA-256, each part base64url.
// Exit::config for a key without client_email, token_uri or a private key mbedTLS can read.
[[nodiscard]] Result<std::string> service_account_assertion(JsonView key, std::time_t now);

// Tokens for requests: given, or minted and kept until a minute before they lapse.
class VertexTokens {
public:
    static constexpr int64_t k_margin_ms = 60'000;

    explicit VertexTokens(const VertexSettings& settings) : m_settings(settings) {}

    // A token good for a minute at least, minted through `wire` when the kept one is not.
    [[nodiscard]] Result<std::string> token(Wire& wire);
    // Forgets a kept token the API refused; false when the token was given, not minted.
    bool forget();

private:
    [[nodiscard]] Result<std::string> mint(Wire& wire);

    const VertexSettings& m_settings;
    std::string m_token;
    int64_t m_good_until = 0;
};

} // namespace sion::models
