// SPDX-License-Identifier: MIT
// Tests for lib/confined: every way out of the root (.., absolute paths, links planted before or
// swapped in while tools work, /proc's magic links) refused, links inside followed, writes that
// replace and never write through, staging, the walk, and a race against a directory swapper.
#include "lib/confined.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sion {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()
#define EXPECT_OK(r) EXPECT_TRUE(r) << (r).error().message()

namespace fs = std::filesystem;

// base/ws is the root; base/out is outside it and holds a secret no call may read or change.
class ConfinedTest : public testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-confined.XXXXXX";
        ASSERT_NE(::mkdtemp(dir.data()), nullptr);
        m_base = fs::canonical(dir).string();
        m_ws = m_base + "/ws";
        m_out = m_base + "/out";
        fs::create_directory(m_ws);
        fs::create_directory(m_out);
        put(m_out + "/secret", "SECRET\n");
        auto c = Confined::open(m_ws);
        ASSERT_OK(c);
        m_c = std::make_unique<Confined>(std::move(*c));
    }

    void TearDown() override { fs::remove_all(m_base); }

    static void put(const std::string& path, const std::string& text) {
        std::ofstream(path, std::ios::binary) << text;
    }

    static std::string get(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

    // What base/out holds, every path below it: it must stay {"secret"}.
    std::set<std::string> outside() const {
        std::set<std::string> names;
        for (const auto& e : fs::recursive_directory_iterator(m_out))
            names.insert(fs::relative(e.path(), m_out).string());
        return names;
    }

    std::vector<std::string> walked(const std::string& rel, size_t max = 1000000) const {
        std::vector<std::string> seen;
        Status ok = m_c->walk(
            rel,
            [&](const Confined::Entry& e) {
                seen.push_back(e.rel + (e.is_dir ? "/" : e.is_link ? "@" : ""));
                return true;
            },
            max);
        EXPECT_OK(ok);
        return seen;
    }

    std::string m_base, m_ws, m_out;
    std::unique_ptr<Confined> m_c;
};

// relative(): normalised, "." for the root, every way above it refused before anything is looked
// up.
TEST_F(ConfinedTest, RelativeNormalisesAndRefusesWaysOut) {
    EXPECT_EQ(*m_c->relative("a/./b"), "a/b");
    EXPECT_EQ(*m_c->relative("a//b/"), "a/b");
    EXPECT_EQ(*m_c->relative(""), ".");
    EXPECT_EQ(*m_c->relative("."), ".");
    EXPECT_EQ(*m_c->relative("a/.."), ".");
    EXPECT_EQ(*m_c->relative("a/../b"), "b");
    EXPECT_EQ(*m_c->relative("/workspace"), ".");
    EXPECT_EQ(*m_c->relative("/workspace/src/x.rs"), "src/x.rs");
    EXPECT_EQ(*m_c->relative(m_ws + "/src"), "src");
    EXPECT_EQ(*m_c->relative(m_ws), ".");
    for (const char* bad : {"..", "../x", "a/../../x", "/etc/passwd", "/workspacex",
                            "/workspace/..", "/workspace/../out/secret", "/", "./../ws"}) {
        auto r = m_c->relative(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().exit(), Exit::no_perm) << bad;
        EXPECT_EQ(r.error().message(), "'" + std::string(bad) + "' is outside the workspace");
    }
    auto sibling = m_c->relative(m_ws + "x/y"); // a longer name beside the root is not in it
    ASSERT_FALSE(sibling);
    EXPECT_EQ(sibling.error().exit(), Exit::no_perm);
    auto nul = m_c->relative(std::string_view("a\0b", 3));
    ASSERT_FALSE(nul);
    EXPECT_EQ(nul.error().exit(), Exit::data);
}

