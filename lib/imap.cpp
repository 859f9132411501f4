// SPDX-License-Identifier: MIT
// IMAP responses read and command arguments written (lib/imap.hpp). The reader is one pass over
// the text with an explicit depth bound, so hostile responses cost at most their length.
#include "lib/imap.hpp"

#include "lib/text.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace sion::imap {

namespace {

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'a' && c <= 'z')
            c = static_cast<char>(c - 'a' + 'A');
    return out;
}

class Reader {
public:
    explicit Reader(std::string_view text) : m_text(text) {}

    [[nodiscard]] bool done() const { return m_at >= m_text.size(); }

    // Skips to the start of the next line.
    void next_line() {
        size_t lf = m_text.find('\n', m_at);
        m_at = lf == std::string_view::npos ? m_text.size() : lf + 1;
    }

    [[nodiscard]] bool starts_untagged() const { return m_text.substr(m_at, 2) == "* "; }

    // The items of one response, up to its line's end (literals included).
    Result<std::vector<Item>> response() {
        m_at += 2;
        std::vector<Item> items;
        size_t count = 0;
        SION_TRY(bool ended, items_until(items, '\0', 0, count));
        (void)ended;
        return items;
    }

private:
    // Reads items into `out` until `close` (')' or '\0' for the line's end). True at the end.
    Result<bool> items_until(std::vector<Item>& out, char close, size_t depth, size_t& count) {
        if (depth > k_imap_depth_max)
            return make_error(Exit::data, "an IMAP response nests lists deeper than %zu",
                              k_imap_depth_max);
        while (m_at < m_text.size()) {
            char c = m_text[m_at];
            if (c == ' ') {
                ++m_at;
                continue;
            }
            if (c == '\r' || c == '\n') {
                if (close != '\0')
                    return make_error(Exit::data, "an IMAP response ends inside a list");
                next_line();
                return true;
            }
            if (c == ')') {
                if (close != ')')
                    return make_error(Exit::data, "an IMAP response closes a list it did not open");
                ++m_at;
                return true;
            }
            if (++count > k_imap_items_max)
                return make_error(Exit::data, "an IMAP response has more than %zu items",
                                  k_imap_items_max);
            Item item;
            if (c == '(') {
                ++m_at;
                item.kind = Item::Kind::list;
                SION_TRY(bool closed, items_until(item.items, ')', depth + 1, count));
                (void)closed;
            } else if (c == '"') {
                SION_TRY(std::string s, quoted());
                item.kind = Item::Kind::string;
                item.text = std::move(s);
            } else if (c == '{' || (c == '~' && m_text.substr(m_at + 1, 1) == "{")) {
                SION_TRY(std::string s, literal());
                item.kind = Item::Kind::string;
                item.text = std::move(s);
            } else {
                SION_TRY(std::string s, atom());
                item.text = std::move(s);
            }
            out.push_back(std::move(item));
        }
        if (close != '\0')
            return make_error(Exit::data, "an IMAP response ends inside a list");
        return true;
    }

    Result<std::string> quoted() {
        std::string s;
        for (++m_at; m_at < m_text.size(); ++m_at) {
            char c = m_text[m_at];
            if (c == '"') {
                ++m_at;
                return s;
            }
            if (c == '\r' || c == '\n')
                break;
            if (c == '\\' && m_at + 1 < m_text.size())
                c = m_text[++m_at];
            s += c;
        }
        return make_error(Exit::data, "an IMAP response ends inside a quoted string");
    }

    Result<std::string> literal() {
        if (m_text[m_at] == '~')
            ++m_at;
        size_t close = m_text.find('}', m_at);
        if (close == std::string_view::npos || close - m_at > 21)
            return make_error(Exit::data, "an IMAP response has a malformed literal");
        uint64_t n = 0;
        for (size_t i = m_at + 1; i < close; ++i) {
            char d = m_text[i];
            if (d == '+' && i + 1 == close)
                break;
            if (d < '0' || d > '9' || n > (uint64_t{1} << 40))
                return make_error(Exit::data, "an IMAP response has a malformed literal");
            n = n * 10 + static_cast<uint64_t>(d - '0');
        }
        m_at = close + 1;
        if (m_text.substr(m_at, 2) == "\r\n")
            m_at += 2;
        else if (m_text.substr(m_at, 1) == "\n")
            m_at += 1;
        else
            return make_error(Exit::data,
                              "an IMAP response has a literal not followed by a line break");
        size_t take = static_cast<size_t>(std::min<uint64_t>(n, m_text.size() - m_at));
        std::string s(m_text.substr(m_at, take));
        m_at += take;
        return s;
    }

