// SPDX-License-Identifier: MIT
// The transcript's lines and the JSON events, from the same records.
#include "session/transcript.hpp"

#include "lib/log.hpp"
#include "lib/picture.hpp"
#include "lib/text.hpp"
#include "session/compaction.hpp"
#include "session/routing.hpp"
#include "session/shown.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <optional>

namespace sion::session {

namespace {

// Writes one line to standard output and flushes it. A reader that went away ends the program at
// once and quietly, as SIGPIPE ends a filter, and a full disk with "write error" (74): the store
// is consistent at any instant, and the session is then shown as interrupted.
void put_part(std::FILE* out, std::string_view part) {
    errno = 0;
    std::fwrite(part.data(), 1, part.size(), out);
    if (std::fflush(out) != 0 || std::ferror(out) != 0)
        die_of_stdout_error(errno != 0 ? errno : EIO);
}

void put(std::FILE* out, std::string_view line) {
    errno = 0;
    std::fwrite(line.data(), 1, line.size(), out);
    std::fputc('\n', out);
    if (std::fflush(out) != 0 || std::ferror(out) != 0)
        die_of_stdout_error(errno != 0 ? errno : EIO);
}

bool failed_state(std::string_view state) {
    return state != "ok";
}

// What the events say of pictures: each one's name, kind and size, not its bytes.
Json pictures_summary(JsonView images) {
    Json out = Json::array();
    for (JsonView image : images) {
        Json p = Json::object();
        if (auto name = image.string("name"))
            p.set("name", *name);
        p.set("media_type", picture_type(image));
        p.set("bytes", static_cast<int64_t>(picture_size(image)));
        out.push(std::move(p));
    }
    return out;
}

// Select Graphic Rendition codes: what the transcript marks on a terminal.
constexpr const char* k_bold = "1";
constexpr const char* k_dim = "2";
constexpr const char* k_red = "31";
constexpr const char* k_green = "32";
constexpr const char* k_cyan = "36";

class Transcript final : public Output {
public:
    Transcript(std::FILE* out, bool colour, bool streaming)
        : m_out(out), m_colour(colour), m_streaming(streaming) {}

    void session(const SessionRow& row, bool continued) override {
        put(m_out, paint(k_bold, format("session %s for agent %.8s%s", row.id.c_str(),
                                        row.agent.c_str(), continued ? ", continued" : "")));
    }

    void task(std::string_view text, JsonView pictures) override {
        put(m_out, "you: " + shown_lines(text));
        for (JsonView image : pictures) {
            std::string name = shown_line(image.string_or("name", "").value_or(""));
            std::string_view type = picture_type(image);
            put(m_out, format("you: [picture %s, %.*s, %zu bytes]", name.c_str(),
                              static_cast<int>(type.size()), type.data(), picture_size(image)));
        }
    }

    void notice(std::string_view text) override { put(m_out, shown_line(text)); }

    void mcp(std::string_view, std::string_view text) override { put(m_out, shown_line(text)); }

    void reasoning(std::string_view text) override {
        size_t at = 0;
        while (at <= text.size()) {
            size_t nl = text.find('\n', at);
            put(m_out, paint(k_dim, "~ "
                                        + shown_line(text.substr(
                                            at, nl == std::string_view::npos ? nl : nl - at))));
            if (nl == std::string_view::npos)
                break;
            at = nl + 1;
        }
    }

    void text(std::string_view text) override {
        if (m_stream && text.starts_with(m_stream->text())) {
            std::string rest = m_stream->feed(text.substr(m_stream->text().size()));
            put(m_out, rest + m_stream->finish());
            m_stream.reset();
            return;
        }
        text_cut();
        put(m_out, paint(k_bold, "agent:") + " " + shown_lines(text));
    }

    [[nodiscard]] bool streams() const override { return m_streaming; }

