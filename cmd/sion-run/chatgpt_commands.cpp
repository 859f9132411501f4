// SPDX-License-Identifier: MIT
// sion-run chatgpt login|status|models|logout: signing in with ChatGPT (lib/models/chatgpt.hpp),
// the browser's way back on a loopback port.
#include "cmd/sion-run/commands.hpp"
#include "lib/child.hpp"
#include "lib/crypto.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/models/chatgpt.hpp"
#include "lib/text.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>

namespace sion::run_cmd {

namespace chatgpt = models::chatgpt;

namespace {

constexpr int k_login_timeout_ms = 300'000;
constexpr size_t k_max_request = 8192;

// A socket listening on 127.0.0.1: `port`, else one the kernel picks when that one is taken.
Result<Fd> listen_loopback(int port, int* bound) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd)
        return sys_error(Exit::os, errno, "cannot make a socket");
    // A port another sign-in just closed (TIME_WAIT) is taken again; one that listens is not.
    int on = 1;
    (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno != EADDRINUSE)
            return sys_error(Exit::os, errno, "cannot listen on 127.0.0.1:%d", port);
        addr.sin_port = 0;
        if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            return sys_error(Exit::os, errno, "cannot listen on 127.0.0.1");
    }
    socklen_t len = sizeof addr;
    if (::listen(fd.get(), 8) != 0
        || ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        return sys_error(Exit::os, errno, "cannot listen on 127.0.0.1");
    *bound = ntohs(addr.sin_port);
    return fd;
}

// The way back: the callback's path and its query's parameters.
struct Callback {
    std::string path;
    std::map<std::string, std::string> query;
};

// The request line of a connection's request, read within the deadline.
Result<Callback> read_request(int fd) {
    std::string head;
    char buf[1024];
    while (head.find("\r\n") == std::string::npos && head.size() < k_max_request) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 10'000) <= 0)
            return make_error(Exit::io, "the browser sent nothing");
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0)
            return make_error(Exit::io, "the browser closed the connection");
        head.append(buf, static_cast<size_t>(n));
    }
    std::string_view line(head.data(), head.find("\r\n"));
    if (line.substr(0, 4) != "GET ")
        return make_error(Exit::data, "not a GET request");
    line.remove_prefix(4);
    std::string_view target = line.substr(0, line.find(' '));
    Callback cb;
    size_t q = target.find('?');
    cb.path = std::string(target.substr(0, q));
    std::string_view query = q == std::string_view::npos ? "" : target.substr(q + 1);
    while (!query.empty()) {
        std::string_view pair = query.substr(0, query.find('&'));
        query.remove_prefix(std::min(query.size(), pair.size() + 1));
        size_t eq = pair.find('=');
        cb.query[percent_decode(pair.substr(0, eq), true)] =
            eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1), true);
    }
    return cb;
}

void answer_browser(int fd, int status, std::string_view text) {
    std::string reply = format("HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                               "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                               status, status == 200 ? "OK" : "Not Found", text.size());
    reply += text;
    (void)write_all(fd, reply);
}