    // An atom; brackets ("BODY[HEADER.FIELDS (FROM)]", "[CAPABILITY ...]") are part of it.
    Result<std::string> atom() {
        size_t start = m_at;
        int brackets = 0;
        while (m_at < m_text.size()) {
            char c = m_text[m_at];
            if (c == '\r' || c == '\n')
                break;
            if (brackets == 0 && (c == ' ' || c == '(' || c == ')'))
                break;
            if (c == '[')
                ++brackets;
            else if (c == ']' && brackets > 0)
                --brackets;
            ++m_at;
        }
        if (m_at == start)
            return make_error(Exit::data, "an IMAP response has an unexpected '%c'", m_text[m_at]);
        return std::string(m_text.substr(start, m_at - start));
    }

    std::string_view m_text;
    size_t m_at = 0;
};

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

constexpr const char* k_b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";

int b64_value(char c) {
    const char* p = std::strchr(k_b64, c);
    return c == '\0' || p == nullptr ? -1 : static_cast<int>(p - k_b64);
}

// The UTF-16 units of a modified-base64 run, or none when it is not one.
std::optional<std::vector<uint16_t>> b64_units(std::string_view run) {
    std::vector<uint16_t> units;
    uint32_t bits = 0;
    int nbits = 0;
    for (char c : run) {
        int v = b64_value(c);
        if (v < 0)
            return std::nullopt;
        bits = (bits << 6) | static_cast<uint32_t>(v);
        nbits += 6;
        if (nbits >= 16) {
            nbits -= 16;
            units.push_back(static_cast<uint16_t>((bits >> nbits) & 0xFFFF));
        }
    }
    return units;
}

// Decodes one UTF-8 code point at `i`, advancing it; U+FFFD for a bad sequence.
uint32_t next_code_point(std::string_view s, size_t& i) {
    auto b = static_cast<unsigned char>(s[i++]);
    int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
    uint32_t cp = extra == 3 ? b & 0x07 : extra == 2 ? b & 0x0F : extra == 1 ? b & 0x1F : b;
    if (b >= 0x80 && extra == 0)
        return 0xFFFD;
    for (int k = 0; k < extra; ++k) {
        if (i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
            return 0xFFFD;
        cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
    }
    return cp;
}

} // namespace

bool Item::is_atom(std::string_view word) const {
    return kind == Kind::atom && ascii_iequals(text, word);
}

std::optional<uint64_t> Item::number() const {
    if (kind != Kind::atom || text.empty() || text.size() > 19)
        return std::nullopt;
    uint64_t n = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
        n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    return n;
}

Result<std::vector<std::vector<Item>>> parse_untagged(std::string_view raw) {
    std::vector<std::vector<Item>> out;
    Reader reader(raw);
    while (!reader.done()) {
        if (!reader.starts_untagged()) {
            reader.next_line();
            continue;
        }
        SION_TRY(std::vector<Item> items, reader.response());
        out.push_back(std::move(items));
    }
    return out;
}

std::string last_tagged(std::string_view raw) {
    std::string last;
    size_t at = 0;
    while (at < raw.size()) {
        size_t lf = raw.find('\n', at);
        size_t end = lf == std::string_view::npos ? raw.size() : lf;
        std::string_view line = raw.substr(at, end - at);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        size_t space = line.find(' ');
        if (space != std::string_view::npos && space > 0 && line[0] != '*' && line[0] != '+') {
            std::string_view status = line.substr(space + 1, 3);
            if (ascii_iequals(status, "OK ") || ascii_iequals(status, "NO ")
                || ascii_iequals(status, "BAD"))
                last = std::string(line);
        }
        at = end + 1;
    }
    return last;
}

