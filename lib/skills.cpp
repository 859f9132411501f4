// SPDX-License-Identifier: MIT
#include "lib/skills.hpp"

#include "lib/confined.hpp"
#include "lib/db_schema.hpp"
#include "lib/fd.hpp"
#include "lib/hash.hpp"
#include "lib/home.hpp"
#include "lib/loaded_libs.hpp"
#include "lib/text.hpp"


#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace sion::skills {

namespace {

constexpr size_t k_max_description = 1024;
constexpr size_t k_max_skill_md = size_t{256} << 10;
constexpr const char* k_sums = "SHA256SUMS";

// A YAML plain or quoted scalar.
std::string scalar(std::string_view v) {
    v = trim_space(v);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
        std::string out;
        for (size_t i = 1; i + 1 < v.size(); ++i) {
            if (v.front() == '"' && v[i] == '\\' && i + 2 < v.size()) {
                char c = v[++i];
                out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
            } else if (v.front() == '\'' && v[i] == '\'' && i + 2 < v.size() && v[i + 1] == '\'') {
                out += '\'';
                ++i;
            } else {
                out += v[i];
            }
        }
        return out;
    }
    return std::string(v);
}

std::vector<std::string> words(std::string_view v) {
    std::string text = scalar(v);
    std::string_view t = text;
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']')
        t = t.substr(1, t.size() - 2);
    std::vector<std::string> out;
    std::string word;
    for (char c : t) {
        if (c == ' ' || c == ',' || c == '\t') {
            if (!word.empty())
                out.push_back(scalar(word));
            word.clear();
        } else {
            word += c;
        }
    }
    if (!word.empty())
        out.push_back(scalar(word));
    return out;
}

bool variable_name_ok(std::string_view name) {
    bool ok = !name.empty() && !(name.front() >= '0' && name.front() <= '9');
    for (char c : name)
        ok = ok
             && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                 || c == '_');
    return ok;
}

