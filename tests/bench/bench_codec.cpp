// SPDX-License-Identifier: MIT
// Throughput of the JSON-lines codec (decode and encode) on ~10 MB of realistic JSON-RPC lines,
// next to node's JSON.parse over the same lines, with the parts of decode measured on their own.
//
// The lines are generated here (a fixed seed: every run sees the same bytes) into a temporary
// directory, together with the node script; the directory is removed at the end. Google Benchmark's
// flags work as usual (--benchmark_filter=decode). After the benchmarks comes the summary:
//   codec decode: X MB/s, codec encode: Y MB/s, node JSON.parse: Z MB/s, decode/node ratio: R
// then the same over wall-clock time, the load average, and the parts of decode. MB is 10^6 bytes;
// the summary's rates are over CPU time (the codec's thread, node's whole process), which a busy
// machine disturbs less than wall-clock time. Exits 0 once the figures are printed; 69 if node
// cannot be run (the codec's figures are printed all the same); 70 if the bench itself fails.
#include "lib/child.hpp"
#include "lib/json.hpp"
#include "lib/rpc/line_reader.hpp"
#include "lib/rpc/message.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <cjson/cJSON.h>

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace sion;
namespace fs = std::filesystem;

constexpr size_t k_target_bytes = size_t{10} << 20;
constexpr size_t k_pipe_chunk = 65536; // what one read(2) of a pipe gives at most
constexpr int k_node_reps = 10;

// ---- Generating realistic lines ----

// Words of tool output: code, paths, prose in several scripts, and what must be escaped.
// clang-format off
constexpr std::string_view k_words[] = {
    "the", "file", "function", "return", "value", "error", "config", "build", "test", "path",
    "src/lib/rpc/message.cpp", "std::string_view", "int main(int argc, char** argv)", "{", "}", ";",
    "café", "naïve", "Grüße", "façade", "日本語のテキスト", "中文字符", "Привет, мир", "Ελληνικά",
    "emoji 😀", "→", "…", "“quoted”", "\"quoted\"", "C:\\Users\\build", "\t", "\n", "\n    ",
    "0x7fffdeadbeef", "42", "3.14159", "TODO:", "// comment", "if (x) {\n    return y;\n}",
};

// clang-format on

class Generator {
public:
    explicit Generator(uint64_t seed) : m_rng(seed) {}

    size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(m_rng); }

    size_t between(size_t lo, size_t hi) {
        return std::uniform_int_distribution<size_t>(lo, hi)(m_rng);
    }

    // Roughly `bytes` of text made of k_words.
    std::string text(size_t bytes) {
        std::string t;
        while (t.size() < bytes) {
            if (!t.empty())
                t += ' ';
            t += k_words[pick(std::size(k_words))];
        }
        return t;
    }

    // One line (without its newline) of each kind, in the proportions of a busy tool session.
    std::string line() {
        size_t roll = pick(100);
        if (roll < 35)
            return request();
        if (roll < 70)
            return response();
        if (roll < 90)
            return notification();
        return error();
    }

