// SPDX-License-Identifier: MIT
// The model turn: the first model that answers is asked (fallback, a rest for the failing), its
// answer recorded, and the tokens the budget counts.
#include "lib/models/wire.hpp"
#include "session/loop.hpp"

#include <algorithm>

namespace sion::session {

Result<models::Answer> Loop::ask(const models::Request& request) {
    int64_t now = models::steady_ms();
    std::vector<size_t> order;
    for (size_t i = 0; i < m_p.models.size(); ++i)
        if (m_resting_until[i] <= now)
            order.push_back(i);
    for (size_t i = 0; i < m_p.models.size(); ++i)
        if (m_resting_until[i] > now)
            order.push_back(i);
    Error last(Exit::unavailable, "no model");
    for (size_t k = 0; k < order.size(); ++k) {
        models::Model& model = *m_p.models[order[k]];
        auto answer = model.answer(request);
        if (answer)
            return answer;
        last = Error(answer.error().exit(),
                     "the model " + model.name() + " failed: " + answer.error().message());
        if (!models::worth_another_model(answer.error()) || k + 1 == order.size())
            break;
        m_resting_until[order[k]] = models::steady_ms() + k_model_rest_ms;
        m_p.out->notice(last.message() + "; asking " + m_p.models[order[k + 1]]->name());
    }
    return last;
}

Status Loop::record_answer(models::Answer& answer) {
    Json m = Json::object();
    m.set("role", "assistant");
    if (!answer.text.empty())
        m.set("text", std::string_view(answer.text));
    if (!answer.reasoning.empty())
        m.set("reasoning", std::string_view(answer.reasoning));
    // What the provider keeps to be given back (signed thinking), in members of its own.
    for (JsonView kept : answer.kept.view())
        m.set(kept.key(), Json::copy_of(kept));
    if (!answer.calls.empty()) {
        Json calls = Json::array();
        for (auto& c : answer.calls) {
            // Ids must be unique in the session: a scripted model starts its numbering again
            // in each run.
            std::string base = c.id.empty() ? "call" : c.id;
            std::string id = base;
            for (int n = 2; m_call_ids.count(id) != 0; ++n)
                id = base + "_" + std::to_string(n);
            m_call_ids.insert(id);
            c.id = id;
            Json one = Json::object();
            one.set("id", std::string_view(c.id));
            one.set("tool", std::string_view(c.tool));
            one.set("input", Json::copy_of(c.input));
            calls.push(std::move(one));
        }
        m.set("calls", std::move(calls));
    }
    add_to(m_ending.usage, answer.usage);
    {
        SION_TRY(Txn txn, Txn::begin(*m_p.db));
        SION_CHECK(append_message(*m_p.db, m_p.row.id, m));
        SION_CHECK(add_usage(*m_p.db, m_p.row.id, answer.usage));
        SION_CHECK(txn.commit());
    }
    m_conversation.push_back(std::move(m));
    if (!answer.reasoning.empty())
        m_p.out->reasoning(answer.reasoning);
    if (!answer.text.empty())
        m_p.out->text(answer.text);
    return {};
}

int64_t Loop::tokens_used() const {
    return m_ending.usage.input_tokens + m_ending.usage.output_tokens;
}

bool Loop::over_budget(const models::Request& request) const {
    if (!m_p.settings.budget_tokens)
        return false;
    // A model told how hard to think may use its room for thinking besides.
    int64_t room = 0;
    for (const auto& model : m_p.models)
        room = std::max(room, model->thinking_room());
    return tokens_used() + models::estimate_tokens(request) + room > *m_p.settings.budget_tokens;
}

} // namespace sion::session