    void text_piece(std::string_view piece) override {
        std::string shown;
        if (!m_stream) {
            m_stream.emplace();
            shown = paint(k_bold, "agent:") + " ";
        }
        shown += m_stream->feed(piece);
        put_part(m_out, shown);
    }

    void text_cut() override {
        if (!m_stream)
            return;
        put(m_out, m_stream->finish());
        m_stream.reset();
    }

    void call(const CallRow& call) override {
        put(m_out, indented(call, paint(k_cyan, "→ " + shown_line(call.tool)) + " "
                                      + shown_line(canonical_json(call.input))));
    }

    void result(const CallRow& call) override {
        put(m_out, indented(call, failed_state(call.state)
                                      ? paint(k_red, "✗ " + shown_lines(call.result))
                                      : paint(k_green, "←") + " " + shown_lines(call.result)));
        if (call.tainted)
            put(m_out, indented(call, "the session is tainted: what " + shown_line(call.tool)
                                          + " returned came from outside"));
    }

    void compacted(JsonView record) override { put(m_out, compaction_line(record)); }

    void routed(JsonView record) override { put(m_out, shown_line(routed_line(record))); }

    void subagent(JsonView) override {}

    void end(const SessionRow& row, const Ending& ending) override {
        put(m_out, paint(ending.state == "done" ? k_bold : k_red,
                         shown_line(ending_line(row.id, ending))));
    }

private:
    // `text` in the rendition `sgr` when the transcript is coloured, each of its lines on its own
    // (so that one cut off, or indented, carries no colour past its end); as it is otherwise.
    [[nodiscard]] std::string paint(const char* sgr, const std::string& text) const {
        if (!m_colour)
            return text;
        std::string on = std::string("\x1b[") + sgr + "m";
        std::string out = on;
        for (char c : text) {
            if (c == '\n')
                out += "\x1b[0m\n" + on;
            else
                out += c;
        }
        return out + "\x1b[0m";
    }

    // A call a program made (run_code) is shown under its parent, each of its lines indented.
    static std::string indented(const CallRow& call, std::string text) {
        if (call.parent.empty())
            return text;
        std::string out = "  ";
        for (char c : text) {
            out += c;
            if (c == '\n')
                out += "  ";
        }
        return out;
    }

    std::optional<ShownStream> m_stream; // the text streaming now, if any
    std::FILE* m_out;
    bool m_colour;
    bool m_streaming;
};

class Events final : public Output {
public:
    explicit Events(std::FILE* out) : m_out(out) {}

    void session(const SessionRow& row, bool continued) override {
        Json e = event("session");
        e.set("session", std::string_view(row.id));
        e.set("agent", std::string_view(row.agent));
        e.set("profile", std::string_view(row.profile));
        e.set("continued", continued);
        e.set("settings", Json::copy_of(row.settings));
        emit(e);
    }

    void task(std::string_view text, JsonView pictures) override {
        Json e = event("task");
        e.set("text", text);
        if (pictures.size() > 0)
            e.set("pictures", pictures_summary(pictures));
        emit(e);
    }

    void notice(std::string_view text) override { emit(event("notice").set("text", text)); }

    void mcp(std::string_view server, std::string_view text) override {
        emit(event("mcp").set("server", server).set("text", text));
    }

    void reasoning(std::string_view text) override { emit(event("reasoning").set("text", text)); }

    void text(std::string_view text) override { emit(event("text").set("text", text)); }

    void call(const CallRow& call) override {
        Json e = event("call");
        e.set("call", std::string_view(call.call_id));
        if (!call.parent.empty())
            e.set("parent", std::string_view(call.parent));
        e.set("tool", std::string_view(call.tool));
        e.set("input", Json::copy_of(call.input));
        if (!call.effect.empty())
            e.set("effect", std::string_view(call.effect));
        if (!call.decision.empty())
            e.set("decision", std::string_view(call.decision));
        if (!call.why.empty())
            e.set("why", std::string_view(call.why));
        emit(e);
    }