TEST_F(ConfinedTest, OpenNeedsAnAbsoluteDirectory) {
    auto none = Confined::open(m_base + "/none");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::no_input);
    EXPECT_EQ(none.error().message(),
              "cannot open the directory '" + m_base + "/none': No such file or directory");
    put(m_base + "/plain", "x");
    auto plain = Confined::open(m_base + "/plain");
    ASSERT_FALSE(plain);
    EXPECT_EQ(plain.error().exit(), Exit::no_input);
    EXPECT_FALSE(Confined::open("relative/dir"));
    auto slash = Confined::open(m_ws + "/");
    ASSERT_OK(slash);
    EXPECT_EQ(slash->root(), m_ws);
    auto docs = Confined::open(m_ws, "/docs"); // messages name the root by what it is shown as
    ASSERT_OK(docs);
    EXPECT_EQ(docs->relative("../x").error().message(), "'../x' is outside the docs");
}

TEST_F(ConfinedTest, ReadsRegularFilesAndRefusesTheRest) {
    put(m_ws + "/a.txt", "hello\n");
    auto text = m_c->read("a.txt", 100);
    ASSERT_OK(text);
    EXPECT_EQ(*text, "hello\n");
    EXPECT_EQ(*m_c->read("/workspace/a.txt", 100), "hello\n");

    auto missing = m_c->read("none.txt", 100);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::no_input);
    EXPECT_EQ(missing.error().message(), "cannot read 'none.txt': No such file or directory");

    auto large = m_c->read("a.txt", 3);
    ASSERT_FALSE(large);
    EXPECT_EQ(large.error().exit(), Exit::data);
    EXPECT_EQ(large.error().message(), "cannot read 'a.txt': it is larger than 3 bytes");

    fs::create_directory(m_ws + "/d");
    auto dir = m_c->read("d", 100);
    ASSERT_FALSE(dir);
    EXPECT_EQ(dir.error().exit(), Exit::data);
    EXPECT_EQ(dir.error().message(), "cannot read 'd': it is a directory");

    // A FIFO would block an open for reading until a writer came: it is refused at once.
    ASSERT_EQ(::mkfifo((m_ws + "/fifo").c_str(), 0600), 0);
    auto fifo = m_c->read("fifo", 100);
    ASSERT_FALSE(fifo);
    EXPECT_EQ(fifo.error().message(), "cannot read 'fifo': it is not a regular file");

    auto up = m_c->read("../out/secret", 100);
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().exit(), Exit::no_perm);
    EXPECT_EQ(up.error().message(),
              "cannot read '../out/secret': '../out/secret' is outside the workspace");
    auto absolute = m_c->read(m_out + "/secret", 100);
    ASSERT_FALSE(absolute);
    EXPECT_EQ(absolute.error().exit(), Exit::no_perm);
}

// read_into: one buffer for many files, grown only; a file over the limit is no error there.
TEST_F(ConfinedTest, ReadIntoKeepsOneBufferAndSaysWhenAFileIsTooLarge) {
    put(m_ws + "/long.txt", std::string(5000, 'x'));
    put(m_ws + "/short.txt", "hi\n");
    std::string buffer;
    auto n = m_c->read_into("long.txt", 10000, buffer);
    ASSERT_OK(n);
    ASSERT_TRUE(*n);
    EXPECT_EQ(**n, 5000U);
    size_t grown = buffer.size();
    n = m_c->read_into("short.txt", 10000, buffer);
    ASSERT_OK(n);
    ASSERT_TRUE(*n);
    EXPECT_EQ(buffer.substr(0, **n), "hi\n");
    EXPECT_EQ(buffer.size(), grown);
    n = m_c->read_into("long.txt", 4999, buffer);
    ASSERT_OK(n);
    EXPECT_FALSE(*n);
    auto dir = m_c->read_into(".", 100, buffer);
    ASSERT_FALSE(dir);
    EXPECT_EQ(dir.error().message(), "cannot read '.': it is a directory");
}

