// SPDX-License-Identifier: MIT
// Model providers' HTTP: reach checks, keys and rests, one request whole or streamed.
#include "lib/models/wire.hpp"

#include "lib/curl_api.hpp"
#include "lib/json.hpp"
#include "lib/redact.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"
#include "lib/version.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace sion::models {

namespace {

constexpr int64_t k_max_hint_ms = 3'600'000;
constexpr size_t k_max_error_body = size_t{64} << 10;
constexpr size_t k_max_message = 300;
constexpr int64_t k_default_timeout_s = 600;
// Resolving a provider's name, as curl's connect timeout would bound it.
constexpr std::chrono::milliseconds k_resolve_limit{10000};

// --- addresses ------------------------------------------------------------------------------

Status check_address(const std::string& url, const std::string& scheme, const Address& a,
                     Reach reach) {
    if (a.kind == AddressKind::unspecified && reach == Reach::network)
        return make_error(Exit::config, "refusing '%s': %s is no server's address", url.c_str(),
                          a.text.c_str());
    if ((a.kind == AddressKind::private_network || a.kind == AddressKind::unspecified)
        && reach != Reach::network)
        return make_error(Exit::config,
                          "refusing '%s': %s is a private address, which only local: reaches",
                          url.c_str(), a.text.c_str());
    if (a.kind == AddressKind::public_network && scheme == "http")
        return make_error(Exit::config,
                          "refusing '%s': plain http goes only to this machine%s: use https",
                          url.c_str(), reach == Reach::network ? " and its network" : "");
    return {};
}

Status check_destination(const Destination& where, Reach reach) {
    for (const Address& a : where.addresses)
        SION_CHECK(check_address(where.url, where.scheme, a, reach));
    return {};
}

// `url` split as curl reads it, or refused when it is no http or https URL.
Result<Destination> split_base(std::string_view url) {
    SION_CHECK(curl_api());
    auto where = split_url(url);
    if (!where)
        return make_error(Exit::config, "refusing '%s': not an http or https URL",
                          redact_url(url).c_str());
    return where;
}

// --- messages -------------------------------------------------------------------------------

const char* status_words(int status) {
    switch (status) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 402:
        return "Payment Required";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 413:
        return "Content Too Large";
    case 422:
        return "Unprocessable Content";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 529:
        return "Overloaded";
    default:
        return "no message";
    }
}

// One line of printable text, cut at a character boundary.
std::string one_line(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (out.size() >= k_max_message)
            break;
        auto u = static_cast<unsigned char>(c);
        out += u < 0x20 || u == 0x7F ? ' ' : c;
    }
    while (!out.empty() && invalid_utf8_at(out) != std::string::npos)
        out.pop_back();
    size_t first = out.find_first_not_of(' ');
    size_t last = out.find_last_not_of(' ');
    return first == std::string::npos ? std::string() : out.substr(first, last - first + 1);
}

// Whether a header of that name carries a credential: Authorization, x-api-key, api-key,
// x-goog-api-key, x-amz-security-token and their like. Others (Content-Type, Accept, a version, a
// date, a hash) are not secrets, and a message may show what is like them.
bool is_credential_header(std::string_view name) {
    std::string lower = ascii_lower(name);
    for (std::string_view part : {"auth", "key", "token", "secret", "signature", "credential",
                                  "password", "cookie"})
        if (lower.find(part) != std::string::npos)
            return true;
    return false;
}

// What a message must not show: the credentials of the request's headers (a bearer token on its
// own too), and those its body carries.
Redactor redactor_of(const WireRequest& request) {
    std::vector<std::string> out = request.secrets;
    for (const auto& [name, value] : request.headers.entries()) {
        if (!is_credential_header(name))
            continue;
        std::string_view v = value;
        if (v.size() > 7 && (v.substr(0, 7) == "Bearer " || v.substr(0, 7) == "bearer "))
            out.emplace_back(v.substr(7));
        out.emplace_back(v);
    }
    return Redactor(out);
}