private:
    // A JSON string; `ascii` escapes every non-ASCII code point as \uXXXX the way Python's json
    // does.
    static void quote(std::string& out, std::string_view s, bool ascii) {
        static const char k_hex[] = "0123456789abcdef";
        auto u = [&](unsigned v) {
            out += "\\u";
            for (int shift = 12; shift >= 0; shift -= 4)
                out += k_hex[(v >> shift) & 0xF];
        };
        out += '"';
        for (size_t i = 0; i < s.size(); ++i) {
            auto c = static_cast<unsigned char>(s[i]);
            if (c == '"' || c == '\\') {
                out += '\\';
                out += static_cast<char>(c);
            } else if (c == '\n') {
                out += "\\n";
            } else if (c == '\t') {
                out += "\\t";
            } else if (c < 0x20) {
                u(c);
            } else if (c < 0x80 || !ascii) {
                out += static_cast<char>(c);
            } else {
                // k_words is well-formed UTF-8: decode one code point.
                size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
                unsigned cp = c & (0xFF >> (len + 1));
                for (size_t k = 1; k < len; ++k)
                    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
                i += len - 1;
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    u(0xD800 + (cp >> 10));
                    u(0xDC00 + (cp & 0x3FF));
                } else {
                    u(cp);
                }
            }
        }
        out += '"';
    }

    std::string str(std::string_view s) {
        std::string out;
        quote(out, s, pick(4) == 0);
        return out;
    }

    std::string id() {
        ++m_id;
        return pick(5) == 0 ? "\"req-" + std::to_string(m_id) + "\"" : std::to_string(m_id);
    }

    std::string request() {
        std::string l = R"({"jsonrpc":"2.0","id":)" + id();
        if (pick(2) == 0) {
            l += R"(,"method":"tools/call","params":{"name":"fs.read","arguments":{"path":)";
            l += str("src/" + text(between(5, 40)));
            l += R"(,"offset":)" + std::to_string(between(0, 100000));
            l += R"(,"limit":)" + std::to_string(between(100, 4000));
            l += R"(,"recursive":)" + std::string(pick(2) == 0 ? "true" : "false");
            l += R"(,"options":{"encoding":"utf-8","follow_links":false,"tags":["a","b",)";
            l += str(text(10)) + R"(]}},"_meta":{"progressToken":"tok-)" + std::to_string(m_id)
                 + R"("}}})";
        } else {
            l += R"(,"method":"sandbox/exec","params":{"argv":["sh","-c",)";
            l += str(text(between(20, 200)));
            l += R"(],"cwd":"/home/dev/project","env":{"LANG":"C.UTF-8","TERM":"xterm-256color"})";
            l += R"(,"time_limit_ms":30000,"stdin":)" + str(text(between(0, 600))) + "}}";
        }
        return l;
    }

    std::string response() {
        std::string l = R"({"jsonrpc":"2.0","id":)" + id();
        l += R"(,"result":{"content":[{"type":"text","text":)";
        l += str(text(between(100, 6000)));
        l += R"(}],"isError":false,"exit":0,"duration_ms":)";
        l += std::to_string(static_cast<double>(between(1, 90000)) / 7.0);
        l += R"(,"stats":{"bytes":)" + std::to_string(between(0, 1 << 20));
        l += R"(,"lines":)" + std::to_string(between(0, 5000)) + R"(,"truncated":null}}})";
        return l;
    }

    std::string notification() {
        if (pick(2) == 0) {
            std::string l = R"({"jsonrpc":"2.0","method":"notifications/progress","params":{)";
            l += R"("progressToken":"tok-)" + std::to_string(m_id) + R"(","progress":)";
            l += std::to_string(static_cast<double>(between(0, 1000)) / 1000.0)
                 + R"(,"total":1,"message":)";
            return l + str(text(between(20, 100))) + "}}";
        }
        std::string l = R"({"jsonrpc":"2.0","method":"notifications/message","params":{)";
        l += R"("level":"info","logger":"sion-sandbox","data":{"text":)";
        return l + str(text(between(40, 400))) + R"(,"pid":)" + std::to_string(between(2, 99999))
               + "}}}";
    }

    std::string error() {
        std::string l = R"({"jsonrpc":"2.0","id":)" + id();
        l += R"(,"error":{"code":-32602,"message":"invalid params: member 'path' is missing",)";
        l += R"("data":{"path":)" + str("src/" + text(between(5, 30)));
        return l + R"(,"detail":)" + str(text(between(50, 300))) + "}}}";
    }

    std::mt19937_64 m_rng;
    uint64_t m_id = 0;
};

std::string generate(size_t target) {
    Generator g(20240229);
    std::string all;
    all.reserve(target + 16384);
    while (all.size() < target) {
        all += g.line();
        all += '\n';
    }
    return all;
}

// ---- What the benchmarks share ----

