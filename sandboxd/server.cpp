// SPDX-License-Identifier: MIT
// sion-sandbox serve: sandbox/exec, sandbox/describe and sandbox/close on the pipes, each command
// run in the warm bubblewrap sandbox, or in a container of its own with Docker.
#include "sandboxd/server.hpp"

#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/proto/sandbox_options.hpp"
#include "lib/rpc/uv_connection.hpp"
#include "sandboxd/bwrap.hpp"
#include "sandboxd/docker.hpp"
#include "sandboxd/warm.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <memory>
#include <optional>

namespace sion::sandboxd {

namespace {

using rpc::Message;
using rpc::Reply;
using rpc::Responder;

// One command run to its end on libuv's thread pool: a Docker command (docker_exec() waits for its
// container), or a skill's script in a sandbox of its own (exec_one()).
struct BlockingJob {
    uv_work_t req{};
    std::function<Result<proto::ExecResult>()> work;
    std::optional<Result<proto::ExecResult>> result;
    std::function<void(Reply)> done;
};

void run_blocking(uv_loop_t* loop, std::function<Result<proto::ExecResult>()> work,
                  std::function<void(Reply)> done) {
    auto* job = new BlockingJob{{}, std::move(work), std::nullopt, std::move(done)};
    job->req.data = job;
    int rc = uv_queue_work(
        loop, &job->req,
        [](uv_work_t* w) {
            auto* j = static_cast<BlockingJob*>(w->data);
            j->result.emplace(j->work());
        },
        [](uv_work_t* w, int) {
            std::unique_ptr<BlockingJob> j(static_cast<BlockingJob*>(w->data));
            if (!j->result || !*j->result)
                j->done(Reply::fail(rpc::k_internal_error,
                                    j->result ? j->result->error().message() : "cancelled"));
            else
                j->done(Reply::ok(proto::exec_result_to_json(j->result->value())));
        });
    if (rc != 0) {
        std::unique_ptr<BlockingJob> j(job);
        j->done(Reply::fail(rpc::k_internal_error, uv_strerror(rc)));
    }
}

// The sandbox of a skill's script: the session's, with the skill's folder read-only at /skill, and
// a network only when the session's has one and the skill names hosts: with bubblewrap the declared
// network admitting those hosts alone, with Docker the session's network. The folder must be a
// directory that neither is nor holds $SION_HOME; inside it, only under $SION_HOME/skills.
Result<Config> skill_config(const Config& session, const proto::ExecRequest& request) {
    Config config = session;
    SION_TRY(std::string dir, resolve_path(request.skill));
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return make_error(Exit::data, "the skill's folder %s is not a directory", dir.c_str());
    if (!session.home.empty()) {
        SION_TRY(std::string home, resolve_path(session.home));
        SION_TRY(bool overlaps, paths_overlap(dir, home));
        bool under_skills = dir.compare(0, home.size() + 8, home + "/skills/") == 0;
        if (overlaps && !under_skills)
            return make_error(Exit::data, "the skill's folder %s and %s overlap", dir.c_str(),
                              home.c_str());
    }
    config.skill_dir = dir;
    bool network = session.network != Network::none && !request.skill_hosts.empty();
    if (session.backend == BackendKind::docker) {
        if (!network)
            config.network = Network::none;
    } else if (network) {
        config.network = Network::declared;
        config.allow_hosts = request.skill_hosts;
    } else {
        config.network = Network::none;
        config.allow_hosts.clear();
    }
    return config;
}

// The session: the client on stdin and stdout, and the sandbox its commands run in.
class Session {
public:
    Session(uv_loop_t* loop, const Config& config) : m_loop(loop), m_config(config) {}

    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    Session(Session&&) = delete;
    Session& operator=(Session&&) = delete;

    ~Session() { close_term(); }

    Status start();
    [[nodiscard]] int outcome() const;

private:
    void open_client();
    void exec(const Message& m, const Responder& respond);
    void close_request(Responder respond);
    void answered();
    void finish();
    void watch_term();
    void terminated(int signal);
    void close_term();

