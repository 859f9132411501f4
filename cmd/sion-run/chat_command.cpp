// SPDX-License-Identifier: MIT
// sion-run chat: a console. The person's messages in turn, each a run of one session; its
// commands begin with '/'.
#include "cmd/sion-run/commands.hpp"
#include "cmd/sion-run/console.hpp"
#include "cmd/sion-run/started.hpp"
#include "lib/agents.hpp"
#include "lib/child.hpp"
#include "lib/db_schema.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/programs.hpp"
#include "lib/text.hpp"
#include "session/shown.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

namespace sion::run_cmd {

using namespace sion::session; // the engine these commands drive

namespace {

// How long a server's question waits for an answer in a chat before it is cancelled (seed 000).
constexpr int64_t k_question_seconds = 600;

// The port on 127.0.0.1 the browser comes back to after /mcp login's consent screen: one number,
// for it must be published out of a container beforehand (seed 002).
constexpr int k_login_port = 8788;

constexpr const char* k_help =
    "Say what the agent is to do; each message is a run of the session. Commands:\n"
    "  /help                      this list\n"
    "  /model [M]                 the models, first first; M (provider:model) first of all\n"
    "  /system [TEXT | --off]     your standing instructions, sent at the end of each turn\n"
    "  /usage                     the tokens used, cache reads and writes apart; the budget\n"
    "  /stop                      stop the run under way (Ctrl-C at a terminal)\n"
    "  /prompts                   the prompts of the session's MCP servers\n"
    "  /prompt SERVER PROMPT [NAME=VALUE...]\n"
    "                             say a server's prompt as your message\n"
    "  /mcp                       the MCP servers this agent has, and the shelf's others\n"
    "  /mcp add NAME URL          find one: on the shelf, and this agent has it\n"
    "  /mcp add NAME sse URL      the same, for a server of the old transport\n"
    "  /mcp add NAME COMMAND...   one the agent starts itself, in a sandbox\n"
    "  /mcp NAME                  give this agent one on the shelf\n"
    "  /mcp login NAME [ADDRESS]  its consent screen in your browser, or where it landed\n"
    "  /mcp drop NAME             take it off this agent; it stays on the shelf\n"
    "  /mcp forget NAME           take it off the shelf, and off every agent that had it\n"
    "  /mcp logout NAME           give its account back, for everyone\n"
    "  /exit                      end the chat (Ctrl-D)";

// A command line's words: blanks part them, and quotes (single or double) keep blanks in one.
// Exit::usage for a quote left open.
Result<std::vector<std::string>> words_of(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char c : line) {
        if (quote != 0) {
            if (c == quote)
                quote = 0;
            else
                word += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t') {
            if (in_word)
                words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (quote != 0)
        return make_error(Exit::usage, "a quote (%c) is left open", quote);
    if (in_word)
        words.push_back(std::move(word));
    return words;
}

std::string with_commas(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items)
        out += (out.empty() ? "" : ", ") + item;
    return out;
}

// The lines of `text`, without their line ends.
std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        size_t nl = text.find('\n');
        lines.push_back(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    return lines;
}

// `sion-mcp ARGS...`, its output on the console's; its exit status, or an error when it cannot
// be started. With `out`, what it prints on stdout is kept there instead (at most 16 MiB).
Result<int> sion_mcp(const std::vector<std::string>& args, std::string* out = nullptr) {
    SION_TRY(std::string program, find_program("sion-mcp"));
    ChildSpec spec;
    spec.argv = {program};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = own_environment();
    spec.in = Stdio::null();
    spec.out = out != nullptr ? Stdio::pipe() : Stdio::inherit();
    spec.err = Stdio::inherit();
    std::fflush(stdout);
    SION_TRY(Child child, Child::spawn(spec));
    if (out != nullptr) {
        SION_TRY(*out, read_all(child.out().get(), size_t{16} << 20));
    }
    SION_TRY(ExitStatus ended, child.wait());
    return ended.status;
}

// A login under way (/mcp login): `sion-mcp login NAME` waiting for the browser to come back to
// the console's port, or for the address it landed on, pasted on its standard input. A thread
// waits for it and says how it ended.
struct Login {
    std::mutex mutex;
    std::string name;
    pid_t group = -1; // its process group, while it runs
    Fd paste;         // its standard input
    std::thread waiter;
};

// sion_mcp() whose failure is said: true when it exited 0 (it said why otherwise).
bool sion_mcp_did(const std::vector<std::string>& args, std::string* out = nullptr) {
    auto ran = sion_mcp(args, out);
    if (!ran)
        report(ran.error());
    return ran && *ran == 0;
}

class Chat {
public:
    Chat(const Args& args, ConsoleInput& input, bool colour, int64_t question_ms, int login_port)
        : m_args(args), m_input(input), m_colour(colour), m_question_ms(question_ms),
          m_login_port(login_port) {}

