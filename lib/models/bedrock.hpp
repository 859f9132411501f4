// SPDX-License-Identifier: MIT
// `bedrock:MODEL`: AWS Bedrock's Converse API (POST /model/<model>/converse), answers whole.
//
// MODEL is a model id, an inference profile or an ARN
// ("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0"), sent percent-encoded in the path and
// signed encoded twice, as AWS's SDKs do. The request is the system prompt, the conversation (its
// pictures, calls and results, screenshots among them) and the tools as tool specifications.
// Claude's and Nova's prompts are cached at two points: after the system prompt and at the end of
// the conversation. Claude is told how hard to think as anthropic: is, in the fields Bedrock
// passes on to the model; other models are not asked. What Claude thought comes back signed (or
// redacted), is kept on the assistant's message as {"bedrock": {"by": …, "blocks": [...]}} and
// given back as it came, before the turn's text and calls, to the same model at the same endpoint
// only; thinking that came unsigned is shown but not kept. A request with kept reasoning that is
// refused as malformed (HTTP 400) is sent once more without it.
//
// Where and as whom (read when the model is opened, so a missing credential stops a session
// before it starts, Exit::config):
//   region    AWS_REGION, else AWS_DEFAULT_REGION, else the profile's region, else us-east-1
//   endpoint  AWS_ENDPOINT_URL_BEDROCK_RUNTIME, else https://bedrock-runtime.<region>.amazonaws.com
//   key       AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key, sent as a bearer token; several
//             separated by commas rotate as wire.hpp's KeyRing says), else an access key signed
//             with Signature Version 4: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
//             AWS_SESSION_TOKEN, else the profile's (AWS_PROFILE, else AWS_DEFAULT_PROFILE, else
//             "default") in AWS's own files: AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and
//             AWS_CONFIG_FILE (~/.aws/config).
// Each credential is looked up as secrets.hpp says (the environment's, else the sealed one). A
// profile that signs in another way (single sign-on, a role, a process, a web identity) is not
// followed: the error says to put its credentials in the environment first.
//
// Threads: a BedrockModel is used by one thread at a time.
#pragma once

#include "lib/models/model.hpp"
#include "lib/models/sigv4.hpp"
#include "lib/models/wire.hpp"

#include <ctime>
#include <functional>
#include <string>

namespace sion::models {

// The model families Bedrock serves that take cache points (and, for Claude, thinking).
enum class BedrockFamily { claude, nova, other };

[[nodiscard]] BedrockFamily bedrock_family(std::string_view model);

struct BedrockSettings {
    std::string model;    // as given after "bedrock:"
    std::string region;   // "us-east-1"
    std::string endpoint; // "https://bedrock-runtime.us-east-1.amazonaws.com", no trailing '/'
    KeyRing api_keys;     // AWS_BEARER_TOKEN_BEDROCK's; empty when signing with an access key
    sigv4::Credentials credentials;
    Effort effort;
};

// The settings the environment and AWS's files give `model` (see above).
[[nodiscard]] Result<BedrockSettings> bedrock_settings(std::string model, const Effort& effort);

// The Converse request body for `request`; kept reasoning given back only when `with_kept`.
[[nodiscard]] Json converse_body(const Request& request, const BedrockSettings& settings,
                                 const Origin& origin, bool with_kept);

// The answer in a Converse response body; the blocks to keep marked as `origin`'s; its stopReason
// the Answer's finish_reason (a body names neither model nor answer: those stay ""). A body that
// is not a Converse answer is Exit::unavailable ("the answer is malformed: …"), as a failing model.
[[nodiscard]] Result<Answer> converse_answer(std::string_view body, const Origin& origin);

// A KeyedModel (wire.hpp): its KeyRing is the Bedrock API keys, empty when each call is signed
// with the access key instead; `wall` dates the signatures.
class BedrockModel final : public KeyedModel {
public:
    using WallClock = std::function<std::time_t()>;

    BedrockModel(
        std::string name, BedrockSettings settings, Clock clock = steady_ms,
        WallClock wall = [] { return std::time(nullptr); });

private:
    [[nodiscard]] Result<Answer> call(const Request& request, const std::string& key,
                                      bool with_kept) override;

    BedrockSettings m_settings;
    WallClock m_wall;
};

// open_model()'s row: `bedrock:MODEL`.
[[nodiscard]] Result<std::unique_ptr<Model>> open_bedrock(const ModelSpec& spec);

} // namespace sion::models
