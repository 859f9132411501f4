// SPDX-License-Identifier: MIT
// Spans as OpenTelemetry's protocol (OTLP) carries them, for the run's trace (issue 24): a span's
// model, W3C trace context (traceparent), the standard variables' formats
// (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS), and an ExportTraceServiceRequest encoded
// both ways the protocol has: protobuf (opentelemetry/proto/collector/trace/v1/trace_service.proto,
// encoded here field by field) and JSON (the protocol's JSON mapping: lowerCamelCase names, trace
// and span ids as hex, 64-bit integers as decimal strings, enums as numbers).
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::otlp {

// opentelemetry.proto.trace.v1.Span.SpanKind.
enum class Kind {
    unspecified = 0,
    internal = 1,
    server = 2,
    client = 3,
    producer = 4,
    consumer = 5
};

// A link to a span of another trace (a subagent's run, linked to its spawn).
struct Link {
    std::string trace_id; // 32 lowercase hex digits
    std::string span_id;  // 16
};

struct Span {
    std::string trace_id;  // 32 lowercase hex digits, not all zero
    std::string span_id;   // 16, not all zero
    std::string parent_id; // 16, or "" for a trace's root
    std::string name;
    Kind kind = Kind::internal;
    int64_t start_ns = 0; // Unix nanoseconds
    int64_t end_ns = 0;
    // An object whose members are strings, booleans, integers, numbers or arrays of strings (other
    // values are left out when encoded).
    Json attributes = Json::object();
    bool error = false;         // status ERROR; otherwise UNSET
    std::string status_message; // with error
    std::vector<Link> links;
};

// The wall clock in Unix nanoseconds, as spans keep times.
[[nodiscard]] int64_t now_ns();

// New random ids (getrandom(2)): 16 and 8 bytes as lowercase hex, never all zero.
[[nodiscard]] std::string new_trace_id();
[[nodiscard]] std::string new_span_id();

// W3C Trace Context's traceparent, version 00, sampled: "00-<trace>-<span>-01".
[[nodiscard]] std::string traceparent(std::string_view trace_id, std::string_view span_id);
// Its trace and span ids, or none for a malformed one (any version's format, as the
// recommendation reads it: 2, 32 and 16 hex digits, ids not all zero, version not ff).
[[nodiscard]] std::optional<Link> parse_traceparent(std::string_view header);

// "key1=value1,key2=value2" with each key and value percent-decoded and trimmed, as
// OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS are written; a pair without '=' or with
// an empty key is Exit::config "OTEL_EXPORTER_OTLP_HEADERS: 'x' is not key=value" (`what` names
// the variable).
[[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>>
parse_pairs(std::string_view text, const char* what);

// What the spans come from: the resource's attributes (service.name, …) and the instrumentation
// scope's name and version.
struct Origin {
    Json resource = Json::object();
    std::string scope_name = "sion";
    std::string scope_version;
};

// Where and how spans are exported, from the environment as OpenTelemetry's SDK specification
// (environment variables, OTLP exporter) reads it:
// - OTEL_TRACES_EXPORTER: "otlp" (the default) or "none"; another is Exit::config.
// - OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as it is; else OTEL_EXPORTER_OTLP_ENDPOINT with
//   "v1/traces" appended to its path (a '/' put between when it has none). Neither set: no export.
//   An endpoint that is not an http or https URL is Exit::config.
// - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" (the
//   default) or "http/json"; "grpc" and others are Exit::config (sion speaks OTLP over HTTP).
// - OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS (its keys win).
// - OTEL_RESOURCE_ATTRIBUTES, with OTEL_SERVICE_NAME as service.name when set, else the
//   attributes' own, else `service`.
// - OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT: how long one export may
//   take, in milliseconds (10000 by default); one that is not a whole number from 1 to 600000 is
//   Exit::config.
// - OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: prompts, completions and tools' inputs
//   and results may go in spans (false, the default: they never do).
struct Export {
    std::string endpoint; // "" when spans are not exported (they are still kept)
    bool json = false;    // http/json rather than http/protobuf
    std::vector<std::pair<std::string, std::string>> headers;
    Json resource = Json::object();
    int64_t timeout_ms = 10000;
    bool capture_content = false;
};

// `getenv` reads a variable ("" or nullptr when unset).
using Getenv = const char* (*)(const char*);
[[nodiscard]] Result<Export> export_from_environment(std::string_view service, Getenv getenv);

// An ExportTraceServiceRequest of one ResourceSpans holding one ScopeSpans with `spans`.
[[nodiscard]] std::string encode_protobuf(const Origin& origin, const std::vector<Span>& spans);
[[nodiscard]] Json encode_json(const Origin& origin, const std::vector<Span>& spans);

} // namespace sion::otlp
