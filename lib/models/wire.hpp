// SPDX-License-Identifier: MIT
// What every HTTP model provider shares: where its base URL may point, its keys and their rests,
// and one request sent (lib/http), whole or as a stream of Server-Sent Events, its failures turned
// into model.hpp's contract.
//
// Failures of send(): a status that is not 2xx is "HTTP 529: <the provider's message>" (the
// message found in the body as providers put it: error.message, message, Message, error, detail;
// else the status's own words), its exit code exit_for_http_status()'s. A provider that cannot be
// reached, that times out (SION_MODEL_TIMEOUT seconds, 600 by default), cuts the connection or
// sends more than the size limit is Exit::unavailable: another model may answer. An error a
// stream's handler returns ends the call with it. Every message is redacted (lib/redact.hpp) of
// the credentials of the request's headers (those named like Authorization, x-api-key, a token, a
// signature) and of WireRequest::secrets: the whole, any 12 of their characters in any case, split
// by white space, or in base64, become "[redacted]". The provider's words reach the session only
// through these messages, so this is where its text is cleaned of them.
//
// Base URLs: https to any public address; http or https to an address of this machine (loopback),
// for servers on it and for tests; private addresses (10/8, 172.16/12, 192.168/16, link-local,
// unique-local, CGNAT) only with Reach::network (`local:`), over http too; 0.0.0.0 and :: never.
// Names are resolved (lib/address.hpp) and every address checked before each request, which then
// goes only to those addresses. With Reach::remote a request goes through the proxy the
// environment names (https_proxy, all_proxy, no_proxy: lib/proxy.hpp), except to this machine:
// the name is still resolved and judged here, but the proxy resolves it again (lib/http.hpp).
// With Reach::network (`local:`) no request goes through a proxy. A malformed proxy variable is
// the request's Exit::config.
//
// Keys (KeyRing): a variable may hold several keys separated by commas. Each call starts with the
// key after the one the last call started with; a key the provider limits (429) rests a minute (or
// as long as its retry hint says, at most an hour), one it refuses (401, 402, 403) an hour, and the
// call goes on at once with the next key. With one key, a limited call is the model's failure.
// When every key rests, a call fails at once with the error that put the first to wake to rest.
// A retry hint (retry-after-ms, else retry-after in seconds or as an HTTP date, at most an hour) on
// a call that failed as the model's failure leaves the model alone until it passes: calls before
// then fail at once with the same error.
//
// Time comes from a Clock so that tests move it instead of sleeping. Threads: a Wire and a KeyRing
// are used by one thread at a time.
#pragma once

#include "lib/http.hpp"
#include "lib/models/model.hpp"
#include "lib/models/sse.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::models {

// Milliseconds of a steady clock.
using Clock = std::function<int64_t()>;
[[nodiscard]] int64_t steady_ms();

// Where a provider's base URL may point (see above).
enum class Reach {
    remote,  // public addresses and this machine's
    network, // those and private networks' (local:)
};

// The base URL a provider uses: `variable`'s value (secrets::lookup: the environment's, else the
// sealed one) or `fallback`, without a trailing slash. Exit::config when it is not an http or
// https URL with a host, or is plain http to an address named by number that `reach` does not
// allow plain: "OPENAI_BASE_URL 'ftp://x' is not an http or https URL".
[[nodiscard]] Result<std::string> base_url_from(std::string_view variable,
                                                std::string_view fallback, Reach reach);

// Whether a request may go to `url` (see above): its host resolved and each address checked.
// Exit::config for an address `reach` does not allow ("refusing 'http://10.0.0.5:8080/v1':
// 10.0.0.5 is a private address, which only local: reaches"), Exit::unavailable for a host that
// cannot be resolved. `resolver` stands in for DNS (tests).
[[nodiscard]] Status check_reach(std::string_view url, Reach reach, const Resolver& resolver = {});

// A provider's keys and their rests.
class KeyRing {
public:
    static constexpr int64_t k_limited_rest_ms = 60'000;
    static constexpr int64_t k_refused_rest_ms = 3'600'000;

    KeyRing() = default; // no keys: calls go without one
    // The keys in `value`, split at commas, blanks around each dropped, empty ones left out.
    KeyRing(std::string variable, std::string_view value);

    [[nodiscard]] const std::string& variable() const { return m_variable; }

    [[nodiscard]] size_t size() const { return m_keys.size(); }

    [[nodiscard]] bool empty() const { return m_keys.empty(); }

    [[nodiscard]] const std::string& key(size_t i) const { return m_keys[i].value; }

    // The keys the next call tries, in order: from the one after where the last call started,
    // round, leaving out those resting at `now`. Empty when every key rests.
    [[nodiscard]] std::vector<size_t> next_call(int64_t now);
    // Key `i` rests until `until`, for `why`.
    void rest(size_t i, int64_t until, Error why);
    // Whether key `i` rests at `now`.
    [[nodiscard]] bool resting(size_t i, int64_t now) const;
    // The error of the key that wakes first (when every key rests).
    [[nodiscard]] Error resting_error() const;

private:
    struct Key {
        std::string value;
        int64_t resting_until = 0;
        std::optional<Error> why;
    };

    std::string m_variable;
    std::vector<Key> m_keys;
    size_t m_start = 0; // where the next call starts
};

struct WireRequest {
    std::string method = "POST";
    std::string url;
    HttpHeaders headers;
    std::string body;
    // Secrets the body carries (a refresh token, a client secret), kept out of messages as the
    // headers' credentials are.
    std::vector<std::string> secrets;
    // When set, the answer is asked for as a stream: a 2xx body of type text/event-stream goes
    // here event by event (and WireReply::streamed is set); any other 2xx body comes whole.
    // Returning an error ends the call with it.
    std::function<Status(const SseEvent&)> on_event;
    // When set (and on_event is not), a 2xx body goes here in chunks as it arrives, for a
    // provider's own framing; returning an error ends the call with it.
    std::function<Status(std::string_view)> on_chunk;
    // The model request's go_on (lib/http.hpp's), if any.
    std::function<bool()> go_on;
};