// The code the browser brings back to /auth/callback with `state`; other requests get 404.
Result<std::string> await_code(int listener, std::string_view state) {
    for (;;) {
        pollfd p{listener, POLLIN, 0};
        int ready = ::poll(&p, 1, k_login_timeout_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return make_error(Exit::temp_fail, "no sign-in came back within 5 minutes");
        Fd conn(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
        if (!conn)
            continue;
        auto cb = read_request(conn.get());
        if (!cb || cb->path != "/auth/callback") {
            answer_browser(conn.get(), 404, "Not found.\n");
            continue;
        }
        if (cb->query["state"] != state) {
            answer_browser(conn.get(), 404, "This sign-in is not the one sion is waiting for.\n");
            return make_error(Exit::no_perm, "the sign-in came back with another state");
        }
        if (auto e = cb->query.find("error"); e != cb->query.end()) {
            answer_browser(conn.get(), 200, "The sign-in was refused. You may close this page.\n");
            return make_error(Exit::no_perm, "the sign-in was refused: %s", e->second.c_str());
        }
        answer_browser(conn.get(), 200, "Signed in to sion. You may close this page.\n");
        return cb->query["code"];
    }
}

// Opens `url` in the browser $BROWSER names, else xdg-open's where there is a display; the
// child, kept until the sign-in is over, or none.
std::optional<Child> open_browser(const std::string& url) {
    std::vector<std::string> env =
        env_keep({"PATH", "HOME", "USER", "LANG", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
                  "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"});
    const char* browser = std::getenv("BROWSER");
    std::string program;
    if (browser != nullptr && *browser != '\0')
        program = browser;
    else if (std::getenv("DISPLAY") != nullptr || std::getenv("WAYLAND_DISPLAY") != nullptr)
        program = "xdg-open";
    else
        return std::nullopt;
    ChildSpec spec;
    spec.argv = {program, url};
    spec.env = std::move(env);
    spec.in = Stdio::null();
    spec.out = Stdio::null();
    auto child = Child::spawn(spec);
    if (!child) {
        log_error("note: cannot open a browser: %s", child.error().message().c_str());
        return std::nullopt;
    }
    return std::move(*child);
}

Result<std::string> random_text() {
    SION_TRY(std::string bytes, random_bytes(24));
    return base64url_encode(bytes);
}

int login(const std::string& home) {
    chatgpt::Endpoints endpoints = or_die(chatgpt::Endpoints::from_environment());
    chatgpt::TokenStore store = or_die(chatgpt::TokenStore::open(home, true));
    auto kept = or_die(store.read());
    int port = 0;
    Fd listener = or_die(listen_loopback(chatgpt::k_port, &port));
    std::string redirect = format("http://127.0.0.1:%d/auth/callback", port);
    chatgpt::Issuer issuer(endpoints);
    std::string client_id = kept && kept->issuer == endpoints.issuer ? kept->client_id : "";
    if (client_id.empty())
        client_id = or_die(issuer.register_client(redirect));
    chatgpt::Pkce pkce = or_die(chatgpt::Pkce::make());
    std::string state = or_die(random_text());
    std::string nonce = or_die(random_text());
    std::string url = issuer.authorize_url(client_id, redirect, pkce, state, nonce);
    std::fprintf(stderr, "Sign in with ChatGPT in your browser: %s\n", url.c_str());
    std::optional<Child> browser = open_browser(url);
    std::string code = or_die(await_code(listener.get(), state));
    chatgpt::Account account = or_die(issuer.exchange_code(client_id, code, redirect, pkce, nonce));
    or_die(store.write(account));
    if (browser)
        (void)browser->wait_for(std::chrono::milliseconds(2000));
    std::printf("signed in as %s (ChatGPT %s)\n", account.email.c_str(), account.plan.c_str());
    return 0;
}

std::string utc_time(int64_t unix_s) {
    auto t = static_cast<time_t>(unix_s);
    tm parts{};
    gmtime_r(&t, &parts);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return buf;
}

int status(const std::string& home) {
    chatgpt::TokenStore store = or_die(chatgpt::TokenStore::open(home, false));
    auto kept = or_die(store.read());
    if (!kept) {
        std::printf("not signed in\n");
        return 1;
    }
    std::printf("signed in as %s\nplan: %s\naccount: %s\nissuer: %s\ntoken until: %s\n",
                kept->email.c_str(), kept->plan.c_str(), kept->account_id.c_str(),
                kept->issuer.c_str(), utc_time(kept->expires_at).c_str());
    return 0;
}

int logout(const std::string& home) {
    chatgpt::TokenStore store = or_die(chatgpt::TokenStore::open(home, false));
    // A store that no longer opens is forgotten all the same.
    auto kept = store.read();
    if (!or_die(store.remove()))
        die(make_error(Exit::no, "no ChatGPT account is signed in"));
    std::printf("signed out%s%s\n", kept && *kept ? " " : "",
                kept && *kept ? (*kept)->email.c_str() : "");
    return 0;
}

} // namespace

int chatgpt_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run chatgpt",
        "sion-run chatgpt login\n"
        "sion-run chatgpt status\n"
        "sion-run chatgpt models\n"
        "sion-run chatgpt logout",
        "Sign in with a ChatGPT account, so that agents run on its plan (--model chatgpt:MODEL):\n"
        "login opens OpenAI's sign-in in the browser ($BROWSER) and waits for it on\n"
        "127.0.0.1:1455 (another port if that one is taken); status says who is signed in,\n"
        "models lists the plan's models, logout forgets the account.",
        {},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const auto& ops = args.operands();
    if (ops.empty())
        die(usage_error("a command is needed: login, status, models or logout (see --help)"));
    const std::string& what = ops[0];
    if (what != "login" && what != "status" && what != "models" && what != "logout")
        die(usage_error("unknown command '" + what + "': give login, status, models or logout"));
    if (ops.size() > 1)
        die(usage_error("unexpected operand '" + ops[1] + "'"));
    std::string home = or_die(prepare_home());
    if (what == "login")
        return login(home);
    if (what == "status")
        return status(home);
    if (what == "logout")
        return logout(home);
    for (const std::string& model : or_die(chatgpt::plan_models(home)))
        std::printf("%s\n", model.c_str());
    return 0;
}

} // namespace sion::run_cmd