    uv_loop_t* m_loop;
    const Config& m_config;
    std::unique_ptr<WarmSandbox> m_warm; // bubblewrap; Docker has none
    std::unique_ptr<rpc::UvConnection> m_client;
    int m_in_flight = 0;
    std::optional<Responder> m_close; // sandbox/close, answered once what runs has ended
    bool m_client_done = false;
    bool m_finished = false;
    std::optional<Error> m_failure;
    uv_signal_t* m_term = nullptr; // freed in its close callback
    int m_signal = 0;              // the SIGTERM that ends the session, once it came
};

Status Session::start() {
    if (m_config.backend == BackendKind::docker) {
        // The sandbox must work before the session starts: the engine answers, the image is here.
        SION_CHECK(docker_image_present(m_config.image));
        watch_term();
        open_client();
        return {};
    }
    WarmSandbox::Events events;
    events.ready = [this] { open_client(); };
    events.ended = [this](Error why) {
        if (!m_failure)
            m_failure = std::move(why);
        finish();
    };
    SION_TRY(m_warm, WarmSandbox::start(m_loop, m_config, std::move(events)));
    watch_term();
    return {};
}

void Session::open_client() {
    if (m_client || m_finished)
        return;
    rpc::UvHandlers h;
    h.requests["sandbox/exec"] = [this](const Message& m, const Responder& respond) {
        exec(m, respond);
    };
    h.requests["sandbox/describe"] = [this](const Message&, const Responder& respond) {
        respond(Reply::ok(proto::config_to_json(m_config)));
    };
    h.requests["sandbox/close"] = [this](const Message&, Responder respond) {
        close_request(std::move(respond));
    };
    h.on_end = [this](const Status& st) {
        if (!st && !m_failure)
            m_failure = st.error();
        m_client_done = true;
        if (m_in_flight == 0)
            finish();
    };
    auto client = rpc::UvConnection::open(m_loop, STDIN_FILENO, STDOUT_FILENO, std::move(h));
    if (!client) {
        m_failure = client.error();
        finish();
        return;
    }
    m_client = std::move(*client);
}

void Session::exec(const Message& m, const Responder& respond) {
    if (m_close) {
        respond(Reply::fail(rpc::k_invalid_request, "the session is closing: no more commands"));
        return;
    }
    auto request = proto::exec_request_from_json(m.params);
    if (!request) {
        respond(Reply::fail(rpc::k_invalid_params, "invalid params: " + request.error().message()));
        return;
    }
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(m_config.limits.timeout);
    request->timeout = std::min(request->timeout.value_or(limit), limit);
    ++m_in_flight;
    auto done = [this, respond](const Reply& reply) {
        respond(reply);
        answered();
    };
    if (!request->skill.empty()) {
        auto config = skill_config(m_config, *request);
        if (!config) {
            respond(Reply::fail(rpc::k_invalid_params, config.error().message()));
            answered();
            return;
        }
        run_blocking(
            m_loop,
            [config = std::move(*config), r = std::move(*request)] {
                return exec_one(config, r, r.input);
            },
            done);
    } else if (m_warm) {
        m_warm->exec(*request, done);
    } else {
        run_blocking(
            m_loop, [config = &m_config, r = std::move(*request)] { return docker_exec(*config, r); },
            done);
    }
}

void Session::answered() {
    --m_in_flight;
    if (m_in_flight == 0 && (m_client_done || m_close))
        finish();
}

// The requests already in flight end first (each within its time limit), then close is answered.
void Session::close_request(Responder respond) {
    if (m_close) {
        respond(Reply::fail(rpc::k_invalid_request, "the session is closing already"));
        return;
    }
    m_close = std::move(respond);
    if (m_in_flight == 0)
        finish();
}

// SIGTERM (the parent-death signal when the session that started this is killed, or anyone's):
// what runs ends (SIGTERM, then SIGKILL: WarmSandbox::end_commands()) and is answered, then the
// session ends, 128 + 15.
void Session::watch_term() {
    m_term = new uv_signal_t{};
    uv_signal_init(m_loop, m_term);
    m_term->data = this;
    uv_signal_start(
        m_term,
        [](uv_signal_t* h, int signal) { static_cast<Session*>(h->data)->terminated(signal); },
        SIGTERM);
    uv_unref(reinterpret_cast<uv_handle_t*>(m_term));
}

// The handle is freed in its close callback, on the loop's next run (serve() runs it).
void Session::close_term() {
    if (m_term == nullptr)
        return;
    uv_close(reinterpret_cast<uv_handle_t*>(m_term),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_signal_t*>(h); });
    m_term = nullptr;
}

void Session::terminated(int signal) {
    if (m_signal != 0)
        return;
    m_signal = signal;
    if (m_in_flight == 0 || !m_warm)
        finish();
    else
        m_warm->end_commands();
}

void Session::finish() {
    if (m_finished)
        return;
    m_finished = true;
    close_term();
    if (m_warm)
        m_warm->stop(); // requests still waiting (the sandbox ended) are answered with an error
    if (m_close)
        (*m_close)(Reply::ok(Json::object()));
    if (m_client)
        m_client->close();
}

int Session::outcome() const {
    if (m_signal != 0)
        return 128 + m_signal;
    if (m_failure) {
        report(*m_failure);
        return to_int(m_failure->exit());
    }
    if (m_client) {
        if (Status st = m_client->write_status(); !st) {
            report(st.error());
            return to_int(st.error().exit());
        }
    }
    return 0;
}

} // namespace