struct Data {
    std::string bytes;                   // the file's contents
    std::vector<std::string_view> lines; // into bytes, without newlines
    std::vector<rpc::Message> messages;  // the lines decoded once, for the encoders
};

Data g_data;

[[noreturn]] void die(const std::string& message, Exit code = Exit::software) {
    (void)std::fprintf(stderr, "bench_codec: %s\n", message.c_str());
    std::exit(to_int(code)); // NOLINT(concurrency-mt-unsafe): the bench has one thread
}

template <class F>
void over_lines(benchmark::State& state, F f) {
    while (state.KeepRunning()) {
        for (std::string_view line : g_data.lines)
            f(line);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_data.bytes.size()));
}

// The decode path of a program: pipe-sized reads through LineReader, each line through rpc::decode.
void bm_decode(benchmark::State& state) {
    std::string_view all = g_data.bytes;
    while (state.KeepRunning()) {
        rpc::LineReader reader;
        size_t ok = 0;
        for (size_t at = 0; at < all.size(); at += k_pipe_chunk) {
            reader.feed(all.substr(at, k_pipe_chunk));
            while (auto line = reader.next()) {
                rpc::Decoded d = rpc::decode(line->text);
                if (d.message)
                    ++ok;
            }
        }
        benchmark::DoNotOptimize(ok);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * all.size()));
}

// The encoders over pre-built values: each message back to its line.
void bm_encode(benchmark::State& state) {
    size_t out_bytes = 0;
    while (state.KeepRunning()) {
        for (const rpc::Message& m : g_data.messages) {
            std::string line;
            switch (m.kind) {
            case rpc::Kind::request:
                line = rpc::encode_request(m.id, m.method, m.params);
                break;
            case rpc::Kind::notification:
                line = rpc::encode_notification(m.method, m.params);
                break;
            case rpc::Kind::response:
                line = rpc::encode_result(m.id, m.result);
                break;
            case rpc::Kind::error:
                line = rpc::encode_error(m.id, m.error_code, m.error_message, m.error_data);
                break;
            }
            out_bytes += line.size();
            benchmark::DoNotOptimize(line.data());
        }
    }
    state.SetBytesProcessed(static_cast<int64_t>(out_bytes));
}

// The parts of decode on their own.
void bm_line_reader(benchmark::State& state) {
    std::string_view all = g_data.bytes;
    while (state.KeepRunning()) {
        rpc::LineReader reader;
        size_t n = 0;
        for (size_t at = 0; at < all.size(); at += k_pipe_chunk) {
            reader.feed(all.substr(at, k_pipe_chunk));
            while (auto line = reader.next())
                n += line->length;
        }
        benchmark::DoNotOptimize(n);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * all.size()));
}

void bm_utf8_check(benchmark::State& state) {
    over_lines(state,
               [](std::string_view line) { benchmark::DoNotOptimize(invalid_utf8_at(line)); });
}

void bm_cjson_parse(benchmark::State& state) {
    over_lines(state, [](std::string_view line) {
        cJSON* root = cJSON_ParseWithLengthOpts(line.data(), line.size(), nullptr, 0);
        benchmark::DoNotOptimize(root);
        cJSON_Delete(root);
    });
}

void bm_json_parse(benchmark::State& state) {
    over_lines(state, [](std::string_view line) {
        auto doc = Json::parse(line);
        benchmark::DoNotOptimize(doc.has_value());
    });
}

// A benchmark's throughput in MB/s, over its thread's CPU time and over wall-clock time.
struct Rate {
    double cpu = 0, wall = 0;
};