int64_t unix_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::chrono::milliseconds timeout_from_environment() {
    const char* text = std::getenv("SION_MODEL_TIMEOUT");
    char* end = nullptr;
    long long seconds = text != nullptr ? std::strtoll(text, &end, 10) : 0;
    if (text == nullptr || *text == '\0' || *end != '\0' || seconds <= 0 || seconds > 86'400)
        seconds = k_default_timeout_s;
    return std::chrono::seconds(seconds);
}

bool is_2xx(int status) {
    return status >= 200 && status < 300;
}

bool is_event_stream(const HttpHeaders& headers) {
    auto type = headers.get("Content-Type");
    return type && type->substr(0, 17) == "text/event-stream";
}

} // namespace

int64_t steady_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

Result<std::string> base_url_from(std::string_view variable, std::string_view fallback,
                                  Reach reach) {
    SION_TRY(auto given, secrets::lookup(variable));
    std::string url = given ? *given : std::string(fallback);
    while (!url.empty() && url.back() == '/')
        url.pop_back();
    SION_CHECK(curl_api());
    auto where = split_url(url);
    if (!where)
        return make_error(Exit::config, "%.*s '%s' is not an http or https URL",
                          static_cast<int>(variable.size()), variable.data(), url.c_str());
    // A host given by number is judged now; a name only once it is resolved, at each call.
    if (auto number = parse_address(where->host))
        SION_CHECK(check_address(url, where->scheme, *number, reach));
    return url;
}

Status check_reach(std::string_view url, Reach reach, const Resolver& resolver) {
    SION_CHECK(split_base(url));
    SION_TRY(Destination where, resolve_url(url, k_resolve_limit, resolver));
    return check_destination(where, reach);
}

// --- keys -----------------------------------------------------------------------------------

KeyRing::KeyRing(std::string variable, std::string_view value) : m_variable(std::move(variable)) {
    while (!value.empty()) {
        size_t comma = value.find(',');
        std::string_view one = value.substr(0, comma);
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
        while (!one.empty() && (one.front() == ' ' || one.front() == '\t'))
            one.remove_prefix(1);
        while (!one.empty() && (one.back() == ' ' || one.back() == '\t'))
            one.remove_suffix(1);
        if (!one.empty())
            m_keys.push_back(Key{std::string(one), 0, std::nullopt});
    }
}

std::vector<size_t> KeyRing::next_call(int64_t now) {
    std::vector<size_t> order;
    if (m_keys.empty())
        return order;
    size_t start = m_start % m_keys.size();
    m_start = start + 1;
    for (size_t k = 0; k < m_keys.size(); ++k) {
        size_t i = (start + k) % m_keys.size();
        if (!resting(i, now))
            order.push_back(i);
    }
    return order;
}

void KeyRing::rest(size_t i, int64_t until, Error why) {
    m_keys[i].resting_until = until;
    m_keys[i].why = std::move(why);
}

bool KeyRing::resting(size_t i, int64_t now) const {
    return m_keys[i].resting_until > now;
}

Error KeyRing::resting_error() const {
    const Key* first = nullptr;
    for (const Key& k : m_keys)
        if (k.why && (first == nullptr || k.resting_until < first->resting_until))
            first = &k;
    std::string what = format("every key in %s is resting", m_variable.c_str());
    if (first == nullptr)
        return Error(Exit::unavailable, what);
    return Error(first->why->exit(), what + " after " + first->why->message());
}

// --- requests -------------------------------------------------------------------------------

Wire::Wire(Reach reach, Clock clock)
    : m_reach(reach), m_clock(std::move(clock)), m_timeout(timeout_from_environment()) {}

