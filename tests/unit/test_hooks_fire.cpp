// SPDX-License-Identifier: MIT
// hooks/fire: real hooks (small shell scripts) run for an event: exit 0 lets a call run, exit 2
// blocks it with the hook's reason, and a crash, a hang (killed at its timeout), a start that fails
// or another status blocks it too; what after-tool and run-start hooks print is added, marked;
// megabytes are cut, a hook that closes its stdin early is fine, patterns choose tool hooks, hooks
// run in order, each in the workspace with SION_HOOK_EVENT and SION_SESSION, and never one whose
// program the agent could have written.
#include "hooks/fire.hpp"
#include "lib/json.hpp"
#include "lib/utf8.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sion::hooks {
namespace {

namespace fs = std::filesystem;

// The verdict's line without its "hooks" (their times change from run to run), once they are
// checked: one for each hook run, in order, each begun before it ended.
std::string verdict_line(const Verdict& v) {
    auto line = Json::parse(verdict_json(v));
    EXPECT_TRUE(line);
    Json hooks = line->take("hooks");
    EXPECT_EQ(hooks.view().size(), v.ran);
    EXPECT_EQ(v.runs.size(), v.ran);
    int64_t last = 0;
    for (JsonView h : hooks.view()) {
        int64_t start = h.integer("start_us").value_or(-1);
        int64_t end = h.integer("end_us").value_or(-1);
        EXPECT_LE(last, start);
        EXPECT_LE(start, end);
        EXPECT_GT(start, 1'700'000'000'000'000);
        last = end;
    }
    return line->dump();
}

class Fire : public testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "sion-test-fire.XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        m_root = tmpl;
        m_bin = m_root + "/bin";
        m_work = m_root + "/work";
        fs::create_directories(m_bin);
        fs::create_directories(m_work);
        m_env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
    }

    void TearDown() override {
        std::error_code ec;
        fs::remove_all(m_root, ec);
    }

    // An executable script in bin/ with `body` after a #!/bin/sh line; its path.
    std::string script(const std::string& name, const std::string& body,
                       const std::string& dir = {}) {
        std::string path = (dir.empty() ? m_bin : dir) + "/" + name;
        std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
        fs::permissions(path, fs::perms::owner_all);
        return path;
    }

    Hook hook(Event event, std::vector<std::string> command, std::vector<std::string> tools = {},
              int timeout = 30) {
        Hook h;
        h.event = event;
        h.command = std::move(command);
        h.tools = std::move(tools);
        h.timeout_s = timeout;
        return h;
    }

    // The event JSON of `event`, for the tool `tool` where it is a tool event.
    EventInput event(Event e, const std::string& tool = "shell", bool workspace = false) {
        std::string text =
            std::string(R"({"event":")") + event_name(e) + R"(","session":"9c32eec224d6ee13")";
        if (workspace)
            text += R"(,"workspace":")" + m_work + "\"";
        if (is_tool_event(e))
            text += R"(,"tool":")" + tool + R"(","input":{"command":"ls"})";
        if (e == Event::after_tool)
            text += R"(,"outcome":{"state":"ok","text":"a.txt"})";
        if (e == Event::run_start)
            text += R"(,"said":"Fix the parser")";
        if (e == Event::run_end)
            text += R"(,"ended":{"state":"done"})";
        text += "}";
        auto in = parse_event_input(text, e);
        EXPECT_TRUE(in) << (in ? "" : in.error().message());
        return std::move(*in);
    }

    Verdict run(const std::vector<Hook>& hooks, const EventInput& in) {
        return fire(hooks, in, FireOptions{m_env, k_output_limit});
    }

    std::string m_root, m_bin, m_work;
    std::vector<std::string> m_env;
};

// --- before-tool -----------------------------------------------------------------------------

TEST_F(Fire, NoHooksAllow) {
    Verdict v = run({}, event(Event::before_tool));
    EXPECT_TRUE(v.allow);
    EXPECT_EQ(v.ran, 0U);
    EXPECT_EQ(verdict_line(v), R"({"event":"before-tool","allow":true,"ran":0,"failures":[]})");
}

