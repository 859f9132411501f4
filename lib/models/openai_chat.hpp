// SPDX-License-Identifier: MIT
// OpenAI's chat completions (POST {base}/chat/completions), streamed, and the providers that speak
// it, each with its key variable, base URL variable and default base URL:
//
//   openai:      OPENAI_API_KEY (if it needs one), OPENAI_BASE_URL, https://api.openai.com/v1
//   local:       SION_LOCAL_MODEL_KEY (if it needs one), SION_LOCAL_MODEL_URL,
//                http://127.0.0.1:11434/v1 (Ollama's); private addresses reached (wire.hpp)
//   azure:       AZURE_OPENAI_API_KEY (sent as api-key), AZURE_OPENAI_BASE_URL, else
//                AZURE_OPENAI_ENDPOINT + /openai/v1 (the v1 API; the model is the deployment)
//   openrouter deepseek moonshot xai groq together fireworks mistral cerebras:
//                <NAME>_API_KEY, <NAME>_BASE_URL, each provider's documented address
//
// Keys go as "Authorization: Bearer" (azure: api-key); a comma-separated list rotates (wire.hpp).
// A level of effort is reasoning_effort (max is xhigh); a budget is not taken. The answer's room is
// max_completion_tokens (openai, azure) or max_tokens (the others).
//
// What it thought: reasoning text a server returns (reasoning_content, or reasoning) is
// Answer::reasoning, and is kept under the name it came by (member "chat": {"by": Origin,
// "reasoning_content": "…"}) and given back on its assistant's message within the task it was for
// (the messages after the person's last), only to the same kind, base URL and model, as servers
// that think between tool calls ask. The session's note (model.hpp) is not the person's: after a
// call's result it is sent as the end of that result's text, after an empty line, since a user
// message there would end the task for the server. A request with kept reasoning refused with 400 is sent once
// more without it. Mistral's tool call ids are made its nine letters and digits
// (one that is so already, as Mistral's own are, stays as it came).
#pragma once

#include "lib/models/model.hpp"

namespace sion::models {

[[nodiscard]] Result<std::unique_ptr<Model>> open_chat(const ModelSpec& spec);

} // namespace sion::models