Result<WireReply> Wire::send(const WireRequest& request) {
    m_last_status = 0;
    m_last_retry_ms = 0;
    SION_CHECK(split_base(request.url));
    if (!m_client) {
        SION_TRY(HttpClient client, HttpClient::make());
        m_client.emplace(std::move(client));
    }
    HttpRequest http;
    http.method = request.method;
    http.url = request.url;
    http.headers = request.headers;
    if (!http.headers.has("User-Agent"))
        http.headers.add("User-Agent", std::string("sion/") + version());
    http.body = request.body;
    http.timeout = m_timeout;
    http.max_response_size = size_t{64} << 20;
    http.resolver = m_resolver;
    http.go_on = request.go_on;
    // A user behind a proxy reaches providers through it; local: servers are on the network here.
    http.environment_proxy = m_reach == Reach::remote;
    std::optional<Error> refused;
    http.reach = [&](const Destination& where) {
        Status s = check_destination(where, m_reach);
        if (!s)
            refused = s.error();
        return s;
    };

    WireReply reply;
    std::string error_body;
    SseDecoder decoder;
    std::optional<Error> stopped;
    enum class Mode { whole, events, chunks } mode = Mode::whole;
    http.on_headers = [&](const HttpResponse& head) {
        reply.status = head.status;
        reply.headers = head.headers;
        if (is_2xx(head.status) && request.on_event && is_event_stream(head.headers))
            mode = Mode::events;
        else if (is_2xx(head.status) && request.on_chunk && !request.on_event)
            mode = Mode::chunks;
        return true;
    };
    http.on_body = [&](std::string_view chunk) {
        if (!is_2xx(reply.status)) {
            error_body.append(
                chunk.substr(0, k_max_error_body - std::min(k_max_error_body, error_body.size())));
            return true;
        }
        if (mode == Mode::whole) {
            reply.body.append(chunk);
            return true;
        }
        if (mode == Mode::chunks) {
            Status s = request.on_chunk(chunk);
            if (!s)
                stopped = std::move(s).error();
            return !stopped;
        }
        if (Status fed = decoder.feed(chunk); !fed) {
            stopped = Error(Exit::unavailable, "the answer is malformed: " + fed.error().message());
            return false;
        }
        while (auto event = decoder.next()) {
            Status s = request.on_event(*event);
            if (!s) {
                stopped = std::move(s).error();
                return false;
            }
        }
        return true;
    };
    const Redactor redactor = redactor_of(request);
    auto sent = m_client->send(http);
    if (refused)
        return std::move(*refused);
    if (stopped) {
        m_last_status = reply.status;
        return Error(stopped->exit(), redactor.redact(stopped->message()));
    }
    if (!sent) {
        // A malformed proxy variable or an SSL_CERT_FILE that cannot be read (Exit::config) fails
        // every model alike: no other may answer.
        Exit exit = sent.error().exit();
        if (exit != Exit::software && exit != Exit::config)
            exit = Exit::unavailable;
        std::string why = sent.error().message();
        if (is_2xx(reply.status))
            why = "the answer was cut off: " + why;
        return Error(exit, redactor.redact(why));
    }
    m_last_status = sent->status;
    if (!is_2xx(sent->status)) {
        m_last_retry_ms = retry_hint_ms(sent->headers, unix_ms());
        std::string said = provider_message(error_body);
        if (said.empty())
            said = status_words(sent->status);
        return Error(exit_for_http_status(sent->status),
                     redactor.redact(format("HTTP %d: %s", sent->status, said.c_str())));
    }
    reply.status = sent->status;
    reply.streamed = mode != Mode::whole;
    reply.mid_event = mode == Mode::events && decoder.mid_event();
    return reply;
}

void Wire::note_failure(const Error& error) {
    if (m_last_retry_ms > 0 && worth_another_model(error)) {
        m_quiet_until = now() + m_last_retry_ms;
        m_quiet_error = error;
    }
}