TEST_F(Fire, ExitZeroLetsTheCallRun) {
    Verdict v = run({hook(Event::before_tool, {script("ok.sh", "echo fine; exit 0")})},
                    event(Event::before_tool));
    EXPECT_TRUE(v.allow);
    EXPECT_EQ(v.ran, 1U);
    EXPECT_TRUE(v.failures.empty());
}

TEST_F(Fire, ExitTwoBlocksWithWhatItWroteToStderr) {
    std::string guard = script("guard.sh", "echo 'on stdout'; echo 'no rm -rf here' >&2; exit 2");
    Verdict v = run({hook(Event::before_tool, {guard})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "no rm -rf here");
    EXPECT_EQ(v.hook, 1U);
    EXPECT_EQ(v.command, guard);
    EXPECT_TRUE(v.failures.empty()) << "a block is not a failure";
    EXPECT_EQ(
        verdict_line(v),
        R"({"event":"before-tool","allow":false,"reason":"no rm -rf here","hook":1,"command":")"
            + guard + R"(","ran":1,"failures":[]})");
}

TEST_F(Fire, ExitTwoWithoutStderrGivesStdoutElseSaysWho) {
    std::string out = script("out.sh", "printf 'not on a Friday\\n\\n'; exit 2");
    Verdict v = run({hook(Event::before_tool, {out})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "not on a Friday");
    std::string mute = script("mute.sh", "exit 2");
    v = run({hook(Event::before_tool, {mute, "--quiet"})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "blocked by hook 1 (" + mute + " --quiet)");
}

TEST_F(Fire, AnotherStatusBlocks) {
    std::string h = script("one.sh", "echo oops >&2; exit 1");
    Verdict v = run({hook(Event::before_tool, {h})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "hook 1 (" + h + ") exited with status 1, which blocks the call");
    ASSERT_EQ(v.failures.size(), 1U);
    EXPECT_EQ(failure_text(v.failures[0]), "hook 1 (" + h + ") exited with status 1");
    EXPECT_EQ(v.failures[0].err, "oops");
}

TEST_F(Fire, ACrashBlocks) {
    std::string h = script("crash.sh", "kill -SEGV $$");
    Verdict v = run({hook(Event::before_tool, {h})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason,
              "hook 1 (" + h
                  + ") was killed by SIGSEGV (Segmentation fault), which blocks the call");
}

TEST_F(Fire, NoStartBlocks) {
    Verdict v = run({hook(Event::before_tool, {m_bin + "/missing.sh"})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "hook 1 (" + m_bin + "/missing.sh) could not run (cannot run '" + m_bin
                            + "/missing.sh': No such file or directory), which blocks the call");
    std::string plain = m_bin + "/plain.txt";
    std::ofstream(plain) << "not a program\n";
    v = run({hook(Event::before_tool, {plain})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_NE(v.reason.find("could not run (cannot run '" + plain + "': Permission denied)"),
              std::string::npos)
        << v.reason;
    v = run({hook(Event::before_tool, {"no-such-hook-program"})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "hook 1 (no-such-hook-program) could not run ('no-such-hook-program' is "
                        "not on PATH), which blocks the call");
}

TEST_F(Fire, AHangIsKilledAtItsTimeoutAndBlocks) {
    std::string h = script("hang.sh", "sleep 30");
    auto start = std::chrono::steady_clock::now();
    Verdict v = run({hook(Event::before_tool, {h}, {}, 1)}, event(Event::before_tool));
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason,
              "hook 1 (" + h + ") ran out of time (1 s) and was killed, which blocks the call");
    EXPECT_LT(took, std::chrono::seconds(10));
}

TEST_F(Fire, ABackgroundChildHoldingTheOutputIsKilledWithIt) {
    std::string pidfile = m_root + "/bg.pid";
    std::string h = script("bg.sh", "sleep 30 & echo $! > " + pidfile + "; exit 0");
    Verdict v = run({hook(Event::before_tool, {h}, {}, 1)}, event(Event::before_tool));
    EXPECT_FALSE(v.allow) << "not finished until its output is closed";
    std::string pid;
    std::ifstream(pidfile) >> pid;
    ASSERT_FALSE(pid.empty());
    // The whole process group was killed.
    for (int i = 0; i < 100 && fs::exists("/proc/" + pid + "/stat"); ++i) {
        std::ifstream stat("/proc/" + pid + "/stat");
        std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        if (all.find(") Z ") != std::string::npos)
            break;
        ::usleep(10000);
    }
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(all.empty() || all.find(") Z ") != std::string::npos) << all;
}

TEST_F(Fire, TheFirstBlockIsTheLastToRun) {
    std::string trace = m_root + "/trace";
    std::string a = script("a.sh", "echo a >> " + trace);
    std::string b = script("b.sh", "echo b >> " + trace + "; echo 'b says no' >&2; exit 2");
    std::string c = script("c.sh", "echo c >> " + trace);
    Verdict v = run({hook(Event::before_tool, {a}), hook(Event::before_tool, {b}),
                     hook(Event::before_tool, {c})},
                    event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.hook, 2U);
    EXPECT_EQ(v.ran, 2U);
    std::ifstream in(trace);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, "a\nb\n");
}

TEST_F(Fire, PatternsChooseToolHooks) {
    std::string trace = m_root + "/trace";
    std::string log = script("log.sh", "echo \"$1\" >> " + trace);
    std::vector<Hook> hooks = {
        hook(Event::before_tool, {log, "shell-only"}, {"shell"}),
        hook(Event::before_tool, {log, "github"}, {"github_*"}),
        hook(Event::before_tool, {log, "every"}),
        hook(Event::before_tool, {log, "files"}, {"read_*", "write_*"}),
        hook(Event::after_tool, {log, "after"}),
        hook(Event::run_start, {log, "run"}),
    };
    for (const char* tool : {"shell", "github_create_issue", "write_file", "shellx"})
        EXPECT_TRUE(run(hooks, event(Event::before_tool, tool)).allow);
    std::ifstream in(trace);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, "shell-only\nevery\ngithub\nevery\nevery\nfiles\nevery\n");
}

// --- what a hook sees ------------------------------------------------------------------------

TEST_F(Fire, AHookReadsTheEventInItsWorkspaceWithItsEnvironment) {
    std::string seen = m_root + "/seen";
    std::string h = script("env.sh", "{ cat; echo; echo \"$SION_HOOK_EVENT $SION_SESSION\"; pwd; "
                                     "echo \"$LC_ALL\"; } > "
                                         + seen);
    Verdict v = run({hook(Event::before_tool, {h})}, event(Event::before_tool, "shell", true));
    EXPECT_TRUE(v.allow);
    std::ifstream in(seen);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, R"({"event":"before-tool","session":"9c32eec224d6ee13","workspace":")" + m_work
                       + R"(","tool":"shell","input":{"command":"ls"}})" + "\n\n"
                       + "before-tool 9c32eec224d6ee13\n" + m_work + "\nC\n");
}

TEST_F(Fire, AHookThatClosesItsStdinEarlyIsFine) {
    std::string h = script("closer.sh", "exec 0<&-; sleep 0.1; echo ok; exit 0");
    EventInput in = event(Event::after_tool);
    // A large input, so that writing it outlasts the hook's reading.
    std::string text =
        R"({"event":"after-tool","session":"s","tool":"write_file","input":{"content":")"
        + std::string(4 << 20, 'x') + R"("},"outcome":{"state":"ok","text":"x"}})";
    auto big = parse_event_input(text, Event::after_tool);
    ASSERT_TRUE(big);
    Verdict v = run({hook(Event::after_tool, {h})}, *big);
    EXPECT_TRUE(v.failures.empty()) << failure_text(v.failures.at(0));
    EXPECT_EQ(v.added, "[hook 1: " + h + "] ok");
}

