// SPDX-License-Identifier: MIT
// What a session shows as it goes, and what `show` shows of a stored one: the transcript people
// read (the seeds' lines), or one JSON event a line (--json) for programs.
//
//   session af88d6083cc5587b for agent d85ed254
//   → shell {"command":"python3 primes.py"}        a call: its tool and input, compact, keys sorted
//   ← exit status 0                                 what the model was shown of it
//   ✗ there is no tool named notes_add_note         a call that failed, was refused, or is
//   uncertain ~ the model's reasoning, where it can be read agent: There are 17 primes below 60; …
//   session af88d6083cc5587b: done
//
// Events (schemas/run.event.json): session, notice, mcp, reasoning, text, call, result, end. Each
// is written and flushed as it happens, so a pipe sees the session as it goes.
#pragma once

#include "lib/cli.hpp"
#include "session/store.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace sion::session {

// How a run of a session ended, for the last line and the end event.
struct Ending {
    std::string state;   // done, stopped, failed, interrupted
    std::string why;     // "" for done
    int64_t calls = 0;   // calls made in the run
    models::Usage usage; // of the run (show: of the session)
};

class Output {
public:
    Output() = default;
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;
    virtual ~Output() = default;

    virtual void session(const SessionRow& row, bool continued) = 0;
    // The person's message: shown by `show`, not by a live run (the person just typed it).
    // `pictures`: those given with it (a user message's "images"), or nothing.
    virtual void task(std::string_view text, JsonView pictures) = 0;
    virtual void notice(std::string_view text) = 0;
    // A line about one of the session's MCP servers: a tool it does not offer, a question it asked,
    // a completion it had written.
    virtual void mcp(std::string_view server, std::string_view text) = 0;
    virtual void reasoning(std::string_view text) = 0;
    virtual void text(std::string_view text) = 0;

    // Whether the model's text is shown as it streams: then text_piece() is told each piece, and
    // text() the whole once it is in, which ends what the pieces began; a model that fails
    // mid-answer is followed by text_cut(), which ends the line its pieces began.
    [[nodiscard]] virtual bool streams() const { return false; }

    virtual void text_piece(std::string_view /*piece*/) {}

    virtual void text_cut() {}
    virtual void call(const CallRow& call) = 0;
    virtual void result(const CallRow& call) = 0;
    // A compaction, as its record is kept (compaction.hpp): what the model is sent from now on.
    virtual void compacted(JsonView record) = 0;
    // The route a new session's task took (session/routing.hpp's record).
    virtual void routed(JsonView record) = 0;
    // A subagent started or ended (tool_spawn.cpp): {"state", "subagent", "agent", "session", …}.
    // Called from the threads subagents are spawned on, so it must not need the loop's thread; the
    // transcript shows a subagent in its call's answer, and --json says it as it happens.
    virtual void subagent(JsonView said) = 0;
    virtual void end(const SessionRow& row, const Ending& ending) = 0;
};

// The transcript (json false) or JSON events (json true), written to `out`. A coloured transcript
// marks its lines apart with ANSI colours: calls (→) cyan, results (←) green, failures (✗) and an
// ending other than done red, the agent's words and the first and last lines bold, reasoning dim;
// uncoloured, it is plain text.
// A streaming transcript shows the model's text as it comes (a console's), its lines the same
// in the end.
[[nodiscard]] std::unique_ptr<Output> make_output(bool json, std::FILE* out, bool colour = false,
                                                  bool streaming = false);

// --color=WHEN, for the commands that print a transcript.
[[nodiscard]] OptionSpec colour_option();

// Whether --color asks for colour on `fd`: always, never, or auto (the default): when `fd` is a
// terminal, NO_COLOR is unset or empty, and TERM is set and not "dumb". Exit::usage for another
// WHEN: "--color takes auto, always or never, not 'x'".
[[nodiscard]] Result<bool> colour_wanted(const Args& args, int fd);

// "the token budget of 1000 tokens is spent (1204 used)", … as the end line says it:
//   "session af88d6083cc5587b: done", "session af88d6083cc5587b: stopped: <why>".
[[nodiscard]] std::string ending_line(std::string_view session, const Ending& ending);

} // namespace sion::session