Result<Answer>
Wire::with_keys(KeyRing& keys,
                const std::function<Result<Answer>(const std::string& key)>& attempt) {
    if (m_quiet_error && now() < m_quiet_until)
        return *m_quiet_error;
    m_quiet_error.reset();
    if (keys.empty()) {
        auto answer = attempt("");
        if (!answer)
            note_failure(answer.error());
        return answer;
    }
    std::vector<size_t> order = keys.next_call(now());
    if (order.empty())
        return keys.resting_error();
    for (size_t k = 0; k < order.size(); ++k) {
        const std::string& key = keys.key(order[k]);
        auto answer = attempt(key);
        if (answer)
            return answer;
        // What a provider made of its answer after send() (a whole body's error member) has not
        // been through send()'s redaction: the key is taken out of it here.
        answer = Error(answer.error().exit(), Redactor({key}).redact(answer.error().message()));
        int status = m_last_status;
        bool limited = status == 429;
        bool refused = status >= 401 && status <= 403;
        if (keys.size() < 2 || (!limited && !refused)) {
            note_failure(answer.error());
            return answer;
        }
        int64_t rest = limited ? std::max(KeyRing::k_limited_rest_ms, m_last_retry_ms)
                               : KeyRing::k_refused_rest_ms;
        keys.rest(order[k], now() + rest, answer.error());
        if (k + 1 == order.size())
            return answer;
    }
    return keys.resting_error();
}

std::string provider_message(std::string_view body) {
    auto doc = Json::parse(body);
    if (!doc) {
        std::string_view first = body.substr(0, body.find('\n'));
        if (first.empty() || first.front() == '<')
            return {};
        return one_line(first);
    }
    JsonView root = doc->view();
    // A list of errors (Google's older answers) says it in its first.
    if (root.is_array())
        root = root.at(0);
    for (JsonView candidate : {root.get("error").get("message"), root.get("error"),
                               root.get("message"), root.get("Message"), root.get("detail")})
        if (candidate.is_string())
            return one_line(*candidate.as_string());
    return {};
}

int64_t retry_hint_ms(const HttpHeaders& headers, int64_t now_unix_ms) {
    int64_t hint = 0;
    if (auto ms = headers.get("retry-after-ms")) {
        std::string text(*ms);
        char* end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        if (!text.empty() && *end == '\0' && value > 0)
            hint = value >= static_cast<double>(k_max_hint_ms) ? k_max_hint_ms
                                                               : static_cast<int64_t>(value);
    } else if (auto after = headers.get("retry-after")) {
        std::string text(*after);
        bool digits =
            !text.empty() && text.size() <= 9
            && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (digits) {
            hint = std::stoll(text) * 1000;
        } else if (time_t when = curl_api() ? curl().getdate(text.c_str(), nullptr) : -1;
                   when > 0) {
            hint = static_cast<int64_t>(when) * 1000 - now_unix_ms;
        }
    }
    return std::clamp<int64_t>(hint, 0, k_max_hint_ms);
}

// --- what the providers' models share ---------------------------------------------------------

Result<Answer> letting_kept_go(const Wire& wire, bool has_kept,
                               const std::function<Result<Answer>(bool)>& call) {
    auto answer = call(has_kept);
    if (!answer && has_kept && wire.last_status() == 400)
        answer = call(false);
    return answer;
}

Result<Answer> KeyedModel::answer(const Request& request) {
    bool has_kept = keeps_any(request.conversation, m_member, m_origin);
    return m_wire.with_keys(m_keys, [&](const std::string& key) {
        return letting_kept_go(m_wire, has_kept,
                               [&](bool with_kept) { return call(request, key, with_kept); });
    });
}

std::string plain_tool_id(std::string_view id) {
    std::string out;
    for (char c : id.substr(0, 64)) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                  || c == '_' || c == '-';
        out += ok ? c : '_';
    }
    return out.empty() ? std::string("call") : out;
}

std::string env_or(const char* name, std::string fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

Result<std::string> credential(const char* name) {
    SION_TRY(auto value, secrets::lookup(name));
    return value.value_or("");
}

} // namespace sion::models
