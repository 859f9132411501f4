// SPDX-License-Identifier: MIT
// Secrets taken out of text that came from outside before it is stored or shown: a provider's error
// that echoes a key, whole or in part, in another case, broken up or in base64.
//
// For each secret of 8 characters or more (shorter ones are not looked for), a Redactor replaces
// with "[redacted]", once for each run it finds:
//   - the secret, and any 12 or more consecutive characters of it (a key the provider cut short:
//     "invalid key prefix sk-ant-api03-…abc" keeps only "…abc"); a secret of 8 to 11 characters
//     only whole;
//   - in any case: ASCII letters are compared without case (an upper-cased key);
//   - split: white space (space, tab, CR, LF, VT, FF) inside a run is passed over, so a key broken
//     across lines or into groups by spaces is redacted with its breaks, however short its pieces;
//     a piece on its own still needs its 12 characters;
//   - its base64 forms: the secret's bytes encoded at each of the three offsets they can have in a
//     longer encoded text ("user:KEY" of a Basic header, a JSON credential), in the standard and
//     the URL-safe alphabet, without the characters at either end that depend on their neighbours;
//     12 or more consecutive characters of one are redacted as the secret's own.
// A run is widened to whole UTF-8 characters. Text without a secret in it comes back unchanged.
//
// A JSON value is redacted by its strings (redact_json()): every string value and every member
// name, never the bytes of its text, so that what comes out is still JSON; numbers, booleans and
// nulls are left as they are.
//
// Threads: a Redactor is immutable once made; it may be used by several threads at once.
#pragma once

#include "lib/json.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sion {

class Redactor {
public:
    static constexpr size_t k_min_secret = 8; // shorter values are not secrets
    static constexpr size_t k_min_run = 12;   // characters of a secret that count as the secret

    Redactor() = default;
    explicit Redactor(const std::vector<std::string>& secrets);

    // `text` with every form of every secret replaced (see above).
    [[nodiscard]] std::string redact(std::string_view text) const;
    // `value` with each string value and member name redacted (Json::rewrite_strings(): of two
    // members whose names become one, the first keeps it and the other is dropped).
    [[nodiscard]] Json redact_json(Json value) const;

    [[nodiscard]] bool empty() const { return m_forms.empty(); }

private:
    struct Form {
        std::string folded; // lower-cased
        size_t min_run;     // the fewest of its characters that are redacted
    };

    // Its pieces of one length: every run of that many characters of a form whose min_run it is.
    struct Pieces {
        struct Hash {
            using is_transparent = void;

            size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
        };

        size_t length = 0;
        std::unordered_set<std::string, Hash, std::equal_to<>> runs;
    };

    void add(std::string folded, size_t min_run);
    // Whether a run of `folded` that counts may start at `at`: it starts with one of the pieces
    // (when not, match_at() finds none; this is the quicker test).
    [[nodiscard]] bool may_match_at(std::string_view folded, size_t at) const;
    // The length of the longest run of `folded` (white space taken out) starting at `at` that is
    // part of a form and long enough to count; 0 when there is none.
    [[nodiscard]] size_t match_at(std::string_view folded, size_t at) const;

    std::vector<Form> m_forms;
    std::vector<Pieces> m_pieces; // one for each min_run of the forms
    std::vector<bool> m_starts;   // by the first two bytes of a piece: whether one starts so
};

// Redactor(secrets).redact(text).
[[nodiscard]] std::string redact_secrets(std::string_view text,
                                         const std::vector<std::string>& secrets);

} // namespace sion
