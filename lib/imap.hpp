// SPDX-License-Identifier: MIT
// IMAP4rev1 (RFC 3501) text as sion-mail reads and writes it, apart from the connection
// (lib/mail_client.hpp): the server's untagged responses parsed into items (atoms, strings,
// literals, lists), the few responses sion reads (CAPABILITY, LIST, STATUS, SEARCH, ESEARCH,
// FETCH), and the parts of commands made from a user's text: quoted strings, SEARCH dates,
// sequence sets, and mailbox names in modified UTF-7 (RFC 3501 5.1.3).
//
// Contract: nothing here does I/O or throws. A response that is not IMAP is Exit::data; every
// list is bounded (k_imap_depth_max nested lists, k_imap_items_max items in a response), and a
// literal longer than what is left of the text is cut to what is there. Text a user gives that
// could end a command (CR, LF, NUL) is refused, never passed on: no command can be made to say
// more than its caller meant.
#pragma once

#include "lib/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::imap {

inline constexpr size_t k_imap_depth_max = 32;
inline constexpr size_t k_imap_items_max = 100000;

// One item of a response: an atom (numbers, NIL and flags too), a string (quoted or a literal,
// its contents), or a parenthesised list.
struct Item {
    enum class Kind { atom, string, list };
    Kind kind = Kind::atom;
    std::string text;        // an atom's or a string's text
    std::vector<Item> items; // a list's items

    [[nodiscard]] bool is_atom(std::string_view word) const; // ignoring ASCII case

    [[nodiscard]] bool is_nil() const { return kind == Kind::atom && is_atom("NIL"); }

    // A number's value (an atom of digits), else none.
    [[nodiscard]] std::optional<uint64_t> number() const;
};

// The untagged responses ("* ...") of `raw`, each as the items after its "*"; tagged lines and
// continuation requests are left out. Exit::data for text that is not IMAP.
[[nodiscard]] Result<std::vector<std::vector<Item>>> parse_untagged(std::string_view raw);

// The last tagged response line of `raw` ("A004 NO [TRYCREATE] no such mailbox"), without its
// line break; "" when there is none.
[[nodiscard]] std::string last_tagged(std::string_view raw);

// The capabilities the server announced last (CAPABILITY responses and [CAPABILITY ...] codes),
// upper-cased.
[[nodiscard]] std::vector<std::string> capabilities(std::string_view raw);

struct Folder {
    std::string name;    // as the server spells it (modified UTF-7)
    std::string shown;   // decoded to UTF-8
    std::string special; // "\Drafts", "\Sent", ... or ""
    bool selectable = true;
};

// The folders of LIST responses, in the order given.
[[nodiscard]] std::vector<Folder> folders(const std::vector<std::vector<Item>>& responses);

struct FolderStatus {
    std::string mailbox;
    std::optional<uint64_t> messages, unseen;
};

[[nodiscard]] std::vector<FolderStatus> statuses(const std::vector<std::vector<Item>>& responses);

// The UIDs of SEARCH and ESEARCH (ALL) responses, ascending and without repeats, at most `max`
// (`more` says some were left out).
struct Uids {
    std::vector<uint32_t> uids;
    bool more = false;
};

[[nodiscard]] Uids search_uids(const std::vector<std::vector<Item>>& responses, size_t max);

// One message of FETCH responses: its UID, flags, INTERNALDATE and RFC822.SIZE when asked for,
// and the text of the first BODY[...] (or BINARY[...]) section.
struct Fetched {
    uint32_t uid = 0;
    std::vector<std::string> flags;
    std::string internal_date;
    std::optional<uint64_t> size;
    std::string section;

    [[nodiscard]] bool has_flag(std::string_view flag) const;
};

[[nodiscard]] std::vector<Fetched> fetched(const std::vector<std::vector<Item>>& responses);

// `text` as an IMAP quoted string ("a \"b\""). Exit::usage when it holds CR, LF or NUL (it could
// end the command); 8-bit text is kept, for SEARCH CHARSET UTF-8.
[[nodiscard]] Result<std::string> quote(std::string_view text);

// A date "YYYY-MM-DD" as SEARCH takes it ("7-Dec-2026"). Exit::usage for any other text.
[[nodiscard]] Result<std::string> search_date(std::string_view date);

// What search_mail looks for; empty members are left out, and nothing at all is ALL.
struct Criteria {
    std::string from, to, subject, text; // substrings, any case (the server's matching)
    std::string since, before;           // "YYYY-MM-DD"
    bool unseen = false;
};

// The UID SEARCH command for `c`: every user text quoted (quote()), CHARSET UTF-8 when any of it
// is not ASCII, RETURN (ALL) when the server has ESEARCH. Exit::usage as quote() and
// search_date() say.
[[nodiscard]] Result<std::string> search_command(const Criteria& c, bool esearch);

// `uids` as a sequence set ("3,5:7"), at most `max` of them from the front.
[[nodiscard]] std::string sequence_set(const std::vector<uint32_t>& uids);

// A mailbox name in modified UTF-7 as UTF-8, and back. A name that is not valid modified UTF-7 is
// returned as it is.
[[nodiscard]] std::string decode_mailbox(std::string_view name);
[[nodiscard]] std::string encode_mailbox(std::string_view utf8);

} // namespace sion::imap
