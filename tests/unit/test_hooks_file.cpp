// SPDX-License-Identifier: MIT
// hooks/hooks_file, lib/private_file, describe and hooks_log: the file's text and its round trip,
// the refusal of a file others may change (as root too: modes and owners, not access), a malformed
// file left as it is, atomic writes of mode 0600, the lines list prints, the log's lines.
#include "hooks/describe.hpp"
#include "hooks/hooks_file.hpp"
#include "hooks/hooks_log.hpp"
#include "lib/private_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sion::hooks {
namespace {

namespace fs = std::filesystem;

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()
#define EXPECT_OK(r) EXPECT_TRUE(r) << (r).error().message()

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

mode_t mode_of(const std::string& path) {
    struct stat st = {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
}

// $SION_HOME in a directory of its own: home/.sion/agents, mode 0700 each.
class HooksHome : public testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "sion-test-hooks.XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        m_root = tmpl;
        m_home = m_root + "/.sion";
        ASSERT_EQ(::mkdir(m_home.c_str(), 0700), 0);
        m_agents = m_home + "/agents";
        ASSERT_OK(ensure_private_directory(m_agents));
        m_path = hooks_path(m_home);
    }

    void TearDown() override {
        std::error_code ec;
        fs::remove_all(m_root, ec);
    }

    std::string m_root, m_home, m_agents, m_path;
};

Hook hook(Event event, std::vector<std::string> tools, std::vector<std::string> command,
          int timeout = k_default_timeout_s) {
    Hook h;
    h.event = event;
    h.tools = std::move(tools);
    h.command = std::move(command);
    h.timeout_s = timeout;
    return h;
}

// --- the text --------------------------------------------------------------------------------

TEST(HooksText, OneHookALineEveryMemberInOrder) {
    std::vector<Hook> hooks = {
        hook(Event::before_tool, {"shell"}, {"/home/me/guard.sh"}),
        hook(Event::run_end, {}, {"logger", "-t", "sion \"hooks\""}, 5),
    };
    EXPECT_EQ(render_hooks(hooks), R"({
  "hooks": [
    {"event": "before-tool", "tools": ["shell"], "timeout": 30, "command": ["/home/me/guard.sh"]},
    {"event": "run-end", "tools": [], "timeout": 5, "command": ["logger", "-t", "sion \"hooks\""]}
  ]
}
)");
    EXPECT_EQ(render_hooks({}), "{\n  \"hooks\": []\n}\n");
    auto back = parse_hooks(render_hooks(hooks));
    ASSERT_OK(back);
    ASSERT_EQ(back->size(), 2U);
    EXPECT_EQ((*back)[1].command, hooks[1].command);
    EXPECT_EQ((*back)[1].timeout_s, 5);
}

TEST(HooksText, DefaultsForWhatIsLeftOut) {
    auto hooks = parse_hooks(R"({"hooks":[{"event":"after-tool","command":["log"]}]})");
    ASSERT_OK(hooks);
    ASSERT_EQ(hooks->size(), 1U);
    EXPECT_TRUE((*hooks)[0].tools.empty());
    EXPECT_EQ((*hooks)[0].timeout_s, 30);
}

TEST(HooksText, NotJSONSaysWhere) {
    auto hooks = parse_hooks("{\"hooks\": [");
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().exit(), Exit::data);
    EXPECT_EQ(hooks.error().message(), "invalid JSON at byte 11");
}

TEST(HooksText, CheckHookRefusesWhatAddMustNotWrite) {
    EXPECT_OK(check_hook(hook(Event::run_start, {}, {"date"})));
    EXPECT_FALSE(check_hook(hook(Event::run_start, {"*"}, {"date"})));
    EXPECT_FALSE(check_hook(hook(Event::before_tool, {}, {})));
    EXPECT_FALSE(check_hook(hook(Event::before_tool, {}, {"a/b"})));
    EXPECT_FALSE(check_hook(hook(Event::before_tool, {}, {"/g"}, 0)));
    EXPECT_FALSE(check_hook(hook(Event::before_tool, {}, {"/g"}, 3601)));
    EXPECT_OK(check_hook(hook(Event::before_tool, {}, {"/g"}, 3600)));
}

// --- who may change it -----------------------------------------------------------------------

TEST_F(HooksHome, NoFileIsNoHooks) {
    auto hooks = load_hooks(m_path);
    ASSERT_OK(hooks);
    EXPECT_TRUE(hooks->empty());
    // Nor a directory.
    fs::remove(m_agents);
    hooks = load_hooks(m_path);
    ASSERT_OK(hooks);
    EXPECT_TRUE(hooks->empty());
}