// A path inside a bundle or a skill's folder, normalised: no leading "./", no empty, "." or ".."
// component, not absolute. "" when it is not one.
std::string normal_path(std::string_view path) {
    while (path.substr(0, 2) == "./")
        path.remove_prefix(2);
    while (!path.empty() && path.back() == '/')
        path.remove_suffix(1);
    if (path.empty() || path.front() == '/')
        return {};
    size_t start = 0;
    while (true) {
        size_t slash = path.find('/', start);
        std::string_view c = path.substr(start, slash - start);
        if (c.empty() || c == "." || c == ".." || c.find('\\') != std::string_view::npos)
            return {};
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return std::string(path);
}

Origin origin_of(std::string_view text) {
    return text == "installed" ? Origin::installed
           : text == "written" ? Origin::written
                               : Origin::added;
}

Result<Skill> read_row(Stmt& q, std::string_view profile) {
    Skill s;
    s.profile = std::string(profile);
    s.name = q.column_text(0);
    s.description = q.column_text(1);
    s.dir = q.column_text(2);
    s.origin = origin_of(q.column_text(3));
    if (auto files = q.column_optional_text(4)) {
        SION_TRY(Json parsed, Json::parse(*files));
        for (JsonView f : parsed.view())
            s.files[std::string(f.key())] = std::string(f.as_string().value_or(""));
    }
    s.source = q.column_optional_text(5).value_or("");
    s.created = q.column_int(6);
    return s;
}

Status record(Db& db, const Skill& s) {
    Json files = Json::object();
    for (const auto& [path, sum] : s.files)
        files.set(path, std::string_view(sum));
    SION_TRY(Stmt q, db.prepare("INSERT INTO skills (profile, name, description, dir, origin, "
                                "files, source, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                                "ON CONFLICT (profile, name) DO UPDATE SET description = "
                                "excluded.description, files = excluded.files"));
    SION_CHECK(q.bind(1, s.profile));
    SION_CHECK(q.bind(2, s.name));
    SION_CHECK(q.bind(3, s.description));
    SION_CHECK(q.bind(4, s.dir));
    SION_CHECK(q.bind(5, origin_name(s.origin)));
    if (s.origin == Origin::installed) {
        SION_CHECK(q.bind(6, files.view().dump()));
        SION_CHECK(q.bind(7, s.source));
    }
    SION_CHECK(q.bind(8, s.created));
    SION_TRY(bool row, q.step());
    (void)row;
    return {};
}

Status profile_exists(Db& db, std::string_view profile) {
    SION_TRY(Stmt q, db.prepare("SELECT 1 FROM profiles WHERE name = ?1"));
    SION_CHECK(q.bind(1, profile));
    SION_TRY(bool row, q.step());
    if (!row)
        return make_error(Exit::no_input, "no profile '%.*s': make it with sion agent create %.*s",
                          static_cast<int>(profile.size()), profile.data(),
                          static_cast<int>(profile.size()), profile.data());
    return {};
}

Status name_free(Db& db, std::string_view profile, std::string_view name) {
    SION_TRY(Stmt q, db.prepare("SELECT 1 FROM skills WHERE profile = ?1 AND name = ?2"));
    SION_CHECK(q.bind(1, profile));
    SION_CHECK(q.bind(2, name));
    SION_TRY(bool row, q.step());
    if (row)
        return make_error(Exit::data,
                          "profile %.*s has a skill %.*s already: remove it first (sion agent "
                          "skills remove %.*s %.*s)",
                          static_cast<int>(profile.size()), profile.data(),
                          static_cast<int>(name.size()), name.data(),
                          static_cast<int>(profile.size()), profile.data(),
                          static_cast<int>(name.size()), name.data());
    return {};
}

// $SION_HOME/skills/<profile>, made (0700 each) when missing.
Result<std::string> profile_dir(const std::string& home, std::string_view profile) {
    std::string dir = home + "/skills";
    for (const std::string& d : {dir, dir + "/" + std::string(profile)})
        if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
            return sys_error(Exit::io, errno, "cannot make directory '%s'", d.c_str());
    return dir + "/" + std::string(profile);
}

// A bundle's files, read whole and checked.
struct Unpacked {
    std::map<std::string, std::string> files; // path -> bytes
    std::map<std::string, bool> executable;
};

Result<Unpacked> unpack(const std::string& bundle) {
    SION_TRY(const ArchiveApi* api, archive_api());
    std::unique_ptr<struct archive, int (*)(struct archive*)> a(api->read_new(), api->read_free);
    api->support_filter_gzip(a.get());
    api->support_format_tar(a.get());
    api->support_format_zip(a.get());
    if (api->open_filename(a.get(), bundle.c_str(), 65536) != ARCHIVE_OK)
        return make_error(Exit::data, "it is not a .tar.gz or .zip bundle (%s)",
                          api->error_string(a.get()));
    Unpacked out;
    std::vector<std::string> names;
    uint64_t total = 0;
    size_t entries = 0;
    struct archive_entry* entry = nullptr;
    while (true) {
        int rc = api->next_header(a.get(), &entry);
        if (rc == ARCHIVE_EOF)
            break;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
            return make_error(Exit::data, "it cannot be read: %s", api->error_string(a.get()));
        if (++entries > k_max_entries)
            return make_error(Exit::data, "it holds more than %zu entries", k_max_entries);
        const char* raw = api->entry_pathname(entry);
        std::string given = raw != nullptr ? raw : "";
        std::string path = normal_path(given);
        if (path.empty() && given != "./" && given != ".")
            return make_error(Exit::data, "it holds the path '%s', which leads outside its folder",
                              one_line(given).c_str());
        if (api->entry_hardlink(entry) != nullptr || api->entry_symlink(entry) != nullptr)
            return make_error(Exit::data,
                              "it holds a link '%s' (a bundle holds files and folders only)",
                              one_line(given).c_str());
        auto type = api->entry_filetype(entry);
        if (type == AE_IFDIR)
            continue;
        if (type != AE_IFREG)
            return make_error(Exit::data,
                              "it holds '%s', which is not a file (a bundle holds files and "
                              "folders only)",
                              one_line(given).c_str());
        std::string bytes;
        char buffer[65536];
        while (true) {
            la_ssize_t n = api->read_data(a.get(), buffer, sizeof buffer);
            if (n < 0)
                return make_error(Exit::data, "'%s' cannot be read: %s", one_line(given).c_str(),
                                  api->error_string(a.get()));
            if (n == 0)
                break;
            total += static_cast<uint64_t>(n);
            if (bytes.size() + static_cast<size_t>(n) > k_max_file)
                return make_error(Exit::data, "'%s' is larger than 16 MiB", path.c_str());
            if (total > k_max_total)
                return make_error(Exit::data, "it holds more than 64 MiB once unpacked");
            bytes.append(buffer, static_cast<size_t>(n));
        }
        if (out.files.count(path) != 0)
            return make_error(Exit::data, "it holds '%s' twice", path.c_str());
        out.executable[path] = (api->entry_perm(entry) & 0100) != 0;
        out.files[path] = std::move(bytes);
    }
    // One folder at the top holding everything: its name is left off.
    std::string top;
    bool one_top = !out.files.empty();
    for (const auto& [path, bytes] : out.files) {
        size_t slash = path.find('/');
        std::string first = slash == std::string::npos ? std::string() : path.substr(0, slash);
        if (first.empty() || (!top.empty() && first != top))
            one_top = false;
        top = first;
    }
    if (one_top) {
        Unpacked stripped;
        for (auto& [path, bytes] : out.files) {
            std::string inner = path.substr(top.size() + 1);
            stripped.executable[inner] = out.executable[path];
            stripped.files[inner] = std::move(bytes);
        }
        out = std::move(stripped);
    }
    return out;
}

// SHA256SUMS against the files: every file but it listed, and matching.
Status check_sums(const Unpacked& u) {
    auto sums = u.files.find(k_sums);
    if (sums == u.files.end())
        return make_error(Exit::data, "it has no %s beside SKILL.md to check its files against",
                          k_sums);
    std::map<std::string, std::string> listed;
    std::string_view text = sums->second;
    while (!text.empty()) {
        size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (trim_space(line).empty())
            continue;
        // "<hex>  <path>" (text mode) or "<hex> *<path>" (binary mode).
        if (line.size() < 67 || (line.substr(64, 2) != "  " && line.substr(64, 2) != " *"))
            return make_error(Exit::data, "its %s has a line that is not '<sha256>  <path>': %s",
                              k_sums, one_line(line.substr(0, 80)).c_str());
        std::string hex = ascii_lower(line.substr(0, 64));
        std::string path = normal_path(trim_space(line.substr(66)));
        if (hex.find_first_not_of("0123456789abcdef") != std::string::npos || path.empty())
            return make_error(Exit::data, "its %s has a line that is not '<sha256>  <path>': %s",
                              k_sums, one_line(line.substr(0, 80)).c_str());
        listed[path] = hex;
    }
    for (const auto& [path, bytes] : u.files) {
        if (path == k_sums)
            continue;
        auto it = listed.find(path);
        if (it == listed.end())
            return make_error(Exit::data, "it holds '%s', which its %s does not list", path.c_str(),
                              k_sums);
        if (sha256_hex(bytes) != it->second)
            return make_error(Exit::data, "'%s' does not match its SHA-256 in %s", path.c_str(),
                              k_sums);
    }
    for (const auto& [path, hex] : listed)
        if (u.files.count(path) == 0)
            return make_error(Exit::data, "its %s lists '%s', which it does not hold", k_sums,
                              path.c_str());
    return {};
}

Status write_new(const std::string& path, std::string_view bytes, mode_t mode) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd)
        return sys_error(Exit::io, errno, "cannot write '%s'", path.c_str());
    SION_CHECK(write_all(fd.get(), bytes));
    if (::fchmod(fd.get(), mode) != 0)
        return sys_error(Exit::io, errno, "cannot change the mode of '%s'", path.c_str());
    return {};
}

