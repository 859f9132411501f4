// SPDX-License-Identifier: MIT
// Secrets found in text in their long pieces, any case, broken by white space, or in base64.
#include "lib/redact.hpp"

#include "lib/base64.hpp"
#include "lib/text.hpp"

#include <algorithm>

namespace sion {

namespace {

constexpr std::string_view k_mark = "[redacted]";


bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

bool is_continuation(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// The characters of `secret`'s base64 form when its first byte is `offset` (0, 1 or 2) bytes into
// a group of three, without those at the start that share bits with what comes before it. With
// `to_end`, as it is when the secret ends the encoded text: its last character and padding are
// the secret's; otherwise the last character, which shares bits with what follows, is dropped.
std::string base64_form(std::string_view secret, size_t offset, bool to_end) {
    std::string bytes(offset, '\0');
    bytes.append(secret);
    std::string encoded = base64_encode(bytes);
    if (!to_end) {
        while (!encoded.empty() && encoded.back() == '=')
            encoded.pop_back();
        if (bytes.size() % 3 != 0 && !encoded.empty())
            encoded.pop_back();
    }
    // At offset 1 the second character mixes what comes before with the secret, at offset 2 the
    // third.
    size_t lead = offset == 0 ? 0 : offset + 1;
    return lead < encoded.size() ? encoded.substr(lead) : std::string();
}

// The two bytes at `at` as one number, for Redactor::m_starts.
size_t pair_at(std::string_view text, size_t at) {
    return static_cast<size_t>(static_cast<unsigned char>(text[at])) << 8
           | static_cast<unsigned char>(text[at + 1]);
}

std::string url_safe(std::string text) {
    for (char& c : text)
        c = c == '+' ? '-' : c == '/' ? '_' : c;
    return text;
}

} // namespace

Redactor::Redactor(const std::vector<std::string>& secrets) {
    for (const std::string& s : secrets) {
        // White space in a secret could never be matched as it is, since it is passed over in
        // the text; its base64 forms are made of it whole.
        std::string plain;
        for (char c : s)
            if (!is_space(c))
                plain += c;
        if (s.size() < k_min_secret || plain.size() < k_min_secret)
            continue;
        add(ascii_lower(plain), std::min(plain.size(), k_min_run));
        for (size_t offset = 0; offset < 3; ++offset) {
            for (bool to_end : {false, true}) {
                std::string form = base64_form(s, offset, to_end);
                if (form.size() < k_min_secret)
                    continue;
                size_t run = std::min(form.size(), k_min_run);
                add(ascii_lower(form), run);
                add(ascii_lower(url_safe(form)), run);
            }
        }
    }
}

void Redactor::add(std::string form, size_t min_run) {
    for (const Form& f : m_forms)
        if (f.folded == form)
            return;
    auto pieces = std::find_if(m_pieces.begin(), m_pieces.end(),
                               [min_run](const Pieces& p) { return p.length == min_run; });
    if (pieces == m_pieces.end())
        pieces = m_pieces.insert(m_pieces.end(), Pieces{min_run, {}});
    m_starts.resize(size_t{1} << 16);
    for (size_t at = 0; at + min_run <= form.size(); ++at) {
        pieces->runs.insert(form.substr(at, min_run));
        m_starts[pair_at(form, at)] = true;
    }
    m_forms.push_back(Form{std::move(form), min_run});
}

bool Redactor::may_match_at(std::string_view text, size_t at) const {
    if (at + 2 > text.size() || !m_starts[pair_at(text, at)])
        return false;
    for (const Pieces& p : m_pieces)
        if (at + p.length <= text.size() && p.runs.contains(text.substr(at, p.length)))
            return true;
    return false;
}

size_t Redactor::match_at(std::string_view text, size_t at) const {
    size_t best = 0;
    for (const Form& f : m_forms) {
        const std::string& form = f.folded;
        for (size_t j = 0; j < form.size(); ++j) {
            if (form[j] != text[at])
                continue;
            size_t n = 0;
            while (at + n < text.size() && j + n < form.size() && text[at + n] == form[j + n])
                ++n;
            if (n >= f.min_run)
                best = std::max(best, n);
        }
    }
    return best;
}

std::string Redactor::redact(std::string_view text) const {
    if (m_forms.empty())
        return std::string(text);
    // The text without its white space, folded, and where each of its characters came from.
    std::string compact;
    std::vector<size_t> origin;
    compact.reserve(text.size());
    origin.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (is_space(text[i]))
            continue;
        compact += ascii_lower(text[i]);
        origin.push_back(i);
    }
    std::vector<bool> hidden(text.size(), false);
    bool any = false;
    for (size_t at = 0; at < compact.size(); ++at) {
        // Most text holds no piece of a secret: match_at(), which tries every form, only where
        // one starts.
        size_t n = may_match_at(compact, at) ? match_at(compact, at) : 0;
        if (n == 0)
            continue;
        size_t first = origin[at];
        size_t last = origin[at + n - 1] + 1;
        while (first > 0 && is_continuation(text[first]))
            --first;
        while (last < text.size() && is_continuation(text[last]))
            ++last;
        std::fill(hidden.begin() + static_cast<std::ptrdiff_t>(first),
                  hidden.begin() + static_cast<std::ptrdiff_t>(last), true);
        any = true;
    }
    if (!any)
        return std::string(text);
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (!hidden[i])
            out += text[i];
        else if (i == 0 || !hidden[i - 1])
            out += k_mark;
    }
    return out;
}

Json Redactor::redact_json(Json value) const {
    if (!m_forms.empty())
        value.rewrite_strings([this](std::string_view text) { return redact(text); });
    return value;
}

std::string redact_secrets(std::string_view text, const std::vector<std::string>& secrets) {
    return Redactor(secrets).redact(text);
}

} // namespace sion
