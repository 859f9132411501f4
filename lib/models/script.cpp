// SPDX-License-Identifier: MIT
// The scripted model: reads and checks a script of answers whole, then plays one a request.
#include "lib/models/script.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <initializer_list>

namespace sion::models {

namespace {

// A script is a test's or a demo's: anything this large is a mistake, not a conversation.
constexpr size_t k_max_bytes = size_t{16} << 20;
const char* const k_max_bytes_text = "16 MiB";
// The largest count a double holds exactly, as the schema's "maximum" has it.
constexpr int64_t k_max_tokens = (int64_t{1} << 53) - 1;

// An optional string member: "" when absent. Null is not absence here: the schema says string.
Result<std::string_view> optional_string(JsonView object, std::string_view key) {
    if (!object.get(key).exists())
        return std::string_view();
    return object.string(key);
}

Result<int64_t> read_count(JsonView usage, std::string_view key, bool required) {
    if (!required && !usage.get(key).exists())
        return int64_t{0};
    SION_TRY(int64_t n, usage.integer(key));
    if (n < 0 || n > k_max_tokens)
        return make_error(Exit::data, "member '%.*s' is %" PRId64 ", not a count of tokens",
                          static_cast<int>(key.size()), key.data(), n);
    return n;
}

Result<Usage> read_usage(JsonView usage) {
    Usage u;
    SION_TRY(u.input_tokens, read_count(usage, "input_tokens", true));
    SION_TRY(u.output_tokens, read_count(usage, "output_tokens", true));
    SION_TRY(u.cache_read_tokens, read_count(usage, "cache_read_tokens", false));
    SION_TRY(u.cache_write_tokens, read_count(usage, "cache_write_tokens", false));
    return u;
}

// The calls of a turn, tool and input each, "call N: " naming the one that is wrong.
Result<std::vector<std::pair<std::string, Json>>> read_calls(JsonView turn) {
    std::vector<std::pair<std::string, Json>> calls;
    if (!turn.get("calls").exists())
        return calls;
    SION_TRY(JsonView list, turn.array("calls"));
    for (JsonView call : list) {
        std::string where = format("call %zu", calls.size() + 1);
        if (!call.is_object())
            return make_error(Exit::data, "%s is %s, not an object", where.c_str(),
                              call.type_name());
        auto tool = call.string("tool");
        if (!tool)
            return tool.error().context(where);
        if (tool->empty())
            return make_error(Exit::data, "%s: member 'tool' is empty", where.c_str());
        Json input = Json::object();
        if (call.get("input").exists()) {
            auto given = call.object("input");
            if (!given)
                return given.error().context(where);
            input = Json::copy_of(*given);
        }
        calls.emplace_back(std::string(*tool), std::move(input));
    }
    return calls;
}

struct Failure {
    int status;
    std::string message;
};

Result<Failure> read_fail(JsonView fail) {
    SION_TRY(int64_t status, fail.integer("status"));
    if (status < 100 || status > 599)
        return make_error(
            Exit::data, "member 'status' is %" PRId64 ", not an HTTP status (100 to 599)", status);
    SION_TRY(std::string_view message, fail.string("message"));
    if (message.empty())
        return make_error(Exit::data, "member 'message' is empty");
    return Failure{static_cast<int>(status), std::string(message)};
}

// Fills `turn` from the Nth turn of a script (n from 1). A template only because ScriptModel's
// Turn is private to it: ScriptModel::parse() is where it is named.
template <class Turn>
Status read_turn(JsonView v, size_t n, Turn& turn) {
    const std::string where = format("turn %zu", n);
    if (!v.is_object())
        return make_error(Exit::data, "%s is %s, not an object", where.c_str(), v.type_name());
    auto summary = v.boolean_or("summary", false);
    if (!summary)
        return summary.error().context(where);
    auto sort = v.boolean_or("sort", false);
    if (!sort)
        return sort.error().context(where);
    if (*summary && *sort)
        return make_error(Exit::data, "%s is marked both summary and sort", where.c_str());
    turn.purpose = *summary ? Purpose::summary : *sort ? Purpose::sort : Purpose::turn;
    if (v.get("fail").exists()) {
        auto fail = v.object("fail");
        if (!fail)
            return fail.error().context(where);
        auto failure = read_fail(*fail);
        if (!failure)
            return failure.error().context(where + ": fail");
        // A failure is all the turn says: anything else beside it would be silently dropped.
        for (const char* other :
             {"text", "reasoning", "calls", "usage", "model", "id", "finish_reason"})
            if (v.get(other).exists())
                return make_error(Exit::data, "%s: member 'fail' cannot go with '%s'",
                                  where.c_str(), other);
        turn.fail_status = failure->status;
        turn.fail_message = std::move(failure->message);
        return {};
    }
    auto text = optional_string(v, "text");
    auto reasoning = optional_string(v, "reasoning");
    auto model = optional_string(v, "model");
    auto id = optional_string(v, "id");
    auto finish_reason = optional_string(v, "finish_reason");
    for (auto* r : {&text, &reasoning, &model, &id, &finish_reason})
        if (!*r)
            return r->error().context(where);
    auto calls = read_calls(v);
    if (!calls)
        return calls.error().context(where);
    if (v.get("usage").exists()) {
        auto usage = v.object("usage");
        if (!usage)
            return usage.error().context(where);
        auto counts = read_usage(*usage);
        if (!counts)
            return counts.error().context(where + ": usage");
        turn.has_usage = true;
        turn.usage = *counts;
    }
    if (text->empty() && calls->empty())
        return make_error(Exit::data, "%s has neither text nor calls", where.c_str());
    turn.text = std::string(*text);
    turn.reasoning = std::string(*reasoning);
    turn.model = std::string(*model);
    turn.id = std::string(*id);
    turn.finish_reason = std::string(*finish_reason);
    turn.calls = std::move(*calls);
    return {};
}

} // namespace

Result<std::unique_ptr<ScriptModel>> ScriptModel::load(std::string name, const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return sys_error(Exit::no_input, errno, "cannot read script '%s'", path.c_str());

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0)
        return sys_error(Exit::no_input, errno, "cannot read script '%s'", path.c_str());
    // read(2) would say EISDIR too, but only after read_all() has put its own words around it.
    if (S_ISDIR(st.st_mode))
        return sys_error(Exit::no_input, EISDIR, "cannot read script '%s'", path.c_str());
    auto text = read_all(fd.get(), k_max_bytes);
    if (!text) {
        if (text.error().exit() == Exit::data)
            return make_error(Exit::data, "script '%s': larger than %s", path.c_str(),
                              k_max_bytes_text);
        return Error(Exit::no_input,
                     "cannot read script '" + path + "': " + text.error().message());
    }
    return parse(std::move(name), path, *text);
}