void remove_dir(const std::string& dir) {
    std::error_code ignored; // links are removed, not followed
    std::filesystem::remove_all(dir, ignored);
}

} // namespace

bool skill_name_ok(std::string_view name) {
    bool ok = !name.empty() && name.size() <= 64 && name.front() != '-' && name.back() != '-';
    for (char c : name)
        ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    return ok;
}

std::string_view origin_name(Origin origin) {
    switch (origin) {
    case Origin::installed:
        return "installed";
    case Origin::written:
        return "written";
    case Origin::added:
        break;
    }
    return "added";
}

Result<SkillText> parse_skill_md(std::string_view text) {
    SkillText s;
    if (text.size() > k_max_skill_md)
        return make_error(Exit::data, "SKILL.md is larger than 256 KiB");
    if (text.substr(0, 3) != "---" || trim_space(text.substr(3, text.find('\n') - 3)) != "")
        return make_error(Exit::data, "SKILL.md has no front matter: begin it with a line '---'");
    size_t at = text.find('\n');
    if (at == std::string_view::npos)
        return make_error(Exit::data, "SKILL.md's front matter has no end: end it with a line "
                                      "'---'");
    ++at;
    bool in_metadata = false;
    std::string* block = nullptr; // a folded or literal description's lines go here
    while (true) {
        if (at >= text.size())
            return make_error(Exit::data, "SKILL.md's front matter has no end: end it with a "
                                          "line '---'");
        size_t nl = text.find('\n', at);
        std::string_view line = text.substr(at, nl == std::string_view::npos ? nl : nl - at);
        at = nl == std::string_view::npos ? text.size() : nl + 1;
        if (trim_space(line) == "---" && (line.front() == '-')) {
            s.front = std::string(text.substr(0, at));
            s.instructions = std::string(text.substr(at));
            break;
        }
        if (trim_space(line).empty() || trim_space(line).front() == '#')
            continue;
        bool indented = line.front() == ' ' || line.front() == '\t';
        if (indented && block != nullptr) {
            *block += (block->empty() ? "" : " ") + std::string(trim_space(line));
            continue;
        }
        block = nullptr;
        size_t colon = line.find(':');
        if (colon == std::string_view::npos)
            return make_error(Exit::data,
                              "SKILL.md's front matter has a line that is not 'key: "
                              "value': %s",
                              one_line(line.substr(0, 80)).c_str());
        std::string_view key = trim_space(line.substr(0, colon));
        std::string_view value = trim_space(line.substr(colon + 1));
        if (!indented)
            in_metadata = key == "metadata" && value.empty();
        if (!indented && key == "name") {
            s.name = scalar(value);
        } else if (!indented && key == "description") {
            s.description = value == ">" || value == "|" || value == ">-" || value == "|-"
                                ? std::string()
                                : scalar(value);
            if (s.description.empty())
                block = &s.description;
        } else if (indented && in_metadata && key == "sion-network") {
            s.hosts = words(value);
        } else if (indented && in_metadata && key == "sion-secrets") {
            s.secrets = words(value);
        }
    }
    if (s.name.empty())
        return make_error(Exit::data, "SKILL.md's front matter has no name");
    if (!skill_name_ok(s.name))
        return make_error(Exit::data, "SKILL.md's name '%s' is not 1 to 64 of a-z, 0-9 and '-'",
                          one_line(s.name).c_str());
    if (s.description.empty())
        return make_error(Exit::data, "SKILL.md's front matter has no description");
    if (s.description.size() > k_max_description)
        return make_error(Exit::data, "SKILL.md's description is longer than 1024 characters");
    for (const std::string& secret : s.secrets)
        if (!variable_name_ok(secret))
            return make_error(Exit::data,
                              "SKILL.md names the secret '%s', which is not a variable's name",
                              one_line(secret).c_str());
    for (const std::string& host : s.hosts)
        if (host.find_first_of("/@ ") != std::string::npos)
            return make_error(Exit::data,
                              "SKILL.md names the host '%s', which is not a host's "
                              "name",
                              one_line(host).c_str());
    return s;
}

