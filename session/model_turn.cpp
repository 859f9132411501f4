// SPDX-License-Identifier: MIT
// The model turn: the first model that answers is asked (fallback, a rest for the failing), its
// answer recorded, and the tokens the budget counts.
#include "lib/models/wire.hpp"
#include "session/loop.hpp"

#include <algorithm>

namespace sion::session {

namespace {

// A message of the conversation as GenAI's conventions write messages in spans: a role and its
// parts (text, tool calls, a tool call's response).
Json genai_message(JsonView m) {
    std::string_view role = m.string_or("role", "").value_or("");
    Json parts = Json::array();
    auto text_part = [&parts](std::string_view type, std::string_view text) {
        Json p = Json::object();
        p.set("type", type);
        p.set("content", text);
        parts.push(std::move(p));
    };
    if (role == "tool") {
        Json p = Json::object();
        p.set("type", "tool_call_response");
        p.set("id", m.string_or("call", "").value_or(""));
        p.set("response", m.string_or("text", "").value_or(""));
        parts.push(std::move(p));
    } else {
        if (auto reasoning = m.string("reasoning"); reasoning && !reasoning->empty())
            text_part("reasoning", *reasoning);
        if (auto text = m.string("text"); text && !text->empty())
            text_part("text", *text);
        for (JsonView c : m.get("calls")) {
            Json p = Json::object();
            p.set("type", "tool_call");
            p.set("id", c.string_or("id", "").value_or(""));
            p.set("name", c.string_or("tool", "").value_or(""));
            p.set("arguments", Json::copy_of(c.get("input")));
            parts.push(std::move(p));
        }
    }
    Json out = Json::object();
    out.set("role", role);
    out.set("parts", std::move(parts));
    return out;
}

const char* purpose_name(models::Purpose purpose) {
    switch (purpose) {
    case models::Purpose::turn:
        return "turn";
    case models::Purpose::summary:
        return "summary";
    case models::Purpose::completion:
        return "completion";
    case models::Purpose::sort:
        return "sort";
    }
    return "turn";
}

} // namespace

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
    std::string failed_model; // the model asked before this one, which failed
    for (size_t k = 0; k < order.size(); ++k) {
        models::Model& model = *m_p.models[order[k]];
        otlp::Span span = m_p.trace->begin("chat", m_asking_under, otlp::Kind::client);
        name_chat(span, model.name());
        Json& a = span.attributes;
        a.set("gen_ai.request.max_tokens", request.max_output_tokens);
        a.set("sion.purpose", purpose_name(request.purpose));
        if (!failed_model.empty()) {
            a.set("sion.fallback.from", std::string_view(failed_model));
            a.set("sion.fallback.reason", std::string_view(last.message()));
        }
        if (m_p.trace->captures_content()) {
            Json system = Json::array();
            Json part = Json::object();
            part.set("type", "text");
            part.set("content", request.system);
            system.push(std::move(part));
            a.set("gen_ai.system_instructions", std::string_view(system.dump()));
            Json input = Json::array();
            for (const Json& m : request.conversation)
                input.push(genai_message(m.view()));
            a.set("gen_ai.input.messages", std::string_view(input.dump()));
        }
        auto answer = model.answer(request);
        if (answer) {
            if (!answer->model.empty())
                a.set("gen_ai.response.model", std::string_view(answer->model));
            if (!answer->id.empty())
                a.set("gen_ai.response.id", std::string_view(answer->id));
            if (!answer->finish_reason.empty())
                a.set("gen_ai.response.finish_reasons", Json::strings({answer->finish_reason}));
            a.set("gen_ai.usage.input_tokens", answer->usage.input_tokens);
            a.set("gen_ai.usage.output_tokens", answer->usage.output_tokens);
            a.set("gen_ai.usage.cache_read.input_tokens", answer->usage.cache_read_tokens);
            a.set("gen_ai.usage.cache_write.input_tokens", answer->usage.cache_write_tokens);
            if (m_p.trace->captures_content()) {
                Json m = Json::object();
                m.set("role", "assistant");
                if (!answer->text.empty())
                    m.set("text", std::string_view(answer->text));
                Json calls = Json::array();
                for (const auto& c : answer->calls) {
                    Json one = Json::object();
                    one.set("id", std::string_view(c.id));
                    one.set("tool", std::string_view(c.tool));
                    one.set("input", Json::copy_of(c.input));
                    calls.push(std::move(one));
                }
                m.set("calls", std::move(calls));
                Json output = Json::array();
                Json said = genai_message(m.view());
                said.set("finish_reason", std::string_view(answer->finish_reason));
                output.push(std::move(said));
                a.set("gen_ai.output.messages", std::string_view(output.dump()));
            }
            m_p.trace->end(std::move(span));
            return answer;
        }
        last = Error(answer.error().exit(),
                     "the model " + model.name() + " failed: " + answer.error().message());
        span.error = true;
        span.status_message = answer.error().message();
        a.set("error.type", answer.error().exit() == Exit::unavailable ? "unavailable"
                            : answer.error().exit() == Exit::no_perm   ? "unauthorized"
                                                                       : "refused");
        m_p.trace->end(std::move(span));
        failed_model = model.name();
        m_p.out->text_cut();
        if (!models::worth_another_model(answer.error()) || k + 1 == order.size() || stopping())
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
        // The spans ended since the last answer (its calls', this one's) go in its transaction.
        SION_TRY(Txn txn, Txn::begin(*m_p.db));
        SION_CHECK(append_message(*m_p.db, m_p.row.id, m));
        SION_CHECK(add_usage(*m_p.db, m_p.row.id, answer.usage));
        m_p.trace->store(*m_p.db, m_p.row.id);
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
    return m_p.used_before + m_ending.usage.input_tokens + m_ending.usage.output_tokens;
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