TEST_F(HooksHome, AFileOthersMayWriteIsRefused) {
    ASSERT_OK(save_hooks(m_path, {hook(Event::before_tool, {"shell"}, {"/g"})}));
    ASSERT_EQ(::chmod(m_path.c_str(), 0666), 0);
    auto hooks = load_hooks(m_path);
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().exit(), Exit::no_perm);
    EXPECT_EQ(hooks.error().message(), "refusing hooks file '" + m_path
                                           + "': others may write it (chmod go-w '" + m_path
                                           + "')");
    ASSERT_EQ(::chmod(m_path.c_str(), 0620), 0);
    hooks = load_hooks(m_path);
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().message(), "refusing hooks file '" + m_path
                                           + "': the group may write it (chmod go-w '" + m_path
                                           + "')");
    ASSERT_EQ(::chmod(m_path.c_str(), 0644), 0);
    EXPECT_OK(load_hooks(m_path));
}

TEST_F(HooksHome, ADirectoryOthersMayWriteIsRefused) {
    ASSERT_OK(save_hooks(m_path, {}));
    ASSERT_EQ(::chmod(m_agents.c_str(), 0777), 0);
    auto hooks = load_hooks(m_path);
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().exit(), Exit::no_perm);
    EXPECT_EQ(hooks.error().message(), "refusing hooks file '" + m_path
                                           + "': others may write its directory (chmod go-w '"
                                           + m_agents + "')");
    // Without the file: whoever may write the directory may put one there.
    fs::remove(m_path);
    Status safe = check_hooks_safe(m_path);
    ASSERT_FALSE(safe);
    EXPECT_EQ(safe.error().message(), "refusing hooks directory '" + m_agents
                                          + "': others may write it (chmod go-w '" + m_agents
                                          + "')");
    ASSERT_EQ(::chmod(m_agents.c_str(), 0700), 0);
    // $SION_HOME above it, likewise: whoever may write it may replace agents/.
    ASSERT_EQ(::chmod(m_home.c_str(), 0770), 0);
    safe = check_hooks_safe(m_path);
    ASSERT_FALSE(safe);
    EXPECT_EQ(safe.error().message(), "refusing hooks directory '" + m_agents
                                          + "': the group may write its directory (chmod go-w '"
                                          + m_home + "')");
}

TEST_F(HooksHome, ALinkIsRefused) {
    std::string elsewhere = m_root + "/elsewhere.json";
    spit(elsewhere, "{\"hooks\": []}\n");
    ASSERT_EQ(::chmod(elsewhere.c_str(), 0600), 0);
    ASSERT_EQ(::symlink(elsewhere.c_str(), m_path.c_str()), 0);
    auto hooks = load_hooks(m_path);
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().exit(), Exit::no_perm);
    EXPECT_EQ(hooks.error().message(),
              "refusing hooks file '" + m_path
                  + "': it is a symbolic link (put the file itself there)");
}

TEST_F(HooksHome, AMalformedFileIsRefusedAndLeftAsItIs) {
    const std::string text = R"({"hooks": [{"event": "before-tol", "command": ["/g"]}]})";
    spit(m_path, text);
    ASSERT_EQ(::chmod(m_path.c_str(), 0600), 0);
    auto hooks = load_hooks(m_path);
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().exit(), Exit::data);
    EXPECT_EQ(hooks.error().message(),
              "invalid hooks file '" + m_path
                  + "': hook 1: member 'event': unknown event 'before-tol' (give before-tool, "
                    "after-tool, run-start or run-end)");
    EXPECT_EQ(slurp(m_path), text);
}

TEST_F(HooksHome, TooLargeOrNotAFile) {
    spit(m_path, "{\"hooks\": []" + std::string(k_max_hooks_file, ' ') + "}");
    ASSERT_EQ(::chmod(m_path.c_str(), 0600), 0);
    auto hooks = load_hooks(m_path);
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().exit(), Exit::data);
    EXPECT_EQ(hooks.error().message(),
              "invalid hooks file '" + m_path + "': larger than 1048576 bytes");
    fs::remove(m_path);
    ASSERT_EQ(::mkdir(m_path.c_str(), 0700), 0);
    hooks = load_hooks(m_path);
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().message(), "invalid hooks file '" + m_path + "': not a regular file");
}

// --- writing it ------------------------------------------------------------------------------

TEST_F(HooksHome, WritesAreWholeAndPrivate) {
    mode_t old = ::umask(0);
    Status saved = save_hooks(m_path, {hook(Event::run_end, {}, {"date"})});
    ::umask(old);
    ASSERT_OK(saved);
    EXPECT_EQ(mode_of(m_path), 0600U);
    struct stat before = {};
    ASSERT_EQ(::stat(m_path.c_str(), &before), 0);
    old = ::umask(0277);
    saved = save_hooks(m_path, {});
    ::umask(old);
    ASSERT_OK(saved);
    EXPECT_EQ(mode_of(m_path), 0600U);
    struct stat after = {};
    ASSERT_EQ(::stat(m_path.c_str(), &after), 0);
    EXPECT_NE(before.st_ino, after.st_ino) << "replaced by a rename, not rewritten in place";
    EXPECT_EQ(slurp(m_path), render_hooks({}));
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(m_agents))
        ++entries;
    EXPECT_EQ(entries, 1U) << "no temporary file is left beside it";
}