Result<std::vector<Skill>> list_skills(Db& db, std::string_view profile) {
    SION_TRY(Stmt q, db.prepare("SELECT name, description, dir, origin, files, source, created "
                                "FROM skills WHERE profile = ?1 ORDER BY name"));
    SION_CHECK(q.bind(1, profile));
    std::vector<Skill> out;
    while (true) {
        SION_TRY(bool row, q.step());
        if (!row)
            return out;
        SION_TRY(Skill s, read_row(q, profile));
        out.push_back(std::move(s));
    }
}

Result<Skill> find_skill(Db& db, std::string_view profile, std::string_view name) {
    SION_TRY(Stmt q, db.prepare("SELECT name, description, dir, origin, files, source, created "
                                "FROM skills WHERE profile = ?1 AND name = ?2"));
    SION_CHECK(q.bind(1, profile));
    SION_CHECK(q.bind(2, name));
    SION_TRY(bool row, q.step());
    if (!row)
        return make_error(Exit::no_input,
                          "profile %.*s has no skill '%s' (sion agent skills list "
                          "%.*s)",
                          static_cast<int>(profile.size()), profile.data(), one_line(name).c_str(),
                          static_cast<int>(profile.size()), profile.data());
    return read_row(q, profile);
}

Result<std::vector<std::string>> skill_files(const std::string& dir) {
    SION_TRY(Confined folder, Confined::open(dir, dir));
    std::vector<std::string> files;
    SION_CHECK(folder.walk(
        ".",
        [&](const Confined::Entry& e) -> Confined::Visit {
            if (e.is_file)
                files.push_back(e.rel);
            return Confined::Visit::go_on;
        },
        k_max_entries));
    return files;
}