struct WireReply {
    int status = 0;
    HttpHeaders headers;
    std::string body;       // empty when it was streamed
    bool streamed = false;  // its events went to on_event, or its chunks to on_chunk
    bool mid_event = false; // a stream that ended inside an event
};

class Wire {
public:
    explicit Wire(Reach reach, Clock clock = steady_ms);

    [[nodiscard]] Reach reach() const { return m_reach; }

    // Names are looked up with `resolver` instead of DNS from now on (tests).
    void resolve_with(Resolver resolver) { m_resolver = std::move(resolver); }

    [[nodiscard]] int64_t now() const { return m_clock(); }

    // One request (see above). A 2xx status is a reply.
    [[nodiscard]] Result<WireReply> send(const WireRequest& request);

    // Of the last send(): the HTTP status (0 when none came, 200 for a stream its handler ended)
    // and the provider's retry hint in milliseconds (0 when none).
    [[nodiscard]] int last_status() const { return m_last_status; }

    [[nodiscard]] int64_t last_retry_ms() const { return m_last_retry_ms; }

    // Runs `attempt` with a key of `keys` ("" when it has none) as the rotation says (see above);
    // `attempt` makes one call with it through send() and returns its answer or error, which
    // comes back redacted of that key (lib/redact.hpp) whatever made it.
    [[nodiscard]] Result<Answer>
    with_keys(KeyRing& keys, const std::function<Result<Answer>(const std::string& key)>& attempt);

private:
    void note_failure(const Error& error);

    Reach m_reach;
    Clock m_clock;
    Resolver m_resolver;
    std::optional<HttpClient> m_client;
    std::chrono::milliseconds m_timeout;
    int m_last_status = 0;
    int64_t m_last_retry_ms = 0;
    int64_t m_quiet_until = 0;
    std::optional<Error> m_quiet_error;
};

// A provider's message in an error body, one line of at most 300 bytes; "" when none is found.
[[nodiscard]] std::string provider_message(std::string_view body);

// The retry hint of a response, in milliseconds, at most an hour: retry-after-ms, else
// retry-after (seconds, or an HTTP date after `now_unix_ms`); 0 when there is none.
[[nodiscard]] int64_t retry_hint_ms(const HttpHeaders& headers, int64_t now_unix_ms);

// --- what the providers' models share ---------------------------------------------------------

// One answer of a conversation that may give a provider's reasoning back (`has_kept`):
// `call(true)`, and when the provider refuses that request (400), `call(false)`: reasoning that no
// longer checks (signed under another organization's key, say) is let go rather than failing.
[[nodiscard]] Result<Answer> letting_kept_go(const Wire& wire, bool has_kept,
                                             const std::function<Result<Answer>(bool)>& call);

// A model answered with the keys of one KeyRing (Wire::with_keys), its reasoning kept under
// `member` of the conversation's messages and let go once refused (letting_kept_go): the one
// answer loop of every HTTP provider. A provider says how one call is made; one whose calls go
// without a key (a signed or a minted credential) has an empty KeyRing. `member` must outlive the
// model (a string literal).
class KeyedModel : public Model {
public:
    KeyedModel(std::string name, std::string_view member, Origin origin, KeyRing keys, Reach reach,
               Clock clock = steady_ms)
        : m_name(std::move(name)), m_member(member), m_origin(std::move(origin)),
          m_keys(std::move(keys)), m_wire(reach, std::move(clock)) {}

    [[nodiscard]] const std::string& name() const final { return m_name; }

    [[nodiscard]] Result<Answer> answer(const Request& request) final;

protected:
    // One call with `key` ("" for none), the kept reasoning given back or not.
    [[nodiscard]] virtual Result<Answer> call(const Request& request, const std::string& key,
                                              bool with_kept) = 0;

    [[nodiscard]] const Origin& origin() const { return m_origin; }

    [[nodiscard]] Wire& wire() { return m_wire; }

private:
    std::string m_name;
    std::string_view m_member;
    Origin m_origin;
    KeyRing m_keys;
    Wire m_wire;
};

// `request` sent through `wire` as a stream, its events going to `reader` (a provider's reader:
// on_event(), then finish(); or whole() for a body that came whole), which tells its text as it
// comes to `asked`'s on_text (its public member `on_text`); `asked`'s go_on may stop it.
template <class Reader>
[[nodiscard]] Result<Answer> send_streamed(Wire& wire, WireRequest& request, Reader& reader,
                                           const Request& asked) {
    request.on_event = [&](const SseEvent& e) { return reader.on_event(e); };
    request.go_on = asked.go_on;
    reader.on_text = asked.on_text;
    SION_TRY(WireReply reply, wire.send(request));
    return reply.streamed ? reader.finish() : reader.whole(reply.body);
}

// A tool call's id as providers that take only [a-zA-Z0-9_-]{1,64} want it: cut to 64 bytes,
// any other character made '_' (a Responses id has '|'), "call" for none.
[[nodiscard]] std::string plain_tool_id(std::string_view id);

// The environment's `name`, or `fallback` when it is unset or empty.
[[nodiscard]] std::string env_or(const char* name, std::string fallback);
// The value of `name` (secrets::lookup: the environment's, else the sealed one); "" for none.
[[nodiscard]] Result<std::string> credential(const char* name);

} // namespace sion::models