TEST_F(Fire, AProgramInTheWorkspaceIsNotRun) {
    std::string planted = m_root + "/ran";
    std::string h = script("guard.sh", "touch " + planted + "; exit 0", m_work);
    Verdict v = run({hook(Event::before_tool, {h})}, event(Event::before_tool, "shell", true));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "hook 1 (" + h + ") could not run (its program '" + h
                            + "' is in the workspace '" + m_work
                            + "', which the agent can change), which blocks the call");
    EXPECT_FALSE(fs::exists(planted));
    // Nor through a link from outside that points in, nor found on a PATH inside it.
    std::string link = m_bin + "/link.sh";
    fs::create_symlink(h, link);
    v = run({hook(Event::before_tool, {link})}, event(Event::before_tool, "shell", true));
    EXPECT_FALSE(v.allow);
    m_env = {"PATH=" + m_work + ":/usr/bin:/bin"};
    v = run({hook(Event::before_tool, {"guard.sh"})}, event(Event::before_tool, "shell", true));
    EXPECT_FALSE(v.allow);
    EXPECT_NE(v.reason.find("is in the workspace"), std::string::npos) << v.reason;
    EXPECT_FALSE(fs::exists(planted));
    // Without a workspace, the same program is anybody's.
    v = run({hook(Event::before_tool, {h})}, event(Event::before_tool));
    EXPECT_TRUE(v.allow);
}

