// SPDX-License-Identifier: MIT
#include "session/trace.hpp"

#include "lib/text.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <utility>

namespace sion::session {

Trace::Trace() : m_id(otlp::new_trace_id()), m_root(otlp::new_span_id()) {}

void Trace::export_to(otlp::Export where, std::string_view version, otlp::Exporter::Failed failed) {
    m_capture = where.capture_content;
    if (where.endpoint.empty())
        return;
    otlp::Origin origin;
    origin.resource = Json::copy_of(where.resource);
    if (!origin.resource.view().get("service.version").exists())
        origin.resource.set("service.version", version);
    origin.scope_version = std::string(version);
    m_exporter =
        std::make_unique<otlp::Exporter>(std::move(where), std::move(origin), std::move(failed));
}

otlp::Span Trace::begin(std::string name, std::string_view parent, otlp::Kind kind) const {
    otlp::Span s;
    s.trace_id = m_id;
    s.span_id = otlp::new_span_id();
    s.parent_id = std::string(parent);
    s.name = std::move(name);
    s.kind = kind;
    s.start_ns = now_ns();
    return s;
}

otlp::Span Trace::begin_root(std::string name, std::optional<otlp::Link> from) const {
    otlp::Span s = begin(std::move(name), "");
    s.span_id = m_root;
    if (from)
        s.links.push_back(std::move(*from));
    return s;
}

void Trace::end(otlp::Span span) {
    if (span.end_ns == 0)
        span.end_ns = now_ns();
    span.end_ns = std::max(span.end_ns, span.start_ns);
    if (!m_redactor.empty()) {
        span.name = m_redactor.redact(span.name);
        span.status_message = m_redactor.redact(span.status_message);
        span.attributes = m_redactor.redact_json(std::move(span.attributes));
    }
    std::lock_guard<std::mutex> hold(m_lock);
    m_ended.push_back(std::move(span));
}

void Trace::store(Db& db, std::string_view session) {
    std::vector<otlp::Span> spans;
    {
        std::lock_guard<std::mutex> hold(m_lock);
        spans.swap(m_ended);
    }
    if (spans.empty())
        return;
    (void)insert_spans(db, session, spans);
    if (m_exporter)
        m_exporter->add(std::move(spans));
}

Status insert_spans(Db& db, std::string_view session, const std::vector<otlp::Span>& spans) {
    SION_TRY(Stmt insert, db.prepare("INSERT OR REPLACE INTO spans (session, trace, span, parent, "
                                     "name, kind, start_ns, end_ns, attributes, error, links) "
                                     "VALUES (?1, ?2, ?3, nullif(?4, ''), ?5, ?6, ?7, ?8, ?9, "
                                     "CASE WHEN ?10 THEN ?11 END, nullif(?12, ''))"));
    for (const otlp::Span& s : spans) {
        std::string links;
        if (!s.links.empty()) {
            Json list = Json::array();
            for (const otlp::Link& l : s.links) {
                Json one = Json::object();
                one.set("trace", std::string_view(l.trace_id));
                one.set("span", std::string_view(l.span_id));
                list.push(std::move(one));
            }
            links = list.dump();
        }
        SION_CHECK(insert.bind(1, session));
        SION_CHECK(insert.bind(2, std::string_view(s.trace_id)));
        SION_CHECK(insert.bind(3, std::string_view(s.span_id)));
        SION_CHECK(insert.bind(4, std::string_view(s.parent_id)));
        SION_CHECK(insert.bind(5, std::string_view(s.name)));
        SION_CHECK(insert.bind(6, static_cast<int64_t>(s.kind)));
        SION_CHECK(insert.bind(7, s.start_ns));
        SION_CHECK(insert.bind(8, s.end_ns));
        SION_CHECK(insert.bind(9, std::string_view(s.attributes.dump())));
        SION_CHECK(insert.bind(10, static_cast<int64_t>(s.error)));
        SION_CHECK(insert.bind(11, std::string_view(s.status_message)));
        SION_CHECK(insert.bind(12, std::string_view(links)));
        SION_CHECK(insert.run());
        insert.reset();
    }
    return {};
}

namespace {

thread_local RunningUnder* t_running = nullptr;

} // namespace

const std::string& running_traceparent() {
    static const std::string k_none;
    return t_running != nullptr ? t_running->m_traceparent : k_none;
}

void note_elsewhere(Elsewhere spent) {
    if (t_running != nullptr)
        t_running->m_elsewhere.push_back(std::move(spent));
}

RunningUnder::RunningUnder(std::string_view trace, std::string_view span_id)
    : m_traceparent(otlp::traceparent(trace, span_id)), m_outer(t_running) {
    t_running = this;
}

RunningUnder::~RunningUnder() {
    t_running = m_outer;
}

std::string genai_provider(std::string_view spec_provider) {
    static constexpr std::pair<std::string_view, std::string_view> k_names[] = {
        {"openai", "openai"},
        {"openai-responses", "openai"},
        {"chatgpt", "openai"},
        {"azure", "azure.ai.openai"},
        {"xai", "x_ai"},
        {"mistral", "mistral_ai"},
        {"gemini", "gcp.gemini"},
        {"vertex", "gcp.vertex_ai"},
        {"bedrock", "aws.bedrock"},
    };
    for (const auto& [ours, theirs] : k_names)
        if (ours == spec_provider)
            return std::string(theirs);
    return std::string(spec_provider);
}

void name_chat(otlp::Span& span, std::string_view spec) {
    std::string_view provider = spec.substr(0, spec.find(':'));
    std::string_view model = spec.substr(std::min(spec.size(), provider.size() + 1));
    model = model.substr(0, model.rfind('#'));
    span.name = "chat " + std::string(model);
    span.attributes.set("gen_ai.operation.name", "chat");
    span.attributes.set("gen_ai.provider.name", std::string_view(genai_provider(provider)));
    span.attributes.set("gen_ai.request.model", model);
    span.attributes.set("sion.model", spec);
}

Result<std::vector<otlp::Span>> load_spans(Db& db, std::string_view session) {
    SION_TRY(Stmt st, db.prepare("SELECT trace, span, coalesce(parent, ''), name, kind, start_ns, "
                                 "end_ns, attributes, error IS NOT NULL, coalesce(error, ''), "
                                 "coalesce(links, '') FROM spans WHERE session = ?1 "
                                 "ORDER BY start_ns, rowid"));
    SION_CHECK(st.bind(1, session));
    std::vector<otlp::Span> out;
    while (true) {
        SION_TRY(bool more, st.step());
        if (!more)
            break;
        otlp::Span s;
        s.trace_id = st.column_text(0);
        s.span_id = st.column_text(1);
        s.parent_id = st.column_text(2);
        s.name = st.column_text(3);
        int64_t kind = st.column_int(4);
        s.kind = kind >= 0 && kind <= 5 ? static_cast<otlp::Kind>(kind) : otlp::Kind::internal;
        s.start_ns = st.column_int(5);
        s.end_ns = st.column_int(6);
        SION_TRY(s.attributes, Json::parse(st.column_text(7)));
        s.error = st.column_int(8) != 0;
        s.status_message = st.column_text(9);
        if (std::string links = st.column_text(10); !links.empty()) {
            SION_TRY(Json list, Json::parse(links));
            for (JsonView l : list.view())
                s.links.push_back({std::string(l.string_or("trace", "").value_or("")),
                                   std::string(l.string_or("span", "").value_or(""))});
        }
        out.push_back(std::move(s));
    }
    return out;
}

namespace {

std::string duration_text(int64_t ns) {
    if (ns >= 1'000'000'000)
        return format("%.2f s", static_cast<double>(ns) / 1e9);
    if (ns >= 10'000'000)
        return format("%.0f ms", static_cast<double>(ns) / 1e6);
    if (ns >= 1'000'000)
        return format("%.1f ms", static_cast<double>(ns) / 1e6);
    return format("%.2f ms", static_cast<double>(ns) / 1e6);
}

std::string utc_time(int64_t ns) {
    std::time_t t = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    size_t n = std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return std::string(text, n);
}

// The columns `text` takes on a terminal: its UTF-8 characters.
size_t columns(std::string_view text) {
    size_t n = 0;
    for (char c : text)
        n += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
    return n;
}

// The first `n` characters of `text`.
std::string first_columns(std::string_view text, size_t n) {
    size_t at = 0;
    for (size_t seen = 0; at < text.size(); ++at)
        if ((static_cast<unsigned char>(text[at]) & 0xc0) != 0x80 && seen++ == n)
            break;
    return std::string(text.substr(0, at));
}

constexpr size_t k_name_columns = 56; // names past this are cut, with "…"

struct Line {
    std::string name; // indented
    const otlp::Span* span = nullptr;
};

void walk(const otlp::Span& s, size_t depth,
          const std::map<std::string, std::vector<const otlp::Span*>>& children,
          std::vector<Line>& lines) {
    std::string name = std::string(2 * depth, ' ') + one_line(s.name);
    if (columns(name) > k_name_columns)
        name = first_columns(name, k_name_columns - 1) + "…";
    lines.push_back({std::move(name), &s});
    if (auto it = children.find(s.span_id); it != children.end())
        for (const otlp::Span* c : it->second)
            walk(*c, depth + 1, children, lines);
}

} // namespace

std::string draw_waterfall(const std::vector<otlp::Span>& spans, size_t bar) {
    // The traces, by when each began.
    std::vector<std::string> traces;
    std::map<std::string, std::vector<const otlp::Span*>> of_trace;
    for (const otlp::Span& s : spans) {
        auto& list = of_trace[s.trace_id];
        if (list.empty())
            traces.push_back(s.trace_id);
        list.push_back(&s);
    }
    auto earliest = [&](const std::string& t) {
        int64_t e = INT64_MAX;
        for (const otlp::Span* s : of_trace[t])
            e = std::min(e, s->start_ns);
        return e;
    };
    std::stable_sort(traces.begin(), traces.end(), [&](const std::string& a, const std::string& b) {
        return earliest(a) < earliest(b);
    });
    std::string out;
    for (const std::string& t : traces) {
        std::vector<const otlp::Span*>& list = of_trace[t];
        std::stable_sort(list.begin(), list.end(), [](const otlp::Span* a, const otlp::Span* b) {
            return a->start_ns < b->start_ns;
        });
        std::map<std::string, const otlp::Span*> by_id;
        for (const otlp::Span* s : list)
            by_id[s->span_id] = s;
        std::map<std::string, std::vector<const otlp::Span*>> children;
        std::vector<const otlp::Span*> tops;
        int64_t begun = INT64_MAX;
        int64_t ended = INT64_MIN;
        for (const otlp::Span* s : list) {
            if (!s->parent_id.empty() && s->parent_id != s->span_id && by_id.count(s->parent_id))
                children[s->parent_id].push_back(s);
            else
                tops.push_back(s);
            begun = std::min(begun, s->start_ns);
            ended = std::max(ended, s->end_ns);
        }
        std::vector<Line> lines;
        for (const otlp::Span* s : tops)
            walk(*s, 0, children, lines);
        int64_t whole = std::max<int64_t>(ended - begun, 1);
        out += format("trace %s  %s  %s\n", t.c_str(), utc_time(begun).c_str(),
                      duration_text(whole).c_str());
        size_t width = 0;
        std::vector<std::string> durations;
        size_t duration_width = 0;
        for (const Line& l : lines) {
            width = std::max(width, columns(l.name));
            durations.push_back(duration_text(l.span->end_ns - l.span->start_ns));
            duration_width = std::max(duration_width, durations.back().size());
        }
        for (size_t i = 0; i < lines.size(); ++i) {
            const otlp::Span& s = *lines[i].span;
            auto column = [&](int64_t at) {
                double share = static_cast<double>(at - begun) / static_cast<double>(whole);
                return static_cast<size_t>(share * static_cast<double>(bar));
            };
            size_t from = std::min(column(s.start_ns), bar - 1);
            size_t to = std::clamp(column(s.end_ns), from + 1, bar);
            std::string drawn;
            for (size_t c = 0; c < bar; ++c)
                drawn += c >= from && c < to ? "█" : " ";
            out += lines[i].name;
            out.append(width - columns(lines[i].name), ' ');
            out += "  ";
            out.append(duration_width - durations[i].size(), ' ');
            out += durations[i] + "  |" + drawn + "|";
            if (s.error)
                out += "  ! " + one_line(s.status_message);
            out += "\n";
        }
    }
    return out;
}

} // namespace sion::session