// Links planted before the call: followed while they stay beneath the root, refused otherwise.
TEST_F(ConfinedTest, LinksInsideAreFollowedLinksOutAreNot) {
    fs::create_directories(m_ws + "/src/deep");
    put(m_ws + "/src/deep/f.txt", "inside\n");
    fs::create_symlink("src/deep/f.txt", m_ws + "/in");
    fs::create_symlink("../deep", m_ws + "/src/deep/up"); // climbs, but stays inside
    fs::create_symlink("../out/secret", m_ws + "/rel-out");
    fs::create_symlink(m_out + "/secret", m_ws + "/abs-out");
    fs::create_symlink(m_ws + "/src/deep/f.txt", m_ws + "/abs-in");
    fs::create_symlink("../out", m_ws + "/dir-out");
    fs::create_symlink("src/../../out/secret", m_ws + "/sneaky");

    EXPECT_EQ(*m_c->read("in", 100), "inside\n");
    EXPECT_EQ(*m_c->read("src/deep/up/f.txt", 100), "inside\n");
    for (const char* out : {"rel-out", "abs-out", "dir-out/secret", "sneaky"}) {
        auto r = m_c->read(out, 100);
        ASSERT_FALSE(r) << out;
        EXPECT_EQ(r.error().exit(), Exit::no_perm) << out;
        EXPECT_EQ(r.error().message(),
                  "cannot read '" + std::string(out) + "': '" + out + "' is outside the workspace");
    }
    // An absolute link is taken to lead outside, even one that names a place inside the root.
    auto abs_in = m_c->read("abs-in", 100);
    ASSERT_FALSE(abs_in);
    EXPECT_EQ(abs_in.error().exit(), Exit::no_perm);

    auto link = m_c->stat("rel-out");
    ASSERT_OK(link);
    EXPECT_TRUE(link->is_link);
    EXPECT_FALSE(link->is_file);
    auto missing = m_c->stat("none");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::no_input);
    auto through = m_c->stat("dir-out/secret");
    ASSERT_FALSE(through);
    EXPECT_EQ(through.error().exit(), Exit::no_perm);
}

// With /proc/self as the root, its magic links (root, cwd, exe, fd/N) lead anywhere: none is
// followed, while its plain files read as files.
TEST(ConfinedProc, MagicLinksAreNotFollowed) {
    auto proc = Confined::open("/proc/self");
    ASSERT_OK(proc);
    auto status = proc->read("status", 1 << 20);
    ASSERT_OK(status);
    EXPECT_NE(status->find("Pid:"), std::string::npos);
    FILE* held = std::fopen("/etc/hostname", "r");
    ASSERT_NE(held, nullptr);
    std::string fd_path = "fd/" + std::to_string(::fileno(held));
    for (const std::string& magic :
         {std::string("root/etc/hostname"), std::string("cwd/."), std::string("exe"), fd_path}) {
        auto r = proc->read(magic, 1 << 20);
        EXPECT_FALSE(r) << magic << " was followed";
        auto o = proc->open_at(magic, O_RDONLY);
        EXPECT_FALSE(o) << magic << " was opened";
    }
    std::fclose(held);
}

// A hard link to a file outside is a name inside: reading it reads that file (what holds, as the
// header says), and writing it replaces the name, leaving the other file as it was.
TEST_F(ConfinedTest, HardLinksAreNamesInside) {
    ASSERT_EQ(::link((m_out + "/secret").c_str(), (m_ws + "/hard").c_str()), 0);
    EXPECT_EQ(*m_c->read("hard", 100), "SECRET\n");
    ASSERT_OK(m_c->write("hard", "mine\n"));
    EXPECT_EQ(get(m_ws + "/hard"), "mine\n");
    EXPECT_EQ(get(m_out + "/secret"), "SECRET\n");
    EXPECT_EQ(fs::hard_link_count(m_out + "/secret"), 1U);
}

