// SPDX-License-Identifier: MIT
// read_file and write_file: paths resolved by the kernel beneath the workspace held open
// (lib/confined), so no link, planted before or swapped in meanwhile, leads out of it; whole files
// written beside and renamed into place.
#include "session/tools.hpp"
#include "lib/picture.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"

namespace sion::session {

namespace {

constexpr size_t k_max_read = size_t{16} << 20; // bytes of a file read_file looks at
constexpr int64_t k_default_limit = 2000;       // lines read_file shows
constexpr size_t k_max_line = 2000;             // characters of a line it shows

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

class WriteFile final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("write_file"); }

    Effect effect(JsonView) const override { return Effect::write; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto given = input.string("path");
        if (!given)
            return failed("write_file needs 'path', a string: " + given.error().message());
        auto content = input.string("content");
        if (!content)
            return failed("write_file needs 'content', a string: " + content.error().message());
        if (context.files == nullptr)
            return failed("this session has no workspace");
        if (given->empty())
            return failed("cannot write '': the path is empty");
        // Written beside and renamed over the name: a reader sees the old file or the new one, a
        // link at the name is replaced, not followed, and a replaced file keeps its mode.
        if (Status written = context.files->write(*given, *content); !written)
            return failed(written.error().message());
        return ToolResult{format("wrote %zu byte%s to %s", content->size(),
                                 content->size() == 1 ? "" : "s", std::string(*given).c_str()),
                          false,
                          false,
                          {}};
    }
};

class ReadFile final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("read_file"); }

    Effect effect(JsonView) const override { return Effect::read; }

    bool runs_beside() const override { return true; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto given = input.string("path");
        if (!given)
            return failed("read_file needs 'path', a string: " + given.error().message());
        auto offset = input.integer_or("offset", 1);
        auto limit = input.integer_or("limit", k_default_limit);
        if (!offset || !limit || *offset < 1 || *limit < 1)
            return failed("read_file's 'offset' and 'limit' are whole numbers from 1");
        if (context.files == nullptr)
            return failed("this session has no workspace");
        std::string name(*given);
        if (name.empty())
            return failed("cannot read '': the path is empty");
        auto text = context.files->read(name, k_max_read);
        if (!text)
            return failed(text.error().message());
        if (auto kind = picture_kind(*text))
            return picture(name, *kind, *text);
        if (text->find('\0') != std::string::npos
            || invalid_utf8_at(*text) != std::string_view::npos)
            return ToolResult{
                format("%s is a binary file of %zu bytes: not shown", name.c_str(), text->size()),
                false,
                false,
                {}};
        return ToolResult{numbered(*text, *offset, *limit), false, false, {}};
    }

private:
    // A picture is shown to the model as a picture.
    static ToolResult picture(const std::string& name, std::string_view kind,
                              std::string_view bytes) {
        auto made = make_picture(bytes, name);
        if (!made)
            return {format("%s %s: not shown", name.c_str(), made.error().message().c_str()),
                    false,
                    false,
                    {}};
        ToolResult result{format("%s is a picture (%.*s, %zu bytes): shown", name.c_str(),
                                 static_cast<int>(kind.size()), kind.data(), bytes.size()),
                          false,
                          false,
                          {}};
        result.images = Json::array();
        result.images.push(std::move(*made));
        return result;
    }

    static std::string numbered(std::string_view text, int64_t offset, int64_t limit) {
        std::string out;
        int64_t line = 1;
        int64_t shown = 0;
        size_t at = 0;
        while (at < text.size() && shown < limit) {
            size_t nl = text.find('\n', at);
            std::string_view body =
                text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
            if (line >= offset) {
                out += format("%6lld\t", static_cast<long long>(line));
                if (body.size() > k_max_line) {
                    size_t cut = k_max_line;
                    while (cut > 0 && (static_cast<unsigned char>(body[cut]) & 0xC0) == 0x80)
                        --cut;
                    out.append(body.substr(0, cut));
                    out += format(" [… %zu more characters cut]", body.size() - cut);
                } else {
                    out.append(body);
                }
                out += '\n';
                ++shown;
            }
            if (nl == std::string_view::npos)
                break;
            at = nl + 1;
            ++line;
        }
        if (shown == 0)
            return offset > 1 ? format("the file has fewer than %lld lines",
                                       static_cast<long long>(offset))
                              : std::string("the file is empty");
        if (at < text.size() && shown == limit)
            out += format("[more lines follow: read on from offset %lld]\n",
                          static_cast<long long>(line));
        out.pop_back();
        return out;
    }
};

} // namespace

std::unique_ptr<Tool> make_write_file_tool() {
    return std::make_unique<WriteFile>();
}

std::unique_ptr<Tool> make_read_file_tool() {
    return std::make_unique<ReadFile>();
}

} // namespace sion::session
