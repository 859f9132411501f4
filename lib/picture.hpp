// SPDX-License-Identifier: MIT
// Pictures: those a person gives with a task (`sion-run run --picture FILE`), those a tool returns
// (read_file of a picture, an MCP server's image content), and what a model is sent of them.
//
// In the provider-neutral conversation (lib/models/model.hpp) pictures are the "images" of a
// user's or a tool's message, each {"media_type": "image/png", "data": base64, "name": "shot.png"}
// ("name" is for the transcript: no model is sent it).
//
// Sion sends the four kinds the providers it speaks share: PNG, JPEG, GIF and WebP, known by their
// first bytes, never by a file's name or a server's word; each at most k_max_picture_bytes (the
// Messages API's limit, the least of them), at most k_max_pictures to a message.
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace sion {

constexpr size_t k_max_picture_bytes = size_t{5} << 20;
constexpr size_t k_max_pictures = 20;
// Tokens a picture is taken to be when a run's budget is counted before a call: about what the
// Messages API counts for the largest picture it does not scale down (1.15 megapixels).
constexpr int64_t k_picture_tokens = 1'600;

// "image/png", "image/jpeg", "image/gif" or "image/webp" by the bytes' signature; nothing for
// anything else.
[[nodiscard]] std::optional<std::string_view> picture_kind(std::string_view bytes);

// The neutral picture of `bytes`, named `name`. Exit::data when they are not a picture sion sends
// ("is not a PNG, JPEG, GIF or WebP picture") or are too large ("is a picture of 6291456 bytes,
// more than the 5242880 a model is sent"): the caller says whose.
[[nodiscard]] Result<Json> make_picture(std::string_view bytes, std::string_view name);

// A neutral picture's media type (image/png when it names none), its bytes as a data URL, and how
// many bytes it is (from its base64).
[[nodiscard]] std::string_view picture_type(JsonView image);
[[nodiscard]] std::string picture_data_url(JsonView image);
[[nodiscard]] size_t picture_size(JsonView image);

// Whether an API that reads only `types` takes every picture of the conversation: Exit::data
// otherwise, before anything is sent ("cannot send a picture of type 'image/gif': the Gemini API
// takes only image/png, image/jpeg and image/webp").
[[nodiscard]] Status pictures_taken(std::span<const Json> conversation,
                                    std::span<const std::string_view> types, std::string_view api);

} // namespace sion
