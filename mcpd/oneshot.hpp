// SPDX-License-Identifier: MIT
// A server started for one piece of work and ended after it, on a loop of its own: what the
// command line's add, review, resources and prompts do. The server is told the client can elicit
// and sample, as a session with a person and sampling would (servers list some tools only to such
// clients), but nobody is asked and nothing sampled: each such request is declined or refused.
// What `work` gets, the Error and the last words are redacted of the server's secrets (its Client
// is open_client()'s).
#pragma once

#include "mcpd/authorize.hpp"
#include "mcpd/client.hpp"
#include "mcpd/config.hpp"

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <functional>
#include <string>
#include <vector>

namespace sion::mcpd {

using Done = std::function<void(Result<Json>)>;
using Work = std::function<void(Client& client, const Connected& connected, Done done)>;

// Starts the server `name` so configured, connects (trying `try_first` first), runs `work`, ends
// the server and returns what `work` gave; `connected` is set once connected. A server over HTTP
// that needs a login is logged in to by `person`, at this terminal. When it fails and `last_words`
// is given, that is set to the last lines a server run here wrote to its standard error
// (mcpd/last_words.hpp), for the operator's terminal only.
[[nodiscard]] Result<Json> with_server(std::string_view name, const ServerConfig& config,
                                       std::string try_first, const Work& work,
                                       Connected* connected, const Person& person,
                                       std::vector<std::string>* last_words = nullptr);

} // namespace sion::mcpd
