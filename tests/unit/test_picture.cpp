// SPDX-License-Identifier: MIT
// lib/picture: pictures known by their first bytes, never by a name; the size limit; the check of
// what an API takes; and a picture counted as a picture, not as its base64, in a request's tokens.
#include "lib/picture.hpp"

#include "lib/base64.hpp"
#include "lib/models/gemini.hpp"
#include "lib/models/model.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sion {
namespace {

using namespace std::string_literals;

const std::string k_png = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR"s;
const std::string k_jpeg = "\xff\xd8\xff\xe0\0\x10JFIF"s;
const std::string k_gif = "GIF89a\x01\0\x01\0"s;
const std::string k_webp = "RIFF\x1a\0\0\0WEBPVP8L"s;

TEST(Picture, KnownByItsFirstBytes) {
    EXPECT_EQ(picture_kind(k_png), "image/png");
    EXPECT_EQ(picture_kind(k_jpeg), "image/jpeg");
    EXPECT_EQ(picture_kind("GIF87a\x01\0"s), "image/gif");
    EXPECT_EQ(picture_kind(k_gif), "image/gif");
    EXPECT_EQ(picture_kind(k_webp), "image/webp");
    // Near misses and other kinds are not pictures sion sends.
    for (const std::string& bytes :
         {""s, "\x89PNG\r\n"s, "\xff\xd8"s, "GIF88a"s, "RIFF\x1a\0\0\0WAVEfmt "s, "RIFF"s,
          "BM\x36\0\0\0"s, "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"s, "II*\0"s,
          "%PDF-1.7"s, "\0\0\0\x18" "ftypheic"s})
        EXPECT_FALSE(picture_kind(bytes)) << bytes;
}

TEST(Picture, MadeWithItsKindItsBase64AndItsName) {
    auto p = make_picture(k_png, "shot.png");
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(p->dump(), R"({"media_type":"image/png","data":")" + base64_encode(k_png)
                             + R"(","name":"shot.png"})");
    EXPECT_EQ(picture_size(*p), k_png.size());
    EXPECT_EQ(picture_data_url(*p), "data:image/png;base64," + base64_encode(k_png));
    auto unnamed = make_picture(k_webp, "");
    ASSERT_TRUE(unnamed);
    EXPECT_FALSE(unnamed->get("name").exists());
    EXPECT_EQ(picture_type(*unnamed), "image/webp");
}

TEST(Picture, AnythingElseOrTooLargeIsRefused) {
    auto text = make_picture("hello", "a.png");
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().exit(), Exit::data);
    EXPECT_EQ(text.error().message(), "is not a PNG, JPEG, GIF or WebP picture");
    std::string at_limit = k_jpeg + std::string(k_max_picture_bytes - k_jpeg.size(), '\0');
    EXPECT_TRUE(make_picture(at_limit, ""));
    auto large = make_picture(at_limit + "x", "");
    ASSERT_FALSE(large);
    EXPECT_EQ(large.error().exit(), Exit::data);
    EXPECT_EQ(large.error().message(),
              "is a picture of 5242881 bytes, more than the 5242880 a model is sent");
}

TEST(Picture, AnApiRefusesWhatItDoesNotReadByName) {
    std::vector<Json> c;
    c.push_back(*Json::parse(R"({"role":"user","text":"a","images":[{"media_type":"image/png","data":"iVBO"}]})"));
    EXPECT_TRUE(models::gemini_takes_pictures(c));
    c.push_back(*Json::parse(R"({"role":"tool","call":"c1","text":"","images":[{"media_type":"image/gif","data":"R0lG"}]})"));
    auto refused = models::gemini_takes_pictures(c);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::data);
    EXPECT_EQ(refused.error().message(),
              "cannot send a picture of type 'image/gif': the Gemini API takes only image/png, "
              "image/jpeg, image/webp, image/heic and image/heif");
}

TEST(Picture, CountedAsAPictureInARequestsTokens) {
    std::vector<Json> without;
    without.push_back(*Json::parse(R"({"role":"user","text":"Look"})"));
    std::vector<Json> with;
    Json m = *Json::parse(R"({"role":"user","text":"Look"})");
    Json images = Json::array();
    images.push(*make_picture(k_png + std::string(900'000, 'x'), ""));
    images.push(*make_picture(k_gif, ""));
    m.set("images", std::move(images));
    with.push_back(std::move(m));
    int64_t plain = models::estimate_tokens(models::Request{"", {}, without});
    int64_t pictured = models::estimate_tokens(models::Request{"", {}, with});
    // Two pictures, and the few bytes of their members' names and kinds.
    EXPECT_GE(pictured, plain + 2 * k_picture_tokens);
    EXPECT_LT(pictured, plain + 2 * k_picture_tokens + 40);
}

} // namespace
} // namespace sion
