// SPDX-License-Identifier: MIT
// edit_file's change of a text: a quoted stretch (old_string) replaced by another (new_string),
// found exactly once, or every time it is there with replace_all.
//
// The text's line endings are kept: when the file's lines end with CRLF, strings given with LF
// (as models write them) are matched and written with CRLF, and the other way round. A final
// newline is kept too: a file that ends with one still does after the edit, and a quote that ends
// with a newline finds the last line of a file that has none.
//
// Errors are Exit::data, one line for the model saying what to do, then, when the stretch is not
// there, the lines nearest to it as read_file numbers them, so that the next try can quote them as
// they are. They do not name the file: the caller says "cannot edit 'x': " before them.
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace sion::code {

struct Edit {
    std::string_view old_string; // "" only for a text that is empty: new_string becomes it
    std::string_view new_string;
    bool replace_all = false;
};

struct Edited {
    std::string text;
    size_t replacements = 0;
};

// `text` with `edit` made. `name` is the file as the model knows it, for the nearest lines' hint.
//   "old_string is not in the file; the nearest lines of a.py are 3-5:\n     3\t…"
//   "old_string is in the file 3 times (lines 4, 10 and 22): quote more lines around it …"
//   "old_string and new_string are the same: there is nothing to change"
//   "old_string is empty: quote the text to replace (write_file replaces a whole file)"
[[nodiscard]] Result<Edited> apply_edit(std::string_view text, const Edit& edit,
                                        std::string_view name);

} // namespace sion::code