    Chat(const Chat&) = delete;
    Chat& operator=(const Chat&) = delete;
    // A login still under way ends with the chat.
    ~Chat();

    // Reads and does what the person says until the input ends or /exit. Returns the exit status.
    int go();

private:
    // A command (a line beginning with '/'); false for /exit.
    bool command(std::string_view line);

    // The session, started now if it is not yet: on `task` (routed when new), or on none.
    Started& session(std::optional<std::string> task = std::nullopt,
                     std::optional<PromptTask> prompt = std::nullopt);

    // One run on the person's message (or a server's prompt, `prompt` naming it).
    void say(std::string task, std::string prompt = {});

    void model(const std::vector<std::string>& words);
    void system(std::string_view text);
    void usage();
    void prompts();
    void prompt(const std::vector<std::string>& words);
    void mcp(const std::vector<std::string>& words);
    void mcp_list();
    void mcp_login(const std::vector<std::string>& words);
    // Whether the shelf has `name`, said when it has not.
    bool on_shelf(const std::string& name);
    // The servers this agent has: its profile's standing ones, and the session's own (--mcp).
    std::vector<std::string> agent_servers();
    Db& db();

    // The models chosen with /model put first of all, and the standing instructions, in the
    // session and in what it keeps.
    void apply_choices();
    Status choose(const std::string& spec);
    void keep_settings();
    // Takes the server `name` off the session's own (--mcp), which it keeps so.
    void drop_own(const std::string& name);

