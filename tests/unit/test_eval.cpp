// SPDX-License-Identifier: MIT
// Tests for lib/eval: an evaluation's set read strictly, runs kept and read back, tallies with
// Wilson's and Newcombe's intervals (the published values of Newcombe 1998, table II), which model
// earns first place, the bars, the report, and the chart.
#include "lib/eval.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace sion::eval {
namespace {

TEST(EvalSet, ReadsCases) {
    auto set = parse_set(R"({"cases": [
        {"name": "parser", "task": "Fix the parser", "files": {"src/p.py": "x = 1\n", "t.py": ""},
         "check": "python3 t.py"},
        {"name": "lexer.2", "task": "Fix the lexer", "check": "true", "timeout": 5}]})",
                         "fixes.json");
    ASSERT_TRUE(set) << set.error().message();
    ASSERT_EQ(set->size(), 2U);
    EXPECT_EQ((*set)[0].name, "parser");
    EXPECT_EQ((*set)[0].files.size(), 2U);
    EXPECT_EQ((*set)[0].files.at("src/p.py"), "x = 1\n");
    EXPECT_EQ((*set)[0].timeout, 120);
    EXPECT_EQ((*set)[1].timeout, 5);
    EXPECT_TRUE((*set)[1].files.empty());
}

TEST(EvalSet, RefusesWhatIsNotASet) {
    struct Case {
        const char* text;
        const char* message;
    };

    const Case cases[] = {
        {"[]", "set 'f.json': the document is an array, not an object"},
        {"{}", "set 'f.json': member 'cases' is missing"},
        {R"({"cases": []})", "set 'f.json' has no cases"},
        {R"({"cases": [1]})", "set 'f.json': case 1: a number, not an object"},
        {R"({"cases": [{"task": "t", "check": "c"}]})",
         "set 'f.json': case 1: member 'name' is missing"},
        {R"({"cases": [{"name": "A", "task": "t", "check": "c"}]})",
         "set 'f.json': case 1: member 'name' is 'A': use 1 to 64 lowercase letters, digits, '-', "
         "'_' and '.', not starting with '.' or '-'"},
        {R"({"cases": [{"name": "a", "check": "c"}]})",
         "set 'f.json': case 1: case 'a': member 'task' is missing"},
        {R"({"cases": [{"name": "a", "task": "", "check": "c"}]})",
         "set 'f.json': case 1: case 'a': member 'task' is empty"},
        {R"({"cases": [{"name": "a", "task": "t", "check": " "}]})",
         "set 'f.json': case 1: case 'a': member 'check' is empty"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c", "timeout": 0}]})",
         "set 'f.json': case 1: case 'a': member 'timeout' is 0, not 1 to 3600 seconds"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c", "files": []}]})",
         "set 'f.json': case 1: case 'a': member 'files' is an array, not an object"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c", "files": {"../x": ""}}]})",
         "set 'f.json': case 1: case 'a': file '../x' is not a path within the workspace"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c", "files": {"/etc/x": ""}}]})",
         "set 'f.json': case 1: case 'a': file '/etc/x' is not a path within the workspace"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c", "files": {"a//b": ""}}]})",
         "set 'f.json': case 1: case 'a': file 'a//b' is not a path within the workspace"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c", "files": {"x": 1}}]})",
         "set 'f.json': case 1: case 'a': file 'x' is a number, not a string"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c", "files": {"d": "", "d/e": ""}}]})",
         "set 'f.json': case 1: case 'a': file 'd' is also a directory of 'd/e'"},
        {R"({"cases": [{"name": "a", "task": "t", "check": "c"}, {"name": "a", "task": "t", "check": "c"}]})",
         "set 'f.json': two cases are named 'a'"},
    };
    for (const Case& c : cases) {
        auto set = parse_set(c.text, "f.json");
        ASSERT_FALSE(set) << c.text;
        EXPECT_EQ(set.error().exit(), Exit::data) << c.text;
        EXPECT_EQ(set.error().message(), c.message) << c.text;
    }
    auto missing = read_set("/nonexistent/fixes.json");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::no_input);
    EXPECT_EQ(missing.error().message(),
              "cannot read set '/nonexistent/fixes.json': No such file or directory");
}

// Name and text of each .json file in tests/fixtures/<sub>.
std::map<std::string, std::string> fixtures(const std::string& sub) {
    namespace fs = std::filesystem;
    const char* top = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(
             fs::path(top != nullptr ? top : ".") / "tests/fixtures" / sub, ec)) {
        std::ifstream in(entry.path(), std::ios::binary);
        out[entry.path().filename().string()] =
            std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
}

// The parser and schemas/eval-set.schema.json agree on the fixtures.
TEST(EvalSet, TheFixturesAsTheSchemaHasThem) {
    auto valid = fixtures("eval-set");
    ASSERT_GE(valid.size(), 2U);
    for (const auto& [name, text] : valid) {
        auto set = parse_set(text, name);
        EXPECT_TRUE(set) << name << ": " << (set ? "" : set.error().message());
    }
    auto invalid = fixtures("eval-set-invalid");
    ASSERT_GE(invalid.size(), 8U);
    for (const auto& [name, text] : invalid)
        EXPECT_FALSE(parse_set(text, name)) << name << " was taken";
}

std::vector<RunRecord> runs_of(size_t model, int passes, int fails, int not_made) {
    std::vector<RunRecord> out;
    int n = 0;
    for (int i = 0; i < passes + fails + not_made; ++i) {
        RunRecord r;
        r.model = model;
        r.case_name = "c" + std::to_string(i);
        r.number = ++n;
        r.outcome = i < passes           ? Outcome::pass
                    : i < passes + fails ? Outcome::fail
                                         : Outcome::not_made;
        out.push_back(r);
    }
    return out;
}