TEST_F(HooksHome, TheDirectoryIsMadePrivate) {
    std::string dir = m_home + "/other";
    mode_t old = ::umask(0);
    Status made = ensure_private_directory(dir);
    ::umask(old);
    ASSERT_OK(made);
    EXPECT_EQ(mode_of(dir), 0700U);
    ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
    EXPECT_OK(ensure_private_directory(dir)); // an existing one is left as it is
    EXPECT_EQ(mode_of(dir), 0755U);
    Status missing_parent = ensure_private_directory(m_root + "/no/such");
    ASSERT_FALSE(missing_parent);
    EXPECT_EQ(missing_parent.error().message(),
              "cannot create directory '" + m_root + "/no/such': No such file or directory");
}

TEST_F(HooksHome, TheLockIsExclusive) {
    auto first = lock_directory(m_agents);
    ASSERT_OK(first);
    Fd other(::open(m_agents.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(other);
    EXPECT_NE(::flock(other.get(), LOCK_EX | LOCK_NB), 0);
    first->reset();
    EXPECT_EQ(::flock(other.get(), LOCK_EX | LOCK_NB), 0);
}

// --- in words --------------------------------------------------------------------------------

TEST(Describe, ShellQuoting) {
    EXPECT_EQ(shell_quote("/home/me/guard.sh"), "/home/me/guard.sh");
    EXPECT_EQ(shell_quote("--to=a,b@c:d%e+f"), "--to=a,b@c:d%e+f");
    EXPECT_EQ(shell_quote(""), "''");
    EXPECT_EQ(shell_quote("my log"), "'my log'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote("*"), "'*'");
    EXPECT_EQ(shell_quote("two\nlines"), "$'two\\nlines'");
    EXPECT_EQ(shell_quote("tab\there's\x01"), "$'tab\\there\\'s\\x01'");
}

TEST(Describe, ListLines) {
    EXPECT_EQ(hook_line(hook(Event::before_tool, {"shell"}, {"/home/me/guard.sh"}), 1),
              "1 before-tool shell: /home/me/guard.sh");
    EXPECT_EQ(hook_line(hook(Event::after_tool, {"github_*", "gitlab_*"}, {"/l.sh"}, 5), 2),
              "2 after-tool github_* gitlab_* (timeout 5 s): /l.sh");
    EXPECT_EQ(hook_line(hook(Event::before_tool, {}, {"guard"}), 3), "3 before-tool *: guard");
    EXPECT_EQ(hook_line(hook(Event::run_end, {}, {"logger", "-t", "sion", "run ended"}), 4),
              "4 run-end: logger -t sion 'run ended'");
    EXPECT_EQ(hook_line(hook(Event::run_start, {}, {"sh", "-c", "date; git branch"}), 5),
              "5 run-start: sh -c 'date; git branch'");
}

// --- the log ---------------------------------------------------------------------------------

TEST(HooksLog, ALineEach) {
    Failure f{2, "/home/me/log-call.sh", "exited with status 1",
              "cannot reach the log server\nsecond line"};
    EXPECT_EQ(log_line(f, Event::after_tool, "9c32eec224d6ee13", 1796110262),
              "2026-12-01T07:31:02Z session 9c32eec224d6ee13 after-tool: hook 2 "
              "(/home/me/log-call.sh) exited with status 1: cannot reach the log server");
    f.err = std::string(300, 'x');
    std::string line = log_line(f, Event::run_end, "s", 0);
    EXPECT_EQ(line, "1970-01-01T00:00:00Z session s run-end: hook 2 (/home/me/log-call.sh) exited "
                    "with status 1: "
                        + std::string(200, 'x') + "...");
    f.err = "tab\tand\x1b[31mcolour";
    line = log_line(f, Event::run_end, "s", 0);
    EXPECT_EQ(line.substr(line.rfind(": ") + 2), "tab and [31mcolour");
}

TEST_F(HooksHome, TheLogIsAppendedAndPrivate) {
    std::string log = hooks_log_path(m_home);
    EXPECT_EQ(log, m_agents + "/hooks.log");
    std::vector<Failure> failures = {{1, "/a", "exited with status 3", ""},
                                     {2, "/b", "ran out of time (1 s) and was killed", "slow"}};
    ASSERT_OK(append_hooks_log(log, failures, Event::run_end, "s1"));
    ASSERT_OK(append_hooks_log(log, {}, Event::run_end, "s2"));
    ASSERT_OK(append_hooks_log(log, {failures[0]}, Event::after_tool, "s3"));
    EXPECT_EQ(mode_of(log), 0600U);
    std::string text = slurp(log);
    std::vector<std::string> lines;
    for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
        lines.push_back(text.substr(at, nl - at).substr(21)); // past the time
    ASSERT_EQ(lines.size(), 3U) << text;
    EXPECT_EQ(lines[0], "session s1 run-end: hook 1 (/a) exited with status 3");
    EXPECT_EQ(lines[1],
              "session s1 run-end: hook 2 (/b) ran out of time (1 s) and was killed: slow");
    EXPECT_EQ(lines[2], "session s3 after-tool: hook 1 (/a) exited with status 3");
}

} // namespace
} // namespace sion::hooks
