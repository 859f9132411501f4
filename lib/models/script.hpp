// SPDX-License-Identifier: MIT
// The scripted model (`--model script:FILE`): plays a fixed list of answers, one each time it is
// asked, whatever it is sent. The seeds' transcripts were recorded with it, and tests and the demo
// run on it. The file's format is schemas/script-model.schema.json:
//
//   {"turns": [
//     {"text": "…", "reasoning": "…", "calls": [{"tool": "shell", "input": {"command": "ls"}}],
//      "usage": {"input_tokens": 120, "output_tokens": 30},
//      "model": "claude-opus-5-5", "id": "msg_1", "finish_reason": "tool_use"},
//     {"fail": {"status": 529, "message": "Overloaded"}}
//   ]}
//
// A turn has text, calls or both (or a failure instead); calls get ids "call_<turn>_<n>" (from 1).
// "model", "id" and "finish_reason", strings, are what the answer says of itself (Answer::model,
// id, finish_reason); without them (or empty) its model and id are "" and it finished with
// "tool_use" when it has calls, "end_turn" otherwise, as do the answers of a summary or a sort
// with no turn left. A failure is all its turn says: it goes with none of these, nor text,
// reasoning, calls or usage.
// A turn marked "summary": true answers only a request for a compaction's summary (Purpose::
// summary), which takes the first of those left; with none left it is answered "The scripted
// model writes no summary: its script has no turn marked "summary" left." and no turn is used, so
// that a long scripted session plays its turns whenever it compacts. A turn marked "sort": true
// answers only a sorter's request (Purpose::sort, sion-route(1)) in the same way; with none left
// the answer is "none" and no turn is used.
// Without usage, the tokens are estimated (estimate_tokens()). A failure is reported as a
// provider's would be: HTTP 429, 500, 502, 503, 504 and 529 are Exit::unavailable (the next model
// is asked), 400 Exit::data, 401/402/403 Exit::no_perm, others Exit::unavailable, each "HTTP
// <status>: <message>". Asked once more than it has turns, it fails with Exit::no_input:
//   "script 'shell.json' has no turn left (it has 4)".
#pragma once

#include "lib/models/model.hpp"

namespace sion::models {

class ScriptModel final : public Model {
public:
    // Reads and checks the whole file at once, so a malformed script is refused before a session
    // starts. `name` is what the model is called by ("script:shell.json"); `path` is as given, for
    // messages. Errors: "cannot read script 'x.json': No such file or directory" (Exit::no_input),
    // "script 'x.json': invalid JSON at byte 12", "script 'x.json': turn 2: member 'calls' is a
    // string, not an array", "script 'x.json': turn 3 has neither text nor calls" (Exit::data).
    [[nodiscard]] static Result<std::unique_ptr<ScriptModel>> load(std::string name,
                                                                   const std::string& path);
    // The same from text already read, for tests.
    [[nodiscard]] static Result<std::unique_ptr<ScriptModel>>
    parse(std::string name, std::string path, std::string_view text);

    [[nodiscard]] const std::string& name() const override { return m_name; }

    [[nodiscard]] Result<Answer> answer(const Request& request) override;

    [[nodiscard]] size_t turns() const { return m_turns.size(); }

private:
    struct Turn {
        std::string text;
        std::string reasoning;
        std::string model;                               // "" when the script does not say
        std::string id;                                  // likewise
        std::string finish_reason;                       // likewise
        std::vector<std::pair<std::string, Json>> calls; // tool, input
        bool has_usage = false;
        Usage usage;
        int fail_status = 0; // non-zero: a failure
        std::string fail_message;
        Purpose purpose = Purpose::turn; // summary or sort: for that request only
    };

    // The purposes that have turns of their own: a completion plays the session's turns.
    [[nodiscard]] static Purpose played_by(Purpose purpose) {
        return purpose == Purpose::completion ? Purpose::turn : purpose;
    }

    ScriptModel(std::string name, std::string path)
        : m_name(std::move(name)), m_path(std::move(path)) {}

    std::string m_name;
    std::string m_path;
    std::vector<Turn> m_turns;
    size_t m_next = 0;         // the next turn for a request other than a summary's or sort's
    size_t m_next_summary = 0; // the next turn for a summary's
    size_t m_next_sort = 0;    // the next turn for a sorter's
};

} // namespace sion::models