TEST_F(Fire, BareNamesAreFoundOnlyInAbsolutePathDirectories) {
    script("helper", "echo from-bin; exit 0");
    script("helper", "echo from-the-workspace; exit 0", m_work);
    m_env = {"PATH=.::work:" + m_bin};
    auto found = find_hook_program("helper", m_env);
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(*found, m_bin + "/helper");
    Verdict v = run({hook(Event::run_start, {"helper"})}, event(Event::run_start, "", true));
    EXPECT_EQ(v.added, "[hook 1: helper] from-bin");
    m_env = {};
    found = find_hook_program("sh", m_env);
    ASSERT_TRUE(found);
    EXPECT_TRUE(*found == "/bin/sh" || *found == "/usr/bin/sh") << *found;
    EXPECT_EQ(find_hook_program("/not/looked/up", m_env).value_or(""), "/not/looked/up");
}

// --- after-tool, run-start, run-end ----------------------------------------------------------

TEST_F(Fire, AfterToolAddsEachHooksOutputMarked) {
    std::string a = script("a.sh", "cat >/dev/null; echo 'logged as #41'");
    std::string quiet = script("quiet.sh", "exit 0");
    std::string b = script("b.sh", "printf 'two\\nlines\\n\\n\\n'");
    std::string bad = script("bad.sh", "echo 'would be added' ; exit 3");
    Verdict v = run({hook(Event::after_tool, {a}), hook(Event::after_tool, {quiet}),
                     hook(Event::after_tool, {b, "my arg"}), hook(Event::after_tool, {bad})},
                    event(Event::after_tool));
    EXPECT_TRUE(v.allow);
    EXPECT_EQ(v.ran, 4U);
    EXPECT_EQ(v.added,
              "[hook 1: " + a + "] logged as #41\n[hook 3: " + b + " 'my arg'] two\nlines");
    ASSERT_EQ(v.failures.size(), 1U);
    EXPECT_EQ(failure_text(v.failures[0]), "hook 4 (" + bad + ") exited with status 3");
    std::string json = verdict_json(v);
    EXPECT_NE(json.find(R"("added":"[hook 1: )"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("failures":["hook 4 ()"), std::string::npos) << json;
}

TEST_F(Fire, ExitTwoIsAFailureWhereNothingCanBeBlocked) {
    std::string h = script("two.sh", "echo text; exit 2");
    Verdict v = run({hook(Event::after_tool, {h})}, event(Event::after_tool));
    EXPECT_TRUE(v.allow);
    EXPECT_EQ(v.added, "");
    ASSERT_EQ(v.failures.size(), 1U);
    EXPECT_EQ(v.failures[0].why, "exited with status 2");
}

TEST_F(Fire, RunStartAddsRunEndIsTold) {
    std::string ctx = script("ctx.sh", "echo 'branch: main'");
    std::string seen = m_root + "/ended";
    std::string end = script("end.sh", "cat > " + seen + "; echo ignored; exit 0");
    std::string fail = script("fail.sh", "echo 'cannot log' >&2; exit 1");
    std::vector<Hook> hooks = {hook(Event::run_start, {ctx}), hook(Event::run_end, {end}),
                               hook(Event::run_end, {fail})};
    Verdict v = run(hooks, event(Event::run_start));
    EXPECT_EQ(v.ran, 1U);
    EXPECT_EQ(v.added, "[hook 1: " + ctx + "] branch: main");
    EXPECT_EQ(verdict_line(v), R"({"event":"run-start","allow":true,"added":"[hook 1: )" + ctx
                                   + R"(] branch: main","ran":1,"failures":[]})");
    v = run(hooks, event(Event::run_end));
    EXPECT_TRUE(v.allow);
    EXPECT_EQ(v.ran, 2U);
    ASSERT_EQ(v.failures.size(), 1U);
    EXPECT_EQ(v.failures[0].hook, 3U);
    EXPECT_EQ(v.failures[0].err, "cannot log");
    EXPECT_EQ(verdict_line(v), R"({"event":"run-end","allow":true,"ran":2,"failures":["hook 3 ()"
                                   + fail + R"() exited with status 1"]})");
    ASSERT_EQ(v.runs.size(), 2U);
    EXPECT_EQ(v.runs[0].failed, "");
    EXPECT_EQ(v.runs[1].hook, 3U);
    EXPECT_EQ(v.runs[1].command, fail);
    EXPECT_EQ(v.runs[1].failed, "exited with status 1");
    std::ifstream in(seen);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, R"({"event":"run-end","session":"9c32eec224d6ee13","ended":{"state":"done"}})"
                   "\n");
}

