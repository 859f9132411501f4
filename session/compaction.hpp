// SPDX-License-Identifier: MIT
// Compaction (seed 001, "What a model is sent"): what a model is sent of a conversation that has
// grown past 120,000 characters or 36 messages. The stored session keeps every message; a
// compaction changes only what is sent, and is kept with the session as a record of its own,
//   {"role":"compaction","cut":[call ids],"summarized":N,"kept_from":I,"summary":TEXT,
//    "chars":C,"messages":M}
// ("summarized", "kept_from" and "summary" when it summarized), so that a continued session is
// sent what the last run sent and `show` shows where it happened.
//
// Past the characters, the results of calls before the last 12 messages that are longer than 400
// characters are cut first: each becomes a line saying what it was and how long. If that is not
// enough, or past the messages, the middle (after the first message, up to the last 12) is
// replaced by a summary, never separating a call from its result. Each compaction holds until the
// next, so that the start of what is sent stays the same from call to call in between.
#pragma once

#include "lib/json.hpp"
#include "session/store.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sion::session {

// --context-chars and --context-messages.
struct ContextLimits {
    size_t chars = 120'000;
    size_t messages = 36;
};

constexpr size_t k_cut_longer_than = 400; // a result is cut when longer than this
constexpr size_t k_kept_last = 12;        // the last messages, never cut nor summarized
constexpr size_t k_lasting_listed = 40;   // the lasting calls a summary lists; earlier counted
constexpr size_t k_latest_things = 32;    // the things read or changed a summary gives
constexpr size_t k_thing_start = 400;     // the characters of each thing's last result it gives
constexpr int64_t k_least_context_chars = 2'000; // the least --context-chars takes
constexpr int64_t k_least_context_messages = 6;

// The messages kept at the end, never cut nor summarized: 12, or half of `limits.messages`
// when that is fewer.
[[nodiscard]] size_t kept_last(const ContextLimits& limits);

// A message's characters as the limit counts them: its text, reasoning, calls (tool and input) and
// a result's text, in Unicode characters.
[[nodiscard]] size_t message_chars(JsonView message);

// What the compactions so far decided, from their records in order.
struct Compaction {
    std::set<std::string> cut; // the calls whose results are sent as a line
    size_t kept_from = 0;      // with a summary, the conversation's index the end sent begins at
    std::string summary;       // sent after the first message, in place of those before kept_from

    void add(JsonView record);

    // Whether `message` is a call's result sent cut to a line.
    [[nodiscard]] bool cuts(JsonView message) const;

    // The conversation's index of the first message sent after the first message and the summary:
    // kept_from, or 1 with no summary.
    [[nodiscard]] size_t sent_from() const { return kept_from > 0 ? kept_from : 1; }
};

// The line a cut result becomes: "[cut to keep the conversation short: read_file's result of
// 5120 characters; make the call again to see it]".
[[nodiscard]] std::string cut_line(JsonView tool_message);

// What the model is sent of `conversation` after `compaction`: the first message, the summary as
// the runtime's note, the messages from kept_from on, each cut result as its line.
[[nodiscard]] std::vector<Json> sent_conversation(std::span<const Json> conversation,
                                                  const Compaction& compaction);

// What a compaction would do now: nothing when what is sent is within `limits`.
struct CompactionPlan {
    std::vector<std::string> cut;       // results to cut, besides those cut before
    std::optional<size_t> summarize_to; // the conversation's index the end sent would begin at

    [[nodiscard]] bool empty() const { return cut.empty() && !summarize_to; }
};

[[nodiscard]] CompactionPlan plan_compaction(std::span<const Json> conversation,
                                             const Compaction& compaction,
                                             const ContextLimits& limits);

// The record of the compaction `plan` makes after `before`, with `summary` when it summarizes
// (without "messages" and "chars", which the caller adds once it knows what is sent).
[[nodiscard]] Json compaction_record(const CompactionPlan& plan, const Compaction& before,
                                     std::string_view summary);

// What a summary's narrative is written from: the part of the conversation it replaces (the
// earlier summary, if any, and the conversation's [from, to)), as a record to summarise, between
// lines marked with `mark` (a random word, so that the record cannot end itself), at most `most`
// characters, the latest kept when it must be shortened.
[[nodiscard]] std::string narrative_record(std::span<const Json> conversation, size_t from,
                                           size_t to, std::string_view earlier_summary,
                                           std::string_view mark, size_t most);

// The system prompt of the call that writes the narrative.
[[nodiscard]] std::string narrative_prompt(std::string_view mark);

// The thing a call of `tool` names, whichever way its path was written ("./notes/a.txt",
// "/workspace/notes/a.txt" and "file:notes/a.txt" are "notes/a.txt"): its input's path, file or
// URI; for find_files the files it listed, "src/*.c"; nullopt for a call that names none (a
// command, a search).
[[nodiscard]] std::optional<std::string> thing_named(std::string_view tool, JsonView input);

// A summary: the messages it replaces, what the session did that lasts (its last 40 calls that
// changed something or reached outside, earlier ones counted by tool), the latest of what it read
// or changed (the 32 things named last, the start of what each's last call returned), and the
// narrative (at most a third of `most`), or why there is none (`narrative_failed`). At most `most`
// characters: past them the oldest things are left out first, then the oldest calls only counted.
[[nodiscard]] std::string summary_text(size_t messages, std::span<const CallRow> calls,
                                       std::string_view narrative, bool narrative_failed,
                                       size_t most);

// The characters a summary may have: a quarter of those the conversation is kept within.
[[nodiscard]] inline size_t summary_most(const ContextLimits& limits) {
    return limits.chars / 4;
}

// The transcript's line for a compaction record, at the run and in `show`: "the conversation is
// compacted: 3 results cut, 20 messages summarized; the model is sent 14 messages, 21504
// characters".
[[nodiscard]] std::string compaction_line(JsonView record);

} // namespace sion::session
