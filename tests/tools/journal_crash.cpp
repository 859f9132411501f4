// SPDX-License-Identifier: MIT
// journal-crash: a test fixture, not installed: makes journaled calls whose side effect is a line
// appended to a file, so that t0200-journal-crash can kill it at random moments and then check
// that no call ran twice and none that ran was forgotten.
//
//   journal-crash run DIR EFFECTS [--inputs N] [--report]
//     Opens DIR/sion.db (open_state) and, for n = 0 … N-1 in order, begins the call
//     append {"n":n,"tag":"crash"} of session "crash". A call that may proceed appends "call n" to
//     EFFECTS in one write(2), syncs it, and is then finished with "appended n". --report prints
//     what begin() answered, "n proceed|recorded|uncertain", one line each.
//   journal-crash check DIR EFFECTS [--inputs N]
//     Checks what the runs left: PRAGMA integrity_check says ok; EFFECTS holds only "call n" lines
//     and none twice; the entries cover 0 … last with no gap (calls are begun in order, so a gap
//     is a lost entry); every input whose side effect happened has an entry; a done entry's side
//     effect happened once and its answer is "appended n"; and begin() answers "recorded" for a
//     done entry and "uncertain" for a pending one. Prints "entries E", "done D", "pending P" and
//     "pending_with_effect W", one line each.
//
// Exit: 0 ok; 1 when a check fails (each failure on stderr); 64 usage; otherwise the error's code.
#include "lib/cli.hpp"
#include "lib/db_schema.hpp"
#include "lib/fd.hpp"
#include "lib/journal.hpp"
#include "lib/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace sion;

constexpr const char* k_session = "crash";
constexpr const char* k_tool = "append";
constexpr int64_t k_default_inputs = 1000;
constexpr size_t k_max_effects = size_t{64} << 20;

const CommandSpec k_spec{
    "journal-crash",
    "journal-crash run DIR EFFECTS [--inputs N] [--report]\n"
    "journal-crash check DIR EFFECTS [--inputs N]",
    "Make journaled calls that append to EFFECTS, or check what killed runs left behind. A test\n"
    "fixture for the journal's crash suite; never installed.",
    {{"inputs", 0, "N", "how many inputs, 0 to N-1 (default 1000)"},
     {"report", 0, nullptr, "print what begin() answered for each input"}},
};

// Members in the reverse of their canonical order, so the key is the sorted text, not this.
Json input_of(int64_t n) {
    Json input = Json::object();
    input.set("tag", "crash").set("n", n);
    return input;
}

const char* kind_name(Begun::Kind kind) {
    switch (kind) {
    case Begun::Kind::proceed:
        return "proceed";
    case Begun::Kind::recorded:
        return "recorded";
    case Begun::Kind::uncertain:
        return "uncertain";
    }
    return "?";
}

int64_t inputs_of(const Args& args) {
    auto v = args.value("inputs");
    if (!v)
        return k_default_inputs;
    char* end = nullptr;
    long long n =
        v->empty() || (*v)[0] < '0' || (*v)[0] > '9' ? -1 : std::strtoll(v->c_str(), &end, 10);
    if (n < 0 || end == nullptr || *end != '\0')
        die(usage_error("option '--inputs' needs a number, not '" + *v + "'"));
    return n;
}

