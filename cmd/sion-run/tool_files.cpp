// SPDX-License-Identifier: MIT
// read_file and write_file in their simplest correct form: paths resolved inside the workspace
// (through no link that leads out of it), whole files written beside and renamed into place.
#include "cmd/sion-run/tools.hpp"
#include "lib/crypto.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sion::run_cmd {

namespace {

constexpr size_t k_max_read = size_t{16} << 20; // bytes of a file read_file looks at
constexpr int64_t k_default_limit = 2000;       // lines read_file shows
constexpr size_t k_max_line = 2000;             // characters of a line it shows

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

// `given` (relative to the workspace, or under /workspace as the sandbox shows it) as an absolute
// path inside the workspace, its existing links resolved. Errors are for the model.
Result<std::string> inside_workspace(const std::string& workspace, std::string_view given) {
    if (given.empty())
        return make_error(Exit::data, "the path is empty");
    std::string path(given);
    if (path == "/workspace" || path.rfind("/workspace/", 0) == 0)
        path = workspace + path.substr(std::strlen("/workspace"));
    else if (path.front() != '/')
        path = workspace + "/" + path;
    auto resolved = resolve_path(path);
    if (!resolved)
        return Error(Exit::data, resolved.error().message());
    const std::string& r = *resolved;
    if (r != workspace && r.rfind(workspace + "/", 0) != 0)
        return make_error(Exit::no_perm, "'%s' is outside the workspace",
                          std::string(given).c_str());
    return r;
}

// Creates the directories of `path` that are missing, below the workspace.
Status make_parents(const std::string& workspace, const std::string& path) {
    size_t at = workspace.size() + 1;
    while (true) {
        size_t slash = path.find('/', at);
        if (slash == std::string::npos)
            return {};
        std::string dir = path.substr(0, slash);
        if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
            return sys_error(Exit::io, errno, "cannot create directory '%s'",
                             dir.substr(workspace.size() + 1).c_str());
        at = slash + 1;
    }
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
        if (context.workspace.empty())
            return failed("this session has no workspace");
        auto path = inside_workspace(context.workspace, *given);
        if (!path)
            return failed("cannot write '" + std::string(*given) + "': " + path.error().message());
        if (Status made = make_parents(context.workspace, *path); !made)
            return failed(made.error().message());
        if (Status written = write_beside(*path, *content); !written)
            return failed("cannot write '" + std::string(*given)
                          + "': " + written.error().message());
        return ToolResult{format("wrote %zu byte%s to %s", content->size(),
                                 content->size() == 1 ? "" : "s", std::string(*given).c_str()),
                          false,
                          false,
                          {}};
    }

private:
    // Writes a new file beside `path` and renames it over `path`: a reader sees the old file or the
    // new one, and a link at `path` is replaced, not followed. A new file gets mode 0666 less the
    // umask; a replaced one keeps its mode.
    static Status write_beside(const std::string& path, std::string_view content) {
        mode_t mode = 0666;

        struct stat st {};

        if (::lstat(path.c_str(), &st) == 0) {
            if (S_ISDIR(st.st_mode))
                return make_error(Exit::data, "it is a directory");
            if (S_ISREG(st.st_mode))
                mode = st.st_mode & 07777;
        }
        SION_TRY(std::string tag, random_bytes(6));
        std::string temp = path + ".sion-" + to_hex(tag);
        int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
            return sys_error(Exit::io, errno, "cannot create a file beside it");
        Fd file(fd);
        Status ok = write_all(file.get(), content);
        if (ok && S_ISREG(st.st_mode) && ::fchmod(file.get(), mode) != 0)
            ok = sys_error(Exit::io, errno, "cannot keep its mode");
        if (ok && ::fsync(file.get()) != 0)
            ok = sys_error(Exit::io, errno, "cannot write it");
        file.reset();
        if (ok && ::rename(temp.c_str(), path.c_str()) != 0)
            ok = sys_error(Exit::io, errno, "cannot rename into place");
        if (!ok)
            ::unlink(temp.c_str());
        return ok;
    }
};

class ReadFile final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("read_file"); }

    Effect effect(JsonView) const override { return Effect::read; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto given = input.string("path");
        if (!given)
            return failed("read_file needs 'path', a string: " + given.error().message());
        auto offset = input.integer_or("offset", 1);
        auto limit = input.integer_or("limit", k_default_limit);
        if (!offset || !limit || *offset < 1 || *limit < 1)
            return failed("read_file's 'offset' and 'limit' are whole numbers from 1");
        if (context.workspace.empty())
            return failed("this session has no workspace");
        std::string name(*given);
        auto path = inside_workspace(context.workspace, name);
        if (!path)
            return failed("cannot read '" + name + "': " + path.error().message());
        int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            return failed(sys_error(Exit::io, errno, "cannot read '%s'", name.c_str()).message());
        Fd file(fd);

        struct stat st {};

        if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode))
            return failed("cannot read '" + name + "': not a regular file");
        auto text = read_all(file.get(), k_max_read);
        if (!text)
            return failed("cannot read '" + name + "': " + text.error().message());
        if (text->find('\0') != std::string::npos
            || invalid_utf8_at(*text) != std::string_view::npos)
            return ToolResult{format("%s is a binary file of %lld bytes: not shown", name.c_str(),
                                     static_cast<long long>(st.st_size)),
                              false,
                              false,
                              {}};
        return ToolResult{numbered(*text, *offset, *limit), false, false, {}};
    }

private:
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

} // namespace sion::run_cmd