TEST_F(ConfinedTest, WritesCreateDirectoriesAndKeepModes) {
    mode_t old = ::umask(022);
    ASSERT_OK(m_c->write("a/b/c.txt", "abc"));
    EXPECT_EQ(get(m_ws + "/a/b/c.txt"), "abc");

    struct stat st {};

    ASSERT_EQ(::stat((m_ws + "/a/b/c.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644U) << "a new file is 0666 less the umask";
    ASSERT_EQ(::stat((m_ws + "/a/b").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755U);

    put(m_ws + "/run.sh", "#!/bin/sh\n");
    ASSERT_EQ(::chmod((m_ws + "/run.sh").c_str(), 0750), 0);
    ASSERT_OK(m_c->write("/workspace/run.sh", "#!/bin/sh\necho hi\n"));
    ASSERT_EQ(::stat((m_ws + "/run.sh").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0750U) << "a replaced file keeps its mode";
    EXPECT_EQ(get(m_ws + "/run.sh"), "#!/bin/sh\necho hi\n");
    ::umask(old);

    auto dir = m_c->write("a/b", "x");
    ASSERT_FALSE(dir);
    EXPECT_EQ(dir.error().exit(), Exit::data);
    EXPECT_EQ(dir.error().message(), "cannot write 'a/b': it is a directory");
    auto root = m_c->write(".", "x");
    ASSERT_FALSE(root);
    EXPECT_EQ(root.error().exit(), Exit::data);
    auto under_file = m_c->write("run.sh/x", "x");
    ASSERT_FALSE(under_file);
    EXPECT_EQ(under_file.error().message(), "cannot write 'run.sh/x': Not a directory");
    std::string long_name(250, 'n'); // too long for name.sion-<hex> beside it
    ASSERT_OK(m_c->write(long_name, "long"));
    EXPECT_EQ(get(m_ws + "/" + long_name), "long");
    EXPECT_EQ(walked("."),
              (std::vector<std::string>{"a/", "a/b/", "a/b/c.txt", long_name, "run.sh"}));
}

// A link at the target is replaced by the new file, never written through, wherever it led.
TEST_F(ConfinedTest, WritesReplaceLinksNeverFollowThem) {
    fs::create_symlink("../out/secret", m_ws + "/rel-out");
    fs::create_symlink(m_out + "/secret", m_ws + "/abs-out");
    put(m_ws + "/real.txt", "real\n");
    fs::create_symlink("real.txt", m_ws + "/in");
    for (const char* name : {"rel-out", "abs-out", "in"}) {
        ASSERT_OK(m_c->write(name, "new\n"));
        EXPECT_FALSE(fs::is_symlink(m_ws + "/" + name)) << name;
        EXPECT_EQ(get(m_ws + "/" + name), "new\n");
    }
    EXPECT_EQ(get(m_out + "/secret"), "SECRET\n");
    EXPECT_EQ(get(m_ws + "/real.txt"), "real\n");

    // A link on the way is another matter: the directory it leads to is outside.
    fs::create_symlink("../out", m_ws + "/dir-out");
    for (const char* name : {"dir-out/planted", "dir-out/new/deep/planted", "../out/planted",
                             "/workspace/../out/planted"}) {
        auto r = m_c->write(name, "x");
        ASSERT_FALSE(r) << name;
        EXPECT_EQ(r.error().exit(), Exit::no_perm) << name;
    }
    EXPECT_EQ(m_c->write("dir-out/planted", "x").error().message(),
              "cannot write 'dir-out/planted': 'dir-out/planted' is outside the workspace");
    EXPECT_EQ(outside(), std::set<std::string>{"secret"});
}

// A directory swapped for a link between calls: the next call sees the link and refuses.
TEST_F(ConfinedTest, ADirectorySwappedForALinkBetweenCalls) {
    ASSERT_OK(m_c->write("sub/a.txt", "a"));
    fs::rename(m_ws + "/sub", m_ws + "/sub.old");
    fs::create_symlink("../out", m_ws + "/sub");
    put(m_out + "/a.txt", "outside a\n");
    auto r = m_c->read("sub/a.txt", 100);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::no_perm);
    auto w = m_c->write("sub/b.txt", "b");
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().exit(), Exit::no_perm);
    EXPECT_FALSE(fs::exists(m_out + "/b.txt"));
    EXPECT_EQ(get(m_out + "/a.txt"), "outside a\n");
    EXPECT_FALSE(m_c->walk("sub", [](const Confined::Entry&) { return true; }));
}

// A directory renamed while a stage holds it: the commit lands where the directory went, inside.
TEST_F(ConfinedTest, AStagedWriteFollowsItsDirectoryInside) {
    fs::create_directory(m_ws + "/sub");
    auto staged = m_c->stage("sub/f.txt", "f");
    ASSERT_OK(staged);
    fs::rename(m_ws + "/sub", m_ws + "/moved");
    fs::create_symlink("../out", m_ws + "/sub");
    ASSERT_OK(staged->commit());
    EXPECT_EQ(get(m_ws + "/moved/f.txt"), "f");
    EXPECT_EQ(outside(), std::set<std::string>{"secret"});
}

TEST_F(ConfinedTest, AStageDroppedLeavesNothing) {
    put(m_ws + "/f.txt", "old");
    {
        auto staged = m_c->stage("f.txt", "new");
        ASSERT_OK(staged);
        EXPECT_EQ(get(m_ws + "/f.txt"), "old") << "not in place before commit";
        auto names = walked(".");
        ASSERT_EQ(names.size(), 2U);
        EXPECT_EQ(names[0], "f.txt");
        EXPECT_EQ(names[1].rfind("f.txt.sion-", 0), 0U) << names[1];
        EXPECT_EQ(names[1].size(), std::string("f.txt.sion-").size() + 12);
    }
    EXPECT_EQ(walked("."), std::vector<std::string>{"f.txt"});
    EXPECT_EQ(get(m_ws + "/f.txt"), "old");

    // Moved: only the last owner removes or commits it.
    auto first = m_c->stage("g.txt", "g");
    ASSERT_OK(first);
    Confined::Staged moved = std::move(*first);
    { Confined::Staged gone = std::move(moved); }
    EXPECT_EQ(walked("."), std::vector<std::string>{"f.txt"});

    auto once = m_c->stage("h.txt", "h");
    ASSERT_OK(once);
    ASSERT_OK(once->commit());
    auto twice = once->commit();
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().message(), "cannot write 'h.txt': it was committed already");
    EXPECT_EQ(get(m_ws + "/h.txt"), "h");
    EXPECT_EQ(walked("."), (std::vector<std::string>{"f.txt", "h.txt"}));
}

TEST_F(ConfinedTest, RemovesFilesAndLinksNotWhatLinksLeadTo) {
    put(m_ws + "/f.txt", "f");
    fs::create_symlink("../out/secret", m_ws + "/rel-out");
    fs::create_directory(m_ws + "/d");
    ASSERT_OK(m_c->remove("f.txt"));
    EXPECT_FALSE(fs::exists(m_ws + "/f.txt"));
    ASSERT_OK(m_c->remove("rel-out"));
    EXPECT_FALSE(fs::is_symlink(m_ws + "/rel-out"));
    EXPECT_EQ(get(m_out + "/secret"), "SECRET\n");
    auto dir = m_c->remove("d");
    ASSERT_FALSE(dir);
    EXPECT_EQ(dir.error().message(), "cannot remove 'd': it is a directory");
    auto missing = m_c->remove("f.txt");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::no_input);
    auto out = m_c->remove("../out/secret");
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().exit(), Exit::no_perm);
    EXPECT_EQ(outside(), std::set<std::string>{"secret"});
}

