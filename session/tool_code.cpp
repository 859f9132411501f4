// SPDX-License-Identifier: MIT
// run_code: a short Python program that calls the session's tools that only read, as functions. It
// runs with Python 3 in a sandbox of its own (no workspace, no network); each call comes back over
// a Unix socket bound into that sandbox (sion-sandbox --channel) and is made by the session as the
// model's calls are. Only what the program prints comes back to the model.
#include "lib/child.hpp"
#include "lib/programs.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/rpc/line_reader.hpp"
#include "lib/rpc/message.hpp"
#include "lib/text.hpp"
#include "session/tools.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace sion::session {

namespace {

constexpr int k_max_calls = 200;
constexpr size_t k_max_output_chars = 24000;
constexpr size_t k_max_code = size_t{256} << 10;

// What runs in the sandbox: it reads the program on stdin and runs it with `tools`, `call` and
// `ToolError` defined; each call is one JSON-RPC request on the channel, answered before the next.
constexpr const char* k_runner = R"py(
import json, linecache, socket, sys, traceback

class ToolError(Exception):
    """A tool's call failed, or was not made: the message says why."""

_channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
_channel.connect("/run/sion/channel.sock")
_stream = _channel.makefile("rwb")
_ids = 0

def call(name, arguments=None, **kwargs):
    """Calls the tool `name` with its input as keyword arguments (or one dict); returns its text."""
    global _ids
    _ids += 1
    args = dict(arguments or {}, **kwargs)
    request = {"jsonrpc": "2.0", "id": _ids, "method": "tools/call",
               "params": {"name": str(name), "arguments": args}}
    _stream.write(json.dumps(request).encode() + b"\n")
    _stream.flush()
    line = _stream.readline()
    if not line:
        raise ToolError("the session closed the channel")
    answer = json.loads(line)
    if "error" in answer:
        raise ToolError(answer["error"]["message"])
    if answer["result"].get("isError"):
        raise ToolError(answer["result"]["text"])
    return answer["result"]["text"]

class _Tools:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda arguments=None, **kwargs: call(name, arguments, **kwargs)

_program = sys.stdin.read()
# The traceback quotes the program's own lines, and shows none of this runner's frames.
linecache.cache["<run_code>"] = (len(_program), None, _program.splitlines(True), "<run_code>")
_globals = {"__name__": "__main__", "tools": _Tools(), "call": call, "ToolError": ToolError}
try:
    exec(compile(_program, "<run_code>", "exec"), _globals)
except SystemExit:
    raise
except BaseException as e:
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "<run_code>"]
    sys.stderr.write("Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
                     + "".join(traceback.format_exception_only(type(e), e)))
    sys.exit(1)
)py";

// A private directory for the socket and the empty workspace, removed with what is in it.
class Scratch {
public:
    static Result<Scratch> make() {
        const char* tmp = std::getenv("TMPDIR");
        std::string path =
            std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/sion-code.XXXXXX";
        if (::mkdtemp(path.data()) == nullptr)
            return sys_error(Exit::os, errno, "cannot make a directory for run_code");
        Scratch s(path);
        if (::mkdir(s.workspace().c_str(), 0755) != 0)
            return sys_error(Exit::os, errno, "cannot make a directory for run_code");
        return s;
    }

    Scratch(Scratch&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }

    Scratch& operator=(Scratch&&) = delete;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

    ~Scratch() {
        if (m_path.empty())
            return;
        ::unlink(socket_path().c_str());
        ::rmdir(workspace().c_str());
        ::rmdir(m_path.c_str());
    }

    [[nodiscard]] std::string socket_path() const { return m_path + "/channel.sock"; }

    [[nodiscard]] std::string workspace() const { return m_path + "/empty"; }

private:
    explicit Scratch(std::string path) : m_path(std::move(path)) {}

    std::string m_path;
};

Result<Fd> listen_on(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return sys_error(Exit::os, errno, "cannot make a socket for run_code");
    Fd sock(fd);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return make_error(Exit::os, "the socket path '%s' is too long", path.c_str());
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0
        || ::listen(sock.get(), 1) != 0)
        return sys_error(Exit::os, errno, "cannot listen on '%s'", path.c_str());
    // Its directory is this user's alone; the sandbox's user (a workspace's owner, in Docker) must
    // be able to connect to the socket bound into it.
    if (::chmod(path.c_str(), 0666) != 0)
        return sys_error(Exit::os, errno, "cannot open '%s' to the sandbox", path.c_str());
    return sock;
}