Result<Skill> install_bundle(Db& db, const std::string& home, std::string_view profile,
                             const std::string& bundle) {
    auto refuse = [&](const Error& e) { return e.context("cannot install " + bundle); };
    SION_CHECK(profile_exists(db, profile));

    struct stat st {};

    if (::stat(bundle.c_str(), &st) != 0)
        return sys_error(Exit::no_input, errno, "cannot install %s", bundle.c_str());
    if (!S_ISREG(st.st_mode))
        return make_error(Exit::data, "cannot install %s: it is not a file", bundle.c_str());
    auto unpacked = unpack(bundle);
    if (!unpacked)
        return refuse(unpacked.error());
    if (auto sums = check_sums(*unpacked); !sums)
        return refuse(sums.error());
    auto md = unpacked->files.find("SKILL.md");
    if (md == unpacked->files.end())
        return refuse(make_error(Exit::data, "it has no SKILL.md"));
    auto text = parse_skill_md(md->second);
    if (!text)
        return refuse(text.error());
    if (auto free = name_free(db, profile, text->name); !free)
        return refuse(free.error());
    SION_TRY(std::string parent, profile_dir(home, profile));
    std::string temp = parent + "/.install-XXXXXX";
    if (::mkdtemp(temp.data()) == nullptr)
        return sys_error(Exit::io, errno, "cannot make a directory in '%s'", parent.c_str());
    Skill skill;
    skill.profile = std::string(profile);
    skill.name = text->name;
    skill.description = text->description;
    skill.dir = parent + "/" + text->name;
    skill.origin = Origin::installed;
    skill.source = resolve_path(bundle).value_or(bundle);
    skill.created = now_ms();
    Status written = [&]() -> Status {
        if (::chmod(temp.c_str(), 0755) != 0)
            return sys_error(Exit::io, errno, "cannot change the mode of '%s'", temp.c_str());
        for (const auto& [path, bytes] : unpacked->files) {
            for (size_t slash = path.find('/'); slash != std::string::npos;
                 slash = path.find('/', slash + 1)) {
                std::string d = temp + "/" + path.substr(0, slash);
                if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
                    return sys_error(Exit::io, errno, "cannot make directory '%s'", d.c_str());
            }
            SION_CHECK(
                write_new(temp + "/" + path, bytes, unpacked->executable[path] ? 0755 : 0644));
            skill.files[path] = sha256_hex(bytes);
        }
        if (::rename(temp.c_str(), skill.dir.c_str()) != 0)
            return sys_error(Exit::io, errno, "cannot put the skill in '%s'", skill.dir.c_str());
        temp.clear();
        auto recorded = record(db, skill);
        if (!recorded)
            remove_dir(skill.dir);
        return recorded;
    }();
    if (!temp.empty())
        remove_dir(temp);
    if (!written)
        return refuse(written.error());
    return skill;
}

