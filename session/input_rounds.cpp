// SPDX-License-Identifier: MIT
// Input rounds: what an MCP server asks mid-call, of the person (elicitation) or of a model
// (sampling).
#include "session/elicit.hpp"
#include "session/loop.hpp"

#include <algorithm>
#include <chrono>

namespace sion::session {

Json Loop::elicit(JsonView params) {
    std::string server(params.string_or("server", "").value_or(""));
    // One deadline for the whole question, however many lines its answer takes.
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline;
    if (m_p.question_within_ms)
        deadline = Clock::now() + std::chrono::milliseconds(*m_p.question_within_ms);
    Person& person = *m_p.person;
    Terminal terminal{[&person](std::string_view text) { person.say(text); },
                      [&person, &deadline](std::string_view prompt) -> std::optional<std::string> {
                          if (!deadline)
                              return person.ask(prompt);
                          auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              *deadline - Clock::now());
                          return person.ask(prompt, std::max<int64_t>(left.count(), 0));
                      }};
    Elicited asked =
        person.present()
            ? sion::session::elicit(params, terminal)
            : declined("declined, since there is no one to ask here (" + person.absent_why() + ")");
    if (auto kept = mcp_line(server, "MCP server " + server + " asked for input: " + asked.said);
        !kept)
        m_calls.store_failed(kept.error());
    return std::move(asked.result);
}

rpc::Reply Loop::sample(JsonView params) {
    // A span of the trace under the call during which the server asked.
    std::string during = m_calls.under_way_span();
    otlp::Span span =
        m_p.trace->begin("chat", during.empty() ? m_p.trace->root() : during, otlp::Kind::client);
    Completion c = write_completion(
        params,
        [this, &span](const std::string& spec) {
            auto model = sampling_model(spec);
            if (model)
                name_chat(span, (*model)->name());
            return model;
        },
        m_p.settings.budget_tokens, tokens_used());
    span.attributes.set("sion.purpose", "completion");
    span.attributes.set("sion.mcp.server", std::string_view(c.server));
    span.attributes.set("gen_ai.usage.input_tokens", c.usage.input_tokens);
    span.attributes.set("gen_ai.usage.output_tokens", c.usage.output_tokens);
    if (c.said.empty()) {
        span.error = true;
        span.status_message = "not written";
    }
    m_p.trace->end(std::move(span));
    if (c.said.empty())
        return std::move(c.reply);
    add_to(m_ending.usage, c.usage);
    if (auto added = add_usage(*m_p.db, m_p.row.id, c.usage); !added) {
        m_calls.store_failed(added.error());
        return rpc::Reply::fail(rpc::k_internal_error, "the session cannot record it");
    }
    if (auto kept = mcp_line(c.server, c.said); !kept) {
        m_calls.store_failed(kept.error());
        return rpc::Reply::fail(rpc::k_internal_error, "the session cannot record it");
    }
    return std::move(c.reply);
}

Result<models::Model*> Loop::sampling_model(const std::string& spec) {
    if (spec.empty())
        return m_p.models.front().get();
    for (const auto& model : m_p.models)
        if (model->name() == spec)
            return model.get();
    std::unique_ptr<models::Model>& opened = m_sampling_models[spec];
    if (!opened) {
        SION_TRY(opened, models::open_model(spec));
    }
    return opened.get();
}

} // namespace sion::session