TEST(PassedOver, VersionControlDependenciesAndBuilds) {
    for (const char* name : {".git", ".hg", ".svn", "node_modules", "target", "__pycache__",
                             ".venv", ".tox", ".mypy_cache", ".cache"})
        EXPECT_TRUE(passed_over(name)) << name;
    for (const char* name :
         {"build", "dist", "src", "vendor", "venv", "git", ".github", "targets", "out", ""})
        EXPECT_FALSE(passed_over(name)) << name;
}

TEST_F(ConfinedTest, WalkSortsPassesOverAndDoesNotFollowLinks) {
    fs::create_directories(m_ws + "/a");
    put(m_ws + "/a/b.rs", "");
    put(m_ws + "/a.rs", "");
    put(m_ws + "/a-b.rs", "");
    fs::create_directories(m_ws + "/.git/objects");
    put(m_ws + "/.git/HEAD", "");
    put(m_ws + "/.gitignore", "");
    fs::create_directories(m_ws + "/node_modules/x");
    fs::create_directories(m_ws + "/build/cmake");
    put(m_ws + "/build/cmake/CMakeCache.txt", "");
    put(m_ws + "/build/gen.py", "");
    fs::create_directories(m_ws + "/env/bin");
    put(m_ws + "/env/pyvenv.cfg", "");
    fs::create_directories(m_ws + "/out/cache");
    put(m_ws + "/out/cache/CACHEDIR.TAG", "");
    fs::create_symlink("a", m_ws + "/link-in");
    fs::create_symlink("../out", m_ws + "/link-out");
    EXPECT_EQ(walked("."),
              (std::vector<std::string>{".gitignore", "a-b.rs", "a.rs", "a/", "a/b.rs", "build/",
                                        "build/gen.py", "link-in@", "link-out@", "out/"}));
    // Asked for, a passed-over directory or a link that stays inside is walked.
    EXPECT_EQ(walked("node_modules"), std::vector<std::string>{"node_modules/x/"});
    EXPECT_EQ(walked("link-in"), std::vector<std::string>{"link-in/b.rs"});
    EXPECT_EQ(walked("/workspace/a"), std::vector<std::string>{"a/b.rs"});

    auto out = m_c->walk("link-out", [](const Confined::Entry&) { return true; });
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().exit(), Exit::no_perm);
    EXPECT_EQ(out.error().message(), "cannot list 'link-out': 'link-out' is outside the workspace");
    auto file = m_c->walk("a.rs", [](const Confined::Entry&) { return true; });
    ASSERT_FALSE(file);
    EXPECT_EQ(file.error().exit(), Exit::no_input);
    EXPECT_FALSE(m_c->walk("..", [](const Confined::Entry&) { return true; }));
}