std::vector<std::string> capabilities(std::string_view raw) {
    std::vector<std::string> caps;
    auto take = [&](std::string_view words) {
        caps.clear();
        size_t at = 0;
        while (at < words.size()) {
            size_t space = words.find(' ', at);
            size_t end = space == std::string_view::npos ? words.size() : space;
            if (end > at)
                caps.push_back(upper(words.substr(at, end - at)));
            at = end + 1;
        }
    };
    // Tagged lines carry [CAPABILITY ...] too (after LOGIN): read every line for the code.
    size_t at = 0;
    while (at < raw.size()) {
        size_t lf = raw.find('\n', at);
        size_t end = lf == std::string_view::npos ? raw.size() : lf;
        std::string_view line = raw.substr(at, end - at);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        size_t code = line.find("[CAPABILITY ");
        if (line.rfind("* CAPABILITY ", 0) == 0)
            take(line.substr(13));
        else if (code < 16) { // the code of a greeting or a tagged line, not text
            size_t close = line.find(']', code);
            if (close != std::string_view::npos)
                take(line.substr(code + 12, close - code - 12));
        }
        at = end + 1;
    }
    return caps;
}

std::vector<Folder> folders(const std::vector<std::vector<Item>>& responses) {
    std::vector<Folder> out;
    for (const auto& r : responses) {
        if (r.size() < 4 || !(r[0].is_atom("LIST") || r[0].is_atom("XLIST"))
            || r[1].kind != Item::Kind::list)
            continue;
        Folder f;
        f.name = r[3].text;
        if (r[3].kind == Item::Kind::atom && ascii_iequals(f.name, "INBOX"))
            f.name = "INBOX";
        f.shown = decode_mailbox(f.name);
        for (const Item& flag : r[1].items) {
            if (flag.is_atom("\\Noselect") || flag.is_atom("\\NonExistent"))
                f.selectable = false;
            for (const char* use : {"\\All", "\\Archive", "\\Drafts", "\\Flagged", "\\Junk",
                                    "\\Sent", "\\Trash", "\\Important"})
                if (flag.is_atom(use))
                    f.special = use;
            if (flag.is_atom("\\Inbox")) // Gmail's XLIST
                f.name = f.shown = "INBOX";
        }
        out.push_back(std::move(f));
    }
    return out;
}

std::vector<FolderStatus> statuses(const std::vector<std::vector<Item>>& responses) {
    std::vector<FolderStatus> out;
    for (const auto& r : responses) {
        if (r.size() < 3 || !r[0].is_atom("STATUS") || r[2].kind != Item::Kind::list)
            continue;
        FolderStatus s;
        s.mailbox = r[1].text;
        const auto& kv = r[2].items;
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
            if (kv[i].is_atom("MESSAGES"))
                s.messages = kv[i + 1].number();
            else if (kv[i].is_atom("UNSEEN"))
                s.unseen = kv[i + 1].number();
        }
        out.push_back(std::move(s));
    }
    return out;
}

namespace {

// Adds the UIDs of a sequence set ("1:3,7") to `out`, at most `max` in all.
bool add_set(std::string_view set, std::vector<uint32_t>& out, size_t max) {
    size_t at = 0;
    while (at < set.size()) {
        size_t comma = set.find(',', at);
        size_t end = comma == std::string_view::npos ? set.size() : comma;
        std::string_view part = set.substr(at, end - at);
        size_t colon = part.find(':');
        Item a{Item::Kind::atom, std::string(part.substr(0, colon)), {}};
        Item b{Item::Kind::atom,
               std::string(colon == std::string_view::npos ? part : part.substr(colon + 1)),
               {}};
        auto lo = a.number(), hi = b.number();
        if (lo && hi && *lo <= UINT32_MAX && *hi <= UINT32_MAX) {
            uint64_t from = std::min(*lo, *hi), to = std::max(*lo, *hi);
            for (uint64_t u = from; u <= to; ++u) {
                if (out.size() >= max)
                    return false;
                out.push_back(static_cast<uint32_t>(u));
            }
        }
        at = end + 1;
    }
    return true;
}

} // namespace

