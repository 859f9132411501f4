// SPDX-License-Identifier: MIT
// sion-run chatgpt login|status|models|logout: signing in with ChatGPT (lib/models/chatgpt.hpp),
// the browser's way back on a loopback port (lib/oauth_loopback.hpp).
#include "cmd/sion-run/commands.hpp"
#include "lib/base64.hpp"
#include "lib/child.hpp"
#include "lib/home.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/models/chatgpt.hpp"
#include "lib/oauth_loopback.hpp"
#include "lib/secret_bytes.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace sion::run_cmd {

namespace chatgpt = models::chatgpt;

namespace {

constexpr auto k_patience = std::chrono::minutes(5);

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
    chatgpt::SignIn kept = or_die(store.read());
    auto listener = or_die(oauth_loopback::Listener::listen(chatgpt::k_port, true));
    std::string redirect = listener.address(chatgpt::k_callback_path);
    chatgpt::Issuer issuer(endpoints);
    if (kept.host_id.empty())
        kept.host_id = or_die(chatgpt::make_host_id());
    // A registration is the issuer's: another issuer's is not used, and is replaced.
    std::string client_id = kept.issuer == endpoints.issuer ? kept.client_id : "";
    oauth_loopback::Pkce pkce = or_die(oauth_loopback::make_pkce());
    std::string nonce = or_die(random_text());
    std::string url =
        or_die(issuer.authorize_url(client_id, kept.host_id, redirect, pkce, nonce));
    std::fprintf(stderr, "Sign in with ChatGPT in your browser: %s\n", url.c_str());
    bool at_terminal = ::isatty(STDIN_FILENO) != 0;
    if (at_terminal)
        std::fprintf(stderr, "%s\n", oauth_loopback::k_paste_hint.data());
    std::optional<Child> browser = open_browser(url);
    std::string back = or_die(listener.wait(chatgpt::k_callback_path, pkce.state,
                                            at_terminal ? STDIN_FILENO : -1, k_patience));
    chatgpt::Callback cb =
        or_die(chatgpt::read_callback(back, pkce.state, endpoints.issuer, client_id));
    chatgpt::Account account =
        or_die(issuer.exchange_code(cb.client_id, cb.code, redirect, pkce, nonce));
    wipe(pkce.verifier);
    kept.issuer = endpoints.issuer;
    kept.client_id = cb.client_id;
    kept.account = std::move(account);
    or_die(store.write(kept));
    if (browser)
        (void)browser->wait_for(std::chrono::milliseconds(2000));
    std::printf("signed in as %s (ChatGPT %s)\n", kept.account->email.c_str(),
                kept.account->plan.c_str());
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
    chatgpt::SignIn kept = or_die(store.read());
    if (!kept.account) {
        std::printf("not signed in\n");
        return 1;
    }
    const chatgpt::Account& a = *kept.account;
    std::printf("signed in as %s\nplan: %s\naccount: %s\nissuer: %s\ntoken until: %s\n",
                a.email.c_str(), a.plan.c_str(),
                (a.account_id.empty() ? a.subject : a.account_id).c_str(), a.issuer.c_str(),
                utc_time(a.expires_at).c_str());
    return 0;
}

// The refresh token revoked (a failure is noted: the account is forgotten all the same), the
// account forgotten; this machine's host id and registration are kept for the next sign-in.
int logout(const std::string& home) {
    chatgpt::TokenStore store = or_die(chatgpt::TokenStore::open(home, false));
    auto read = store.read();
    if (!read) {
        // A store that no longer opens is forgotten all the same, whole.
        log_error("note: %s", read.error().message().c_str());
        if (!or_die(store.remove()))
            die(read.error());
        std::printf("signed out\n");
        return 0;
    }
    chatgpt::SignIn kept = std::move(*read);
    if (!kept.account)
        die(make_error(Exit::no, "no ChatGPT account is signed in"));
    // Revoked where it was issued, whatever the environment names now.
    chatgpt::Issuer issuer(chatgpt::Endpoints{kept.account->issuer, ""});
    if (Status revoked = issuer.revoke(*kept.account); !revoked)
        log_error("note: %s: remove sion in ChatGPT's settings",
                  revoked.error().message().c_str());
    std::string email = kept.account->email;
    kept.account.reset();
    or_die(store.write(kept));
    std::printf("signed out %s\n", email.c_str());
    return 0;
}

} // namespace

int chatgpt_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run chatgpt",
        "sion-run chatgpt login\n"
        "sion-run chatgpt status\n"
        "sion-run chatgpt models [--json]\n"
        "sion-run chatgpt logout",
        "Sign in with a ChatGPT account, so that agents run on its plan (--model chatgpt:MODEL):\n"
        "login opens OpenAI's sign-in in the browser ($BROWSER) and waits for it on\n"
        "127.0.0.1:1455 (another port if that one is taken); status says who is signed in,\n"
        "models lists the plan's models (with --json one JSON object a line,\n"
        "schemas/run.chatgpt-models.json), logout forgets the account.",
        {json_lines_option()},
        false,
        {"login status models logout"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    std::string_view what = pick_command(args, spec);
    if (args.has("json") && what != "models")
        die(usage_error("--json goes with models: sion-run chatgpt models --json"));
    check_operands(args, 1, 1);
    std::string home = or_die(prepare_home());
    if (what == "login")
        return login(home);
    if (what == "status")
        return status(home);
    if (what == "logout")
        return logout(home);
    const Listing listing(args.has("json"));
    for (const std::string& model : or_die(chatgpt::plan_models(home))) {
        Json entry = Json::object();
        entry.set("model", model);
        listing.print(entry, model);
    }
    return 0;
}

} // namespace sion::run_cmd