TEST_F(ConfinedTest, WalkStopsSkipsAndCounts) {
    for (int i = 0; i < 10; ++i)
        put(m_ws + "/f" + std::to_string(i), "");
    fs::create_directories(m_ws + "/d/e");
    put(m_ws + "/d/e/x", "");
    std::vector<std::string> seen;
    ASSERT_OK(m_c->walk(".", [&](const Confined::Entry& e) {
        seen.push_back(e.rel);
        return seen.size() < 3;
    }));
    EXPECT_EQ(seen, (std::vector<std::string>{"d", "d/e", "d/e/x"}));

    seen.clear();
    ASSERT_OK(m_c->walk(".", [&](const Confined::Entry& e) {
        seen.push_back(e.rel);
        return e.rel == "d" ? Confined::Visit::skip_dir : Confined::Visit::go_on;
    }));
    EXPECT_EQ(seen.size(), 11U);
    EXPECT_EQ(seen[0], "d");
    EXPECT_EQ(seen[1], "f0");

    seen.clear();
    auto capped = m_c->walk(
        ".",
        [&](const Confined::Entry& e) {
            seen.push_back(e.rel);
            return true;
        },
        5);
    ASSERT_FALSE(capped);
    EXPECT_EQ(capped.error().exit(), Exit::data);
    EXPECT_EQ(capped.error().message(), "cannot list '.': more than 5 entries");
    EXPECT_EQ(seen.size(), 5U) << "what was visited before the limit is kept";
}