// Keeps each benchmark's rates for the summary, and prints as usual (in colour on a terminal only).
class Reporter : public benchmark::ConsoleReporter {
public:
    Reporter() : ConsoleReporter(isatty(STDOUT_FILENO) == 1 ? OO_Defaults : OO_Tabular) {}

    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& run : runs) {
            auto bytes = run.counters.find("bytes_per_second");
            if (run.error_occurred || bytes == run.counters.end() || run.real_accumulated_time <= 0)
                continue;
            // With repetitions, the median stands for the benchmark; else its one run does.
            std::string name = run.run_name.function_name;
            if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median")
                continue;
            if (run.run_type == Run::RT_Iteration && m_median.count(name) > 0)
                continue;
            if (run.run_type == Run::RT_Aggregate)
                m_median.insert(name);
            double cpu = bytes->second.value / 1e6;
            m_rate[name] = {cpu, cpu * run.cpu_accumulated_time / run.real_accumulated_time};
        }
        ConsoleReporter::ReportRuns(runs);
    }

    [[nodiscard]] Rate rate(const std::string& name) const {
        auto it = m_rate.find(name);
        return it == m_rate.end() ? Rate{} : it->second;
    }

private:
    std::map<std::string, Rate> m_rate;
    std::set<std::string> m_median;
};

constexpr std::string_view k_node_script = R"js('use strict';
// Reads a file of JSON lines, then times (split into lines + JSON.parse of each) a few times, in
// CPU time of the whole process (its GC threads included) and in wall-clock time.
const fs = require('fs');
const file = process.argv[2];
const reps = Number(process.argv[3]) || 10;
const buf = fs.readFileSync(file);
const warmup = 2;
const cpu = [], wall = [];
let sink = 0;
for (let r = 0; r < warmup + reps; r++) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const lines = buf.toString('utf8').split('\n');
  for (const line of lines) {
    if (line.length > 0) sink += JSON.parse(line).jsonrpc.length;
  }
  const t1 = process.hrtime.bigint();
  const c1 = process.cpuUsage(c0);
  if (r >= warmup) {
    wall.push(Number(t1 - t0) / 1e9);
    cpu.push((c1.user + c1.system) / 1e6);
  }
}
const mb = buf.length / 1e6;
const median = (a) => { a.sort((x, y) => x - y); return a[a.length >> 1]; };
console.log(JSON.stringify({
  cpu_mb_per_s: mb / median(cpu), wall_mb_per_s: mb / median(wall),
  bytes: buf.length, reps, sink, node: process.version,
}));
)js";

struct NodeFigures {
    Rate rate;
    std::string version;
};

Result<NodeFigures> run_node(const fs::path& dir, const fs::path& file) {
    fs::path script = dir / "json_parse.js";
    std::ofstream(script) << k_node_script;
    ChildSpec spec;
    spec.argv = {"node", script.string(), file.string(), std::to_string(k_node_reps)};
    spec.env = env_keep({"PATH", "HOME"});
    spec.in = Stdio::null();
    spec.err = Stdio::inherit();
    auto ran = run(std::move(spec), "");
    if (!ran)
        return ran.error();
    if (ran->status != 0)
        return make_error(Exit::unavailable, "node exited with status %d", ran->status);
    auto doc = Json::parse(ran->out);
    if (!doc) {
        return make_error(Exit::software, "cannot read node's figures: %s",
                          doc.error().message().c_str());
    }
    NodeFigures f;
    f.rate.cpu = doc->view().number("cpu_mb_per_s").value_or(0.0);
    f.rate.wall = doc->view().number("wall_mb_per_s").value_or(0.0);
    f.version = std::string(doc->view().string("node").value_or(std::string_view("?")));
    return f;
}

// Writes the generated lines to `file` and loads them back: the benchmarks run over the file's
// bytes.
void prepare(const fs::path& file) {
    std::ofstream(file, std::ios::binary) << generate(k_target_bytes);
    std::ifstream in(file, std::ios::binary);
    std::ostringstream all;
    all << in.rdbuf();
    g_data.bytes = std::move(all).str();
    if (g_data.bytes.size() < k_target_bytes)
        die("cannot write and read back '" + file.string() + "'");
    std::string_view rest = g_data.bytes;
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        g_data.lines.push_back(rest.substr(0, nl));
        rest.remove_prefix(nl + 1);
    }
    for (std::string_view line : g_data.lines) {
        rpc::Decoded d = rpc::decode(line);
        if (!d.message)
            die("generated line does not decode: " + d.failure->message);
        g_data.messages.push_back(std::move(*d.message));
    }
}