TEST(EvalTally, RatesAndDifferencesAsPublished) {
    // Newcombe 1998, table II: 56/70 - 48/80 is 0.2000 (0.0524, 0.3339).
    std::vector<std::string> models = {"a:first", "b:second"};
    std::vector<RunRecord> runs = runs_of(0, 48, 32, 2);
    for (RunRecord& r : runs_of(1, 56, 14, 1))
        runs.push_back(r);
    std::vector<Tally> t = tally(models, runs);
    ASSERT_EQ(t.size(), 2U);
    EXPECT_EQ(t[0].passes, 48);
    EXPECT_EQ(t[0].runs, 80);
    EXPECT_EQ(t[0].not_made, 2);
    EXPECT_FALSE(t[0].difference);
    ASSERT_TRUE(t[1].difference);
    EXPECT_NEAR(t[1].difference->difference, 0.2000, 5e-5);
    EXPECT_NEAR(t[1].difference->interval.low, 0.0524, 5e-5);
    EXPECT_NEAR(t[1].difference->interval.high, 0.3339, 5e-5);
    ASSERT_EQ(earns_first_place(t), std::optional<size_t>(1));
    EXPECT_EQ(moved_first({"a", "b", "c"}, 2), (std::vector<std::string>{"c", "a", "b"}));
    // 5/56 - 0/29: 0.0893 (-0.0381, 0.1926): the lower end is below zero, so nothing moves.
    std::vector<RunRecord> close = runs_of(0, 0, 29, 0);
    for (RunRecord& r : runs_of(1, 5, 51, 0))
        close.push_back(r);
    t = tally(models, close);
    EXPECT_NEAR(t[1].difference->interval.low, -0.0381, 5e-5);
    EXPECT_FALSE(earns_first_place(t));
}

TEST(EvalTally, TheBestLowerEndWinsAndAModelWithNoRunsHasNoRate) {
    std::vector<std::string> models = {"a", "b", "c", "d"};
    std::vector<RunRecord> runs = runs_of(0, 2, 18, 0);
    for (RunRecord& r : runs_of(1, 15, 5, 0))
        runs.push_back(r);
    for (RunRecord& r : runs_of(2, 19, 1, 0))
        runs.push_back(r);
    for (RunRecord& r : runs_of(3, 0, 0, 3))
        runs.push_back(r);
    std::vector<Tally> t = tally(models, runs);
    EXPECT_EQ(earns_first_place(t), std::optional<size_t>(2));
    EXPECT_FALSE(t[3].rate);
    EXPECT_FALSE(t[3].difference);
    EXPECT_EQ(t[3].not_made, 3);
}

TEST(EvalReport, Bars) {
    EXPECT_EQ(bar(0.5, {0.25, 0.75}, 0, 1, 11), "   [-*--]  ");
    EXPECT_EQ(bar(0.0, {0.0, 0.1}, 0, 1, 11), "*]         ");
    EXPECT_EQ(bar(0.2, {0.1, 0.3}, -1, 1, 11), "     |*]   ");
    EXPECT_EQ(bar(-0.4, {-0.6, 0.2}, -1, 1, 11), "  [*-|]    ");
    EXPECT_EQ(percent(0.68333), "68.3%");
    EXPECT_EQ(percent(-0.0004, true), "0.0%");
    EXPECT_EQ(percent(0.2, true), "+20.0%");
    EXPECT_EQ(percent(-0.0381, true), "-3.8%");
}

TEST(EvalReport, TextAndChart) {
    std::vector<std::string> models = {"script:a.json", "script:b.json"};
    std::vector<RunRecord> runs = runs_of(0, 48, 32, 0);
    for (RunRecord& r : runs_of(1, 56, 14, 2))
        runs.push_back(r);
    std::vector<Tally> t = tally(models, runs);
    std::string text = report_text(t);
    EXPECT_NE(text.find("script:a.json   48/80   60.0%  (49.0%, 70.0%)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("script:b.json   56/70   80.0%  (69.2%, 87.7%)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("difference from script:a.json, with Newcombe's 95% interval:"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("script:b.json      +20.0%  (+5.2%, +33.4%) "), std::string::npos) << text;
    EXPECT_NE(text.find("not made, and counted in no rate: 2 runs (script:b.json 2)"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find(" \n"), std::string::npos) << text;
    std::string svg = report_svg(t, "route code of <lead>");
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0U);
    EXPECT_NE(svg.find("route code of &lt;lead&gt;"), std::string::npos);
    EXPECT_NE(svg.find("<title>+20.0% (+5.2%, +33.4%)</title>"), std::string::npos) << svg;
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(EvalRun, KeptAndReadBack) {
    std::vector<std::string> models = {"a:x", "b:y"};
    RunRecord r;
    r.model = 1;
    r.case_name = "parser";
    r.number = 2;
    r.outcome = Outcome::not_made;
    r.why = "the session failed: HTTP 503: Unavailable";
    r.session = "0123456789abcdef";
    r.input_tokens = 10;
    Json j = run_json(r, models);
    EXPECT_EQ(j.dump(), R"({"model":"b:y","case":"parser","run":2,"outcome":"not made",)"
                        R"("why":"the session failed: HTTP 503: Unavailable",)"
                        R"("session":"0123456789abcdef","input_tokens":10,"output_tokens":0,)"
                        R"("wall_ms":0})");
    auto back = run_from_json(j.view(), models);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->model, 1U);
    EXPECT_EQ(back->outcome, Outcome::not_made);
    EXPECT_EQ(back->why, r.why);
    auto other = run_from_json(j.view(), {"a:x"});
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().message(), "model 'b:y' is not one of the route's");
}

} // namespace
} // namespace sion::eval