// Cuts `text` at `max` characters (UTF-8 sequences), saying how many more there were.
void cut_chars(std::string& text, size_t max) {
    size_t chars = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80)
            continue;
        if (chars++ == max) {
            size_t more = 0;
            for (size_t j = i; j < text.size(); ++j)
                more += (static_cast<unsigned char>(text[j]) & 0xC0) != 0x80;
            text.resize(i);
            text += format("%s[… %zu more characters cut]",
                           text.empty() || text.back() == '\n' ? "" : "\n", more);
            return;
        }
    }
}

// One run of a program: its sandbox, the channel, and the calls it makes.
class Run {
public:
    Run(Child child, Fd listener, std::string code, CodeCall& call)
        : m_child(std::move(child)), m_listener(std::move(listener)), m_code(std::move(code)),
          m_call(call) {}

    // Serves the program until its sandbox ends; what sion-sandbox printed (its JSON result).
    Result<std::string> serve() {
        SION_CHECK(set_nonblocking(m_child.in().get(), true));
        while (true) {
            std::vector<pollfd> fds;
            fds.push_back({m_child.out().get(), POLLIN, 0});
            if (m_child.in())
                fds.push_back({m_child.in().get(), POLLOUT, 0});
            if (m_conn)
                fds.push_back({m_conn.get(), POLLIN, 0});
            else if (m_listener)
                fds.push_back({m_listener.get(), POLLIN, 0});
            if (::poll(fds.data(), fds.size(), -1) < 0) {
                if (errno == EINTR)
                    continue;
                return sys_error(Exit::os, errno, "cannot wait for run_code's program");
            }
            for (const pollfd& p : fds) {
                if (p.revents == 0)
                    continue;
                if (p.fd == m_child.out().get()) {
                    SION_TRY(bool open, read_result());
                    if (!open)
                        return m_result;
                } else if (m_child.in() && p.fd == m_child.in().get()) {
                    SION_CHECK(write_code());
                } else if (m_conn && p.fd == m_conn.get()) {
                    SION_CHECK(read_requests());
                } else if (m_listener && p.fd == m_listener.get()) {
                    int fd = ::accept4(m_listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
                    if (fd >= 0) {
                        m_conn = Fd(fd);
                        m_listener.reset(); // one program, one connection
                    }
                }
            }
        }
    }

private:
    Result<bool> read_result() {
        char buf[65536];
        ssize_t n = ::read(m_child.out().get(), buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return true;
        if (n < 0)
            return sys_error(Exit::io, errno, "cannot read run_code's result");
        m_result.append(buf, static_cast<size_t>(n));
        return n > 0;
    }

    Status write_code() {
        ssize_t n = write_without_sigpipe(m_child.in().get(), m_code.data() + m_written,
                                          m_code.size() - m_written);
        if (n < 0 && errno == EAGAIN)
            return {};
        if (n > 0)
            m_written += static_cast<size_t>(n);
        if (n < 0 || m_written == m_code.size())
            m_child.in().reset(); // a program that stopped reading gets no more
        return {};
    }

    Status read_requests() {
        char buf[65536];
        ssize_t n = ::read(m_conn.get(), buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return {};
        if (n <= 0) {
            m_conn.reset();
            return {};
        }
        m_lines.feed(std::string_view(buf, static_cast<size_t>(n)));
        while (auto line = m_lines.next()) {
            std::string answer =
                line->overlong
                    ? rpc::encode_failure(rpc::overlong_failure(line->length, m_lines.max_line()))
                    : answer_line(line->text);
            if (!write_all(m_conn.get(), answer)) {
                m_conn.reset();
                return {};
            }
        }
        return {};
    }

    std::string answer_line(std::string_view text) {
        rpc::Decoded d = rpc::decode(text);
        if (!d.message)
            return rpc::encode_failure(*d.failure);
        const rpc::Message& m = *d.message;
        if (m.kind != rpc::Kind::request)
            return {};
        if (m.method != "tools/call")
            return rpc::encode_error(m.id, rpc::k_method_not_found,
                                     "run_code's programs may only call tools");
        auto name = m.params.string("name");
        JsonView arguments = m.params.get("arguments");
        if (!name || !arguments.is_object())
            return rpc::encode_error(m.id, rpc::k_invalid_params,
                                     "a call names a tool and gives its input as keywords");
        ToolResult r;
        if (++m_calls > k_max_calls)
            r = {format("a program makes at most %d calls: make the rest yourself", k_max_calls),
                 true,
                 false,
                 {}};
        else
            r = m_call(*name, arguments);
        Json result = Json::object();
        result.set("text", std::string_view(r.text));
        result.set("isError", r.is_error);
        return rpc::encode_result(m.id, result);
    }

    Child m_child;
    Fd m_listener;
    Fd m_conn;
    std::string m_code;
    size_t m_written = 0;
    CodeCall& m_call;
    rpc::LineReader m_lines;
    std::string m_result;
    int m_calls = 0;
};

class RunCode final : public Tool {
public:
    explicit RunCode(std::vector<std::string> sandbox) : m_sandbox(std::move(sandbox)) {}

    models::ToolSpec spec() const override { return tool_spec("run_code"); }

    // The program itself reaches nothing; each call it makes is checked on its own.
    Effect effect(JsonView) const override { return Effect::read; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto code = input.string("code");
        if (!code)
            return ToolResult{"run_code needs 'code', a Python program: " + code.error().message(),
                              true,
                              false,
                              {}};
        if (code->size() > k_max_code)
            return ToolResult{
                format("the program is longer than %zu bytes", k_max_code), true, false, {}};
        if (!context.call_from_code)
            return ToolResult{"this session cannot run programs", true, false, {}};
        SION_TRY(Scratch scratch, Scratch::make());
        SION_TRY(Fd listener, listen_on(scratch.socket_path()));
        SION_TRY(std::string program, find_program("sion-sandbox"));
        ChildSpec spec;
        spec.argv = {program,
                     "exec",
                     "--json",
                     "--workspace",
                     scratch.workspace(),
                     "--channel",
                     scratch.socket_path()};
        spec.argv.insert(spec.argv.end(), m_sandbox.begin(), m_sandbox.end());
        spec.argv.insert(spec.argv.end(), {"--", "python3", "-I", "-c", k_runner});
        spec.env = sandbox_environment();
        spec.in = Stdio::pipe();
        spec.out = Stdio::pipe();
        spec.err = Stdio::pipe();
        SION_TRY(Child child, Child::spawn(spec));
        Fd errors = std::move(child.err());
        Run run(std::move(child), std::move(listener), std::string(*code), context.call_from_code);
        SION_TRY(std::string printed, run.serve());
        auto result = Json::parse(printed);
        auto r = result ? proto::exec_result_from_json(*result)
                        : Result<proto::ExecResult>(result.error());
        if (!r) {
            auto said = read_all(errors.get(), 4096);
            std::string why = said && !said->empty() ? *said : r.error().message();
            while (!why.empty() && why.back() == '\n')
                why.pop_back();
            return ToolResult{"the program's sandbox did not run: " + why, true, false, {}};
        }
        return answer(*r);
    }

private:
    static ToolResult answer(const proto::ExecResult& r) {
        std::string text = r.stdout_text;
        bool failed = r.timed_out || r.exit != 0;
        if (r.timed_out)
            text += format("%s--- the program ran out of time (%.3g s) and was killed",
                           text.empty() || text.back() == '\n' ? "" : "\n",
                           static_cast<double>(r.wall_ms) / 1000.0);
        else if (r.exit != 0)
            text += format("%s--- the program failed (exit status %d)",
                           text.empty() || text.back() == '\n' ? "" : "\n", r.exit);
        if (failed && !r.stderr_text.empty())
            text += "\n" + r.stderr_text;
        while (!text.empty() && text.back() == '\n')
            text.pop_back();
        if (text.empty())
            text = "the program printed nothing";
        cut_chars(text, k_max_output_chars);
        return {std::move(text), failed, false, proto::exec_result_to_json(r)};
    }

    std::vector<std::string> m_sandbox;
};

} // namespace

std::unique_ptr<Tool> make_run_code_tool(std::vector<std::string> sandbox_options) {
    return std::make_unique<RunCode>(std::move(sandbox_options));
}

} // namespace sion::session
