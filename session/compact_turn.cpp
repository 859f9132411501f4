// SPDX-License-Identifier: MIT
// Compaction in the session loop: what the model is sent before each call, a compaction made and
// recorded when the conversation has grown past the limits, and a summary's narrative asked of
// the session's model.
#include "lib/hash.hpp"
#include "lib/secret_bytes.hpp"
#include "session/loop.hpp"

#include <algorithm>

namespace sion::session {

// The narrative's bounds: its answer, and the record of the middle it is given (a share of the
// characters the conversation is kept within).
constexpr int64_t k_narrative_tokens = 1'500;
constexpr size_t k_narrative_share = 2;

Result<std::vector<Json>> Loop::sent() {
    CompactionPlan plan = plan_compaction(m_conversation, m_compaction, m_p.settings.context);
    if (!plan.empty())
        return compact(plan);
    return sent_conversation(m_conversation, m_compaction);
}

Result<std::vector<Json>> Loop::compact(const CompactionPlan& plan) {
    otlp::Span span = m_p.trace->begin("compaction", m_p.trace->root());
    std::string summary;
    if (plan.summarize_to) {
        size_t to = *plan.summarize_to;
        m_asking_under = span.span_id;
        auto narrated = narrate(m_compaction.sent_from(), to);
        m_asking_under = m_p.trace->root();
        SION_TRY(Narrative narrative, std::move(narrated));
        span.attributes.set("sion.compaction.summarized", true);
        if (narrative.failed)
            span.attributes.set("sion.compaction.narrative_failed",
                                std::string_view(narrative.text));
        SION_TRY(auto calls, load_calls(*m_p.db, m_p.row.id));
        summary = summary_text(to - 1, calls, narrative.text, narrative.failed,
                               summary_most(m_p.settings.context));
    }
    Json record = compaction_record(plan, m_compaction, summary);
    Compaction after = m_compaction;
    after.add(record);
    std::vector<Json> sent_now = sent_conversation(m_conversation, after);
    size_t chars = 0;
    for (const Json& m : sent_now)
        chars += message_chars(m);
    record.set("messages", static_cast<int64_t>(sent_now.size()));
    record.set("chars", static_cast<int64_t>(chars));
    SION_CHECK(append_message(*m_p.db, m_p.row.id, record));
    span.attributes.set("sion.compaction.messages", static_cast<int64_t>(sent_now.size()));
    span.attributes.set("sion.compaction.chars", static_cast<int64_t>(chars));
    m_p.trace->end(std::move(span));
    m_compaction = std::move(after);
    m_p.out->compacted(record);
    return sent_now;
}

Result<Loop::Narrative> Loop::narrate(size_t from, size_t to) {
    SION_TRY(std::string bytes, random_bytes(6));
    std::string mark = to_hex(bytes);
    Json given = Json::object();
    given.set("role", "user");
    given.set("text", std::string_view(
                          narrative_record(m_conversation, from, to, m_compaction.summary, mark,
                                           m_p.settings.context.chars / k_narrative_share)));
    std::vector<Json> conversation;
    conversation.push_back(std::move(given));
    std::string prompt = narrative_prompt(mark);
    models::Request request{prompt, {}, conversation, k_narrative_tokens, models::Purpose::summary};
    if (over_budget(request))
        return Narrative{"the token budget would not cover writing it", true};
    auto answer = ask(request);
    if (!answer)
        return Narrative{answer.error().message(), true};
    add_to(m_ending.usage, answer->usage);
    SION_CHECK(add_usage(*m_p.db, m_p.row.id, answer->usage));
    if (answer->text.empty())
        return Narrative{"the model wrote none", true};
    return Narrative{std::move(answer->text), false};
}

} // namespace sion::session