Result<Skill> add_folder(Db& db, std::string_view profile, const std::string& dir) {
    SION_CHECK(profile_exists(db, profile));
    SION_TRY(std::string resolved, resolve_path(dir));
    SION_TRY(Confined folder, Confined::open(resolved, resolved));
    auto md = folder.read("SKILL.md", k_max_skill_md);
    if (!md)
        return md.error().context("cannot add " + dir);
    auto text = parse_skill_md(*md);
    if (!text)
        return text.error().context("cannot add " + dir);
    SION_CHECK(name_free(db, profile, text->name));
    Skill skill;
    skill.profile = std::string(profile);
    skill.name = text->name;
    skill.description = text->description;
    skill.dir = resolved;
    skill.origin = Origin::added;
    skill.created = now_ms();
    SION_CHECK(record(db, skill));
    return skill;
}

Result<Skill> write_instructions(Db& db, const std::string& home, std::string_view profile,
                                 std::string_view name, std::string_view description,
                                 std::string_view instructions) {
    if (!skill_name_ok(name))
        return make_error(Exit::data, "a skill's name is 1 to 64 of a-z, 0-9 and '-', not '%s'",
                          one_line(name).c_str());
    if (instructions.size() > k_max_skill_md)
        return make_error(Exit::data, "the instructions are larger than 256 KiB");
    if (description.size() > k_max_description || description.find('\n') != std::string::npos)
        return make_error(Exit::data, "a skill's description is one line of at most 1024 "
                                      "characters");
    std::string body(instructions);
    if (!body.empty() && body.back() != '\n')
        body += '\n';
    auto existing = find_skill(db, profile, name);
    Skill skill;
    std::string front;
    if (existing) {
        skill = std::move(*existing);
        SION_TRY(Confined folder, Confined::open(skill.dir, skill.dir));
        SION_TRY(std::string old, folder.read("SKILL.md", k_max_skill_md));
        SION_TRY(SkillText text, parse_skill_md(old));
        front = text.front;
        if (!description.empty()) {
            // The description's line replaced; the rest of the front matter kept as written.
            std::string kept;
            std::string_view f = front;
            bool in_description = false;
            while (!f.empty()) {
                size_t nl = f.find('\n');
                std::string_view line = f.substr(0, nl == std::string_view::npos ? nl : nl + 1);
                f.remove_prefix(line.size());
                bool indented = !line.empty() && (line.front() == ' ' || line.front() == '\t');
                if (in_description && indented)
                    continue;
                in_description = line.substr(0, 12) == "description:";
                kept += in_description
                            ? "description: " + Json::string(description).view().dump() + "\n"
                            : std::string(line);
            }
            front = kept;
        }
        skill.description = description.empty() ? skill.description : std::string(description);
    } else {
        if (existing.error().exit() != Exit::no_input)
            return existing.error();
        if (description.empty())
            return make_error(Exit::data, "a new skill needs a description: what it is for, and "
                                          "when to use it");
        SION_CHECK(profile_exists(db, profile));
        SION_TRY(std::string parent, profile_dir(home, profile));
        skill.profile = std::string(profile);
        skill.name = std::string(name);
        skill.description = std::string(description);
        skill.dir = parent + "/" + std::string(name);
        skill.origin = Origin::written;
        skill.created = now_ms();
        if (::mkdir(skill.dir.c_str(), 0755) != 0 && errno != EEXIST)
            return sys_error(Exit::io, errno, "cannot make directory '%s'", skill.dir.c_str());
        front = "---\nname: " + skill.name
                + "\ndescription: " + Json::string(description).view().dump() + "\n---\n";
    }
    std::string whole = front + body;
    SION_TRY(SkillText check, parse_skill_md(whole)); // what the next reader will make of it
    (void)check;
    SION_TRY(Confined folder, Confined::open(skill.dir, skill.dir));
    SION_CHECK(folder.write("SKILL.md", whole));
    if (skill.origin == Origin::installed)
        skill.files["SKILL.md"] = sha256_hex(whole);
    SION_CHECK(record(db, skill));
    return skill;
}

