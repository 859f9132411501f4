// SPDX-License-Identifier: MIT
// Tests for lib/worktree against real git: the checkout as stored, what is committed (changed, new,
// gone, ignored, written back as it was, odd names, links), the branch's name when one is taken,
// and a hostile repository and a hostile subagent: hooks, core.hooksPath, core.fsmonitor, signing,
// filters named by .gitattributes and a planted .git, none of which ever runs or is read.
#include "lib/worktree.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sion {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
}

void write_file(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Runs a shell command; its stdout.
std::string sh(const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    if (p == nullptr)
        return out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    ::pclose(p);
    return out;
}

class WorktreeTest : public testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-worktree.XXXXXX";
        ASSERT_NE(::mkdtemp(dir.data()), nullptr);
        m_base = fs::canonical(dir).string();
        m_repo = m_base + "/repo";
        m_trees = m_base + "/trees";
        m_marker = m_base + "/marker";
        fs::create_directories(m_trees);
        write_file(m_repo + "/README.md", "hello\n");
        write_file(m_repo + "/src/main.py", "print('hi')\n");
        write_file(m_repo + "/run.sh", "#!/bin/sh\necho run\n");
        fs::permissions(m_repo + "/run.sh", fs::perms::owner_exec, fs::perm_options::add);
        write_file(m_repo + "/.gitignore", "*.log\n");
        fs::create_symlink("README.md", m_repo + "/readme-link");
        git("init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -q -m "
            "first");
    }

    void TearDown() override {
        std::error_code ec;
        fs::remove_all(m_base, ec);
    }

    // git in the repository, with the environment's ident.
    std::string git(const std::string& args) {
        return sh("cd '" + m_repo + "' && GIT_CONFIG_NOSYSTEM=1 HOME='" + m_base + "' git " + args);
    }

    Worktree made(const char* name = "fix") {
        auto tree = Worktree::make(m_repo + "/.git", name, m_trees);
        EXPECT_TRUE(tree) << tree.error().message();
        return std::move(*tree);
    }

    std::string m_base, m_repo, m_trees, m_marker;
};

