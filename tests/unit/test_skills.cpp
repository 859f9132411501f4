// SPDX-License-Identifier: MIT
// Tests for lib/skills: SKILL.md's front matter (names, descriptions, metadata's hosts and secrets,
// malformed ones refused with one line), skill_write's rewrite keeping the front matter, and a
// script's check (its release's sum, links and paths out, its interpreter).
#include "lib/db_schema.hpp"
#include "lib/hash.hpp"
#include "lib/skills.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sion::skills {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

namespace fs = std::filesystem;

TEST(SkillMd, ReadsItsFrontMatter) {
    auto s = parse_skill_md("---\nname: fetcher\ndescription: \"Fetch: a page.\"\nlicense: MIT\n"
                            "metadata:\n  sion-network: api.github.com, *.example.org\n"
                            "  sion-secrets: [GITHUB_TOKEN, OTHER]\n---\nRun it.\n");
    ASSERT_OK(s);
    EXPECT_EQ(s->name, "fetcher");
    EXPECT_EQ(s->description, "Fetch: a page.");
    EXPECT_EQ(s->hosts, (std::vector<std::string>{"api.github.com", "*.example.org"}));
    EXPECT_EQ(s->secrets, (std::vector<std::string>{"GITHUB_TOKEN", "OTHER"}));
    EXPECT_EQ(s->instructions, "Run it.\n");
    auto folded = parse_skill_md("---\nname: a\ndescription: >\n  one\n  two\n---\n");
    ASSERT_OK(folded);
    EXPECT_EQ(folded->description, "one two");
    EXPECT_TRUE(folded->hosts.empty());
}

TEST(SkillMd, RefusesWhatIsMalformed) {
    auto message = [](std::string_view text) {
        auto s = parse_skill_md(text);
        return s ? std::string("accepted") : s.error().message();
    };
    EXPECT_EQ(message("name: x\n"), "SKILL.md has no front matter: begin it with a line '---'");
    EXPECT_EQ(message("---\nname: x\ndescription: y\n"),
              "SKILL.md's front matter has no end: end it with a line '---'");
    EXPECT_EQ(message("---\ndescription: y\n---\n"), "SKILL.md's front matter has no name");
    EXPECT_EQ(message("---\nname: Word Count\ndescription: y\n---\n"),
              "SKILL.md's name 'Word Count' is not 1 to 64 of a-z, 0-9 and '-'");
    EXPECT_EQ(message("---\nname: x\n---\n"), "SKILL.md's front matter has no description");
    EXPECT_EQ(message("---\nname: x\ndescription: y\nmetadata:\n  sion-secrets: A-B\n---\n"),
              "SKILL.md names the secret 'A-B', which is not a variable's name");
    EXPECT_EQ(message("---\nname: x\ndescription: y\nmetadata:\n  sion-network: http://h/\n---\n"),
              "SKILL.md names the host 'http://h/', which is not a host's name");
    EXPECT_EQ(message("---\nname: x\ndescription: " + std::string(1025, 'd') + "\n---\n"),
              "SKILL.md's description is longer than 1024 characters");
    EXPECT_EQ(message("---\nname: x\nno colon here\n---\n"),
              "SKILL.md's front matter has a line that is not 'key: value': no colon here");
}

class SkillFolder : public testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-skills.XXXXXX";
        ASSERT_NE(::mkdtemp(dir.data()), nullptr);
        m_home = fs::canonical(dir).string();
        auto db = open_state(m_home);
        ASSERT_OK(db);
        m_db.emplace(std::move(*db));
        ASSERT_OK(m_db->exec("INSERT INTO profiles (name, models, autonomy, created) VALUES "
                             "('coder', '[]', 2, 0)"));
        m_skill = m_home + "/mine";
        fs::create_directories(m_skill + "/scripts");
        write("SKILL.md", "---\nname: mine\ndescription: Mine.\nmetadata:\n  sion-network: h.org\n"
                          "---\nOld words.\n");
        write("scripts/a.py", "print(1)\n");
        write("scripts/b", "#!/usr/bin/env python3 -u\nprint(2)\n");
        write("scripts/c.txt", "plain\n");
    }

    void TearDown() override { fs::remove_all(m_home); }

    void write(const std::string& rel, const std::string& text) {
        std::ofstream(m_skill + "/" + rel, std::ios::trunc) << text;
    }

    std::string m_home, m_skill;
    std::optional<Db> m_db;
};