Result<int> serve(const Config& config) {
    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        return make_error(Exit::os, "cannot start the event loop: %s", uv_strerror(rc));
    int status = 0;
    {
        Session session(&loop, config);
        Status started = session.start();
        uv_run(&loop, UV_RUN_DEFAULT);
        if (started) {
            status = session.outcome();
        } else {
            report(started.error());
            status = to_int(started.error().exit());
        }
    }
    uv_run(&loop, UV_RUN_DEFAULT); // close callbacks of what the session dropped
    if (uv_loop_close(&loop) != 0)
        return make_error(Exit::software, "internal error: the event loop did not close cleanly");
    return status;
}

namespace {

// One command in a warm sandbox of its own, on a loop of its own.
Result<proto::ExecResult> exec_warm(const Config& config, proto::ExecRequest request) {
    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        return make_error(Exit::os, "cannot start the event loop: %s", uv_strerror(rc));
    std::optional<Result<proto::ExecResult>> outcome;
    {
        std::unique_ptr<WarmSandbox> warm;
        WarmSandbox::Events events;
        events.ready = [&] {
            warm->exec(request, [&](const Reply& reply) {
                if (reply.code != 0)
                    outcome.emplace(Error(Exit::software, reply.message));
                else
                    outcome.emplace(proto::exec_result_from_json(reply.result));
                warm->stop();
            });
        };
        events.ended = [&](Error why) {
            if (!outcome)
                outcome.emplace(std::move(why));
            warm->stop();
        };
        auto started = WarmSandbox::start(&loop, config, std::move(events));
        if (started)
            warm = std::move(*started);
        else
            outcome.emplace(started.error());
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0)
        return make_error(Exit::software, "internal error: the event loop did not close cleanly");
    if (!outcome)
        return make_error(Exit::software, "internal error: the sandbox gave no answer");
    return std::move(*outcome);
}

} // namespace

Result<proto::ExecResult> exec_one(const Config& config, const proto::ExecRequest& request,
                                   const std::optional<std::string>& input) {
    proto::ExecRequest r = request;
    r.input = input.value_or("");
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(config.limits.timeout);
    r.timeout = std::min(r.timeout.value_or(limit), limit);
    if (config.backend == BackendKind::docker)
        return docker_exec(config, r);
    if (config.network == Network::declared && !config.allow_hosts.empty())
        return exec_warm(config, std::move(r));
    return exec_once(config, request, input);
}

} // namespace sion::sandboxd