fs::path make_temp_dir() {
    const char* env =
        std::getenv("TMPDIR"); // NOLINT(concurrency-mt-unsafe): the bench has one thread
    std::string tmp = env != nullptr && *env != '\0' ? env : "/tmp";
    std::string pattern = tmp + "/bench_codec.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
        Error e = sys_error(Exit::io, errno, "cannot create a directory in '%s'", tmp.c_str());
        die(e.message(), e.exit());
    }
    return pattern;
}

std::string load_average() {
    std::array<double, 3> load{};
    if (getloadavg(load.data(), 3) != 3)
        return "unknown";
    return format("%.2f %.2f %.2f", load[0], load[1], load[2]);
}

// "123.4 MB/s", or why there is no figure.
std::string mb_per_s(double rate) {
    return rate > 0 ? format("%.1f MB/s", rate) : "not measured";
}

void print_summary(const Reporter& reporter, const Result<NodeFigures>& node,
                   const std::string& load_before) {
    Rate decode = reporter.rate("decode");
    Rate encode = reporter.rate("encode");
    Rate js = node ? node->rate : Rate{};
    std::printf("\n");
    std::printf("codec decode: %s\n", mb_per_s(decode.cpu).c_str());
    std::printf("codec encode: %s\n", mb_per_s(encode.cpu).c_str());
    std::printf("node JSON.parse: %s\n", node ? mb_per_s(js.cpu).c_str() : "unavailable");
    if (decode.cpu > 0 && js.cpu > 0) {
        std::printf("decode/node ratio: %.2f\n", decode.cpu / js.cpu);
    } else {
        std::printf("decode/node ratio: unavailable\n");
    }
    std::printf("\nthe same over wall-clock time: decode %s, encode %s, node %s\n",
                mb_per_s(decode.wall).c_str(), mb_per_s(encode.wall).c_str(),
                mb_per_s(js.wall).c_str());
    std::printf("load average before %s, after %s, on %u CPUs%s\n", load_before.c_str(),
                load_average().c_str(), std::thread::hardware_concurrency(),
                node ? format("; node %s", node->version.c_str()).c_str() : "");
    std::printf("parts of decode, each alone over the same lines (CPU time):\n");
    for (const char* part :
         {"part/line_reader", "part/utf8_check", "part/cjson_parse", "part/json_parse"}) {
        std::printf("  %s: %s\n", part + 5, mb_per_s(reporter.rate(part).cpu).c_str());
    }
}

int run_bench(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return to_int(Exit::usage);
    std::string load_before = load_average();
    fs::path dir = make_temp_dir();
    fs::path file = dir / "lines.jsonl";
    prepare(file);
    std::printf("bench_codec: %zu lines, %zu bytes (%.1f MB)\n", g_data.lines.size(),
                g_data.bytes.size(), static_cast<double>(g_data.bytes.size()) / 1e6);

    auto add = [](const char* name, void (*fn)(benchmark::State&)) {
        benchmark::RegisterBenchmark(name, fn)->Unit(benchmark::kMillisecond);
    };
    add("decode", bm_decode);
    add("encode", bm_encode);
    add("part/line_reader", bm_line_reader);
    add("part/utf8_check", bm_utf8_check);
    add("part/cjson_parse", bm_cjson_parse);
    add("part/json_parse", bm_json_parse);
    Reporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    auto node = run_node(dir, file);
    std::error_code ec;
    fs::remove_all(dir, ec);
    print_summary(reporter, node, load_before);
    if (!node) {
        (void)std::fprintf(stderr, "bench_codec: cannot measure node's JSON.parse: %s\n",
                           node.error().message().c_str());
        return to_int(Exit::unavailable);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    try {
        return run_bench(argc, argv);
    } catch (const std::exception& e) {
        (void)std::fprintf(stderr, "bench_codec: %s\n", e.what());
        return to_int(Exit::software);
    }
}
