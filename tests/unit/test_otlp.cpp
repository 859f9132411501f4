// SPDX-License-Identifier: MIT
// Tests for lib/otlp: ids, traceparent read and written, the variables' key=value lists, and an
// ExportTraceServiceRequest in protobuf (against bytes assembled by hand from trace.proto's field
// numbers) and in the protocol's JSON mapping.
#include "lib/hash.hpp"
#include "lib/otlp.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace sion::otlp {
namespace {

TEST(Otlp, IdsAreRandomHex) {
    std::set<std::string> seen;
    for (int i = 0; i < 100; ++i) {
        std::string t = new_trace_id();
        std::string s = new_span_id();
        ASSERT_EQ(t.size(), 32u);
        ASSERT_EQ(s.size(), 16u);
        EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos);
        seen.insert(t);
    }
    EXPECT_EQ(seen.size(), 100u);
}

TEST(Otlp, Traceparent) {
    std::string t = "4bf92f3577b34da6a3ce929d0e0e4736";
    std::string s = "00f067aa0ba902b7";
    EXPECT_EQ(traceparent(t, s), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    auto back = parse_traceparent(" " + traceparent(t, s) + " ");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->trace_id, t);
    EXPECT_EQ(back->span_id, s);
    EXPECT_TRUE(parse_traceparent("01-" + t + "-" + s + "-00-later"));
    for (const std::string& bad :
         {"00-" + t + "-" + s + "-01-more", "ff-" + t + "-" + s + "-01",
          "00-00000000000000000000000000000000-" + s + "-01", "00-" + t + "-0000000000000000-01",
          "00-" + t + "-" + s + "-0g", "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + s + "-01",
          std::string("00-x"), std::string()})
        EXPECT_FALSE(parse_traceparent(bad)) << bad;
}

TEST(Otlp, Pairs) {
    auto p = parse_pairs(" service.name = sion%20run, deployment.environment=dev,,", "X");
    ASSERT_TRUE(p);
    ASSERT_EQ(p->size(), 2u);
    EXPECT_EQ((*p)[0], (std::pair<std::string, std::string>{"service.name", "sion run"}));
    EXPECT_EQ((*p)[1], (std::pair<std::string, std::string>{"deployment.environment", "dev"}));
    auto bad = parse_pairs("a=1,b", "OTEL_EXPORTER_OTLP_HEADERS");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message(), "OTEL_EXPORTER_OTLP_HEADERS: 'b' is not key=value");
    EXPECT_FALSE(parse_pairs("=x", "X"));
}

std::vector<Span> one(Span s) {
    std::vector<Span> spans;
    spans.push_back(std::move(s));
    return spans;
}

Span small() {
    Span s;
    s.trace_id = "0102030405060708090a0b0c0d0e0f10";
    s.span_id = "1112131415161718";
    s.name = "n";
    s.start_ns = 1;
    s.end_ns = 2;
    s.attributes.set("k", static_cast<int64_t>(7));
    return s;
}

TEST(Otlp, ProtobufAsTraceProtoHasIt) {
    Origin origin;
    origin.resource.set("service.name", "s");
    // Assembled by hand: request{1: resource_spans{1: resource{1: kv{1:"service.name", 2:{1:"s"}}},
    // 2: scope_spans{1: scope{1:"sion"}, 2: span{1: trace, 2: span, 5:"n", 6: 1, 7: 1, 8: 2,
    // 9: kv{1:"k", 2:{3: 7}}}}}}.
    std::string want = "0a5f"
                       "0a15"
                       "0a13"
                       "0a0c"
                       + to_hex("service.name")
                       + "1203"
                         "0a0173"
                         "1246"
                         "0a06"
                         "0a04"
                       + to_hex("sion")
                       + "123c"
                         "0a10"
                         "0102030405060708090a0b0c0d0e0f10"
                         "1208"
                         "1112131415161718"
                         "2a01"
                         "6e"
                         "3001"
                         "39"
                         "0100000000000000"
                         "41"
                         "0200000000000000"
                         "4a07"
                         "0a016b"
                         "1202"
                         "1807";
    EXPECT_EQ(to_hex(encode_protobuf(origin, one(small()))), want);
}

