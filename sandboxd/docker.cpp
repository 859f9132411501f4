// SPDX-License-Identifier: MIT
// The Docker backend: the `docker run` command line, running it under a time limit, and telling
// docker's own failures from the command's.
#include "sandboxd/docker.hpp"

#include "lib/child.hpp"
#include "lib/text.hpp"
#include "sandboxd/capture.hpp"
#include "sandboxd/output.hpp"
#include "sandboxd/seccomp.hpp"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

namespace sion::sandboxd {

namespace {

using std::chrono::milliseconds;

constexpr milliseconds k_engine_answer{15000};     // docker version, image inspect
constexpr milliseconds k_remove_limit{30000};      // docker rm -f of a container out of time
constexpr milliseconds k_docker_grace{60000};      // a docker command that outlives its container
constexpr size_t k_small_output = size_t{1} << 20; // what docker's own commands may print
constexpr std::string_view k_default_host = "unix:///var/run/docker.sock";

bool contains(std::string_view text, std::string_view what) {
    return text.find(what) != std::string_view::npos;
}

std::string_view trim_end(std::string_view s) {
    while (!s.empty()
           && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

std::string_view first_line(std::string_view s) {
    size_t nl = s.find('\n');
    return trim_end(nl == std::string_view::npos ? s : s.substr(0, nl));
}

// A CSV field as docker's --mount reads it: quoted when it holds a comma or a quote.
std::string csv_field(const std::string& field) {
    if (field.find_first_of(",\"\n") == std::string::npos)
        return field;
    std::string quoted = "\"";
    for (char c : field) {
        if (c == '"')
            quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

bool is_env_name(const std::string& name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
               || c == '_';
    });
}

Result<RunResult> docker_cli(std::vector<std::string> args, milliseconds limit) {
    ChildSpec spec;
    spec.argv = {"docker"};
    spec.argv.insert(spec.argv.end(), std::make_move_iterator(args.begin()),
                     std::make_move_iterator(args.end()));
    spec.env = docker_cli_env();
    spec.time_limit = limit;
    Result<RunResult> r = run(std::move(spec), {}, k_small_output);
    if (!r && r.error().exit() == Exit::not_found)
        return make_error(Exit::unavailable, "docker is not installed: install Debian's docker.io");
    return r;
}

// Where the engine is said to be: docker's own words if it named the address, else DOCKER_HOST.
std::string engine_address(std::string_view err, std::string_view before, std::string_view after) {
    size_t at = err.find(before);
    if (at != std::string_view::npos) {
        std::string_view rest = err.substr(at + before.size());
        size_t end = rest.find(after);
        if (end != std::string_view::npos && end > 0)
            return std::string(rest.substr(0, end));
    }
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the project does not setenv once threads run
    const char* host = std::getenv("DOCKER_HOST");
    return host != nullptr && *host != '\0' ? host : std::string(k_default_host);
}

// docker's words for an engine it cannot reach, as an Error that names the fix.
std::optional<Error> engine_problem(std::string_view err) {
    if (contains(err, "Cannot connect to the Docker daemon")) {
        std::string at = engine_address(err, "Cannot connect to the Docker daemon at ", ". Is the");
        return make_error(Exit::unavailable,
                          "no Docker engine answers at '%s': start it (systemctl start docker), "
                          "or install Debian's docker.io",
                          at.c_str());
    }
    if (contains(err, "permission denied while trying to connect")) {
        std::string at = engine_address(err, "daemon socket at ", ": ");
        return make_error(
            Exit::no_perm,
            "the Docker engine at '%s' refuses this user: permission denied: join the "
            "docker group, or run the engine rootless",
            at.c_str());
    }
    return std::nullopt;
}

Error image_missing(const std::string& image) {
    return make_error(
        Exit::unavailable,
        "image '%s' is not on this machine: load it first (docker pull or docker load), "
        "sion never pulls",
        image.c_str());
}

// Lines docker run adds after its message: its usage trailer ("See 'docker run --help'." before
// docker 23, "Run 'docker run --help' for more information" since), and its own log lines
// ('time="..." level=error msg="error waiting for container: context canceled"', 'ERRO[0000] ...').
bool docker_afterword(std::string_view line) {
    return line.empty() || line == "See 'docker run --help'."
           || line == "Run 'docker run --help' for more information"
           || (line.substr(0, 6) == "time=\"" && contains(line, " level="))
           || line.substr(0, 5) == "ERRO[" || line.substr(0, 5) == "WARN[";
}

// Removes a container when its time runs out, while its docker command still runs, and again
// every k_retry until that command has ended. Killing `docker run` instead would leave the
// container running; and a container that docker is still creating when the time runs out is not
// there to be removed yet: the docker command, alive, goes on to start it, and the next removal
// finds it. Once the docker command has ended it makes no more containers.
class Watchdog {
public:
    static constexpr milliseconds k_retry{200};

    static Result<std::unique_ptr<Watchdog>> start(std::string name,
                                                   Child::Clock::time_point deadline) {
        auto w = std::unique_ptr<Watchdog>(new Watchdog(std::move(name), deadline));
        try {
            w->m_thread = std::thread([raw = w.get()] { raw->watch(); });
        } catch (const std::system_error& e) {
            return make_error(Exit::os, "cannot start a thread to watch the container's time: %s",
                              e.what());
        }
        return w;
    }

    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;
    Watchdog(Watchdog&&) = delete;
    Watchdog& operator=(Watchdog&&) = delete;

    ~Watchdog() { (void)stop(); }

    // Stops watching (the docker command has ended); whether the time ran out.
    bool stop() {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_done = true;
        }
        m_wake.notify_all();
        if (m_thread.joinable())
            m_thread.join();
        return m_fired;
    }

private:
    Watchdog(std::string name, Child::Clock::time_point deadline)
        : m_name(std::move(name)), m_deadline(deadline) {}

    void watch() {
        std::unique_lock<std::mutex> lock(m_mutex);
        if (m_wake.wait_until(lock, m_deadline, [this] { return m_done; }))
            return;
        m_fired = true;
        while (!m_done) {
            lock.unlock();
            // docker_exec removes it once more, and reports that.
            (void)docker_remove_container(m_name);
            lock.lock();
            m_wake.wait_for(lock, k_retry, [this] { return m_done; });
        }
    }

    std::string m_name;
    Child::Clock::time_point m_deadline;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_done = false;
    bool m_fired = false;
    std::thread m_thread;
};

Status check_request(const Config& config, const proto::ExecRequest& request) {
    if (config.backend != BackendKind::docker || config.image.empty())
        return make_error(Exit::software, "the Docker backend needs an image");
    if (request.command.empty() == request.argv.empty())
        return make_error(Exit::data, request.command.empty()
                                          ? "nothing to run: give a command or an argv"
                                          : "give a command or an argv, not both");
    for (const auto& [name, value] : request.env)
        if (!is_env_name(name))
            return make_error(Exit::data, "'%s' is not an environment variable name", name.c_str());
    return {};
}

milliseconds time_limit(const Config& config, const proto::ExecRequest& request) {
    milliseconds limit = config.limits.timeout;
    if (request.timeout && request.timeout->count() > 0)
        limit = std::min(limit, *request.timeout);
    return limit;
}

// What the docker command's status means: docker's own failure (an Error), or the command's status.
// docker run's 125 is its own failure, unless the command exited 125 itself (then docker said
// nothing); 126 and 127 are the command's, since the init runs it (`[FATAL tini (7)] exec x failed:
// No such file or directory`).
Status docker_status(const Config& config, const Captured& c, proto::ExecResult& result) {
    if (c.exit_code < 0) // the docker command itself was killed, by someone else
        return make_error(Exit::unavailable, "the docker command was killed by signal %d",
                          c.signal);
    int status = static_cast<const ExitStatus&>(c).status; // Captured::status is its status pipe
    if (status == 125) {
        if (std::optional<std::string> why = docker_run_failure(c.err)) {
            if (contains(*why, "No such image") || contains(*why, "no such image"))
                return image_missing(config.image);
            if (auto problem = engine_problem(*why))
                return *problem;
            return make_error(Exit::unavailable, "docker cannot run the command: %s", why->c_str());
        }
    }
    result.exit = status;
    if (status > 128 && status <= 128 + 64)
        result.signal = status - 128;
    return {};
}

} // namespace

std::vector<std::string> docker_cli_env() {
    return env_keep({"PATH", "HOME", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG",
                     "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_API_VERSION",
                     "XDG_RUNTIME_DIR"});
}

bool docker_reads_itself(std::string_view name) {
    static constexpr std::array<std::string_view, 9> k_own = {
        "PATH",    "HOME", "XDG_RUNTIME_DIR", "GCONV_PATH", // its own, and the loader's
        "GODEBUG", "GOGC", "GOMAXPROCS",      "GOMEMLIMIT", "GOTRACEBACK", // the Go runtime's
    };
    static constexpr std::array<std::string_view, 4> k_proxies = {"http_proxy", "https_proxy",
                                                                  "all_proxy", "no_proxy"};
    if (name.substr(0, 7) == "DOCKER_" || name.substr(0, 3) == "LD_")
        return true;
    if (std::find(k_own.begin(), k_own.end(), name) != k_own.end())
        return true;
    return std::any_of(k_proxies.begin(), k_proxies.end(), [name](std::string_view proxy) {
        return ascii_iequals(name, proxy);
    });
}

std::vector<std::string> docker_run_env(const proto::ExecRequest& request) {
    std::vector<std::string> env = docker_cli_env();
    for (const auto& [name, value] : request.env)
        if (!docker_reads_itself(name))
            env_set(env, name, value);
    return env;
}

Status docker_remove_container(const std::string& name) {
    SION_TRY(RunResult r, docker_cli({"rm", "--force", name}, k_remove_limit));
    if (r.status == 0 || contains(r.err, "No such container")
        || contains(r.err, "already in progress"))
        return {};
    if (auto problem = engine_problem(r.err))
        return *problem;
    return make_error(Exit::unavailable, "cannot remove the container '%s': %s", name.c_str(),
                      std::string(first_line(r.err)).c_str());
}

std::optional<std::string> docker_run_failure(const std::string& err) {
    std::string_view s = trim_end(err);
    bool trailer = false;
    std::string_view line;
    for (;;) {
        size_t nl = s.rfind('\n');
        line = trim_end(s.substr(nl == std::string_view::npos ? 0 : nl + 1));
        if (!docker_afterword(line) || nl == std::string_view::npos)
            break;
        trailer = trailer || contains(line, "'docker run --help'");
        s = s.substr(0, nl);
    }
    constexpr std::string_view k_prefix = "docker: ";
    if (line.substr(0, k_prefix.size()) == k_prefix)
        line.remove_prefix(k_prefix.size());
    else if (trailer)
        line = first_line(s);
    else
        return std::nullopt;
    while (!line.empty() && line.back() == '.')
        line.remove_suffix(1);
    return std::string(line);
}

std::vector<std::string> docker_run_argv(const Config& config, const proto::ExecRequest& request,
                                         const DockerRun& run) {
    const Limits& l = config.limits;
    std::string memory = std::to_string(l.memory);
    std::string cpu = std::to_string(l.cpu.count());
    std::string fsize = std::to_string(l.file_size);
    std::vector<std::string> argv = {"docker", "run", "--rm", "-i", "--init", "--read-only"};
    auto option = [&argv](const char* flag, std::string value) {
        argv.emplace_back(flag);
        argv.push_back(std::move(value));
    };
    option("--pull", "never");
    option("--log-driver", "none"); // output goes through the attached streams only, never to disk
    option("--label", std::string(k_docker_label) + "=" + std::to_string(::getpid()));
    option("--name", run.name);
    option("--user", std::to_string(run.uid) + ":" + std::to_string(run.gid));
    option("--cap-drop", "ALL");
    option("--security-opt", "no-new-privileges");
    if (!run.seccomp.empty())
        option("--security-opt", "seccomp=" + run.seccomp);
    option("--memory", memory);
    option("--memory-swap", memory);
    option("--pids-limit", std::to_string(k_docker_pids));
    option("--cpus", std::string(k_docker_cpus));
    option("--tmpfs", std::string(k_docker_tmpfs));
    option("--mount", "type=bind," + csv_field("src=" + run.workspace) + ",dst=/workspace");
    if (!config.channel.empty())
        option("--mount",
               "type=bind," + csv_field("src=" + config.channel) + ",dst=" + k_channel_inside);
    if (!config.skill_dir.empty())
        option("--mount", "type=bind," + csv_field("src=" + config.skill_dir) + ",dst="
                              + proto::k_skill_inside + ",readonly");
    option("--workdir", "/workspace");
    option("--network", config.network == Network::named ? config.network_name : "none");
    option("--ulimit", "cpu=" + cpu + ":" + cpu);
    option("--ulimit", "fsize=" + fsize + ":" + fsize);
    option("--env", "HOME=/workspace");
    for (const auto& [name, value] : request.env)
        option("--env", docker_reads_itself(name) ? name + "=" + value : name);
    // The image's entrypoint would otherwise be given our command as its arguments.
    argv.insert(argv.end(), {"--entrypoint", "", "--", config.image});
    if (request.argv.empty())
        argv.insert(argv.end(), {"/bin/sh", "-c", request.command});
    else
        argv.insert(argv.end(), request.argv.begin(), request.argv.end());
    return argv;
}

Result<DockerLaunch> prepare_docker(const Config& config, const proto::ExecRequest& request,
                                    const std::string& name) {
    DockerLaunch launch;
    SION_TRY(DockerWorkspace workspace, DockerWorkspace::open(config));
    SION_TRY(launch.profile, memory_file(docker_seccomp_profile(), "the seccomp profile"));
    DockerRun run{workspace.uid, workspace.gid, workspace.source, name,
                  "/proc/self/fd/" + std::to_string(k_docker_profile_fd)};
    launch.workspace.emplace(std::move(workspace));
    launch.spec.argv = docker_run_argv(config, request, run);
    launch.spec.env = docker_run_env(request);
    launch.spec.extra_fds.push_back({launch.profile.get(), k_docker_profile_fd});
    return launch;
}

std::string docker_container_name() {
    static std::atomic<uint64_t> counter{0};
    uint32_t salt = 0;
    if (::getrandom(&salt, sizeof salt, 0)
        != sizeof salt) // never short for 4 bytes; the time will do
        salt = static_cast<uint32_t>(Child::Clock::now().time_since_epoch().count());
    std::array<char, 64> name{};
    std::snprintf(name.data(), name.size(), "sion-%d-%llu-%08x", static_cast<int>(::getpid()),
                  static_cast<unsigned long long>(++counter), salt);
    return name.data();
}

Result<proto::ExecResult> docker_exec(const Config& config, const proto::ExecRequest& request) {
    return docker_exec(config, request, request.input);
}

Result<proto::ExecResult> docker_exec(const Config& config, const proto::ExecRequest& request,
                                      const std::optional<std::string>& input) {
    SION_CHECK(check_request(config, request));
    std::string name = docker_container_name();
    milliseconds limit = time_limit(config, request);
    SION_TRY(DockerLaunch launch, prepare_docker(config, request, name));
    CaptureSpec spec;
    spec.child = launch.spec;
    spec.child.in = input ? Stdio::null() : Stdio::inherit();
    // The limit is the watchdog's; this one is for a docker command that hangs after it.
    spec.child.time_limit = limit + k_docker_grace;
    if (input && !input->empty())
        spec.input = *input;
    spec.cap = config.limits.output;

    SION_TRY(std::unique_ptr<Watchdog> watchdog,
             Watchdog::start(name, Child::Clock::now() + limit));
    Result<Captured> captured = capture(std::move(spec));
    bool out_of_time = watchdog->stop();
    if (!captured && captured.error().exit() == Exit::not_found)
        return make_error(Exit::unavailable, "docker is not installed: install Debian's docker.io");
    if (!captured)
        return std::move(captured).error();
    Captured& c = *captured;

    proto::ExecResult result;
    if (out_of_time || c.timed_out) {
        // Once more, now that the docker command is gone and can make no other container.
        Status removed = docker_remove_container(name);
        if (!removed)
            return removed.error().context("the command ran out of time and its container is left");
        result.timed_out = true;
        result.exit = to_int(Exit::timeout); // as the bubblewrap backend says it
        result.signal = SIGKILL;
    } else if (Status meaning = docker_status(config, c, result); !meaning) {
        (void)docker_remove_container(name); // one docker created but could not start
        return meaning.error();
    }
    result.wall_ms = c.wall.count();
    bool cut_out = cut_output(c.out, config.limits.output, c.out_total);
    bool cut_err = cut_output(c.err, config.limits.output, c.err_total);
    result.truncated = cut_out || cut_err;
    result.stdout_text = std::move(c.out);
    result.stderr_text = std::move(c.err);
    return result;
}

Status docker_engine_ready() {
    SION_TRY(RunResult r,
             docker_cli({"version", "--format", "{{.Server.Version}}"}, k_engine_answer));
    if (r.timed_out) {
        std::string at = engine_address({}, {}, {});
        return make_error(Exit::unavailable,
                          "the Docker engine at '%s' did not answer within 15 s: restart it",
                          at.c_str());
    }
    if (r.status == 0 && !trim_end(r.out).empty())
        return {};
    if (auto problem = engine_problem(r.err))
        return *problem;
    std::string why(first_line(r.err));
    return make_error(Exit::unavailable, "the Docker engine does not answer: %s",
                      why.empty() ? "docker version failed" : why.c_str());
}

Status docker_image_present(const std::string& image) {
    SION_TRY(RunResult r,
             docker_cli({"image", "inspect", "--format", "{{.Id}}", "--", image}, k_engine_answer));
    if (r.status == 0 && !r.timed_out)
        return {};
    if (contains(r.err, "No such image") || contains(r.err, "no such image"))
        return image_missing(image);
    if (auto problem = engine_problem(r.err))
        return *problem;
    if (r.timed_out)
        return docker_engine_ready();
    return make_error(Exit::unavailable, "cannot inspect the image '%s': %s", image.c_str(),
                      std::string(first_line(r.err)).c_str());
}

} // namespace sion::sandboxd