TEST_F(WorktreeTest, ChecksOutHeadAsStoredWithNoRepository) {
    Worktree tree = made();
    const std::string& p = tree.path();
    EXPECT_EQ(p.compare(0, m_trees.size() + 5, m_trees + "/fix-"), 0) << p;
    EXPECT_EQ(read_file(p + "/README.md"), "hello\n");
    EXPECT_EQ(read_file(p + "/src/main.py"), "print('hi')\n");
    EXPECT_TRUE(fs::status(p + "/run.sh").permissions() != fs::perms::none);
    EXPECT_NE(fs::status(p + "/run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
    EXPECT_EQ(fs::status(p + "/README.md").permissions() & fs::perms::owner_exec, fs::perms::none);
    EXPECT_TRUE(fs::is_symlink(p + "/readme-link"));
    EXPECT_EQ(fs::read_symlink(p + "/readme-link").string(), "README.md");
    EXPECT_FALSE(fs::exists(p + "/.git"));
    EXPECT_EQ(tree.base(), git("rev-parse HEAD").substr(0, 40));
    std::string path = p;
    tree.remove();
    EXPECT_FALSE(fs::exists(path));
}

TEST_F(WorktreeTest, NothingChangedMakesNoBranch) {
    Worktree tree = made();
    write_file(tree.path() + "/debug.log", "ignored\n");
    auto c = tree.commit("nothing");
    ASSERT_OK(c);
    EXPECT_EQ(c->branch, "");
    EXPECT_EQ(git("for-each-ref"), git("for-each-ref refs/heads/main"));
}

TEST_F(WorktreeTest, WrittenBackAsItWasMakesNoBranch) {
    Worktree tree = made();
    write_file(tree.path() + "/README.md", "changed\n");
    write_file(tree.path() + "/README.md", "hello\n");
    auto c = tree.commit("same");
    ASSERT_OK(c);
    EXPECT_EQ(c->branch, "");
    EXPECT_EQ(git("for-each-ref"), git("for-each-ref refs/heads/main"));
}

TEST_F(WorktreeTest, CommitsWhatChangedOnItsBranch) {
    Worktree tree = made();
    std::ofstream(tree.path() + "/README.md", std::ios::app) << "more\n";
    auto c = tree.commit("Add a line\n\nMore words.");
    ASSERT_OK(c);
    EXPECT_EQ(c->branch, "sion/fix");
    EXPECT_EQ(c->stat, "1 file changed, 1 insertion(+)");
    EXPECT_EQ(git("log -1 --format='%an|%cn|%s|%b' sion/fix"),
              "sion subagent fix|sion subagent fix|Add a line|More words.\n\n");
    EXPECT_EQ(git("rev-parse sion/fix^"), git("rev-parse main"));
    EXPECT_EQ(git("show sion/fix:README.md"), "hello\nmore\n");
    EXPECT_EQ(git("for-each-ref --format='%(refname)' refs/sion/"), "");
    EXPECT_EQ(git("status --porcelain"), ""); // the parent's checkout untouched
}

TEST_F(WorktreeTest, NewGoneModeAndLinkChangesAndOddNames) {
    Worktree tree = made();
    const std::string& p = tree.path();
    fs::remove(p + "/src/main.py");
    write_file(p + "/src/new.py", "x = 1\n");
    write_file(p + "/a \"quoted\"\nname", "odd\n");
    write_file(p + "/build.log", "ignored\n");
    fs::permissions(p + "/README.md", fs::perms::owner_exec, fs::perm_options::add);
    fs::remove(p + "/readme-link");
    fs::create_symlink("/etc/passwd", p + "/readme-link");
    auto c = tree.commit("changes");
    ASSERT_OK(c);
    EXPECT_EQ(c->branch, "sion/fix");
    EXPECT_EQ(git("ls-tree -r --name-only sion/fix"),
              ".gitignore\nREADME.md\n\"a \\\"quoted\\\"\\nname\"\nreadme-link\nrun.sh\nsrc/"
              "new.py\n");
    EXPECT_EQ(git("ls-tree sion/fix README.md").substr(0, 6), "100755");
    EXPECT_EQ(git("cat-file -p sion/fix:readme-link"), "/etc/passwd"); // a link, not /etc/passwd
}

TEST_F(WorktreeTest, TakenNamesGetANumber) {
    git("branch sion/fix && git branch sion/fix-2");
    Worktree tree = made();
    write_file(tree.path() + "/new.txt", "new\n");
    auto c = tree.commit("new");
    ASSERT_OK(c);
    EXPECT_EQ(c->branch, "sion/fix-3");
    EXPECT_EQ(git("rev-parse sion/fix"), git("rev-parse main"));
}

TEST_F(WorktreeTest, HostileRepositoryAndSubagentRunNothing) {
    std::string mark = "#!/bin/sh\necho ran >> '" + m_marker + "'\ncat\n";
    write_file(m_base + "/marker.sh", mark);
    fs::permissions(m_base + "/marker.sh", fs::perms::owner_all);
    // The repository's own .gitattributes names a filter for what is checked out.
    write_file(m_repo + "/.gitattributes", "*.py filter=evil diff=evil\n");
    git("add .gitattributes && git -c user.name=t -c user.email=t@t commit -q -m attributes");
    std::string other = m_base + "/other";
    sh("git init -q " + other);
    std::string other_before = sh("cd " + other + " && find . | sort");
    git("config core.hooksPath " + m_base + "/hooks-elsewhere");
    write_file(m_base + "/hooks-elsewhere/pre-commit", mark);
    fs::permissions(m_base + "/hooks-elsewhere/pre-commit", fs::perms::owner_all);
    git("config core.fsmonitor " + m_base + "/marker.sh");
    git("config commit.gpgsign true");
    git("config gpg.program " + m_base + "/marker.sh");
    git("config filter.evil.clean " + m_base + "/marker.sh");
    git("config filter.evil.smudge " + m_base + "/marker.sh");
    git("config filter.evil.process " + m_base + "/marker.sh");
    git("config diff.evil.textconv " + m_base + "/marker.sh");
    for (const char* hook :
         {"pre-commit", "post-checkout", "reference-transaction", "post-commit"}) {
        write_file(m_repo + "/.git/hooks/" + hook, mark);
        fs::permissions(m_repo + "/.git/hooks/" + hook, fs::perms::owner_all);
    }
    ASSERT_FALSE(fs::exists(m_marker)) << "the set-up ran the marker";
    Worktree tree = made();
    const std::string& p = tree.path();
    EXPECT_EQ(read_file(p + "/src/main.py"), "print('hi')\n");
    // The subagent plants a filter for everything, a .git naming another repository, and .git
    // directories with a config of their own: no .git is read or committed.
    write_file(p + "/.gitattributes", "* filter=evil diff=evil\n");
    write_file(p + "/src/main.py", "print('changed')\n");
    write_file(p + "/.git", "gitdir: " + other + "/.git\n");
    write_file(p + "/sub/.git/config", "[core]\n\thooksPath = " + m_base + "/hooks-elsewhere\n");
    write_file(p + "/sub/file.txt", "in a nested repository\n");
    write_file(p + "/deep/.GIT/x", "x\n");
    auto c = tree.commit("hostile");
    ASSERT_OK(c);
    EXPECT_EQ(c->branch, "sion/fix");
    EXPECT_FALSE(fs::exists(m_marker)) << read_file(m_marker);
    EXPECT_EQ(git("-c core.fsmonitor=false show sion/fix:src/main.py"), "print('changed')\n");
    EXPECT_EQ(git("-c core.fsmonitor=false ls-tree -r --name-only sion/fix"),
              ".gitattributes\n.gitignore\nREADME.md\nreadme-link\nrun.sh\nsrc/main.py\nsub/"
              "file.txt\n");
    EXPECT_EQ(sh("cd " + other + " && find . | sort"), other_before);
}

TEST_F(WorktreeTest, FindsTheWorkspacesRepository) {
    auto root = find_workspace_repository(m_repo);
    EXPECT_EQ(root.git_dir, m_repo + "/.git");
    auto sub = find_workspace_repository(m_repo + "/src");
    EXPECT_EQ(sub.git_dir, "");
    EXPECT_EQ(sub.why_not, "the workspace " + m_repo + "/src is a folder of the git repository at "
                               + m_repo + ", not its root");
    auto none = find_workspace_repository(m_trees);
    EXPECT_EQ(none.git_dir, "");
    EXPECT_EQ(none.why_not.find("the workspace " + m_trees), 0u) << none.why_not;
    git("worktree add -q " + m_base + "/linked");
    auto linked = find_workspace_repository(m_base + "/linked");
    EXPECT_EQ(linked.git_dir, m_repo + "/.git/worktrees/linked");
}

TEST_F(WorktreeTest, NoCommitYetIsAnError) {
    std::string empty = m_base + "/empty";
    sh("git init -q " + empty);
    auto tree = Worktree::make(empty + "/.git", "fix", m_trees);
    ASSERT_FALSE(tree);
    EXPECT_NE(tree.error().message().find("cannot check out HEAD of '" + empty + "/.git'"),
              std::string::npos)
        << tree.error().message();
    EXPECT_TRUE(fs::is_empty(m_trees));
}

} // namespace
} // namespace sion