TEST(Otlp, ProtobufCarriesEveryKindOfValueParentsLinksAndErrors) {
    Span s = small();
    s.parent_id = "2122232425262728";
    s.kind = Kind::client;
    s.attributes.set("b", true);
    s.attributes.set("d", Json::number(0.5));
    s.attributes.set("a", Json::strings({"x"}));
    s.attributes.set("skipped", Json::null());
    s.error = true;
    s.status_message = "no";
    s.links.push_back({"3132333435363738393a3b3c3d3e3f40", "4142434445464748"});
    std::string hex = to_hex(encode_protobuf(Origin{}, one(std::move(s))));
    EXPECT_NE(hex.find("2208"
                       "2122232425262728"),
              std::string::npos);                   // parent_span_id
    EXPECT_NE(hex.find("3003"), std::string::npos); // kind CLIENT
    EXPECT_NE(hex.find("0a0162"
                       "1202"
                       "1001"),
              std::string::npos); // b: bool true
    EXPECT_NE(hex.find("0a0164"
                       "1209"
                       "21000000000000e03f"),
              std::string::npos); // d: 0.5
    EXPECT_NE(hex.find("0a0161"
                       "1207"
                       "2a05"
                       "0a03"
                       "0a0178"),
              std::string::npos); // a: ["x"]
    EXPECT_EQ(hex.find(to_hex("skipped")), std::string::npos);
    EXPECT_NE(hex.find("6a1c"
                       "0a10"
                       "3132333435363738393a3b3c3d3e3f40"
                       "1208"
                       "4142434445464748"),
              std::string::npos); // link
    EXPECT_NE(hex.find("7a06"
                       "12026e6f"
                       "1802"),
              std::string::npos); // status ERROR "no"
}

TEST(Otlp, JsonAsTheProtocolMapsIt) {
    Origin origin;
    origin.resource.set("service.name", "s");
    origin.scope_version = "1.0";
    Span s = small();
    s.error = true;
    Json j = encode_json(origin, one(std::move(s)));
    EXPECT_EQ(j.view().dump(),
              R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":)"
              R"({"stringValue":"s"}}]},"scopeSpans":[{"scope":{"name":"sion","version":"1.0"},)"
              R"("spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":)"
              R"("1112131415161718","name":"n","kind":1,"startTimeUnixNano":"1",)"
              R"("endTimeUnixNano":"2","attributes":[{"key":"k","value":{"intValue":"7"}}],)"
              R"("status":{"code":2}}]}]}]})");
}

// A stand-in environment for export_from_environment().
std::map<std::string, std::string> g_env;

const char* fake_getenv(const char* name) {
    auto it = g_env.find(name);
    return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(Otlp, ExportFromTheEnvironment) {
    g_env = {};
    auto none = export_from_environment("sion", fake_getenv);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->endpoint, "");
    EXPECT_EQ(none->resource.view().dump(), R"({"service.name":"sion"})");
    EXPECT_FALSE(none->capture_content);

    g_env = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"},
             {"OTEL_EXPORTER_OTLP_HEADERS", "a=1,Authorization=Basic%20x"},
             {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "authorization=Bearer y"},
             {"OTEL_RESOURCE_ATTRIBUTES", "service.name=mine,team=x"},
             {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE"}};
    auto e = export_from_environment("sion", fake_getenv);
    ASSERT_TRUE(e) << e.error().message();
    EXPECT_EQ(e->endpoint, "http://127.0.0.1:4318/v1/traces");
    EXPECT_FALSE(e->json);
    ASSERT_EQ(e->headers.size(), 2u);
    EXPECT_EQ(e->headers[1], (std::pair<std::string, std::string>{"authorization", "Bearer y"}));
    EXPECT_EQ(e->resource.view().dump(), R"({"service.name":"mine","team":"x"})");
    EXPECT_TRUE(e->capture_content);

    g_env = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example/otlp/"},
             {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t.example/x"},
             {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
             {"OTEL_SERVICE_NAME", "named"},
             {"OTEL_RESOURCE_ATTRIBUTES", "service.name=mine"}};
    e = export_from_environment("sion", fake_getenv);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->endpoint, "https://t.example/x");
    EXPECT_TRUE(e->json);
    EXPECT_EQ(e->resource.view().dump(), R"({"service.name":"named"})");
    g_env.erase("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    EXPECT_EQ(export_from_environment("sion", fake_getenv)->endpoint,
              "https://c.example/otlp/v1/traces");

    g_env = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"}, {"OTEL_TRACES_EXPORTER", "none"}};
    EXPECT_EQ(export_from_environment("sion", fake_getenv)->endpoint, "");
    auto message = [](std::map<std::string, std::string> env) {
        g_env = std::move(env);
        auto r = export_from_environment("sion", fake_getenv);
        return r ? std::string("accepted") : r.error().message();
    };
    EXPECT_EQ(message({{"OTEL_TRACES_EXPORTER", "zipkin"}}),
              "OTEL_TRACES_EXPORTER is 'zipkin': sion exports traces with otlp, or none");
    EXPECT_EQ(message({{"OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"}}),
              "OTEL_EXPORTER_OTLP_ENDPOINT is 'localhost:4318': give an http or https URL");
    EXPECT_EQ(message({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"},
                       {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}}),
              "the OTLP protocol is 'grpc': sion speaks http/protobuf or http/json");
    EXPECT_EQ(message({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"},
                       {"OTEL_EXPORTER_OTLP_HEADERS", "nokey"}}),
              "OTEL_EXPORTER_OTLP_HEADERS: 'nokey' is not key=value");
}

} // namespace
} // namespace sion::otlp
