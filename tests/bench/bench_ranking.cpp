// SPDX-License-Identifier: MIT
// Tool search over 10,000 tools (issue 18's goal: under 1 ms a query, and no slower than SQLite
// FTS5's bm25() on the same corpus): session/ranking's ToolIndex beside an FTS5 table of the same
// words, each built, then asked a round of queries. The corpus is the 111 tools of
// tests/fixtures/tool-lists, 91 times over, each copy's name numbered and its description given a
// word of another tool's name, so that copies differ.
#include "session/ranking.hpp"

#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace {

using sion::Json;
using sion::JsonView;
using sion::session::search_words;
using sion::session::ToolIndex;

struct Tool {
    std::string name;
    std::string description;
    Json schema;
};

const std::vector<Tool>& corpus() {
    static const std::vector<Tool> tools = [] {
        const char* dir = std::getenv("SION_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
        std::filesystem::path lists =
            std::filesystem::path(dir != nullptr ? dir : ".") / "tests/fixtures/tool-lists";
        std::vector<Tool> real;
        for (const char* server :
             {"everything", "filesystem", "memory", "github", "notion", "playwright"}) {
            std::ifstream in(lists / (std::string(server) + ".json"));
            std::stringstream text;
            text << in.rdbuf();
            auto list = Json::parse(text.str());
            if (!list) {
                std::fprintf(stderr, "bench_ranking: cannot read %s: set SION_SOURCE_DIR\n",
                             (lists / server).c_str());
                std::exit(1); // NOLINT(concurrency-mt-unsafe)
            }
            for (JsonView tool : list->view().get("tools"))
                real.push_back({std::string(*tool.string("name")),
                                std::string(tool.string_or("description", "").value_or("")),
                                Json::copy_of(tool.get("inputSchema"))});
        }
        std::vector<Tool> out;
        for (size_t copy = 0; out.size() < 10'000; ++copy)
            for (size_t i = 0; i < real.size() && out.size() < 10'000; ++i) {
                const Tool& t = real[i];
                const Tool& other = real[(i + copy) % real.size()];
                out.push_back({t.name + "_" + std::to_string(copy),
                               t.description + " " + other.name,
                               Json::copy_of(t.schema.view())});
            }
        return out;
    }();
    return tools;
}

const std::vector<std::string> k_queries{
    "create a pull request", "take a screenshot of the page", "move or rename a file",
    "add observations to entities", "list the files in a folder", "run javascript in the page",
    "environment variables", "comment on an issue",
};

ToolIndex build_index() {
    ToolIndex index;
    for (const Tool& t : corpus())
        index.add(t.name, t.description, t.schema.view());
    return index;
}

void BM_index_build(benchmark::State& state) {
    (void)corpus();
    for (auto _ : state)
        benchmark::DoNotOptimize(build_index());
    state.counters["tools"] = static_cast<double>(corpus().size());
}
BENCHMARK(BM_index_build)->Unit(benchmark::kMillisecond);

void BM_query(benchmark::State& state) {
    ToolIndex index = build_index();
    size_t n = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(index.search(k_queries[n++ % k_queries.size()], 5));
}
BENCHMARK(BM_query)->Unit(benchmark::kMicrosecond);

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words)
        out += (out.empty() ? "" : " ") + w;
    return out;
}

// An FTS5 table of the same words (name, description, schema), weighted 3, 1, 1 by bm25().
struct Fts {
    sqlite3* db = nullptr;
    sqlite3_stmt* query = nullptr;

    Fts() {
        sqlite3_open(":memory:", &db);
        sqlite3_exec(db, "CREATE VIRTUAL TABLE tools USING fts5(name, description, schema)",
                     nullptr, nullptr, nullptr);
        sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
        sqlite3_stmt* insert = nullptr;
        sqlite3_prepare_v2(db, "INSERT INTO tools VALUES (?1, ?2, ?3)", -1, &insert, nullptr);
        for (const Tool& t : corpus()) {
            std::string fields[3] = {joined(search_words(t.name)), joined(search_words(t.description)),
                                     joined(search_words(sion::session::schema_text(t.schema.view())))};
            for (int i = 0; i < 3; ++i)
                sqlite3_bind_text(insert, i + 1, fields[i].c_str(), -1, SQLITE_TRANSIENT);
            sqlite3_step(insert);
            sqlite3_reset(insert);
        }
        sqlite3_finalize(insert);
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
        sqlite3_prepare_v2(db,
                           "SELECT rowid FROM tools WHERE tools MATCH ?1 "
                           "ORDER BY bm25(tools, 3.0, 1.0, 1.0) LIMIT 5",
                           -1, &query, nullptr);
    }

    Fts(const Fts&) = delete;
    Fts& operator=(const Fts&) = delete;

    ~Fts() {
        sqlite3_finalize(query);
        sqlite3_close(db);
    }

    int search(const std::string& match) const {
        sqlite3_bind_text(query, 1, match.c_str(), -1, SQLITE_STATIC);
        int rows = 0;
        while (sqlite3_step(query) == SQLITE_ROW)
            ++rows;
        sqlite3_reset(query);
        return rows;
    }
};

void BM_fts5_build(benchmark::State& state) {
    (void)corpus();
    for (auto _ : state)
        Fts fts;
}
BENCHMARK(BM_fts5_build)->Unit(benchmark::kMillisecond);

void BM_fts5_query(benchmark::State& state) {
    Fts fts;
    std::vector<std::string> matches;
    for (const std::string& q : k_queries) {
        std::string m;
        for (const std::string& w : search_words(q))
            m += (m.empty() ? "\"" : " OR \"") + w + "\"";
        matches.push_back(m);
    }
    size_t n = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(fts.search(matches[n++ % matches.size()]));
}
BENCHMARK(BM_fts5_query)->Unit(benchmark::kMicrosecond);

// The console's table, and each benchmark's mean real time in microseconds kept for the summary.
class Keeping : public benchmark::ConsoleReporter {
public:
    Keeping() : ConsoleReporter(::isatty(STDOUT_FILENO) == 1 ? OO_ColorTabular : OO_Tabular) {}

    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs)
            if (r.run_type == Run::RT_Iteration || r.aggregate_name == "mean")
                m_us[r.run_name.function_name] =
                    r.GetAdjustedRealTime() * (r.time_unit == benchmark::kMillisecond ? 1000.0 : 1.0);
    }

    [[nodiscard]] double us(const std::string& name) const {
        auto it = m_us.find(name);
        return it == m_us.end() ? 0.0 : it->second;
    }

private:
    std::map<std::string, double> m_us;
};

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    Keeping reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    double query = reporter.us("BM_query");
    double fts = reporter.us("BM_fts5_query");
    std::printf("\ntool search over %zu tools: index %.1f ms, a query %.1f us;"
                " FTS5 bm25(): index %.1f ms, a query %.1f us\n",
                corpus().size(), reporter.us("BM_index_build") / 1000.0, query,
                reporter.us("BM_fts5_build") / 1000.0, fts);
    std::printf("query sion/FTS5: %.3f (goals: under 1000 us a query, and <= 1)\n",
                fts > 0.0 ? query / fts : 0.0);
    return 0;
}