// --- what a hook writes ----------------------------------------------------------------------

TEST_F(Fire, MegabytesAreCutAndSaySo) {
    std::string h = script("big.sh", "head -c 3000000 /dev/zero | tr '\\0' 'y'");
    Verdict v = run({hook(Event::after_tool, {h})}, event(Event::after_tool));
    ASSERT_TRUE(v.failures.empty());
    std::string mark = "[hook 1: " + h + "] ";
    ASSERT_EQ(v.added.substr(0, mark.size()), mark);
    std::string text = v.added.substr(mark.size());
    EXPECT_EQ(text, std::string(k_output_limit, 'y') + "\n[... "
                        + std::to_string(3000000 - k_output_limit) + " more bytes cut]");
    std::string loud = script("loud.sh", "head -c 2000000 /dev/zero | tr '\\0' 'n' >&2; exit 2");
    v = run({hook(Event::before_tool, {loud})}, event(Event::before_tool));
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason.size(),
              k_output_limit + std::string("\n[... 1934464 more bytes cut]").size());
}

TEST_F(Fire, OutputThatIsNotUTF8IsMadeSo) {
    std::string h = script("bytes.sh", "printf 'caf\\303\\251 \\377\\000x'");
    Verdict v = run({hook(Event::run_start, {h})}, event(Event::run_start));
    EXPECT_EQ(v.added, "[hook 1: " + h + "] caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbdx");
}

TEST(ShownOutput, CutsOnACharacterBoundary) {
    EXPECT_EQ(shown_output("", 0), "");
    EXPECT_EQ(shown_output(" \n\t\n", 4), "");
    EXPECT_EQ(shown_output("kept\n", 5), "kept");
    // "é" is two bytes; the first was kept, the second cut: neither is shown.
    EXPECT_EQ(shown_output("ab\xc3", 10), "ab\n[... 8 more bytes cut]");
    EXPECT_EQ(shown_output("", 10), "[... 10 more bytes cut]");
    EXPECT_EQ(text_for_json(std::string("a\0b", 3)), "a\xef\xbf\xbd"
                                                 "b");
}

} // namespace
} // namespace sion::hooks
