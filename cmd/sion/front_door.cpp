// SPDX-License-Identifier: MIT
// git's dashed commands for sion: a table of words and the programs they name.
#include "cmd/sion/front_door.hpp"

#include "cmd/sion/completion.hpp"
#include "lib/programs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

namespace sion::front_door {

namespace {

struct Route {
    std::vector<std::string_view> words;   // what the user types after `sion`
    const char* program;                   // what runs
    std::vector<const char*> prefix;       // arguments put before the user's
};

// One row per command; a program arriving with its issue adds its row here.
const std::vector<Route>& routes() {
    static const std::vector<Route> table = {
        {{"agent", "run"}, "sion-run", {"run"}},
        {{"agent", "chat"}, "sion-run", {"chat"}},
        {{"agent", "create"}, "sion-run", {"create"}},
        {{"agent", "list"}, "sion-run", {"list"}},
        {{"agent", "sessions"}, "sion-run", {"sessions"}},
        {{"agent", "show"}, "sion-run", {"show"}},
        {{"agent", "credential"}, "sion-run", {"credential"}},
        {{"agent", "skills"}, "sion-run", {"skills"}},
        {{"agent", "chatgpt"}, "sion-run", {"chatgpt"}},
        {{"agent", "mcp"}, "sion-mcp", {}},
        {{"agent", "hooks"}, "sion-hooks", {}},
        {{"agent", "routes"}, "sion-route", {}},
        {{"sandbox"}, "sion-sandbox", {}},
        {{"mcp", "mail"}, "sion-mail", {}},
        {{"mcp", "calendar"}, "sion-calendar", {}},
        {{"mcp", "documents"}, "sion-documents", {}},
        {{"setup"}, "sion-run", {"setup"}},
    };
    return table;
}

// "run|mcp|hooks|routes": the words that may follow `prefix`.
std::string next_words(const std::vector<std::string>& prefix) {
    std::string out;
    for (const auto& r : routes()) {
        if (r.words.size() <= prefix.size())
            continue;
        bool match = true;
        for (size_t i = 0; i < prefix.size(); ++i)
            match = match && r.words[i] == prefix[i];
        std::string_view w = r.words[prefix.size()];
        if (match && out.find(std::string(w)) == std::string::npos)
            out += (out.empty() ? "" : "|") + std::string(w);
    }
    return out;
}

Error unknown(const std::vector<std::string>& given, const std::vector<std::string>& prefix) {
    std::string usage = "usage: sion";
    for (const auto& w : prefix)
        usage += " " + w;
    usage += " " + (prefix.empty() ? next_words(prefix) + "|help" : next_words(prefix));
    usage += " [<args>...]";
    if (given.size() == prefix.size())
        return {Exit::usage, (prefix.empty() ? "a command is needed; " : "'" + prefix.back() +
                                                                               "' needs a command; ") +
                                 usage};
    return {Exit::usage, "unknown command '" + given[prefix.size()] + "'; " + usage};
}

Dispatch help(const std::vector<std::string>& operands) {
    if (operands.size() < 2 || operands[1] == "sion")
        return {"help", "man", {"sion"}};
    for (const auto& r : routes())
        if (r.words.back() == operands[1])
            return {"help", "man", {r.program}};
    return {"help", "man", {"sion-" + operands[1]}};
}

} // namespace

Result<Dispatch> route(const std::vector<std::string>& operands) {
    if (!operands.empty() && operands[0] == "help")
        return help(operands);
    const Route* best = nullptr;
    for (const auto& r : routes()) {
        if (r.words.size() > operands.size())
            continue;
        bool match = true;
        for (size_t i = 0; i < r.words.size(); ++i)
            match = match && r.words[i] == operands[i];
        if (match)
            best = &r;
    }
    if (best == nullptr) {
        // Say what may follow the longest prefix the user got right.
        std::vector<std::string> prefix;
        while (prefix.size() < operands.size()) {
            std::vector<std::string> longer = prefix;
            longer.push_back(operands[prefix.size()]);
            if (next_words(longer).empty())
                break;
            prefix = longer;
        }
        return unknown(operands, prefix);
    }
    Dispatch d{std::string(best->words.back()), best->program, {}};
    for (const char* p : best->prefix)
        d.args.emplace_back(p);
    d.args.insert(d.args.end(), operands.begin() + static_cast<long>(best->words.size()),
                  operands.end());
    return d;
}

std::optional<Dispatch> complete(const std::vector<std::string>& words) {
    std::string current = words.empty() ? "" : words.back();
    std::vector<std::string> before(words.begin(), words.end() - (words.empty() ? 0 : 1));
    // sion's own words: the first, the shells of `completion`, the programs `help` opens
    if (before.empty() || before[0] == "completion" || before[0] == "help") {
        std::string offer;
        if (before.empty() && current.starts_with("-"))
            offer = "--help --version";
        else if (before.empty())
            offer = next_words({}) + "|completion|help";
        else if (before.size() == 1 && before[0] == "completion")
            offer = completion_spec().operands.at(0);
        else if (before.size() == 1) // what help() opens: each row by its last word
            for (const auto& r : routes())
                offer += " " + std::string(r.words.back());
        std::replace(offer.begin(), offer.end(), '|', ' ');
        print_completions(offer.c_str(), current, "", nullptr);
        return std::nullopt;
    }
    const Route* best = nullptr;
    for (const auto& r : routes()) {
        bool match = r.words.size() <= before.size();
        for (size_t i = 0; match && i < r.words.size(); ++i)
            match = r.words[i] == before[i];
        if (match)
            best = &r;
    }
    if (best == nullptr) {
        std::string next = next_words(before);
        std::replace(next.begin(), next.end(), '|', ' ');
        print_completions(next.c_str(), current, "", nullptr);
        return std::nullopt;
    }
    Dispatch d{std::string(best->words.back()), best->program, {"__complete"}};
    for (const char* p : best->prefix)
        d.args.emplace_back(p);
    d.args.insert(d.args.end(), before.begin() + static_cast<long>(best->words.size()),
                  before.end());
    d.args.push_back(current);
    return d;
}

std::vector<std::string> programs() {
    std::vector<std::string> out{"sion"};
    for (const auto& r : routes())
        if (std::find(out.begin(), out.end(), r.program) == out.end())
            out.emplace_back(r.program);
    return out;
}

Result<std::string> locate(const Dispatch& dispatch) {
    auto path = find_program(dispatch.program);
    if (!path)
        return make_error(Exit::not_found, "'%s' is not installed: %s not found", dispatch.word.c_str(),
                          dispatch.program.c_str());
    return path;
}

Error exec(const std::string& path, const Dispatch& dispatch) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(dispatch.program.c_str()));
    for (const auto& a : dispatch.args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(path.c_str(), argv.data());
    int err = errno;
    return sys_error(err == ENOENT ? Exit::not_found : Exit::cannot_exec, err, "cannot execute '%s'",
                     path.c_str());
}

} // namespace sion::front_door