Result<bool> remove_skill(Db& db, std::string_view profile, std::string_view name) {
    auto found = find_skill(db, profile, name);
    if (!found)
        return found.error().exit() == Exit::no_input ? Result<bool>(false) : found.error();
    SION_TRY(Stmt q, db.prepare("DELETE FROM skills WHERE profile = ?1 AND name = ?2"));
    SION_CHECK(q.bind(1, profile));
    SION_CHECK(q.bind(2, name));
    SION_TRY(bool row, q.step());
    (void)row;
    if (found->origin != Origin::added)
        remove_dir(found->dir);
    return true;
}

Result<Script> check_script(const Skill& skill, std::string_view script) {
    SION_TRY(Confined folder, Confined::open(skill.dir, "/skill"));
    auto rel = folder.relative(script);
    if (!rel)
        return make_error(Exit::no_perm, "'%s' is outside the skill %s", one_line(script).c_str(),
                          skill.name.c_str());
    Script out;
    out.path = *rel;
    if (out.path == "." || out.path == "SKILL.md")
        return make_error(Exit::data, "'%s' is not a script of %s", out.path.c_str(),
                          skill.name.c_str());
    SION_TRY(Fd fd, [&]() -> Result<Fd> {
        auto opened = folder.open_at(out.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        if (!opened && opened.error().exit() == Exit::no_input)
            return make_error(Exit::no_input, "%s has no script '%s'", skill.name.c_str(),
                              out.path.c_str());
        return opened;
    }());

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return make_error(Exit::data, "'%s' of %s is not a file", out.path.c_str(),
                          skill.name.c_str());
    SION_TRY(std::string bytes, read_all(fd.get(), k_max_file));
    if (skill.origin == Origin::installed) {
        auto kept = skill.files.find(out.path);
        if (kept == skill.files.end())
            return make_error(Exit::no_perm,
                              "the script %s of %s did not come with it: only a script of its "
                              "release runs (sion agent skills install)",
                              out.path.c_str(), skill.name.c_str());
        if (sha256_hex(bytes) != kept->second)
            return make_error(Exit::no_perm,
                              "the script %s of %s changed since it was installed: reinstall the "
                              "skill (sion agent skills install)",
                              out.path.c_str(), skill.name.c_str());
    }
    if (bytes.substr(0, 2) == "#!") {
        std::string line = bytes.substr(2, bytes.find('\n') - 2);
        std::string_view l = trim_space(line);
        size_t space = l.find_first_of(" \t");
        out.interpreter.emplace_back(l.substr(0, space));
        if (space != std::string_view::npos && !trim_space(l.substr(space)).empty())
            out.interpreter.emplace_back(trim_space(l.substr(space)));
        if (out.interpreter.front().empty())
            out.interpreter.clear();
    }
    if (out.interpreter.empty()) {
        size_t dot = out.path.rfind('.');
        std::string ext = dot == std::string::npos ? "" : out.path.substr(dot);
        const char* by = ext == ".py"   ? "python3"
                         : ext == ".sh" ? "sh"
                         : ext == ".js" ? "node"
                         : ext == ".rb" ? "ruby"
                         : ext == ".pl" ? "perl"
                                        : nullptr;
        if (by == nullptr)
            return make_error(Exit::data,
                              "'%s' of %s has no '#!' line, and its name does not say how to run "
                              "it (.py, .sh, .js, .rb, .pl)",
                              out.path.c_str(), skill.name.c_str());
        out.interpreter.emplace_back(by);
    }
    return out;
}

Json skill_json(const Skill& skill, const SkillText* text) {
    Json j = Json::object();
    j.set("profile", std::string_view(skill.profile));
    j.set("name", std::string_view(skill.name));
    j.set("description", std::string_view(skill.description));
    j.set("origin", origin_name(skill.origin));
    j.set("dir", std::string_view(skill.dir));
    if (!skill.source.empty())
        j.set("source", std::string_view(skill.source));
    if (text != nullptr) {
        j.set("hosts", Json::strings(text->hosts));
        j.set("secrets", Json::strings(text->secrets));
    }
    return j;
}

} // namespace sion::skills