Result<std::unique_ptr<ScriptModel>> ScriptModel::parse(std::string name, std::string path,
                                                        std::string_view text) {
    const std::string where = "script '" + path + "'";
    if (text.size() > k_max_bytes)
        return make_error(Exit::data, "%s: larger than %s", where.c_str(), k_max_bytes_text);
    auto doc = Json::parse(text);
    if (!doc)
        return doc.error().context(where);
    JsonView root = doc->view();
    if (!root.is_object())
        return make_error(Exit::data, "%s: the document is %s, not an object", where.c_str(),
                          root.type_name());
    auto turns = root.array("turns");
    if (!turns)
        return turns.error().context(where);
    std::unique_ptr<ScriptModel> model(new ScriptModel(std::move(name), std::move(path)));
    size_t n = 0;
    for (JsonView v : *turns) {
        Turn turn;
        if (auto read = read_turn(v, ++n, turn); !read)
            return read.error().context(where);
        model->m_turns.push_back(std::move(turn));
    }
    return model;
}

Result<Answer> ScriptModel::answer(const Request& request) {
    Purpose played = played_by(request.purpose);
    size_t& next = played == Purpose::summary ? m_next_summary
                   : played == Purpose::sort  ? m_next_sort
                                              : m_next;
    while (next < m_turns.size() && m_turns[next].purpose != played)
        ++next;
    if (played != Purpose::turn && next >= m_turns.size()) {
        Answer none;
        none.text = played == Purpose::sort
                        ? "none"
                        : "The scripted model writes no summary: its script has no turn marked "
                          "\"summary\" left.";
        none.usage = Usage{.input_tokens = estimate_tokens(request),
                           .output_tokens = estimate_tokens(none.text)};
        none.finish_reason = "end_turn";
        return none;
    }
    if (next >= m_turns.size()) {
        size_t turns = 0; // those a request other than a summary's or sort's plays
        for (const Turn& t : m_turns)
            turns += t.purpose == Purpose::turn ? 1 : 0;
        return make_error(Exit::no_input, "script '%s' has no turn left (it has %zu)",
                          m_path.c_str(), turns);
    }
    const Turn& turn = m_turns[next++];
    size_t number = next; // its place in the script, from 1
    if (turn.fail_status != 0)
        return make_error(exit_for_http_status(turn.fail_status), "HTTP %d: %s", turn.fail_status,
                          turn.fail_message.c_str());
    Answer answer;
    answer.text = turn.text;
    answer.reasoning = turn.reasoning;
    answer.model = turn.model;
    answer.id = turn.id;
    // What the model is taken to have written, when the script does not say what it counted.
    std::string written = turn.text + turn.reasoning;
    for (const auto& [tool, input] : turn.calls) {
        answer.calls.push_back(ToolCall{format("call_%zu_%zu", number, answer.calls.size() + 1),
                                        tool, Json::copy_of(input)});
        written += tool;
        written += input.dump();
    }
    // Unsaid, in the Messages API's words.
    answer.finish_reason = !turn.finish_reason.empty() ? turn.finish_reason
                           : answer.calls.empty()      ? "end_turn"
                                                       : "tool_use";
    if (turn.has_usage)
        answer.usage = turn.usage;
    else
        answer.usage = Usage{.input_tokens = estimate_tokens(request),
                             .output_tokens = estimate_tokens(written)};
    return answer;
}

} // namespace sion::models
