// SPDX-License-Identifier: MIT
// Needles and the literals of patterns (session/code/needle.hpp). A needle is found much as
// ripgrep's memchr finds short ones: its bytes least likely in source text compared at sixteen
// places at once, two and then a third where those are there, and the whole needle only where all
// three are.
#include "session/code/needle.hpp"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sion::code {

namespace {

// Bytes from the most to the least frequent in source code, roughly; a byte not listed (a control
// or non-ASCII byte) is rarer than all of them.
constexpr std::string_view k_by_frequency =
    " etaoinsrlhdcupmfgybw\n.,;_()=vkxEjqzTSARINCOLDPM0123456789{}\"'\t-:/"
    "*>[]<&!+#|FUBGHWVYKXJQZ\\@$%^~?`";

size_t rarity(char c) {
    size_t at = k_by_frequency.find(c);
    return at == std::string_view::npos ? k_by_frequency.size() : at;
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool letter(char c) {
    return c >= 'a' && c <= 'z';
}

} // namespace

Needle::Needle(std::string_view bytes, bool fold) : m_bytes(bytes), m_fold(fold) {
    if (fold)
        for (char& c : m_bytes)
            c = lower(c);
    for (size_t i = 1; i < m_bytes.size(); ++i)
        if (rarity(m_bytes[i]) > rarity(m_bytes[m_first]))
            m_first = i;
    auto rarest_but = [&](size_t a, size_t b) {
        size_t best = m_bytes.size();
        for (size_t i = 0; i < m_bytes.size(); ++i)
            if (i != a && i != b
                && (best == m_bytes.size() || rarity(m_bytes[i]) > rarity(m_bytes[best])))
                best = i;
        return best == m_bytes.size() ? a : best;
    };
    m_second = rarest_but(m_first, m_first);
    m_third = rarest_but(m_first, m_second);
}

inline bool Needle::equal_at(const char* at) const {
    // A loop, not memcmp: needles are short, and most places checked differ at once.
    if (!m_fold) {
        for (size_t i = 0; i < m_bytes.size(); ++i)
            if (at[i] != m_bytes[i])
                return false;
        return true;
    }
    for (size_t i = 0; i < m_bytes.size(); ++i)
        if (lower(at[i]) != m_bytes[i])
            return false;
    return true;
}

size_t Needle::find(std::string_view text, size_t from) const {
    size_t n = m_bytes.size();
    if (n == 0 || from > text.size() || text.size() - from < n)
        return std::string_view::npos;
    const char* s = text.data() + from;
    size_t starts = text.size() - from - n + 1; // places the needle could start at
    char c1 = m_bytes[m_first];
    char c2 = m_bytes[m_second];
    // With fold, a lowercase letter is compared to the text's byte with its 0x20 bit set: 'A' and
    // 'a' both give 'a', and no other byte does.
    char c3 = m_bytes[m_third];
    char f1 = m_fold && letter(c1) ? 0x20 : 0;
    char f2 = m_fold && letter(c2) ? 0x20 : 0;
    char f3 = m_fold && letter(c3) ? 0x20 : 0;
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i v1 = _mm_set1_epi8(c1);
    const __m128i v2 = _mm_set1_epi8(c2);
    const __m128i or1 = _mm_set1_epi8(f1);
    const __m128i or2 = _mm_set1_epi8(f2);
    const __m128i v3 = _mm_set1_epi8(c3);
    const __m128i or3 = _mm_set1_epi8(f3);
    // Loads end before s + i + 15 + n, within the text.
    for (; i + 16 <= starts; i += 16) {
        __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + m_first));
        __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + m_second));
        __m128i all = _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(a, or1), v1),
                                    _mm_cmpeq_epi8(_mm_or_si128(b, or2), v2));
        auto mask = static_cast<unsigned>(_mm_movemask_epi8(all));
        if (mask == 0)
            continue;
        __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + m_third));
        mask &= static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_or_si128(c, or3), v3)));
        while (mask != 0) {
            auto bit = static_cast<size_t>(__builtin_ctz(mask));
            if (equal_at(s + i + bit))
                return from + i + bit;
            mask &= mask - 1;
        }
    }
