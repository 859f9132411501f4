// SPDX-License-Identifier: MIT
// sion-sandbox serve as the session's sandbox, over the pipes.
#include "session/sandbox_client.hpp"

#include "session/trace.hpp"

#include "lib/programs.hpp"
#include "lib/text.hpp"

#include <cmath>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace sion::session {

namespace {

// stderr of sion-sandbox goes to an unnamed temporary file: read only when something failed, and
// never a pipe that could fill up and stall it.
Result<Fd> temporary_file() {
    const char* dir = std::getenv("TMPDIR");
    std::string where = dir != nullptr && *dir == '/' ? dir : "/tmp";
    int fd = ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return sys_error(Exit::os, errno, "cannot make a temporary file in '%s'", where.c_str());
    return Fd(fd);
}

// `sion-sandbox COMMAND OPTIONS…`, with sandbox_environment().
Result<ChildSpec> sandbox_command(const char* command, const std::vector<std::string>& options) {
    SION_TRY(std::string program, find_program("sion-sandbox"));
    ChildSpec spec;
    spec.argv = {program, command};
    spec.argv.insert(spec.argv.end(), options.begin(), options.end());
    spec.env = sandbox_environment();
    return spec;
}

} // namespace

std::vector<std::string> sandbox_environment() {
    return env_keep({"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SION_HOME", "SION_EXEC_PATH",
                     "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "XDG_RUNTIME_DIR"});
}

Result<proto::Config> describe_sandbox(const std::vector<std::string>& options) {
    SION_TRY(ChildSpec spec, sandbox_command("describe", options));
    spec.time_limit = std::chrono::seconds(30);
    auto cannot = [](const std::string& why) {
        return Error(Exit::unavailable, "cannot ask sion-sandbox about the sandbox: " + why);
    };
    auto ran = run(std::move(spec), "", size_t{1} << 20);
    if (!ran)
        return cannot(ran.error().message());
    auto answer = Json::parse(ran->out);
    if (!answer || ran->timed_out || ran->out_truncated) {
        std::string said = one_line(ran->err);
        return cannot(!said.empty() ? said : format("it exited %d", ran->status));
    }
    JsonView error = answer->get("error");
    if (!error.exists()) {
        auto config = proto::config_from_json(answer->view());
        if (!config)
            return cannot(config.error().message());
        return config;
    }
    auto code = error.integer("code");
    auto message = error.string("message");
    if (!code || !message || (*code != to_int(Exit::usage) && *code != to_int(Exit::config)))
        return cannot(one_line(error.dump()));
    return Error(static_cast<Exit>(*code), std::string(*message));
}

Result<std::unique_ptr<SandboxClient>> SandboxClient::start(const std::vector<std::string>& options,
                                                            SandboxLock* lock) {
    SION_TRY(ChildSpec spec, sandbox_command("serve", options));
    SION_TRY(Fd errors, temporary_file());
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::from_fd(errors.get());
    if (lock != nullptr) {
        spec.extra_fds.push_back({lock->fd(), 3});
        SION_CHECK(lock->record());
    }
    SION_TRY(Child child, Child::spawn(spec));
    if (lock != nullptr)
        SION_CHECK(lock->record(child.pid()));
    std::unique_ptr<SandboxClient> client(new SandboxClient(std::move(child), std::move(errors)));
    client->m_rpc =
        std::make_unique<rpc::Connection>(client->m_child.out().get(), client->m_child.in().get());
    client->m_caller = std::make_unique<rpc::Caller>(*client->m_rpc);
    auto trivial = client->exec("true", std::nullopt);
    if (!trivial) {
        if (auto refused = client->refusal())
            return *refused;
        return Error(Exit::unavailable, "the sandbox does not work: " + trivial.error().message());
    }
    if (trivial->exit != 0)
        return make_error(Exit::unavailable,
                          "the sandbox does not work: a trivial command exited %d%s%s",
                          trivial->exit, trivial->stderr_text.empty() ? "" : ": ",
                          trivial->stderr_text.substr(0, trivial->stderr_text.find('\n')).c_str());
    return client;
}

Result<proto::Config> SandboxClient::describe() {
    if (m_dead)
        return make_error(Exit::unavailable, "the sandbox is gone");
    auto answer = m_caller->call("sandbox/describe");
    if (!answer)
        return gone(answer.error());
    if (answer->kind == rpc::Kind::error)
        return make_error(Exit::unavailable, "sion-sandbox cannot describe the sandbox: %.*s",
                          static_cast<int>(answer->error_message.size()),
                          answer->error_message.data());
    auto config = proto::config_from_json(answer->result);
    if (!config)
        return make_error(Exit::unavailable, "sion-sandbox described the sandbox wrongly: %s",
                          config.error().message().c_str());
    return config;
}

// serve judges its options before the sandbox starts, as describe does, and refuses them with the
// status describe gives (Exit::usage or Exit::config) and its one line.
std::optional<Error> SandboxClient::refusal() {
    auto status = m_child.wait_for(std::chrono::seconds(5));
    if (!status || !*status)
        return std::nullopt;
    int code = (*status)->exit_code;
    std::string said = last_error();
    if ((code != to_int(Exit::usage) && code != to_int(Exit::config)) || said.empty())
        return std::nullopt;
    return Error(static_cast<Exit>(code), said);
}

SandboxClient::~SandboxClient() {
    if (!m_dead && m_caller) {
        // Ends the session: close answers once the commands asked for have ended.
        (void)m_caller->call("sandbox/close");
    }
    m_child.in().reset();
    auto ended = m_child.wait_for(std::chrono::seconds(10));
    if (!ended || !*ended)
        (void)m_child.kill_group(SIGKILL);
}

std::string SandboxClient::last_error() {
    if (!m_errors)
        return {};
    off_t size = ::lseek(m_errors.get(), 0, SEEK_END);
    if (size <= 0)
        return {};
    off_t from = size > 4096 ? size - 4096 : 0;
    std::string text(static_cast<size_t>(size - from), '\0');
    ssize_t n = ::pread(m_errors.get(), text.data(), text.size(), from);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    size_t nl = text.rfind('\n');
    std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
    std::string_view prefix = "sion-sandbox: ";
    if (last.rfind(prefix, 0) == 0)
        last.erase(0, prefix.size());
    return last;
}

Error SandboxClient::gone(const Error& why) {
    std::lock_guard lock(m_gone);
    m_dead = true;
    std::string said = last_error();
    if (!said.empty())
        return Error(Exit::unavailable, said);
    auto status = m_child.wait_for(std::chrono::milliseconds(200));
    if (status && *status)
        return make_error(Exit::unavailable, "sion-sandbox exited %d", (*status)->status);
    return Error(Exit::unavailable, "sion-sandbox: " + why.message());
}

Result<proto::ExecResult>
SandboxClient::exec(const std::string& command, std::optional<double> timeout_seconds,
                    const std::vector<std::pair<std::string, std::string>>& env) {
    proto::ExecRequest request;
    request.command = command;
    request.env = env;
    if (timeout_seconds)
        request.timeout = std::chrono::milliseconds(
            static_cast<int64_t>(std::ceil(*timeout_seconds * 1000)));
    return exec(request);
}

Result<proto::ExecResult> SandboxClient::exec(const proto::ExecRequest& request) {
    if (m_dead)
        return make_error(Exit::unavailable, "the sandbox is gone");
    Elsewhere spent{"sandbox", now_ns(), 0, Json::object()};
    auto answer = m_caller->call("sandbox/exec", proto::exec_request_to_json(request));
    spent.end_ns = now_ns();
    Result<proto::ExecResult> result =
        !answer ? Result<proto::ExecResult>(gone(answer.error()))
        : answer->kind == rpc::Kind::error
            ? make_error(Exit::data, "the sandbox refused the command: %.*s",
                         static_cast<int>(answer->error_message.size()),
                         answer->error_message.data())
            : proto::exec_result_from_json(answer->result);
    if (result) {
        // The command's own time, and what it used, beside the sandbox's whole.
        spent.attributes.set("sion.sandbox.command_ms", result->wall_ms);
        spent.attributes.set("sion.sandbox.cpu_ms", result->cpu_ms);
        spent.attributes.set("sion.sandbox.max_rss_kib", result->max_rss_kib);
        spent.attributes.set("sion.sandbox.exit", static_cast<int64_t>(result->exit));
        spent.attributes.set("sion.sandbox.timed_out", result->timed_out);
    }
    note_elsewhere(std::move(spent));
    return result;
}

} // namespace sion::session