Uids search_uids(const std::vector<std::vector<Item>>& responses, size_t max) {
    Uids out;
    // Gathered a little past max, so that `more` is known; sorted and cut after.
    size_t gather = max + 1;
    for (const auto& r : responses) {
        if (!r.empty() && r[0].is_atom("SEARCH")) {
            for (size_t i = 1; i < r.size(); ++i) {
                auto n = r[i].number();
                if (!n || *n > UINT32_MAX)
                    continue;
                if (out.uids.size() >= gather)
                    break;
                out.uids.push_back(static_cast<uint32_t>(*n));
            }
        } else if (!r.empty() && r[0].is_atom("ESEARCH")) {
            for (size_t i = 1; i + 1 < r.size(); ++i)
                if (r[i].is_atom("ALL"))
                    (void)add_set(r[i + 1].text, out.uids, gather);
        }
    }
    std::sort(out.uids.begin(), out.uids.end());
    out.uids.erase(std::unique(out.uids.begin(), out.uids.end()), out.uids.end());
    if (out.uids.size() > max) {
        // Keep the newest: the highest UIDs.
        out.uids.erase(out.uids.begin(), out.uids.end() - static_cast<ptrdiff_t>(max));
        out.more = true;
    }
    return out;
}

bool Fetched::has_flag(std::string_view flag) const {
    return std::any_of(flags.begin(), flags.end(),
                       [&](const std::string& f) { return ascii_iequals(f, flag); });
}

std::vector<Fetched> fetched(const std::vector<std::vector<Item>>& responses) {
    std::vector<Fetched> out;
    for (const auto& r : responses) {
        if (r.size() < 3 || !r[1].is_atom("FETCH") || r[2].kind != Item::Kind::list)
            continue;
        Fetched f;
        bool section = false;
        const auto& kv = r[2].items;
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
            const Item& key = kv[i];
            const Item& value = kv[i + 1];
            if (key.is_atom("UID")) {
                auto n = value.number();
                f.uid = n && *n <= UINT32_MAX ? static_cast<uint32_t>(*n) : 0;
            } else if (key.is_atom("FLAGS")) {
                for (const Item& flag : value.items)
                    f.flags.push_back(flag.text);
            } else if (key.is_atom("INTERNALDATE")) {
                f.internal_date = value.text;
            } else if (key.is_atom("RFC822.SIZE")) {
                f.size = value.number();
            } else if (!section && key.kind == Item::Kind::atom
                       && (key.text.rfind("BODY[", 0) == 0 || key.text.rfind("BINARY[", 0) == 0
                           || key.text.rfind("body[", 0) == 0)) {
                f.section = value.is_nil() ? "" : value.text;
                section = true;
            }
        }
        if (f.uid != 0)
            out.push_back(std::move(f));
    }
    return out;
}

Result<std::string> quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\r' || c == '\n' || c == '\0')
            return make_error(Exit::usage, "search text cannot hold a line break or a NUL");
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    out += '"';
    return out;
}