TEST_F(ConfinedTest, WalkEntersAtMost64Levels) {
    std::string path = m_ws;
    for (int i = 0; i < 70; ++i)
        path += "/d";
    fs::create_directories(path);
    size_t dirs = 0;
    ASSERT_OK(m_c->walk(".", [&](const Confined::Entry& e) {
        dirs += e.is_dir ? 1 : 0;
        return true;
    }));
    EXPECT_EQ(dirs, 64U);
}

// The race the seeds admitted: a process swaps a workspace directory for a link to outside, back
// and forth, as fast as it can (atomically, with RENAME_EXCHANGE, and by rename and symlink), while
// the tools write, stage, read and walk through it. Nothing may land outside, nor be read from
// there.
TEST_F(ConfinedTest, ARaceAgainstADirectorySwapperNeverLeaves) {
    fs::create_directory(m_ws + "/sub");
    put(m_out + "/f.txt", "SECRET\n");
    fs::create_symlink("../out", m_ws + "/link");
    std::atomic<bool> done{false};
    std::atomic<long> swaps{0};
    std::thread swapper([&] {
        std::string sub = m_ws + "/sub", link = m_ws + "/link", held = m_ws + "/held";
        while (!done) {
            // Pauses of varying length, in each state, so that calls start at every point of the
            // cycle: some get through, some meet the link.
            auto pause = [&] {
                std::this_thread::sleep_for(std::chrono::microseconds(swaps % 64));
            };
            // Atomic: at every instant "sub" is a directory or a link to outside.
            ::renameat2(AT_FDCWD, sub.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
            pause();
            ::renameat2(AT_FDCWD, sub.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
            pause();
            // And the slower way a shell would do it.
            if (::rename(sub.c_str(), held.c_str()) == 0) {
                if (::symlink("../out", sub.c_str()) == 0)
                    ::unlink(sub.c_str());
                ::rename(held.c_str(), sub.c_str());
            }
            swaps += 2;
        }
    });
    long writes = 0, reads = 0, refused = 0;
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
        std::string name = "f" + std::to_string(i % 7) + ".txt";
        Status w = m_c->write("sub/f.txt", "mine\n");
        writes += w ? 1 : 0;
        refused += w ? 0 : 1;
        for (int j = 0; j < 20; ++j) { // writes wait for fsync; reads can be many more
            if (auto r = m_c->read("sub/f.txt", 100)) {
                ++reads;
                ASSERT_EQ(*r, "mine\n") << "read from outside the workspace";
            } else {
                ++refused;
            }
        }
        Status deep = m_c->write("sub/new/deeper/" + name, "x");
        refused += deep ? 0 : 1;
        if (auto staged = m_c->stage("sub/" + name, "staged\n")) {
            Status ok = staged->commit();
            (void)ok;
        }
        Status walked = m_c->walk("sub", [&](const Confined::Entry& e) {
            EXPECT_NE(e.rel, "sub/secret") << "walked outside the workspace";
            return true;
        });
        (void)walked;
    }
    done = true;
    swapper.join();
    EXPECT_EQ(outside(), (std::set<std::string>{"f.txt", "secret"}));
    EXPECT_EQ(get(m_out + "/f.txt"), "SECRET\n");
    EXPECT_GT(swaps.load(), 100);
    EXPECT_GT(writes, 0) << "the test only means something if some calls got through";
    EXPECT_GT(refused, 0) << "and some met the link";
    std::printf("race: %ld swaps, %ld writes, %ld reads, %ld refused\n", swaps.load(), writes,
                reads, refused);
}

} // namespace
} // namespace sion
