// SPDX-License-Identifier: MIT
#include "lib/picture.hpp"

#include "lib/base64.hpp"
#include "lib/text.hpp"

#include <algorithm>

namespace sion {

std::optional<std::string_view> picture_kind(std::string_view bytes) {
    using namespace std::string_view_literals;
    if (bytes.starts_with("\x89PNG\r\n\x1a\n"sv))
        return "image/png";
    if (bytes.starts_with("\xff\xd8\xff"sv))
        return "image/jpeg";
    if (bytes.starts_with("GIF87a"sv) || bytes.starts_with("GIF89a"sv))
        return "image/gif";
    if (bytes.size() >= 12 && bytes.starts_with("RIFF"sv) && bytes.substr(8, 4) == "WEBP"sv)
        return "image/webp";
    return std::nullopt;
}

Result<Json> make_picture(std::string_view bytes, std::string_view name) {
    auto kind = picture_kind(bytes);
    if (!kind)
        return Error(Exit::data, "is not a PNG, JPEG, GIF or WebP picture");
    if (bytes.size() > k_max_picture_bytes)
        return make_error(Exit::data,
                          "is a picture of %zu bytes, more than the %zu a model is sent",
                          bytes.size(), k_max_picture_bytes);
    Json picture = Json::object();
    picture.set("media_type", *kind);
    picture.set("data", std::string_view(base64_encode(bytes)));
    if (!name.empty())
        picture.set("name", name);
    return picture;
}

std::string_view picture_type(JsonView image) {
    return image.string_or("media_type", "image/png").value_or("image/png");
}

std::string picture_data_url(JsonView image) {
    std::string url = "data:";
    url += picture_type(image);
    url += ";base64,";
    url += image.string_or("data", "").value_or("");
    return url;
}

size_t picture_size(JsonView image) {
    return base64_size(image.string_or("data", "").value_or(""));
}

Status pictures_taken(std::span<const Json> conversation, std::span<const std::string_view> types,
                      std::string_view api) {
    for (const Json& m : conversation)
        for (JsonView image : m.view().get("images")) {
            std::string_view type = picture_type(image);
            if (std::find(types.begin(), types.end(), type) != types.end())
                continue;
            std::string listed;
            for (size_t i = 0; i < types.size(); ++i) {
                if (i > 0)
                    listed += i + 1 == types.size() ? " and " : ", ";
                listed += types[i];
            }
            return make_error(Exit::data,
                              "cannot send a picture of type '%.*s': the %.*s takes only %s",
                              static_cast<int>(type.size()), type.data(),
                              static_cast<int>(api.size()), api.data(), listed.c_str());
        }
    return {};
}

} // namespace sion
