// SPDX-License-Identifier: MIT
// XML read into XmlElement trees through libxml2, refusing DTDs as lib/office_text does.
#include "lib/xml_tree.hpp"

#include "lib/loaded_libs.hpp"

#include <climits>
#include <memory>

namespace sion {

namespace {

struct Parse {
    const XmlApi* xml = nullptr;
    bool dtd = false;
};

thread_local Parse* t_parse = nullptr;

void stop_at_dtd(void* ctx) noexcept {
    if (t_parse == nullptr)
        return;
    t_parse->dtd = true;
    t_parse->xml->stop_parser(static_cast<xmlParserCtxtPtr>(ctx));
}

void internal_subset(void* ctx, const xmlChar*, const xmlChar*, const xmlChar*) noexcept {
    stop_at_dtd(ctx);
}

void entity_decl(void* ctx, const xmlChar*, int, const xmlChar*, const xmlChar*,
                 xmlChar*) noexcept {
    stop_at_dtd(ctx);
}

void quiet(void*, const char*, ...) noexcept {}

struct Copy {
    const XmlLimits& limits;
    size_t elements = 0;
};

Status copy(const xmlNode* node, XmlElement& into, Copy& c, size_t depth) {
    if (depth > c.limits.max_depth)
        return make_error(Exit::data, "its XML is nested more than %zu deep", c.limits.max_depth);
    if (++c.elements > c.limits.max_elements)
        return make_error(Exit::data, "its XML has more than %zu elements", c.limits.max_elements);
    into.name = std::string(xml_name(node));
    if (node->ns != nullptr && node->ns->href != nullptr)
        into.ns = reinterpret_cast<const char*>(node->ns->href);
    for (const xmlAttr* a = node->properties; a != nullptr; a = a->next) {
        std::string value;
        for (const xmlNode* t = a->children; t != nullptr; t = t->next)
            if (t->content != nullptr)
                value += reinterpret_cast<const char*>(t->content);
        into.attributes.emplace_back(a->name != nullptr ? reinterpret_cast<const char*>(a->name) : "",
                                     std::move(value));
    }
    for (const xmlNode* n = node->children; n != nullptr; n = n->next) {
        if ((n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) && n->content != nullptr) {
            into.text += reinterpret_cast<const char*>(n->content);
        } else if (n->type == XML_ELEMENT_NODE) {
            into.children.emplace_back();
            SION_CHECK(copy(n, into.children.back(), c, depth + 1));
        }
    }
    return {};
}

} // namespace

const XmlElement* XmlElement::child(std::string_view ns_uri, std::string_view local) const {
    for (const XmlElement& e : children)
        if (e.is(ns_uri, local))
            return &e;
    return nullptr;
}

std::string_view XmlElement::attribute(std::string_view local) const {
    for (const auto& [key, value] : attributes)
        if (key == local)
            return value;
    return {};
}

Result<XmlElement> parse_xml_tree(std::string_view bytes, const XmlLimits& limits) {
    if (bytes.size() > limits.max_bytes || bytes.size() > INT_MAX)
        return make_error(Exit::data, "its XML is larger than %zu bytes", limits.max_bytes);
    SION_TRY(const XmlApi* xml, xml_api());
    std::unique_ptr<xmlParserCtxt, void (*)(xmlParserCtxtPtr)> ctxt(xml->new_parser_ctxt(),
                                                                    xml->free_parser_ctxt);
    if (!ctxt || ctxt->sax == nullptr)
        return make_error(Exit::os, "cannot read its XML: out of memory");
    ctxt->sax->internalSubset = internal_subset;
    ctxt->sax->entityDecl = entity_decl;
    Parse parse{xml, false};
    t_parse = &parse;
    xml->set_generic_error_func(nullptr, quiet);
    // No XML_PARSE_NOENT (entities are never substituted), no DTD loaded, no XML_PARSE_HUGE, no
    // network.
    int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA;
    xmlDocPtr parsed = xml->ctxt_read_memory(ctxt.get(), bytes.data(), static_cast<int>(bytes.size()),
                                             "answer.xml", nullptr, options);
    t_parse = nullptr;
    std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)> doc(parsed, xml->free_doc);
    if (parse.dtd)
        return make_error(Exit::data, "its XML has a DTD (<!DOCTYPE>): entities are not expanded");
    if (!doc)
        return make_error(Exit::data, "its XML is not well-formed");
    const xmlNode* root = doc->children;
    while (root != nullptr && root->type != XML_ELEMENT_NODE)
        root = root->next;
    if (root == nullptr)
        return make_error(Exit::data, "its XML has no element");
    XmlElement out;
    Copy c{limits};
    SION_CHECK(copy(root, out, c, 0));
    return out;
}

} // namespace sion