Status run(Db& db, const std::string& effects, int64_t inputs, bool report) {
    int fd = ::open(effects.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return sys_error(Exit::io, errno, "cannot open '%s'", effects.c_str());
    Fd out(fd);
    Journal journal(db);
    for (int64_t n = 0; n < inputs; ++n) {
        SION_TRY(Begun begun, journal.begin(k_session, k_tool, input_of(n)));
        if (report)
            std::printf("%lld %s\n", static_cast<long long>(n), kind_name(begun.kind));
        if (begun.kind != Begun::Kind::proceed)
            continue;
        // The side effect: one write(2), so a kill leaves the whole line or none of it, made
        // durable as a real one would be (which also widens the window between it and finish()).
        std::string line = "call " + std::to_string(n) + "\n";
        if (Status wrote = write_all(out.get(), line); !wrote)
            return wrote.error().context("cannot write '" + effects + "'");
        if (::fsync(out.get()) != 0)
            return sys_error(Exit::io, errno, "cannot sync '%s'", effects.c_str());
        SION_CHECK(journal.finish(begun.entry, "appended " + std::to_string(n), false));
    }
    return {};
}

// What check() found; each problem is one line for stderr.
struct Findings {
    std::vector<std::string> problems;
    int64_t entries = 0;
    int64_t done = 0;
    int64_t pending = 0;
    int64_t pending_with_effect = 0;

    void problem(const std::string& what) { problems.push_back(what); }
};

Status check_integrity(Db& db, Findings& found) {
    SION_TRY(Stmt stmt, db.prepare("PRAGMA integrity_check"));
    std::string said;
    for (;;) {
        SION_TRY(bool row, stmt.step());
        if (!row)
            break;
        said += (said.empty() ? "" : "; ") + stmt.column_text(0);
    }
    if (said != "ok")
        found.problem("integrity check failed: " + said);
    return {};
}

// How many times each input's side effect happened.
Result<std::map<int64_t, int>> read_effects(const std::string& effects, int64_t inputs,
                                            Findings& found) {
    std::map<int64_t, int> counts;
    int fd = ::open(effects.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return counts; // killed before the first side effect
    if (fd < 0)
        return sys_error(Exit::io, errno, "cannot open '%s'", effects.c_str());
    Fd in(fd);
    SION_TRY(std::string text, read_all(in.get(), k_max_effects));
    size_t at = 0;
    while (at < text.size()) {
        size_t nl = text.find('\n', at);
        std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        at = nl == std::string::npos ? text.size() : nl + 1;
        char* end = nullptr;
        long long n =
            line.rfind("call ", 0) == 0 && line.size() > 5 && line[5] >= '0' && line[5] <= '9'
                ? std::strtoll(line.c_str() + 5, &end, 10)
                : -1;
        if (n < 0 || n >= inputs || end == nullptr || *end != '\0' || nl == std::string::npos) {
            found.problem("bad line in '" + effects + "': '" + line + "'");
            continue;
        }
        ++counts[n];
    }
    return counts;
}

Status check_entry(Journal& journal, const JournalEntry& entry, int64_t n, int effects,
                   Findings& found) {
    std::string name = "input " + std::to_string(n);
    if (entry.input != canonical_json(input_of(n)))
        found.problem(name + ": entry's input is '" + entry.input + "'");
    SION_TRY(Begun again, journal.begin(k_session, k_tool, input_of(n)));
    if (again.entry != entry.id)
        found.problem(name + ": begin() answered for entry " + std::to_string(again.entry)
                      + ", not " + std::to_string(entry.id));
    if (entry.state == "done") {
        ++found.done;
        if (effects != 1)
            found.problem(name + ": done, but its side effect happened " + std::to_string(effects)
                          + " times");
        if (entry.result != "appended " + std::to_string(n))
            found.problem(name + ": done with '" + entry.result + "'");
        if (again.kind != Begun::Kind::recorded || again.result != entry.result)
            found.problem(name + ": done, but begin() answered " + kind_name(again.kind));
    } else if (entry.state == "pending") {
        ++found.pending;
        found.pending_with_effect += effects > 0 ? 1 : 0;
        if (again.kind != Begun::Kind::uncertain)
            found.problem(name + ": pending, but begin() answered " + kind_name(again.kind));
    } else {
        found.problem(name + ": entry is " + entry.state + ", which no run makes");
    }
    return {};
}

Status check(Db& db, const std::string& effects, int64_t inputs, Findings& found) {
    SION_CHECK(check_integrity(db, found));
    SION_TRY(auto counts, read_effects(effects, inputs, found));
    for (const auto& [n, times] : counts)
        if (times > 1)
            found.problem("input " + std::to_string(n) + ": its side effect happened "
                          + std::to_string(times) + " times");
    Journal journal(db);
    SION_TRY(std::vector<JournalEntry> all, journal.entries(k_session));
    std::map<int64_t, JournalEntry> by_input;
    for (JournalEntry& e : all) {
        auto parsed = Json::parse(e.input);
        auto n = parsed ? parsed->view().integer("n") : Result<int64_t>(parsed.error());
        if (!n || by_input.count(*n) != 0) {
            found.problem("entry " + std::to_string(e.id) + ": input '" + e.input
                          + "' is not one the runs make, or is there twice");
            continue;
        }
        by_input.emplace(*n, std::move(e));
    }
    found.entries = static_cast<int64_t>(by_input.size());
    int64_t last = by_input.empty() ? -1 : by_input.rbegin()->first;
    if (!counts.empty())
        last = std::max(last, counts.rbegin()->first);
    for (int64_t n = 0; n <= last; ++n) {
        int times = counts.count(n) != 0 ? counts[n] : 0;
        auto e = by_input.find(n);
        if (e == by_input.end()) {
            found.problem("input " + std::to_string(n) + ": no entry"
                          + (times > 0 ? ", though its side effect happened"
                                       : ", though a later one has one"));
            continue;
        }
        SION_CHECK(check_entry(journal, e->second, n, times, found));
    }
    return {};
}

} // namespace

int main(int argc, char** argv) {
    guard_standard_fds();
    set_program_name("journal-crash");
    Args args = parse_args_or_exit(k_spec, argc, argv);
    const auto& ops = args.operands();
    if (ops.size() != 3 || (ops[0] != "run" && ops[0] != "check"))
        die(usage_error("give run or check, then DIR and EFFECTS"));
    int64_t inputs = inputs_of(args);
    auto db = open_state(ops[1]);
    if (!db)
        die(db.error());
    if (ops[0] == "run") {
        if (Status done = run(*db, ops[2], inputs, args.has("report")); !done)
            die(done.error());
        return finish_stdout(0);
    }
    Findings found;
    if (Status done = check(*db, ops[2], inputs, found); !done)
        die(done.error());
    for (const std::string& p : found.problems)
        log_error("%s", p.c_str());
    std::printf("entries %lld\ndone %lld\npending %lld\npending_with_effect %lld\n",
                static_cast<long long>(found.entries), static_cast<long long>(found.done),
                static_cast<long long>(found.pending),
                static_cast<long long>(found.pending_with_effect));
    return finish_stdout(found.problems.empty() ? 0 : 1);
}