    void result(const CallRow& call) override {
        Json e = event("result");
        e.set("call", std::string_view(call.call_id));
        if (!call.parent.empty())
            e.set("parent", std::string_view(call.parent));
        e.set("tool", std::string_view(call.tool));
        e.set("state", std::string_view(call.state));
        e.set("text", std::string_view(call.result));
        if (call.detail.exists())
            e.set("detail", Json::copy_of(call.detail));
        if (call.images.view().size() > 0)
            e.set("pictures", pictures_summary(call.images));
        e.set("tainted", call.tainted);
        e.set("wall_ms", call.wall_ms);
        emit(e);
    }

    void compacted(JsonView record) override {
        Json e = event("compacted");
        e.set("cut", static_cast<int64_t>(record.get("cut").size()));
        e.set("summarized", record.integer_or("summarized", 0).value_or(0));
        e.set("messages", record.integer_or("messages", 0).value_or(0));
        e.set("chars", record.integer_or("chars", 0).value_or(0));
        if (auto summary = record.string("summary"))
            e.set("summary", *summary);
        emit(e);
    }

    void routed(JsonView record) override {
        Json e = event("routed");
        for (const char* member : {"route", "why", "models", "sorter", "usage"})
            if (record.get(member).exists())
                e.set(member, Json::copy_of(record.get(member)));
        emit(e);
    }

    void end(const SessionRow& row, const Ending& ending) override {
        Json e = event("end");
        e.set("session", std::string_view(row.id));
        e.set("state", std::string_view(ending.state));
        if (!ending.why.empty())
            e.set("why", std::string_view(ending.why));
        e.set("calls", ending.calls);
        e.set("tainted", row.tainted);
        Json usage = Json::object();
        usage.set("input_tokens", ending.usage.input_tokens);
        usage.set("output_tokens", ending.usage.output_tokens);
        usage.set("cache_read_tokens", ending.usage.cache_read_tokens);
        usage.set("cache_write_tokens", ending.usage.cache_write_tokens);
        e.set("usage", std::move(usage));
        emit(e);
    }

private:
    static Json event(const char* kind) {
        Json e = Json::object();
        e.set("event", kind);
        return e;
    }

    void subagent(JsonView said) override {
        Json e = event("subagent");
        for (JsonView member : said)
            e.set(member.key(), Json::copy_of(member));
        std::lock_guard lock(m_subagents);
        emit(e);
    }

    void emit(const Json& e) { put(m_out, e.dump()); }

    std::FILE* m_out;
    std::mutex m_subagents; // subagents say what they do from threads of their own
};

} // namespace

std::unique_ptr<Output> make_output(bool json, std::FILE* out, bool colour, bool streaming) {
    if (json)
        return std::make_unique<Events>(out);
    return std::make_unique<Transcript>(out, colour, streaming);
}

OptionSpec colour_option() {
    return {"color", 0,
            "WHEN",  "colour the transcript: auto (on a terminal), always or never",
            nullptr, "auto always never"};
}

Result<bool> colour_wanted(const Args& args, int fd) {
    std::string when = args.value("color").value_or("auto");
    if (when == "always")
        return true;
    if (when == "never")
        return false;
    if (when != "auto")
        return usage_error("--color takes auto, always or never, not '" + shown_line(when) + "'");
    const char* no_colour = std::getenv("NO_COLOR"); // NOLINT(concurrency-mt-unsafe): at start
    const char* term = std::getenv("TERM");          // NOLINT(concurrency-mt-unsafe): at start
    if (no_colour != nullptr && *no_colour != '\0')
        return false;
    if (term == nullptr || std::string_view(term) == "dumb")
        return false;
    return ::isatty(fd) == 1;
}

std::string ending_line(std::string_view session, const Ending& ending) {
    std::string line = format("session %.*s: %s", static_cast<int>(session.size()), session.data(),
                              ending.state.c_str());
    if (!ending.why.empty())
        line += ": " + ending.why;
    return line;
}

} // namespace sion::session
