// SPDX-License-Identifier: MIT
// libxml2 (fetch_url's HTML parser, lib/web; the XML of office documents, lib/documents), libarchive
// (skills' bundles, lib/skills; office documents' zip containers, lib/documents) and libedit
// (a console's line editing, lib/line_editor), loaded when first needed, as libcurl is
// (lib/curl_api.hpp): linked, they would bring ICU, five compressors and the terminal libraries
// into the start of every session that never reads a page, a bundle or a terminal. Their headers
// still give the types.
//
// Contract: xml_api(), archive_api() and edit_api() dlopen the library and look up every function below on
// their first call; once, under std::call_once, so any thread may call them. Every later call
// returns the same table, or the same error: Exit::unavailable "cannot load 'libxml2.so.2'
// (install the Debian package libxml2): …". xml_api() also runs xmlInitParser. Never unloaded.
// Internal to lib/.
#pragma once

#include "lib/result.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <histedit.h>
#include <memory>
#include <string>
#include <string_view>
#include <libxml/HTMLparser.h>

namespace sion {

struct XmlApi {
    decltype(&::xmlInitParser) init_parser;
    decltype(&::htmlReadMemory) html_read_memory;
    decltype(&::xmlFreeDoc) free_doc;
    decltype(&::xmlNewParserCtxt) new_parser_ctxt;
    decltype(&::xmlFreeParserCtxt) free_parser_ctxt;
    decltype(&::xmlCtxtReadMemory) ctxt_read_memory;
    decltype(&::xmlStopParser) stop_parser;
    decltype(&::xmlSetGenericErrorFunc) set_generic_error_func;
};

struct ArchiveApi {
    decltype(&::archive_read_new) read_new;
    decltype(&::archive_read_free) read_free;
    decltype(&::archive_read_support_filter_gzip) support_filter_gzip;
    decltype(&::archive_read_support_format_tar) support_format_tar;
    decltype(&::archive_read_support_format_zip) support_format_zip;
    decltype(&::archive_read_open_filename) open_filename;
    decltype(&::archive_read_open_fd) open_fd;
    decltype(&::archive_read_next_header) next_header;
    decltype(&::archive_read_data) read_data;
    decltype(&::archive_error_string) error_string;
    decltype(&::archive_entry_pathname) entry_pathname;
    decltype(&::archive_entry_hardlink) entry_hardlink;
    decltype(&::archive_entry_symlink) entry_symlink;
    decltype(&::archive_entry_filetype) entry_filetype;
    decltype(&::archive_entry_perm) entry_perm;
    decltype(&::archive_entry_size) entry_size;
    decltype(&::archive_entry_size_is_set) entry_size_is_set;
};

struct EditApi {
    decltype(&::el_init) init;
    decltype(&::el_end) end;
    decltype(&::el_reset) reset;
    decltype(&::el_set) set;
    decltype(&::el_get) get;
    decltype(&::el_gets) gets;
    decltype(&::history_init) history_init;
    decltype(&::history_end) history_end;
    decltype(&::history) history;
};

[[nodiscard]] Result<const XmlApi*> xml_api();

// Walking a parsed tree needs no loaded function: an element's name ("" for none), and an
// attribute's value read from its text nodes (no allocation of libxml2's to free), by its local
// name, in any case when `any_case` (HTML's), else exactly (XML's); "" when there is none.
[[nodiscard]] std::string_view xml_name(const xmlNode* node);
[[nodiscard]] std::string xml_attribute(const xmlNode* node, std::string_view name, bool any_case);

// An XML document as others write it (an office document's part, a WebDAV answer), read with no
// DTD: one is refused, so that no entity is ever expanded ("its XML has a DTD (<!DOCTYPE>):
// entities are not expanded"), nothing is fetched, libxml2's own bounds on depth and text hold
// (no XML_PARSE_HUGE) and libxml2 prints nothing. Exit::data for a DTD or a document that is not
// well-formed or is over 2 GiB, Exit::os when memory runs out, xml_api()'s. `name` is the
// document's for libxml2 ("part.xml").
using XmlDocument = std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)>;
[[nodiscard]] Result<XmlDocument> read_xml_without_dtd(std::string_view bytes, const char* name);
[[nodiscard]] Result<const EditApi*> edit_api();
[[nodiscard]] Result<const ArchiveApi*> archive_api();

} // namespace sion
