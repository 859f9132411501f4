// SPDX-License-Identifier: MIT
// Replacing a quoted stretch of a text, keeping its line endings (session/code/edit.hpp).
#include "session/code/edit.hpp"

#include "session/code/lines.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <vector>

namespace sion::code {

namespace {

constexpr size_t k_listed = 20; // line numbers listed for a stretch that is there several times

// The offsets where `needle` starts in `text`, left to right, not overlapping.
std::vector<size_t> find_all(std::string_view text, std::string_view needle) {
    std::vector<size_t> at;
    for (size_t i = text.find(needle); i != std::string_view::npos;
         i = text.find(needle, i + needle.size()))
        at.push_back(i);
    return at;
}

// One way of reading the model's strings against the file: as given, or with their line endings
// made the file's.
struct Form {
    std::string old_string;
    std::string new_string;
};

// The forms to try, most literal first. A quote ending in a newline may also stand for the file's
// last line when the file has no final newline: it is tried without it, at the very end.
std::vector<Form> forms(std::string_view text, const Edit& edit, std::string_view eol) {
    bool has_cr = text.find('\r') != std::string_view::npos;
    std::string new_string = eol == "\r\n" ? to_crlf(edit.new_string)
                             : has_cr      ? std::string(edit.new_string)
                                           : to_lf(edit.new_string);
    std::vector<Form> out;
    auto add = [&](std::string old_string) {
        for (const Form& f : out)
            if (f.old_string == old_string)
                return;
        out.push_back({std::move(old_string), new_string});
    };
    add(std::string(edit.old_string));
    add(to_crlf(edit.old_string));
    add(to_lf(edit.old_string));
    return out;
}

// A form whose quote ends with a line ending that the file, lacking a final newline, does not
// have: the quote without it, when that is how the file ends.
bool drop_final_newline(std::string_view text, Form& form) {
    std::string_view o = form.old_string;
    size_t cut = o.ends_with("\r\n") ? 2 : o.ends_with("\n") ? 1 : 0;
    if (cut == 0 || text.empty() || text.back() == '\n' || o.size() == cut
        || !text.ends_with(o.substr(0, o.size() - cut)))
        return false;
    form.old_string.resize(o.size() - cut);
    std::string_view n = form.new_string;
    if (n.ends_with("\r\n"))
        form.new_string.resize(n.size() - 2);
    else if (n.ends_with("\n"))
        form.new_string.resize(n.size() - 1);
    return true;
}

Error not_there(std::string_view text, const Edit& edit, std::string_view name) {
    Lines file = split_lines(text);
    Lines quoted = split_lines(edit.old_string);
    return Error(Exit::data,
                 "old_string is not in the file; " + nearest_hint(file.text, quoted.text, name));
}

Error several(std::string_view text, const std::vector<size_t>& at) {
    std::vector<size_t> lines;
    size_t line = 1;
    size_t from = 0;
    for (size_t i : at) {
        line += static_cast<size_t>(std::count(text.begin() + static_cast<ptrdiff_t>(from),
                                               text.begin() + static_cast<ptrdiff_t>(i), '\n'));
        from = i;
        lines.push_back(line);
    }
    return make_error(Exit::data,
                      "old_string is in the file %zu times (lines %s): quote more of the lines "
                      "around it so that it is there once, or set replace_all to replace every one",
                      at.size(), list_numbers(lines, k_listed).c_str());
}

} // namespace

Result<Edited> apply_edit(std::string_view text, const Edit& edit, std::string_view name) {
    if (edit.old_string.empty()) {
        if (!text.empty())
            return make_error(Exit::data, "old_string is empty: quote the text to replace "
                                          "(write_file replaces a whole file)");
        return Edited{std::string(edit.new_string), 1};
    }
    if (edit.old_string == edit.new_string)
        return make_error(Exit::data,
                          "old_string and new_string are the same: there is nothing to change");
    Lines file = split_lines(text);
    std::vector<Form> tries = forms(text, edit, file.eol);
    for (size_t i = 0, n = tries.size(); i < n; ++i) {
        Form f = tries[i];
        if (drop_final_newline(text, f))
            tries.push_back(std::move(f));
    }
    for (const Form& f : tries) {
        std::vector<size_t> at = find_all(text, f.old_string);
        if (at.empty())
            continue;
        if (at.size() > 1 && !edit.replace_all)
            return several(text, at);
        std::string out;
        out.reserve(text.size() + at.size() * f.new_string.size());
        size_t from = 0;
        for (size_t i : at) {
            out.append(text.substr(from, i - from));
            out += f.new_string;
            from = i + f.old_string.size();
        }
        out.append(text.substr(from));
        // The edit took the file's final newline with it: it is the file's, not the edit's.
        if (file.final_newline && !out.empty() && out.back() != '\n')
            out += file.eol;
        return Edited{std::move(out), at.size()};
    }
    return not_there(text, edit, name);
}

} // namespace sion::code
