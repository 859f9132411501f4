// SPDX-License-Identifier: MIT
// BM25 over tools' words, in memory: postings a word, scores summed in one pass over the query's
// words' postings.
#include "session/ranking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace sion::session {

namespace {

// Words too common in tools' texts to tell one tool from another, sorted for binary_search.
constexpr std::array<std::string_view, 60> k_common{
    "about", "after", "all",   "also",  "an",    "and",   "any",   "are",   "as",    "at",
    "be",    "been",  "but",   "by",    "can",   "could", "do",    "doe",   "each",  "for",
    "from",  "ha",    "have",  "how",   "if",    "in",    "into",  "is",    "it",    "its",
    "may",   "more",  "must",  "no",    "not",   "of",    "on",    "only",  "or",    "other",
    "should", "so",   "such",  "than",  "that",  "the",   "their", "them",  "then",  "there",
    "these", "they",  "this",  "those", "to",    "wa",    "when",  "which", "will",  "with",
};

bool is_letter_or_digit(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }

// One form for a word and its plural: "directories" → directory, "matches" → match, "boxes" →
// box, "files" → file, "sizes" → size; "status", "class" and "this" stay. ("caches" becomes
// "cach", apart from "cache": a rule this short cannot know every word.)
std::string singular(std::string word) {
    auto ends = [&](std::string_view tail) { return word.ends_with(tail); };
    if (word.size() > 4 && ends("ies"))
        return word.substr(0, word.size() - 3) + "y";
    if (word.size() > 4 && (ends("sses") || ends("shes") || ends("ches") || ends("xes")))
        return word.substr(0, word.size() - 2);
    if (word.size() > 3 && ends("s") && !ends("ss") && !ends("us") && !ends("is"))
        word.pop_back();
    return word;
}

// A word made of text[from, to), lowercased and made singular; kept unless it is common.
void keep_word(std::string_view text, size_t from, size_t to, std::vector<std::string>& out) {
    if (to - from < 2)
        return;
    std::string word(text.substr(from, to - from));
    for (char& c : word)
        if (is_upper(static_cast<unsigned char>(c)))
            c = static_cast<char>(c - 'A' + 'a');
    word = singular(std::move(word));
    if (!std::binary_search(k_common.begin(), k_common.end(), word))
        out.push_back(std::move(word));
}

void collect_schema(JsonView schema, std::string& out, int depth) {
    if (!schema.is_object() || depth > 8)
        return;
    if (auto d = schema.get("description"); d.is_string())
        out.append(*d.as_string()).push_back(' ');
    for (JsonView property : schema.get("properties")) {
        out.append(property.key()).push_back(' ');
        collect_schema(property, out, depth + 1);
    }
    collect_schema(schema.get("items"), out, depth + 1);
}

// The query's own words, split at blanks and commas only, as tool names are written.
std::vector<std::string_view> named(std::string_view query) {
    std::vector<std::string_view> out;
    size_t at = 0;
    while (at < query.size()) {
        size_t end = query.find_first_of(" \t\n,", at);
        end = end == std::string_view::npos ? query.size() : end;
        if (end > at)
            out.push_back(query.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

std::string lowered(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (is_upper(static_cast<unsigned char>(c)))
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

} // namespace

std::vector<std::string> search_words(std::string_view text) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
        auto c = i < text.size() ? static_cast<unsigned char>(text[i]) : '\0';
        if (i == text.size() || !is_letter_or_digit(c)) {
            keep_word(text, start, i, out);
            start = i + 1;
            continue;
        }
        // A word ends before a capital that follows a small letter (readFile), and before the
        // last capital of a run that a small letter follows (HTTPServer: HTTP, Server).
        if (i > start && is_upper(c)) {
            auto before = static_cast<unsigned char>(text[i - 1]);
            bool next_lower = i + 1 < text.size() && is_lower(static_cast<unsigned char>(text[i + 1]));
            if (is_lower(before) || (is_upper(before) && next_lower)) {
                keep_word(text, start, i, out);
                start = i;
            }
        }
    }
    return out;
}

std::string schema_text(JsonView schema) {
    std::string out;
    collect_schema(schema, out, 0);
    return out;
}

void ToolIndex::add(std::string_view name, std::string_view description, JsonView input_schema) {
    auto tool = static_cast<uint32_t>(m_names.size());
    m_names.emplace_back(name);
    m_by_name.emplace(lowered(name), tool);
    std::vector<std::string> words = search_words(name);
    size_t name_words = words.size();
    for (int again = 0; again < 2; ++again) // the name counts three times
        for (size_t i = 0; i < name_words; ++i)
            words.push_back(words[i]);
    for (std::string& w : search_words(description))
        words.push_back(std::move(w));
    for (std::string& w : search_words(schema_text(input_schema)))
        words.push_back(std::move(w));
    m_lengths.push_back(static_cast<uint32_t>(words.size()));
    m_total_length += words.size();
    std::sort(words.begin(), words.end());
    for (size_t i = 0; i < words.size();) {
        size_t j = i;
        while (j < words.size() && words[j] == words[i])
            ++j;
        m_postings[words[i]].push_back({tool, static_cast<uint32_t>(j - i)});
        i = j;
    }
}

std::vector<size_t> ToolIndex::search(std::string_view query, size_t limit) const {
    std::vector<size_t> out;
    auto take = [&](size_t tool) {
        if (out.size() < limit && std::find(out.begin(), out.end(), tool) == out.end())
            out.push_back(tool);
    };
    if (query.starts_with("select:")) {
        for (std::string_view n : named(query.substr(7)))
            if (auto it = m_by_name.find(lowered(n)); it != m_by_name.end())
                take(it->second);
        return out;
    }
    for (std::string_view n : named(query))
        if (auto it = m_by_name.find(lowered(n)); it != m_by_name.end())
            take(it->second);
    if (m_names.empty())
        return out;
    std::vector<std::string> words = search_words(query);
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    constexpr double k1 = 1.2;
    constexpr double b = 0.75;
    const double tools = static_cast<double>(m_names.size());
    const double average = static_cast<double>(m_total_length) / tools;
    std::vector<double> score(m_names.size(), 0.0);
    for (const std::string& w : words) {
        auto it = m_postings.find(w);
        if (it == m_postings.end())
            continue;
        const auto df = static_cast<double>(it->second.size());
        double idf = std::log(1.0 + (tools - df + 0.5) / (df + 0.5));
        for (const Posting& p : it->second) {
            double tf = p.count;
            double norm = k1 * (1.0 - b + b * m_lengths[p.tool] / average);
            score[p.tool] += idf * tf * (k1 + 1.0) / (tf + norm);
        }
    }
    std::vector<size_t> ranked;
    for (size_t t = 0; t < score.size(); ++t)
        if (score[t] > 0.0)
            ranked.push_back(t);
    size_t want = std::min(ranked.size(), limit + out.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<long>(want), ranked.end(),
                      [&](size_t x, size_t y) { return score[x] > score[y] || (score[x] == score[y] && x < y); });
    for (size_t i = 0; i < want; ++i)
        take(ranked[i]);
    return out;
}

} // namespace sion::session