Result<std::string> search_date(std::string_view date) {
    static constexpr std::array<const char*, 12> months = {
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    auto bad = [&] {
        return make_error(Exit::usage, "'%.*s' is not a date: give YYYY-MM-DD",
                          static_cast<int>(std::min<size_t>(date.size(), 40)), date.data());
    };
    if (date.size() != 10 || date[4] != '-' || date[7] != '-')
        return bad();
    for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
        if (date[i] < '0' || date[i] > '9')
            return bad();
    int month = (date[5] - '0') * 10 + (date[6] - '0');
    int day = (date[8] - '0') * 10 + (date[9] - '0');
    if (month < 1 || month > 12 || day < 1 || day > 31)
        return bad();
    return std::to_string(day) + "-" + months[static_cast<size_t>(month - 1)] + "-"
           + std::string(date.substr(0, 4));
}

Result<std::string> search_command(const Criteria& c, bool esearch) {
    std::string keys;
    bool eight_bit = false;
    auto add_text = [&](const char* key, const std::string& value) -> Status {
        if (value.empty())
            return {};
        SION_TRY(std::string q, quote(value));
        for (char ch : value)
            if (static_cast<unsigned char>(ch) >= 0x80)
                eight_bit = true;
        keys += std::string(" ") + key + " " + q;
        return {};
    };
    SION_CHECK(add_text("FROM", c.from));
    SION_CHECK(add_text("TO", c.to));
    SION_CHECK(add_text("SUBJECT", c.subject));
    SION_CHECK(add_text("TEXT", c.text));
    if (!c.since.empty()) {
        SION_TRY(std::string d, search_date(c.since));
        keys += " SINCE " + d;
    }
    if (!c.before.empty()) {
        SION_TRY(std::string d, search_date(c.before));
        keys += " BEFORE " + d;
    }
    if (c.unseen)
        keys += " UNSEEN";
    if (keys.empty())
        keys = " ALL";
    return std::string("UID SEARCH") + (esearch ? " RETURN (ALL)" : "")
           + (eight_bit ? " CHARSET UTF-8" : "") + keys;
}

std::string sequence_set(const std::vector<uint32_t>& uids) {
    std::vector<uint32_t> sorted = uids;
    std::sort(sorted.begin(), sorted.end());
    std::string out;
    for (size_t i = 0; i < sorted.size();) {
        size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] <= sorted[j] + 1)
            ++j;
        if (!out.empty())
            out += ',';
        out += std::to_string(sorted[i]);
        if (sorted[j] != sorted[i])
            out += ':' + std::to_string(sorted[j]);
        i = j + 1;
    }
    return out;
}

std::string decode_mailbox(std::string_view name) {
    std::string out;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        if (c != '&') {
            out += c;
            continue;
        }
        size_t dash = name.find('-', i + 1);
        if (dash == std::string_view::npos)
            return std::string(name);
        if (dash == i + 1) {
            out += '&';
            i = dash;
            continue;
        }
        auto units = b64_units(name.substr(i + 1, dash - i - 1));
        if (!units)
            return std::string(name);
        for (size_t k = 0; k < units->size(); ++k) {
            uint32_t u = (*units)[k];
            if (u >= 0xD800 && u < 0xDC00 && k + 1 < units->size()) {
                uint32_t lo = (*units)[k + 1];
                if (lo >= 0xDC00 && lo < 0xE000) {
                    append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                    ++k;
                    continue;
                }
            }
            append_utf8(out, u >= 0xD800 && u < 0xE000 ? 0xFFFD : u);
        }
        i = dash;
    }
    return out;
}

std::string encode_mailbox(std::string_view utf8) {
    std::string out;
    std::vector<uint16_t> pending;
    auto flush = [&] {
        if (pending.empty())
            return;
        out += '&';
        uint32_t bits = 0;
        int nbits = 0;
        for (uint16_t u : pending) {
            bits = (bits << 16) | u;
            nbits += 16;
            while (nbits >= 6) {
                nbits -= 6;
                out += k_b64[(bits >> nbits) & 0x3F];
            }
        }
        if (nbits > 0)
            out += k_b64[(bits << (6 - nbits)) & 0x3F];
        out += '-';
        pending.clear();
    };
    for (size_t i = 0; i < utf8.size();) {
        auto b = static_cast<unsigned char>(utf8[i]);
        if (b >= 0x20 && b < 0x7F) {
            flush();
            out += b == '&' ? std::string("&-") : std::string(1, static_cast<char>(b));
            ++i;
            continue;
        }
        uint32_t cp = next_code_point(utf8, i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            pending.push_back(static_cast<uint16_t>(0xD800 + (cp >> 10)));
            pending.push_back(static_cast<uint16_t>(0xDC00 + (cp & 0x3FF)));
        } else {
            pending.push_back(static_cast<uint16_t>(cp));
        }
    }
    flush();
    return out;
}

} // namespace sion::imap
