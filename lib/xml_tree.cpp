// SPDX-License-Identifier: MIT
// XML read into XmlElement trees through libxml2, with no DTD (read_xml_without_dtd()).
#include "lib/xml_tree.hpp"

#include "lib/loaded_libs.hpp"

#include <climits>
#include <memory>

namespace sion {

namespace {

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
    SION_TRY(XmlDocument doc, read_xml_without_dtd(bytes, "answer.xml"));
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
