// SPDX-License-Identifier: MIT
// libxml2, libarchive and libedit through dlopen: a table of function pointers each, filled once.
#include "lib/loaded_libs.hpp"

#include "lib/text.hpp"

#include "lib/dl.hpp"

#include <climits>
#include <mutex>
#include <optional>
#include <string>

namespace sion {

namespace {

Result<XmlApi> load_xml() {
    std::string why;
    void* library = dl_open("libxml2.so.2", why);
    XmlApi t{};
    bool ok = library != nullptr && dl_look_up(library, "xmlInitParser", t.init_parser, why)
              && dl_look_up(library, "htmlReadMemory", t.html_read_memory, why)
              && dl_look_up(library, "xmlFreeDoc", t.free_doc, why)
              && dl_look_up(library, "xmlNewParserCtxt", t.new_parser_ctxt, why)
              && dl_look_up(library, "xmlFreeParserCtxt", t.free_parser_ctxt, why)
              && dl_look_up(library, "xmlCtxtReadMemory", t.ctxt_read_memory, why)
              && dl_look_up(library, "xmlStopParser", t.stop_parser, why)
              && dl_look_up(library, "xmlSetGenericErrorFunc", t.set_generic_error_func, why);
    if (!ok)
        return dl_unavailable("libxml2.so.2", "libxml2", why);
    t.init_parser();
    return t;
}

Result<ArchiveApi> load_archive() {
    std::string why;
    void* library = dl_open("libarchive.so.13", why);
    ArchiveApi t{};
    bool ok = library != nullptr && dl_look_up(library, "archive_read_new", t.read_new, why)
              && dl_look_up(library, "archive_read_free", t.read_free, why)
              && dl_look_up(library, "archive_read_support_filter_gzip", t.support_filter_gzip, why)
              && dl_look_up(library, "archive_read_support_format_tar", t.support_format_tar, why)
              && dl_look_up(library, "archive_read_support_format_zip", t.support_format_zip, why)
              && dl_look_up(library, "archive_read_open_filename", t.open_filename, why)
              && dl_look_up(library, "archive_read_open_fd", t.open_fd, why)
              && dl_look_up(library, "archive_read_next_header", t.next_header, why)
              && dl_look_up(library, "archive_read_data", t.read_data, why)
              && dl_look_up(library, "archive_error_string", t.error_string, why)
              && dl_look_up(library, "archive_entry_pathname", t.entry_pathname, why)
              && dl_look_up(library, "archive_entry_hardlink", t.entry_hardlink, why)
              && dl_look_up(library, "archive_entry_symlink", t.entry_symlink, why)
              && dl_look_up(library, "archive_entry_filetype", t.entry_filetype, why)
              && dl_look_up(library, "archive_entry_perm", t.entry_perm, why)
              && dl_look_up(library, "archive_entry_size", t.entry_size, why)
              && dl_look_up(library, "archive_entry_size_is_set", t.entry_size_is_set, why);
    if (!ok)
        return dl_unavailable("libarchive.so.13", "libarchive13", why);
    return t;
}

Result<EditApi> load_edit() {
    std::string why;
    void* library = dl_open("libedit.so.2", why);
    EditApi t{};
    bool ok = library != nullptr && dl_look_up(library, "el_init", t.init, why)
              && dl_look_up(library, "el_end", t.end, why)
              && dl_look_up(library, "el_reset", t.reset, why)
              && dl_look_up(library, "el_set", t.set, why)
              && dl_look_up(library, "el_get", t.get, why)
              && dl_look_up(library, "el_gets", t.gets, why)
              && dl_look_up(library, "history_init", t.history_init, why)
              && dl_look_up(library, "history_end", t.history_end, why)
              && dl_look_up(library, "history", t.history, why);
    if (!ok)
        return dl_unavailable("libedit.so.2", "libedit2", why);
    return t;
}

// Loads once and keeps the table, or the error, for every later call.
template <class Table>
Result<const Table*> once(std::once_flag& flag, std::optional<Result<Table>>& kept,
                          Result<Table> (*load)()) {
    std::call_once(flag, [&] { kept.emplace(load()); });
    if (!*kept)
        return kept->error();
    return &kept->value();
}

} // namespace

std::string_view xml_name(const xmlNode* node) {
    return node->name != nullptr ? reinterpret_cast<const char*>(node->name) : "";
}

std::string xml_attribute(const xmlNode* node, std::string_view name, bool any_case) {
    for (const xmlAttr* a = node->properties; a != nullptr; a = a->next) {
        if (a->name == nullptr)
            continue;
        std::string_view has = reinterpret_cast<const char*>(a->name);
        if (any_case ? !ascii_iequals(has, name) : has != name)
            continue;
        std::string out;
        for (const xmlNode* t = a->children; t != nullptr; t = t->next)
            if (t->content != nullptr)
                out += reinterpret_cast<const char*>(t->content);
        return out;
    }
    return {};
}

namespace {

// The parse under way on this thread, for the SAX callbacks that refuse a DTD.
struct DtdGuard {
    const XmlApi* xml = nullptr;
    bool dtd = false;
};

thread_local DtdGuard* t_guard = nullptr;

void stop_at_dtd(void* ctx) noexcept {
    if (t_guard == nullptr)
        return;
    t_guard->dtd = true;
    t_guard->xml->stop_parser(static_cast<xmlParserCtxtPtr>(ctx));
}

// <!DOCTYPE …>: called before the internal subset's first declaration is read.
void internal_subset(void* ctx, const xmlChar*, const xmlChar*, const xmlChar*) noexcept {
    stop_at_dtd(ctx);
}

// An entity's declaration, should one be reached at all.
void entity_decl(void* ctx, const xmlChar*, int, const xmlChar*, const xmlChar*,
                 xmlChar*) noexcept {
    stop_at_dtd(ctx);
}

// libxml2's messages that no parse option silences ("encoding error : input conversion failed"):
// nothing here prints, a failed parse says why in its own line.
void quiet(void*, const char*, ...) noexcept {}

} // namespace

Result<XmlDocument> read_xml_without_dtd(std::string_view bytes, const char* name) {
    SION_TRY(const XmlApi* xml, xml_api());
    if (bytes.size() > INT_MAX)
        return make_error(Exit::data, "its XML is too large to read");
    std::unique_ptr<xmlParserCtxt, void (*)(xmlParserCtxtPtr)> ctxt(xml->new_parser_ctxt(),
                                                                    xml->free_parser_ctxt);
    if (!ctxt || ctxt->sax == nullptr)
        return make_error(Exit::os, "cannot read its XML: out of memory");
    ctxt->sax->internalSubset = internal_subset;
    ctxt->sax->entityDecl = entity_decl;
    DtdGuard guard{xml, false};
    t_guard = &guard;
    xml->set_generic_error_func(nullptr, quiet); // this thread's, as libxml2 keeps it
    // No XML_PARSE_NOENT (entities are never substituted), no XML_PARSE_DTDLOAD or DTDATTR (no
    // DTD is loaded), no XML_PARSE_HUGE (libxml2's own bounds on depth and text hold), no network.
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA;
    xmlDocPtr parsed = xml->ctxt_read_memory(ctxt.get(), bytes.data(),
                                             static_cast<int>(bytes.size()), name, nullptr, options);
    t_guard = nullptr;
    XmlDocument doc(parsed, xml->free_doc);
    if (guard.dtd)
        return make_error(Exit::data, "its XML has a DTD (<!DOCTYPE>): entities are not expanded");
    if (!doc)
        return make_error(Exit::data, "its XML is not well-formed");
    return doc;
}

Result<const XmlApi*> xml_api() {
    static std::once_flag flag;
    static std::optional<Result<XmlApi>> kept;
    return once(flag, kept, load_xml);
}

Result<const ArchiveApi*> archive_api() {
    static std::once_flag flag;
    static std::optional<Result<ArchiveApi>> kept;
    return once(flag, kept, load_archive);
}

Result<const EditApi*> edit_api() {
    static std::once_flag flag;
    static std::optional<Result<EditApi>> kept;
    return once(flag, kept, load_edit);
}

} // namespace sion
