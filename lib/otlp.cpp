// SPDX-License-Identifier: MIT
#include "lib/otlp.hpp"

#include "lib/cli.hpp"
#include "lib/hash.hpp"
#include "lib/text.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

namespace sion::otlp {

namespace {

// Protobuf's wire format, as the encoding guide describes it.
enum Wire : uint32_t { varint_wire = 0, fixed64_wire = 1, bytes_wire = 2 };

void varint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7f) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

void tag(std::string& out, uint32_t field, Wire wire) {
    varint(out, (static_cast<uint64_t>(field) << 3) | wire);
}

void bytes_field(std::string& out, uint32_t field, std::string_view bytes) {
    tag(out, field, bytes_wire);
    varint(out, bytes.size());
    out.append(bytes);
}

void varint_field(std::string& out, uint32_t field, uint64_t v) {
    tag(out, field, varint_wire);
    varint(out, v);
}

void fixed64_field(std::string& out, uint32_t field, uint64_t v) {
    tag(out, field, fixed64_wire);
    for (int i = 0; i < 8; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xff);
}

bool hex_digit(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool hex_id(std::string_view id, size_t digits) {
    if (id.size() != digits)
        return false;
    bool nonzero = false;
    for (char c : id) {
        if (!hex_digit(c))
            return false;
        nonzero = nonzero || c != '0';
    }
    return nonzero;
}

std::string raw(std::string_view hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
        out += static_cast<char>((nibble(hex[i]) << 4) | nibble(hex[i + 1]));
    }
    return out;
}

// SplitMix64's step: ids unique enough where getrandom(2) is refused (a seccomp filter).
uint64_t mixed(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::string random_hex(size_t bytes) {
    static std::atomic<uint64_t> s_drawn{0};
    std::string buf(bytes, '\0');
    while (true) {
        size_t got = 0;
        while (got < bytes) {
            ssize_t n = ::getrandom(buf.data() + got, bytes - got, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += static_cast<size_t>(n);
        }
        // What getrandom(2) did not give (it never fails for so few bytes once the pool is
        // ready, unless it is refused): the clock, the process and a count, mixed.
        for (uint64_t seed =
                 static_cast<uint64_t>(now_ns()) ^ (static_cast<uint64_t>(::getpid()) << 40);
             got < bytes; ++got) {
            uint64_t v = mixed(seed ^ s_drawn.fetch_add(1));
            buf[got] = static_cast<char>(v & 0xff);
        }
        std::string hex = to_hex(buf);
        if (hex.find_first_not_of('0') != std::string::npos)
            return hex;
    }
}

// opentelemetry.proto.common.v1.AnyValue of an attribute's value; false for a value it cannot
// hold (null, an object, an array of other than strings).
bool any_value(std::string& out, JsonView v) {
    if (v.is_string()) {
        bytes_field(out, 1, v.as_string().value_or(""));
    } else if (v.is_bool()) {
        varint_field(out, 2, v.as_bool().value_or(false) ? 1 : 0);
    } else if (auto i = v.as_int(); v.is_number() && i) {
        varint_field(out, 3, static_cast<uint64_t>(*i));
    } else if (v.is_number()) {
        double d = v.as_number().value_or(0);
        uint64_t bits = 0;
        std::memcpy(&bits, &d, sizeof bits);
        fixed64_field(out, 4, bits);
    } else if (v.is_array()) {
        std::string array;
        for (JsonView e : v) {
            if (!e.is_string())
                return false;
            std::string item;
            bytes_field(item, 1, e.as_string().value_or(""));
            bytes_field(array, 1, item);
        }
        bytes_field(out, 5, array);
    } else {
        return false;
    }
    return true;
}

void key_values(std::string& out, uint32_t field, JsonView attributes) {
    for (JsonView a : attributes) {
        std::string value;
        if (!any_value(value, a))
            continue;
        std::string kv;
        bytes_field(kv, 1, a.key());
        bytes_field(kv, 2, value);
        bytes_field(out, field, kv);
    }
}

std::optional<Json> any_json(JsonView v) {
    Json out = Json::object();
    if (v.is_string()) {
        out.set("stringValue", v.as_string().value_or(""));
    } else if (v.is_bool()) {
        out.set("boolValue", v.as_bool().value_or(false));
    } else if (auto i = v.as_int(); v.is_number() && i) {
        out.set("intValue", std::to_string(*i)); // int64: a decimal string
    } else if (v.is_number()) {
        out.set("doubleValue", Json::number(v.as_number().value_or(0)));
    } else if (v.is_array()) {
        Json values = Json::array();
        for (JsonView e : v) {
            if (!e.is_string())
                return std::nullopt;
            Json item = Json::object();
            item.set("stringValue", e.as_string().value_or(""));
            values.push(std::move(item));
        }
        Json array = Json::object();
        array.set("values", std::move(values));
        out.set("arrayValue", std::move(array));
    } else {
        return std::nullopt;
    }
    return out;
}

Json key_values_json(JsonView attributes) {
    Json list = Json::array();
    for (JsonView a : attributes) {
        auto value = any_json(a);
        if (!value)
            continue;
        Json kv = Json::object();
        kv.set("key", a.key());
        kv.set("value", std::move(*value));
        list.push(std::move(kv));
    }
    return list;
}

} // namespace

int64_t now_ns() {
    using namespace std::chrono;
    return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
}

std::string new_trace_id() {
    return random_hex(16);
}

std::string new_span_id() {
    return random_hex(8);
}

std::string traceparent(std::string_view trace_id, std::string_view span_id) {
    return "00-" + std::string(trace_id) + "-" + std::string(span_id) + "-01";
}

std::optional<Link> parse_traceparent(std::string_view header) {
    header = trim_space(header);
    // version "-" trace-id "-" parent-id "-" flags, and for a later version maybe more after.
    if (header.size() < 55 || header[2] != '-' || header[35] != '-' || header[52] != '-')
        return std::nullopt;
    std::string_view version = header.substr(0, 2);
    if (!hex_digit(version[0]) || !hex_digit(version[1]) || version == "ff")
        return std::nullopt;
    if (version == "00" && header.size() != 55)
        return std::nullopt;
    if (header.size() > 55 && header[55] != '-')
        return std::nullopt;
    std::string_view flags = header.substr(53, 2);
    if (!hex_digit(flags[0]) || !hex_digit(flags[1]))
        return std::nullopt;
    Link link{std::string(header.substr(3, 32)), std::string(header.substr(36, 16))};
    if (!hex_id(link.trace_id, 32) || !hex_id(link.span_id, 16))
        return std::nullopt;
    return link;
}

Result<std::vector<std::pair<std::string, std::string>>> parse_pairs(std::string_view text,
                                                                     const char* what) {
    std::vector<std::pair<std::string, std::string>> pairs;
    while (!trim_space(text).empty()) {
        size_t comma = text.find(',');
        std::string_view pair = text.substr(0, comma);
        text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
        if (trim_space(pair).empty())
            continue;
        size_t eq = pair.find('=');
        std::string key = percent_decode(trim_space(pair.substr(0, eq)));
        if (eq == std::string_view::npos || key.empty())
            return make_error(Exit::config, "%s: '%s' is not key=value", what,
                              one_line(trim_space(pair)).c_str());
        pairs.emplace_back(std::move(key), percent_decode(trim_space(pair.substr(eq + 1))));
    }
    return pairs;
}

Result<Export> export_from_environment(std::string_view service, Getenv getenv) {
    auto var = [getenv](const char* name) -> std::string {
        const char* v = getenv(name);
        return v != nullptr ? std::string(trim_space(v)) : std::string();
    };
    Export e;
    std::string exporter = ascii_lower(var("OTEL_TRACES_EXPORTER"));
    if (!exporter.empty() && exporter != "otlp" && exporter != "none")
        return make_error(Exit::config,
                          "OTEL_TRACES_EXPORTER is '%s': sion exports traces with "
                          "otlp, or none",
                          one_line(exporter).c_str());
    SION_TRY(auto resource,
             parse_pairs(var("OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES"));
    for (auto& [key, value] : resource)
        e.resource.set(key, std::string_view(value));
    if (std::string name = var("OTEL_SERVICE_NAME"); !name.empty())
        e.resource.set("service.name", std::string_view(name));
    else if (!e.resource.view().get("service.name").is_string())
        e.resource.set("service.name", service);
    e.capture_content =
        ascii_lower(var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")) == "true";
    if (exporter == "none")
        return e;
    std::string endpoint = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    const char* from = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
    if (endpoint.empty()) {
        endpoint = var("OTEL_EXPORTER_OTLP_ENDPOINT");
        from = "OTEL_EXPORTER_OTLP_ENDPOINT";
        if (!endpoint.empty())
            endpoint += endpoint.back() == '/' ? "v1/traces" : "/v1/traces";
    }
    if (endpoint.empty())
        return e;
    std::string scheme = ascii_lower(endpoint.substr(0, endpoint.find("://")));
    if (endpoint.find("://") == std::string::npos || (scheme != "http" && scheme != "https"))
        return make_error(Exit::config, "%s is '%s': give an http or https URL", from,
                          one_line(var(from)).c_str());
    std::string protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
    if (protocol.empty())
        protocol = var("OTEL_EXPORTER_OTLP_PROTOCOL");
    if (!protocol.empty() && protocol != "http/protobuf" && protocol != "http/json")
        return make_error(Exit::config,
                          "the OTLP protocol is '%s': sion speaks http/protobuf or "
                          "http/json",
                          one_line(protocol).c_str());
    e.json = protocol == "http/json";
    const char* timeout_from = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
    std::string timeout = var(timeout_from);
    if (timeout.empty()) {
        timeout_from = "OTEL_EXPORTER_OTLP_TIMEOUT";
        timeout = var(timeout_from);
    }
    if (!timeout.empty()) {
        auto ms = parse_number(timeout, 1, 600'000);
        if (!ms)
            return make_error(Exit::config,
                              "%s is '%s': give the milliseconds an export may take, 1 to 600000",
                              timeout_from, one_line(timeout).c_str());
        e.timeout_ms = *ms;
    }
    SION_TRY(e.headers,
             parse_pairs(var("OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS"));
    SION_TRY(auto own, parse_pairs(var("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
                                   "OTEL_EXPORTER_OTLP_TRACES_HEADERS"));
    for (auto& header : own) { // not a structured binding: clang 14 cannot capture one
        std::erase_if(e.headers,
                      [&](const auto& h) { return ascii_iequals(h.first, header.first); });
        e.headers.push_back(std::move(header));
    }
    e.endpoint = std::move(endpoint);
    return e;
}

std::string encode_protobuf(const Origin& origin, const std::vector<Span>& spans) {
    std::string scope_spans;
    {
        std::string scope;
        if (!origin.scope_name.empty())
            bytes_field(scope, 1, origin.scope_name);
        if (!origin.scope_version.empty())
            bytes_field(scope, 2, origin.scope_version);
        bytes_field(scope_spans, 1, scope);
    }
    for (const Span& s : spans) {
        std::string span;
        bytes_field(span, 1, raw(s.trace_id));
        bytes_field(span, 2, raw(s.span_id));
        if (!s.parent_id.empty())
            bytes_field(span, 4, raw(s.parent_id));
        bytes_field(span, 5, s.name);
        if (s.kind != Kind::unspecified)
            varint_field(span, 6, static_cast<uint64_t>(s.kind));
        fixed64_field(span, 7, static_cast<uint64_t>(s.start_ns));
        fixed64_field(span, 8, static_cast<uint64_t>(s.end_ns));
        key_values(span, 9, s.attributes.view());
        for (const Link& l : s.links) {
            std::string link;
            bytes_field(link, 1, raw(l.trace_id));
            bytes_field(link, 2, raw(l.span_id));
            bytes_field(span, 13, link);
        }
        if (s.error) {
            std::string status;
            if (!s.status_message.empty())
                bytes_field(status, 2, s.status_message);
            varint_field(status, 3, 2); // STATUS_CODE_ERROR
            bytes_field(span, 15, status);
        }
        bytes_field(scope_spans, 2, span);
    }
    std::string resource;
    key_values(resource, 1, origin.resource.view());
    std::string resource_spans;
    bytes_field(resource_spans, 1, resource);
    bytes_field(resource_spans, 2, scope_spans);
    std::string request;
    bytes_field(request, 1, resource_spans);
    return request;
}

Json encode_json(const Origin& origin, const std::vector<Span>& spans) {
    Json list = Json::array();
    for (const Span& s : spans) {
        Json span = Json::object();
        span.set("traceId", std::string_view(s.trace_id));
        span.set("spanId", std::string_view(s.span_id));
        if (!s.parent_id.empty())
            span.set("parentSpanId", std::string_view(s.parent_id));
        span.set("name", std::string_view(s.name));
        span.set("kind", static_cast<int64_t>(s.kind));
        span.set("startTimeUnixNano", std::to_string(s.start_ns));
        span.set("endTimeUnixNano", std::to_string(s.end_ns));
        span.set("attributes", key_values_json(s.attributes.view()));
        if (!s.links.empty()) {
            Json links = Json::array();
            for (const Link& l : s.links) {
                Json link = Json::object();
                link.set("traceId", std::string_view(l.trace_id));
                link.set("spanId", std::string_view(l.span_id));
                links.push(std::move(link));
            }
            span.set("links", std::move(links));
        }
        Json status = Json::object();
        if (s.error) {
            status.set("code", static_cast<int64_t>(2));
            if (!s.status_message.empty())
                status.set("message", std::string_view(s.status_message));
        }
        span.set("status", std::move(status));
        list.push(std::move(span));
    }
    Json scope = Json::object();
    scope.set("name", std::string_view(origin.scope_name));
    if (!origin.scope_version.empty())
        scope.set("version", std::string_view(origin.scope_version));
    Json scope_spans = Json::object();
    scope_spans.set("scope", std::move(scope));
    scope_spans.set("spans", std::move(list));
    Json scopes = Json::array();
    scopes.push(std::move(scope_spans));
    Json resource = Json::object();
    resource.set("attributes", key_values_json(origin.resource.view()));
    Json rs = Json::object();
    rs.set("resource", std::move(resource));
    rs.set("scopeSpans", std::move(scopes));
    Json all = Json::array();
    all.push(std::move(rs));
    Json request = Json::object();
    request.set("resourceSpans", std::move(all));
    return request;
}

} // namespace sion::otlp