TEST_F(SkillFolder, WritesInstructionsKeepingTheFrontMatter) {
    ASSERT_OK(add_folder(*m_db, "coder", m_skill));
    auto w = write_instructions(*m_db, m_home, "coder", "mine", "", "New words.");
    ASSERT_OK(w);
    std::stringstream all;
    all << std::ifstream(m_skill + "/SKILL.md").rdbuf();
    EXPECT_EQ(all.str(), "---\nname: mine\ndescription: Mine.\nmetadata:\n  sion-network: h.org\n"
                         "---\nNew words.\n");
    ASSERT_OK(write_instructions(*m_db, m_home, "coder", "mine", "Mine, now.", "Newer."));
    std::stringstream again;
    again << std::ifstream(m_skill + "/SKILL.md").rdbuf();
    EXPECT_EQ(again.str(), "---\nname: mine\ndescription: \"Mine, now.\"\nmetadata:\n"
                           "  sion-network: h.org\n---\nNewer.\n");
    auto made = write_instructions(*m_db, m_home, "coder", "fresh", "Fresh.", "Do it.");
    ASSERT_OK(made);
    EXPECT_EQ(made->origin, Origin::written);
    EXPECT_EQ(made->dir, m_home + "/skills/coder/fresh");
    auto none = write_instructions(*m_db, m_home, "coder", "other", "", "x");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().message(),
              "a new skill needs a description: what it is for, and when to use it");
}

TEST_F(SkillFolder, ChecksScripts) {
    auto skill = add_folder(*m_db, "coder", m_skill);
    ASSERT_OK(skill);
    auto a = check_script(*skill, "scripts/a.py");
    ASSERT_OK(a);
    EXPECT_EQ(a->interpreter, std::vector<std::string>{"python3"});
    auto b = check_script(*skill, "/skill/scripts/b");
    ASSERT_OK(b);
    EXPECT_EQ(b->path, "scripts/b");
    EXPECT_EQ(b->interpreter, (std::vector<std::string>{"/usr/bin/env", "python3 -u"}));
    EXPECT_EQ(check_script(*skill, "scripts/c.txt").error().message(),
              "'scripts/c.txt' of mine has no '#!' line, and its name does not say how to run it "
              "(.py, .sh, .js, .rb, .pl)");
    EXPECT_EQ(check_script(*skill, "../../etc/passwd").error().message(),
              "'../../etc/passwd' is outside the skill mine");
    fs::create_symlink("/etc/passwd", m_skill + "/scripts/link.sh");
    EXPECT_FALSE(check_script(*skill, "scripts/link.sh"));
    EXPECT_EQ(check_script(*skill, "scripts/none.py").error().message(),
              "mine has no script 'scripts/none.py'");
    // An installed skill's script runs only as its release had it.
    skill->origin = Origin::installed;
    skill->files["scripts/a.py"] = sha256_hex("print(1)\n");
    EXPECT_TRUE(check_script(*skill, "scripts/a.py"));
    write("scripts/a.py", "print(666)\n");
    EXPECT_EQ(check_script(*skill, "scripts/a.py").error().message(),
              "the script scripts/a.py of mine changed since it was installed: reinstall the "
              "skill (sion agent skills install)");
    EXPECT_EQ(check_script(*skill, "scripts/b").error().message(),
              "the script scripts/b of mine did not come with it: only a script of its release "
              "runs (sion agent skills install)");
}

} // namespace
} // namespace sion::skills
