// SPDX-License-Identifier: MIT
// An XML document read into a small tree of its own (names with their namespace URIs, text,
// attributes, children), for protocols that answer in XML (WebDAV's multistatus: sion-calendar). Read by
// libxml2, loaded when first needed (lib/loaded_libs.hpp), with no DTD, no entity of the
// document's own, nothing fetched from the network.
//
// Errors (Exit::data): a document over `max_bytes`, one that is not well-formed, one with a DTD
// (<!DOCTYPE>: entities are never expanded), one with more than `max_elements` elements or nested
// deeper than `max_depth`. libxml2 that cannot be loaded is Exit::unavailable.
//
// Threads: any thread; libxml2's error handler is set for the calling thread only.
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion {

struct XmlElement {
    std::string ns;   // the namespace URI ("DAV:"), "" for none
    std::string name; // the local name ("href")
    std::string text; // the text directly inside it (text and CDATA), entities and references as read
    std::vector<XmlElement> children;
    std::vector<std::pair<std::string, std::string>> attributes; // local name, value

    // The value of the attribute of that local name, "" when there is none.
    [[nodiscard]] std::string_view attribute(std::string_view local) const;
    // The first child of that namespace and local name, or null.
    [[nodiscard]] const XmlElement* child(std::string_view ns_uri, std::string_view local) const;
    // Whether it is that element.
    [[nodiscard]] bool is(std::string_view ns_uri, std::string_view local) const {
        return ns == ns_uri && name == local;
    }
};

struct XmlLimits {
    size_t max_bytes = size_t{32} << 20;
    size_t max_elements = 1000000;
    size_t max_depth = 64;
};

// The root element of `bytes`.
[[nodiscard]] Result<XmlElement> parse_xml_tree(std::string_view bytes, const XmlLimits& limits = {});

} // namespace sion