    const Args& m_args;
    ConsoleInput& m_input;
    bool m_colour;
    int64_t m_question_ms;
    int m_login_port;
    Login m_login;
    std::unique_ptr<Started> m_s;
    std::optional<Db> m_db;              // sion.db before the session starts
    std::vector<std::string> m_chosen;   // /model's, before the session started; first first
    std::optional<std::string> m_system; // /system's, before the session started ("" for --off)
    models::Usage m_used;                // this chat's runs
};

int Chat::go() {
    if (m_input.at_terminal())
        std::printf("sion chat with agent %s of %s: /help for commands, Ctrl-D to end\n",
                    m_args.operands()[1].c_str(), m_args.operands()[0].c_str());
    while (true) {
        ConsoleInput::Line line = m_input.next(m_input.at_terminal() ? "> " : "");
        if (line.interrupted) {
            if (!m_input.at_terminal())
                return 128 + 2; // SIGINT with nothing under way ends a chat on standard input
            std::printf("\n");
            continue;
        }
        if (!line.text)
            break;
        std::string_view said = trim_space(*line.text);
        if (said.empty())
            continue;
        if (said.front() == '/') {
            if (!command(said))
                break;
            continue;
        }
        say(std::string(said));
    }
    if (m_input.at_terminal())
        std::printf("\n");
    return 0;
}

bool Chat::command(std::string_view line) {
    size_t space = line.find_first_of(" \t");
    std::string name(line.substr(0, space));
    std::string_view rest = space == std::string_view::npos ? "" : trim_space(line.substr(space));
    auto words = words_of(rest);
    if (!words) {
        report(words.error());
        return true;
    }
    if (name == "/exit" || name == "/quit")
        return false;
    if (name == "/help")
        std::printf("%s\n", k_help);
    else if (name == "/model")
        model(*words);
    else if (name == "/system")
        system(rest);
    else if (name == "/usage")
        usage();
    else if (name == "/stop")
        std::printf("nothing is under way to stop\n");
    else if (name == "/prompts")
        prompts();
    else if (name == "/prompt")
        prompt(*words);
    else if (name == "/mcp")
        mcp(*words);
    else
        log_error("there is no command %s: /help lists them", shown_line(name).c_str());
    std::fflush(stdout);
    return true;
}

Started& Chat::session(std::optional<std::string> task, std::optional<PromptTask> prompt) {
    if (m_s)
        return *m_s;
    Starting starting;
    starting.task = std::move(task);
    starting.prompt = std::move(prompt);
    starting.json = m_args.has("json");
    starting.colour = m_colour;
    starting.streaming = true;
    if (!starting.json)
        starting.person = m_input.person();
    m_s = start_session(m_args, std::move(starting));
    m_s->parts.stop = [this] { return m_input.stop_asked(); };
    m_s->parts.question_within_ms = m_question_ms;
    m_s->parts.standing =
        std::string(m_s->parts.settings.stored.view().string_or("system", "").value_or(""));
    apply_choices();
    return *m_s;
}

void Chat::say(std::string task, std::string prompt) {
    Started& s = session(task);
    m_input.run_begins();
    s.parts.used_before = m_used.input_tokens + m_used.output_tokens;
    Ending ending = run_once(s, std::move(task), Json::array(), std::move(prompt));
    add_to(m_used, ending.usage);
}

void Chat::apply_choices() {
    for (auto it = m_chosen.rbegin(); it != m_chosen.rend(); ++it)
        if (Status chosen = choose(*it); !chosen)
            report(chosen.error());
    m_chosen.clear();
    if (m_system) {
        m_s->parts.standing = *m_system;
        m_system.reset();
    }
    keep_settings();
}

Status Chat::choose(const std::string& spec) {
    SION_TRY(std::string kept, models::kept_model_spec(spec));
    SION_TRY(std::unique_ptr<models::Model> opened, models::open_model(kept));
    SessionParts& p = m_s->parts;
    for (size_t i = 0; i < p.models.size(); ++i)
        if (p.models[i]->name() == kept) {
            p.models.erase(p.models.begin() + static_cast<std::ptrdiff_t>(i));
            p.settings.models.erase(p.settings.models.begin() + static_cast<std::ptrdiff_t>(i));
            break;
        }
    p.models.insert(p.models.begin(), std::move(opened));
    p.settings.models.insert(p.settings.models.begin(), kept);
    return {};
}

// What the session keeps of its settings, its models and standing instructions as chosen here:
// a continued session (--session) begins with them.
void Chat::keep_settings() {
    SessionParts& p = m_s->parts;
    p.settings.stored.set("models", Json::strings(p.settings.models));
    if (p.standing.empty())
        (void)p.settings.stored.take("system");
    else
        p.settings.stored.set("system", std::string_view(p.standing));
    if (!m_s->began)
        return; // the first run keeps them
    p.row.settings = Json::copy_of(p.settings.stored);
    or_die(set_settings(m_s->db, p.row.id, p.settings.stored));
}

void Chat::drop_own(const std::string& name) {
    std::erase(m_s->parts.settings.mcp, name);
    m_s->parts.settings.stored.set("mcp", Json::strings(m_s->parts.settings.mcp));
    keep_settings();
}

void Chat::model(const std::vector<std::string>& words) {
    if (words.size() > 1) {
        log_error("give one model: /model provider:model");
        return;
    }
    if (words.empty()) {
        if (m_s)
            std::printf("models, first first: %s\n",
                        with_commas(m_s->parts.settings.models).c_str());
        else if (!m_chosen.empty())
            std::printf("models, first first: %s, then the session's\n",
                        with_commas(m_chosen).c_str());
        else
            std::printf("the session's models are chosen with its first message\n");
        return;
    }
    if (!m_s) {
        // Checked now, kept until the session starts.
        auto kept = models::kept_model_spec(words[0]);
        auto opened =
            kept ? models::open_model(*kept) : Result<std::unique_ptr<models::Model>>(kept.error());
        if (!opened) {
            report(opened.error());
            return;
        }
        std::erase(m_chosen, *kept);
        m_chosen.insert(m_chosen.begin(), *kept);
        std::printf("%s comes first of all once the session starts\n", kept->c_str());
        return;
    }
    if (Status chosen = choose(words[0]); !chosen) {
        report(chosen.error());
        return;
    }
    keep_settings();
    std::printf("models, first first: %s\n", with_commas(m_s->parts.settings.models).c_str());
}

void Chat::system(std::string_view text) {
    std::string& standing = m_s ? m_s->parts.standing : m_system.emplace();
    if (text.empty()) {
        if (!m_s && m_system && m_system->empty())
            m_system.reset();
        std::printf("%s\n", standing.empty() ? "no standing instructions: /system TEXT gives them"
                                             : ("standing instructions: " + standing).c_str());
        return;
    }
    standing = text == "--off" ? std::string() : std::string(text);
    if (m_s)
        keep_settings();
    std::printf("%s\n", standing.empty() ? "the standing instructions are off"
                                         : "the standing instructions are sent from the next turn");
}

void Chat::usage() {
    auto line = [](const char* what, const models::Usage& u) {
        std::printf(
            "%s: %lld tokens in (%lld read from the cache, %lld written to it), %lld out\n", what,
            static_cast<long long>(u.input_tokens), static_cast<long long>(u.cache_read_tokens),
            static_cast<long long>(u.cache_write_tokens), static_cast<long long>(u.output_tokens));
    };
    line("this chat", m_used);
    if (m_s && m_s->began && m_args.has("session")) {
        auto row = find_session(m_s->db, m_s->parts.row.id);
        if (row)
            line("the session, all its runs", row->usage);
    }
    const auto& budget = m_s ? m_s->parts.settings.budget_tokens : std::nullopt;
    if (!budget) {
        std::printf("no token budget (--budget-tokens)\n");
        return;
    }
    int64_t used = m_used.input_tokens + m_used.output_tokens;
    std::printf("budget: %lld of %lld tokens left\n",
                static_cast<long long>(std::max<int64_t>(*budget - used, 0)),
                static_cast<long long>(*budget));
}

void Chat::prompts() {
    Started& s = session();
    if (!s.mcp) {
        std::printf("the session has no MCP server: give --mcp NAME\n");
        return;
    }
    for (const std::string& server : s.mcp->servers()) {
        Json params = Json::object();
        params.set("server", std::string_view(server));
        auto m = s.mcp->request("prompts/list", params);
        if (!m || m->kind == rpc::Kind::error) {
            log_error("cannot list the prompts of MCP server %s: %s", server.c_str(),
                      m ? std::string(m->error_message).c_str() : m.error().message().c_str());
            continue;
        }
        for (JsonView p : m->result.get("prompts")) {
            std::string text = server + " " + one_line(p.string_or("name", "").value_or(""));
            std::string d = one_line(p.string_or("description", "").value_or(""));
            if (!d.empty())
                text += ": " + d;
            for (JsonView a : p.get("arguments")) {
                text += "\n  " + one_line(a.string_or("name", "").value_or(""));
                if (a.boolean_or("required", false).value_or(false))
                    text += " (required)";
                std::string ad = one_line(a.string_or("description", "").value_or(""));
                if (!ad.empty())
                    text += ": " + ad;
            }
            std::printf("%s\n", shown_lines(text).c_str());
        }
    }
}

void Chat::prompt(const std::vector<std::string>& words) {
    if (words.size() < 2) {
        log_error("give a server and its prompt: /prompt SERVER PROMPT [NAME=VALUE...]");
        return;
    }
    auto asked = prompt_task(words[0] + ":" + words[1],
                             std::vector<std::string>(words.begin() + 2, words.end()));
    if (!asked) {
        report(asked.error());
        return;
    }
    if (!m_s) {
        // The session starts on the prompt, as `run --prompt` does: its task is the server's.
        std::string given = asked->given;
        Started& s = session(std::nullopt, std::move(*asked));
        say(s.parts.task, given);
        return;
    }
    if (!m_s->mcp
        || std::find(m_s->mcp->servers().begin(), m_s->mcp->servers().end(), asked->server)
               == m_s->mcp->servers().end()) {
        log_error("the session has no MCP server %s: /prompts lists its servers' prompts",
                  asked->server.c_str());
        return;
    }
    auto text = m_s->mcp->prompt(asked->server, asked->name, asked->arguments);
    if (!text) {
        report(text.error());
        return;
    }
    say(std::move(*text), asked->given);
}

Db& Chat::db() {
    if (m_s)
        return m_s->db;
    if (!m_db)
        m_db.emplace(or_die(open_state(or_die(prepare_home()))));
    return *m_db;
}

std::vector<std::string> Chat::agent_servers() {
    std::vector<std::string> servers = m_s ? m_s->parts.settings.mcp : m_args.values("mcp");
    for (std::string& name : or_die(profile_servers(db(), m_args.operands()[0])))
        if (std::find(servers.begin(), servers.end(), name) == servers.end())
            servers.push_back(std::move(name));
    return servers;
}

bool Chat::on_shelf(const std::string& name) {
    auto q = db().prepare("SELECT 1 FROM mcp_servers WHERE name = ?1");
    bool found = q && q->bind(1, name) && q->step().value_or(false);
    if (!found)
        log_error("there is no MCP server %s on the shelf: /mcp lists them",
                  shown_line(name).c_str());
    return found;
}

void Chat::mcp(const std::vector<std::string>& words) {
    const std::string& profile = m_args.operands()[0];
    if (words.empty()) {
        mcp_list();
        return;
    }
    const std::string& verb = words[0];
    bool named = words.size() == 2;
    auto quoted = [](const std::string& name) { return "\"" + shown_line(name) + "\""; };
    if (verb == "add") {
        if (words.size() < 3) {
            log_error("give a name and a server: /mcp add NAME URL, /mcp add NAME sse URL, or /mcp "
                      "add NAME COMMAND...");
            return;
        }
        const std::string& name = words[1];
        std::vector<std::string> args = {"add", name};
        auto is_url = [](const std::string& w) {
            return w.starts_with("http://") || w.starts_with("https://");
        };
        if (words[2] == "sse") {
            if (words.size() != 4 || !is_url(words[3])) {
                log_error("give the server's URL after sse: /mcp add NAME sse URL");
                return;
            }
            args.insert(args.end(), {"--url", words[3], "--login-later"});
        } else if (is_url(words[2])) {
            if (words.size() != 3) {
                log_error("a server over HTTP is its URL alone: /mcp add NAME URL");
                return;
            }
            args.insert(args.end(), {"--url", words[2], "--login-later"});
        } else {
            // A command runs in a sandbox of its own, its only way out the egress proxy, in the
            // agent's workspace (at /workspace), or this directory when it has none.
            std::string dir =
                m_s ? m_s->parts.settings.workspace : m_args.value("workspace").value_or("");
            args.insert(args.end(), {"--dir", dir.empty() ? "." : dir, "--sandbox", "bwrap", "--"});
            args.insert(args.end(), words.begin() + 2, words.end());
        }
        // What was reviewed and pinned is shown, but how to give it: that comes next.
        std::string said;
        bool added = sion_mcp_did(args, &said);
        // One that wants a login first is on the shelf unreviewed: the console says so instead.
        bool wants_login = said.find(" wants an account first: ") != std::string::npos;
        for (std::string_view line : lines_of(said))
            if (!line.starts_with("Give it to a session with") && !wants_login)
                std::printf("%.*s\n", static_cast<int>(line.size()), line.data());
        std::string quiet;
        if (!added || !sion_mcp_did({"give", profile, name}, &quiet))
            return;
        if (wants_login)
            std::printf("%s is on the shelf, and this agent has it. It wants an account first: "
                        "/mcp login %s\n",
                        quoted(name).c_str(), shown_line(name).c_str());
        else
            std::printf("%s is on the shelf, and this agent has it. Any other agent can have it "
                        "too, with /mcp %s.\n",
                        quoted(name).c_str(), shown_line(name).c_str());
        return;
    }
    if ((verb == "drop" || verb == "forget" || verb == "logout") && !named) {
        log_error("give the server's name: /mcp %s NAME", verb.c_str());
        return;
    }
    if (verb == "login") {
        mcp_login(words);
        return;
    }
    if (verb == "drop") {
        const std::string& name = words[1];
        std::vector<std::string> own = m_s ? m_s->parts.settings.mcp : std::vector<std::string>{};
        bool session_has = std::find(own.begin(), own.end(), name) != own.end();
        auto standing = or_die(profile_servers(db(), profile));
        bool profile_has = std::find(standing.begin(), standing.end(), name) != standing.end();
        if (!session_has && !profile_has) {
            log_error("this agent does not have the MCP server %s: /mcp lists what it has",
                      shown_line(name).c_str());
            return;
        }
        if (session_has)
            drop_own(name);
        std::string quiet;
        if (profile_has && !sion_mcp_did({"drop", profile, name}, &quiet))
            return;
        std::printf("%s is off this agent, and stays on the shelf.\n", quoted(name).c_str());
        return;
    }
    if (verb == "forget" || verb == "logout") {
        const std::string& name = words[1];
        if (!on_shelf(name))
            return;
        if (verb == "forget" && m_s)
            drop_own(name);
        // remove says what it revoked and forgot besides, which stays said.
        std::string said;
        bool done = sion_mcp_did({verb == "forget" ? "remove" : "logout", name}, &said);
        for (std::string_view line : lines_of(said))
            if (!line.starts_with("removed MCP server "))
                std::printf("%.*s\n", static_cast<int>(line.size()), line.data());
        if (done && verb == "forget")
            std::printf("%s is off the shelf, and off every agent that had it.\n",
                        quoted(name).c_str());
        return;
    }
    if (words.size() > 1 || verb.find_first_of("/ ") != std::string::npos) {
        log_error("there is no /mcp %s: /help lists the /mcp commands", shown_line(verb).c_str());
        return;
    }
    // /mcp NAME: one on the shelf, given to this agent.
    if (!on_shelf(verb))
        return;
    std::string quiet;
    if (!sion_mcp_did({"give", profile, verb}, &quiet))
        return;
    std::printf("This agent has %s now: it reaches it at its next turn.\n", quoted(verb).c_str());
}

Chat::~Chat() {
    {
        std::lock_guard lock(m_login.mutex);
        if (m_login.group > 0)
            (void)::kill(-m_login.group, SIGTERM);
    }
    if (m_login.waiter.joinable())
        m_login.waiter.join();
}

void Chat::mcp_login(const std::vector<std::string>& words) {
    if (words.size() < 2 || words.size() > 3) {
        log_error("give the server's name: /mcp login NAME, or /mcp login NAME ADDRESS with the "
                  "address the browser landed on");
        return;
    }
    const std::string& name = words[1];
    std::unique_lock lock(m_login.mutex);
    if (words.size() == 3) {
        // The address the browser landed on, for the login waiting for it.
        if (m_login.group < 0 || m_login.name != name) {
            log_error("no login of %s is under way: /mcp login %s first", shown_line(name).c_str(),
                      shown_line(name).c_str());
            return;
        }
        (void)write_all(m_login.paste.get(), words[2] + "\n");
        return;
    }
    if (m_login.group > 0) {
        log_error("the login of %s is under way, and one is made at a time: finish it in the "
                  "browser, or give the address it landed on with /mcp login %s ADDRESS",
                  shown_line(m_login.name).c_str(), shown_line(m_login.name).c_str());
        return;
    }
    if (!on_shelf(name))
        return;
    if (m_login.waiter.joinable())
        m_login.waiter.join(); // the last one's, which has ended
    auto program = find_program("sion-mcp");
    if (!program) {
        report(program.error());
        return;
    }
    ChildSpec spec;
    spec.argv = {*program, "login", name, "--callback-port", std::to_string(m_login_port)};
    spec.env = own_environment();
    spec.in = Stdio::pipe();
    spec.out = Stdio::inherit();
    spec.err = Stdio::inherit();
    std::fflush(stdout);
    auto child = Child::spawn(spec);
    if (!child) {
        report(child.error());
        return;
    }
    std::printf("Where the browser cannot come back to this machine's port %d, give the address "
                "it landed on: /mcp login %s ADDRESS\n",
                m_login_port, shown_line(name).c_str());
    std::fflush(stdout);
    m_login.name = name;
    m_login.group = child->pid();
    m_login.paste = std::move(child->in());
    m_login.waiter = std::thread([this, c = std::move(*child), name]() mutable {
        auto ended = c.wait();
        std::lock_guard done(m_login.mutex);
        m_login.group = -1;
        m_login.paste.reset();
        if (ended && ended->status == 0)
            std::printf("logged in to \"%s\": an agent that has it reaches it at its next turn.\n",
                        shown_line(name).c_str());
        else if (ended && ended->signal == 0)
            std::printf("the login of \"%s\" did not end well (see above): /mcp login %s tries "
                        "again.\n",
                        shown_line(name).c_str(), shown_line(name).c_str());
        std::fflush(stdout);
    });
}

// "HTTP 401" of a server's state that says it, else "HTTP 403".
std::string state_http(std::string_view state) {
    return state.find("HTTP 401") != std::string_view::npos ? "HTTP 401" : "HTTP 403";
}

// The credential a grant for the server `name` would name: "NOTION_KEY" for notion.
std::string credential_name(std::string_view name) {
    std::string out;
    for (char c : name)
        out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (out.empty() || (out[0] >= '0' && out[0] <= '9'))
        out.insert(0, "MCP_");
    return out + "_KEY";
}

void Chat::mcp_list() {
    std::string listed;
    if (!sion_mcp_did({"list", "--json"}, &listed))
        return;
    // The state the session's servers were in at its last turn, where it has them running.
    std::map<std::string, std::string> states;
    if (m_s && m_s->mcp) {
        auto now = m_s->mcp->state();
        if (now)
            for (const McpServer& server : *now)
                states[server.name] = server.state == "connected"
                                          ? format("connected, %zu tools", server.tools.size())
                                          : server.message;
    }
    std::vector<std::string> has = agent_servers();
    std::vector<std::string> mine(has.size());
    std::vector<std::string> shelf;
    std::vector<std::string> grants; // the grant each server refused for want of one would need
    std::string first_other;
    for (std::string_view line : lines_of(listed)) {
        auto parsed = Json::parse(line);
        if (line.empty() || !parsed)
            continue;
        JsonView e = parsed->view();
        std::string name(e.string_or("name", "").value_or(""));
        std::string how;
        if (auto url = e.string("url")) {
            how = std::string(*url);
            if (e.string_or("transport", "").value_or("") == "sse")
                how += " (HTTP+SSE)";
        } else {
            for (const std::string& word :
                 e.strings("command").value_or(std::vector<std::string>{}))
                how += (how.empty() ? "" : " ") + word;
            how += e.get("sandbox").exists() ? " (in a sandbox)" : " (unsandboxed)";
        }
        std::string state;
        std::string state_was;
        if (e.get("authorization").exists())
            state = "logged in";
        auto pos = std::find(has.begin(), has.end(), name);
        if (auto s = states.find(name); s != states.end() && pos != has.end())
            state = s->second;
        // Refused over HTTP with no login and no grant: a key may be what it wants. The grant is
        // printed for the operator to paste, never written from here (seed 002).
        if (auto url = e.string("url"); url && !e.get("authorization").exists()
                                         && !e.get("grants").exists()
                                         && (state.find("HTTP 401") != std::string::npos
                                             || state.find("HTTP 403") != std::string::npos)) {
            state_was = state;
            state = "no grant";
            std::string n = shown_line(name);
            std::string var = credential_name(name);
            grants.push_back(n + " was refused (" + state_http(state_was) + "). If it takes an "
                             "account, /mcp login " + n + "; if it takes a key, keep the key with "
                             "sion agent credential add " + var + ", and paste this grant where "
                             "you keep your configuration (this console writes none):\n"
                             "  sion agent mcp grant " + n + " " + shown_line(*url)
                             + " --credential " + var);
        }
        std::string text = "  " + shown_line(name) + " " + shown_line(how)
                           + (state.empty() ? "" : " (" + shown_line(state) + ")");
        if (pos != has.end()) {
            mine[static_cast<size_t>(pos - has.begin())] = text;
        } else {
            shelf.push_back(text);
            if (first_other.empty())
                first_other = name;
        }
    }
    std::printf("This agent has:%s\n", has.empty() ? " none" : "");
    for (size_t i = 0; i < has.size(); ++i)
        std::printf("%s\n", mine[i].empty()
                                ? ("  " + shown_line(has[i]) + " (not on the shelf)").c_str()
                                : mine[i].c_str());
    std::printf("On the shelf:%s\n", shelf.empty() ? " nothing more" : "");
    for (const std::string& text : shelf)
        std::printf("%s\n", text.c_str());
    if (!first_other.empty())
        std::printf("/mcp %s gives this agent that one.\n", shown_line(first_other).c_str());
    else if (has.empty())
        std::printf("/mcp add NAME URL finds one.\n");
    for (const std::string& text : grants)
        std::printf("%s\n", text.c_str());
}

} // namespace

int chat_command(int argc, const char* const* argv) {
    std::vector<OptionSpec> options = session_options();
    options.insert(options.end() - 2,
                   OptionSpec{"question-timeout", 0, "S",
                              "cancel a server's question no one answers in S seconds (600)"});
    options.insert(options.end() - 2,
                   OptionSpec{"login-port", 0, "N",
                              "the port on 127.0.0.1 /mcp login's browser comes back to (8788)"});
    const CommandSpec spec{
        "sion-run chat",
        "sion-run chat PROFILE AGENT [options]",
        "A console: say what AGENT, of PROFILE, is to do, a message at a time, each a run of one\n"
        "session (a new one, or the one --session names). /help lists the commands.",
        options,
        false,
        {":profile", ":agent"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 2, 2, "give a profile and an agent: sion-run chat PROFILE AGENT");
    bool colour = or_die(colour_wanted(args, STDOUT_FILENO));
    int64_t question_s = k_question_seconds;
    if (auto given = args.value("question-timeout")) {
        auto n = parse_number(*given, 1, 86'400);
        if (!n)
            die(usage_error(
                format("--question-timeout takes seconds, 1 to 86400, not '%s'", given->c_str())));
        question_s = *n;
    }
    std::string home = or_die(prepare_home());
    auto input = or_die(ConsoleInput::open(home + "/chat_history"));
    int login_port = k_login_port;
    if (auto given = args.value("login-port")) {
        auto n = parse_number(*given, 1, 65535);
        if (!n)
            die(usage_error(
                format("--login-port takes a port from 1 to 65535, not '%s'", given->c_str())));
        login_port = static_cast<int>(*n);
    }
    Chat chat(args, *input, colour, question_s * 1000, login_port);
    return chat.go();
}

} // namespace sion::run_cmd