#endif
    for (; i < starts; ++i)
        if (static_cast<char>(s[i + m_first] | f1) == c1
            && static_cast<char>(s[i + m_second] | f2) == c2 && equal_at(s + i))
            return from + i;
    return std::string_view::npos;
}

bool ascii_fold_exact(std::string_view s) {
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0x80) != 0 || lower(c) == 'k' || lower(c) == 's')
            return false;
    return true;
}

namespace {

// The end of the character class opening at `at` ('['), past its ']', or npos.
size_t class_end(std::string_view p, size_t at) {
    size_t i = at + 1;
    if (i < p.size() && p[i] == '^')
        ++i;
    if (i < p.size() && p[i] == ']')
        ++i;
    while (i < p.size() && p[i] != ']') {
        if (p[i] == '\\') {
            i += 2;
        } else if (p[i] == '[' && i + 1 < p.size() && p[i + 1] == ':') {
            size_t close = p.find(":]", i + 2);
            if (close == std::string_view::npos)
                return std::string_view::npos;
            i = close + 2;
        } else {
            ++i;
        }
    }
    return i < p.size() ? i + 1 : std::string_view::npos;
}

// The end of the repetition "{n}", "{n,}" or "{n,m}" opening at `at`, or npos.
size_t repetition_end(std::string_view p, size_t at) {
    size_t i = at + 1;
    size_t digits = 0;
    while (i < p.size() && p[i] >= '0' && p[i] <= '9')
        ++i, ++digits;
    if (digits == 0)
        return std::string_view::npos;
    if (i < p.size() && p[i] == ',') {
        ++i;
        while (i < p.size() && p[i] >= '0' && p[i] <= '9')
            ++i;
    }
    return i < p.size() && p[i] == '}' ? i + 1 : std::string_view::npos;
}

} // namespace

// The literal characters at depth 0 make runs; anything else ends one. A quantifier that may
// repeat its character no times takes that character off the run first. Groups are passed over
// (their text is not required: they may be an alternation), and so are classes.
std::string required_literal(std::string_view p) {
    std::string best;
    std::string run;
    bool last_literal = false; // the run's last character is the last thing read
    int depth = 0;
    auto close_run = [&] {
        if (run.size() > best.size())
            best = run;
        run.clear();
        last_literal = false;
    };
    auto drop_last = [&] {
        if (last_literal)
            run.pop_back();
        close_run();
    };
    auto literal = [&](char c) {
        if (depth > 0) {
            last_literal = false;
            return;
        }
        run += c;
        last_literal = true;
    };
    size_t i = 0;
    while (i < p.size()) {
        char c = p[i];
        if ((static_cast<unsigned char>(c) & 0x80) != 0 || c == '\n') {
            close_run(); // a quantifier after a multibyte character takes it whole: keep none
            ++i;
            continue;
        }
        switch (c) {
        case '\\': {
            if (i + 1 >= p.size())
                return {};
            char e = p[i + 1];
            bool alnum = (e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z');
            if ((static_cast<unsigned char>(e) & 0x80) != 0)
                return {};
            if (alnum) {
                // One-letter classes and assertions; \x, \p, \Q and octal escapes run on.
                if (std::strchr("dDsSwWbBAzntrfvaC", e) == nullptr)
                    return {};
                close_run();
            } else {
                literal(e);
            }
            i += 2;
            continue;
        }
        case '(':
            if (p.substr(i, 2) == "(?" && p.substr(i, 3) != "(?:")
                return {}; // flags, or a named group
            close_run();
            ++depth;
            i += p.substr(i, 3) == "(?:" ? 3 : 1;
            continue;
        case ')':
            close_run();
            --depth;
            ++i;
            continue;
        case '|':
            if (depth == 0)
                return {};
            ++i;
            continue;
        case '[':
            close_run();
            i = class_end(p, i);
            if (i == std::string_view::npos)
                return {};
            continue;
        case '{':
            i = repetition_end(p, i);
            if (i == std::string_view::npos)
                return {};
            drop_last();
            continue;
        case '*':
        case '?':
            drop_last();
            ++i;
            continue;
        case '+':
        case '.':
        case '^':
        case '$':
            close_run();
            ++i;
            continue;
        default:
            literal(c);
            ++i;
            continue;
        }
    }
    close_run();
    return best;
}

} // namespace sion::code
