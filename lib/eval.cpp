// SPDX-License-Identifier: MIT
// An evaluation's set, tallies, first place and report.
#include "lib/eval.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <set>

namespace sion::eval {

namespace {

constexpr size_t k_max_name = 64;
constexpr size_t k_max_path = 4096;
constexpr int64_t k_max_timeout = 3600;
// Bars: the rate's on [0, 1], the difference's on [-1, 1].
constexpr size_t k_bar_width = 41;

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

Status check_name(std::string_view name) {
    bool ok = !name.empty() && name.size() <= k_max_name && name[0] != '.' && name[0] != '-';
    for (char c : name)
        ok = ok && name_char(c);
    if (!ok)
        return make_error(Exit::data,
                          "member 'name' is '%.*s': use 1 to 64 lowercase letters, digits, '-', "
                          "'_' and '.', not starting with '.' or '-'",
                          static_cast<int>(name.size()), name.data());
    return {};
}

// A path the case's workspace holds: relative, no "." or ".." part, no empty part.
Status check_path(std::string_view path) {
    bool ok = !path.empty() && path.size() <= k_max_path && path.front() != '/'
              && path.find('\0') == std::string_view::npos;
    for (size_t at = 0; ok && at <= path.size();) {
        size_t slash = path.find('/', at);
        std::string_view part =
            path.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
        ok = !part.empty() && part != "." && part != "..";
        at = slash == std::string_view::npos ? path.size() + 1 : slash + 1;
    }
    if (!ok)
        return make_error(Exit::data, "file '%.*s' is not a path within the workspace",
                          static_cast<int>(path.size()), path.data());
    return {};
}

Result<Case> read_case(JsonView v) {
    if (!v.is_object())
        return make_error(Exit::data, "%s, not an object", v.type_name());
    Case c;
    SION_TRY(std::string_view name, v.string("name"));
    SION_CHECK(check_name(name));
    c.name = std::string(name);
    auto in_case = [&](const Error& e) { return e.context("case '" + c.name + "'"); };
    auto task = v.string("task");
    if (!task)
        return in_case(task.error());
    if (task->empty())
        return in_case(Error(Exit::data, "member 'task' is empty"));
    c.task = std::string(*task);
    auto check = v.string("check");
    if (!check)
        return in_case(check.error());
    if (check->find_first_not_of(" \t\n") == std::string_view::npos)
        return in_case(Error(Exit::data, "member 'check' is empty"));
    c.check = std::string(*check);
    auto timeout = v.integer_or("timeout", k_check_timeout);
    if (!timeout)
        return in_case(timeout.error());
    if (*timeout < 1 || *timeout > k_max_timeout)
        return in_case(make_error(Exit::data, "member 'timeout' is %lld, not 1 to %lld seconds",
                                  static_cast<long long>(*timeout),
                                  static_cast<long long>(k_max_timeout)));
    c.timeout = *timeout;
    JsonView files = v.get("files");
    if (files.exists() && !files.is_object())
        return in_case(
            make_error(Exit::data, "member 'files' is %s, not an object", files.type_name()));
    for (JsonView f : files) {
        if (Status ok = check_path(f.key()); !ok)
            return in_case(ok.error());
        auto text = f.as_string();
        if (!text)
            return in_case(make_error(Exit::data, "file '%.*s' is %s, not a string",
                                      static_cast<int>(f.key().size()), f.key().data(),
                                      f.type_name()));
        c.files.emplace(std::string(f.key()), std::string(*text));
    }
    // A file that is another's directory ("a" and "a/b") cannot be made.
    for (const auto& [path, text] : c.files) {
        auto next = c.files.upper_bound(path);
        if (next != c.files.end() && next->first.starts_with(path + "/"))
            return in_case(make_error(Exit::data, "file '%s' is also a directory of '%s'",
                                      path.c_str(), next->first.c_str()));
    }
    return c;
}

std::string padded(const std::string& text, size_t width) {
    size_t chars = 0;
    for (char ch : text)
        chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80 ? 1 : 0;
    return text + std::string(width > chars ? width - chars : 0, ' ');
}

std::string xml_escaped(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace

Result<std::vector<Case>> parse_set(std::string_view text, std::string_view where) {
    std::string at = "set '" + std::string(where) + "'";
    auto doc = Json::parse(text);
    if (!doc)
        return doc.error().context(at);
    if (!doc->view().is_object())
        return make_error(Exit::data, "%s: the document is %s, not an object", at.c_str(),
                          doc->view().type_name());
    auto cases = doc->view().array("cases");
    if (!cases)
        return cases.error().context(at);
    std::vector<Case> out;
    std::set<std::string> names;
    size_t n = 0;
    for (JsonView v : *cases) {
        ++n;
        auto c = read_case(v);
        if (!c)
            return c.error().context(at + ": case " + std::to_string(n));
        if (!names.insert(c->name).second)
            return make_error(Exit::data, "%s: two cases are named '%s'", at.c_str(),
                              c->name.c_str());
        out.push_back(std::move(*c));
    }
    if (out.empty())
        return make_error(Exit::data, "%s has no cases", at.c_str());
    return out;
}

Result<std::vector<Case>> read_set(const std::string& path) {
    SION_TRY(std::string text, read_set_text(path));
    return parse_set(text, path);
}

Result<std::string> read_set_text(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return sys_error(errno == ENOENT ? Exit::no_input : Exit::io, errno, "cannot read set '%s'",
                         path.c_str());
    auto text = read_all(fd.get(), k_set_max);
    if (!text)
        return text.error().exit() == Exit::data
                   ? make_error(Exit::data, "set '%s' is larger than %zu bytes", path.c_str(),
                                k_set_max)
                   : text.error().context("cannot read set '" + path + "'");
    return text;
}

std::string_view outcome_name(Outcome outcome) {
    switch (outcome) {
    case Outcome::pass:
        return "pass";
    case Outcome::fail:
        return "fail";
    case Outcome::not_made:
        break;
    }
    return "not made";
}

Json run_json(const RunRecord& run, const std::vector<std::string>& models) {
    Json out = Json::object();
    out.set("model", run.model < models.size() ? std::string_view(models[run.model]) : "");
    out.set("case", std::string_view(run.case_name));
    out.set("run", run.number);
    out.set("outcome", outcome_name(run.outcome));
    if (!run.why.empty())
        out.set("why", std::string_view(run.why));
    if (!run.session.empty())
        out.set("session", std::string_view(run.session));
    out.set("input_tokens", run.input_tokens);
    out.set("output_tokens", run.output_tokens);
    out.set("wall_ms", run.wall_ms);
    return out;
}

Result<RunRecord> run_from_json(JsonView v, const std::vector<std::string>& models) {
    if (!v.is_object())
        return make_error(Exit::data, "%s, not an object", v.type_name());
    RunRecord run;
    SION_TRY(std::string_view model, v.string("model"));
    auto found = std::find(models.begin(), models.end(), model);
    if (found == models.end())
        return make_error(Exit::data, "model '%.*s' is not one of the route's",
                          static_cast<int>(model.size()), model.data());
    run.model = static_cast<size_t>(found - models.begin());
    SION_TRY(std::string_view name, v.string("case"));
    run.case_name = std::string(name);
    SION_TRY(run.number, v.integer("run"));
    SION_TRY(std::string_view outcome, v.string("outcome"));
    if (outcome == "pass")
        run.outcome = Outcome::pass;
    else if (outcome == "fail")
        run.outcome = Outcome::fail;
    else if (outcome == "not made")
        run.outcome = Outcome::not_made;
    else
        return make_error(Exit::data, "member 'outcome' is '%.*s', not pass, fail or not made",
                          static_cast<int>(outcome.size()), outcome.data());
    SION_TRY(std::string_view why, v.string_or("why", ""));
    run.why = std::string(why);
    SION_TRY(std::string_view session, v.string_or("session", ""));
    run.session = std::string(session);
    SION_TRY(run.input_tokens, v.integer_or("input_tokens", 0));
    SION_TRY(run.output_tokens, v.integer_or("output_tokens", 0));
    SION_TRY(run.wall_ms, v.integer_or("wall_ms", 0));
    return run;
}

std::vector<Tally> tally(const std::vector<std::string>& models,
                         const std::vector<RunRecord>& runs) {
    std::vector<Tally> out(models.size());
    for (size_t i = 0; i < models.size(); ++i)
        out[i].model = models[i];
    for (const RunRecord& r : runs) {
        if (r.model >= out.size())
            continue;
        Tally& t = out[r.model];
        if (r.outcome == Outcome::not_made) {
            ++t.not_made;
            continue;
        }
        ++t.runs;
        t.passes += r.outcome == Outcome::pass ? 1 : 0;
    }
    for (size_t i = 0; i < out.size(); ++i) {
        out[i].rate = wilson(out[i].passes, out[i].runs);
        if (i > 0)
            out[i].difference = newcombe(out[i].passes, out[i].runs, out[0].passes, out[0].runs);
    }
    return out;
}

std::optional<size_t> earns_first_place(const std::vector<Tally>& tallies) {
    std::optional<size_t> best;
    for (size_t i = 1; i < tallies.size(); ++i) {
        const auto& d = tallies[i].difference;
        if (!d || !(d->interval.low > 0))
            continue;
        if (!best || d->interval.low > tallies[*best].difference->interval.low)
            best = i;
    }
    return best;
}

std::vector<std::string> moved_first(const std::vector<std::string>& models, size_t index) {
    std::vector<std::string> out;
    if (index < models.size())
        out.push_back(models[index]);
    for (size_t i = 0; i < models.size(); ++i)
        if (i != index)
            out.push_back(models[i]);
    return out;
}

std::string bar(double value, Interval interval, double low, double high, size_t width) {
    std::string line(width, ' ');
    if (width < 2 || !(high > low))
        return line;
    auto column = [&](double x) {
        double at = std::round((std::clamp(x, low, high) - low) / (high - low)
                               * static_cast<double>(width - 1));
        return static_cast<size_t>(at);
    };
    size_t from = column(interval.low);
    size_t to = column(interval.high);
    for (size_t i = from; i <= to; ++i)
        line[i] = '-';
    if (low < 0 && high > 0)
        line[column(0)] = '|';
    line[from] = '[';
    line[to] = ']';
    line[column(value)] = '*';
    return line;
}

std::string percent(double value, bool sign) {
    double shown = std::round(value * 1000) / 10;
    if (shown == 0)
        shown = 0; // not "-0.0%"
    return format(sign && shown > 0 ? "+%.1f%%" : "%.1f%%", shown);
}

std::string report_text(const std::vector<Tally>& tallies) {
    size_t width = 5; // "model"
    for (const Tally& t : tallies)
        width = std::max(width, t.model.size());
    std::string out = padded("model", width) + "  passes    rate  95% interval      "
                      + padded("0%", k_bar_width / 2) + padded("50%", k_bar_width / 2 - 3)
                      + "100%\n";
    for (const Tally& t : tallies) {
        std::string passes =
            format("%lld/%lld", static_cast<long long>(t.passes), static_cast<long long>(t.runs));
        if (!t.rate) {
            out += padded(t.model, width) + format("  %6s  no run made", passes.c_str()) + "\n";
            continue;
        }
        out +=
            padded(t.model, width)
            + format("  %6s  %6s  (%s, %s)", passes.c_str(), percent(t.rate->rate).c_str(),
                     percent(t.rate->interval.low).c_str(), percent(t.rate->interval.high).c_str());
        std::string interval = format("(%s, %s)", percent(t.rate->interval.low).c_str(),
                                      percent(t.rate->interval.high).c_str());
        out += std::string(16 > interval.size() ? 16 - interval.size() : 0, ' ') + "  "
               + bar(t.rate->rate, t.rate->interval, 0, 1, k_bar_width) + "\n";
    }
    if (tallies.size() > 1) {
        out += "\ndifference from " + tallies[0].model + ", with Newcombe's 95% interval:\n";
        out += padded("model", width) + "  difference  95% interval      "
               + padded("-100%", k_bar_width / 2) + padded("0", k_bar_width / 2 - 4) + "+100%\n";
        for (size_t i = 1; i < tallies.size(); ++i) {
            const Tally& t = tallies[i];
            if (!t.difference) {
                out += padded(t.model, width) + "  none: a rate is missing\n";
                continue;
            }
            std::string interval =
                format("(%s, %s)", percent(t.difference->interval.low, true).c_str(),
                       percent(t.difference->interval.high, true).c_str());
            out += padded(t.model, width)
                   + format("  %10s  %-16s  ", percent(t.difference->difference, true).c_str(),
                            interval.c_str())
                   + bar(t.difference->difference, t.difference->interval, -1, 1, k_bar_width)
                   + "\n";
        }
    }
    int64_t not_made = 0;
    std::string which;
    for (const Tally& t : tallies) {
        not_made += t.not_made;
        if (t.not_made > 0)
            which += (which.empty() ? "" : ", ") + t.model + " " + std::to_string(t.not_made);
    }
    if (not_made > 0)
        out += format("\nnot made, and counted in no rate: %lld run%s (%s)\n",
                      static_cast<long long>(not_made), not_made == 1 ? "" : "s", which.c_str());
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    // Bars end in spaces where the scale is empty: a line ends at its last mark.
    std::string trimmed;
    for (size_t at = 0; at <= out.size();) {
        size_t nl = out.find('\n', at);
        std::string line = out.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        trimmed += line;
        if (nl == std::string::npos)
            break;
        trimmed += '\n';
        at = nl + 1;
    }
    return trimmed;
}

std::string report_svg(const std::vector<Tally>& tallies, std::string_view title) {
    constexpr int k_label = 260; // the models' names
    constexpr int k_panel = 300; // each axis's width
    constexpr int k_gap = 40;
    constexpr int k_row = 28;
    constexpr int k_top = 56;
    int rows = static_cast<int>(tallies.size());
    int width = k_label + 2 * k_panel + 3 * k_gap;
    int height = k_top + rows * k_row + 40;
    int rate_x = k_label + k_gap;
    int diff_x = rate_x + k_panel + k_gap;
    auto x_of = [](int left, double v, double low, double high) {
        return left + (std::clamp(v, low, high) - low) / (high - low) * k_panel;
    };
    std::string svg =
        format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">%s</text>\n"
               "<text x=\"%d\" y=\"40\">pass rate, 95%% Wilson interval</text>\n",
               width, height, width, height, xml_escaped(title).c_str(), rate_x);
    if (rows > 1)
        svg += format("<text x=\"%d\" y=\"40\">difference from the first, Newcombe's 95%% "
                      "interval</text>\n",
                      diff_x);
    int axis_y = k_top + rows * k_row;
    for (double v : {0.0, 0.5, 1.0}) {
        double x = x_of(rate_x, v, 0, 1);
        svg += format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n"
                      "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                      x, k_top - 8, x, axis_y, x, axis_y + 16, percent(v).c_str());
    }
    if (rows > 1)
        for (double v : {-1.0, 0.0, 1.0}) {
            double x = x_of(diff_x, v, -1, 1);
            svg += format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n"
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                          x, k_top - 8, x, axis_y, v == 0 ? "#888" : "#ddd", x, axis_y + 16,
                          percent(v, true).c_str());
        }
    for (int i = 0; i < rows; ++i) {
        const Tally& t = tallies[static_cast<size_t>(i)];
        int y = k_top + i * k_row + k_row / 2;
        svg += format("<text x=\"10\" y=\"%d\">%s (%lld/%lld)</text>\n", y + 4,
                      xml_escaped(t.model).c_str(), static_cast<long long>(t.passes),
                      static_cast<long long>(t.runs));
        if (t.rate)
            svg += format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#246\" "
                          "stroke-width=\"2\"/>\n<circle cx=\"%.1f\" cy=\"%d\" r=\"4\" "
                          "fill=\"#246\"><title>%s (%s, %s)</title></circle>\n",
                          x_of(rate_x, t.rate->interval.low, 0, 1), y,
                          x_of(rate_x, t.rate->interval.high, 0, 1), y,
                          x_of(rate_x, t.rate->rate, 0, 1), y, percent(t.rate->rate).c_str(),
                          percent(t.rate->interval.low).c_str(),
                          percent(t.rate->interval.high).c_str());
        if (t.difference) {
            const char* colour = t.difference->interval.low > 0 ? "#262" : "#642";
            svg += format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
                          "stroke-width=\"2\"/>\n<circle cx=\"%.1f\" cy=\"%d\" r=\"4\" "
                          "fill=\"%s\"><title>%s (%s, %s)</title></circle>\n",
                          x_of(diff_x, t.difference->interval.low, -1, 1), y,
                          x_of(diff_x, t.difference->interval.high, -1, 1), y, colour,
                          x_of(diff_x, t.difference->difference, -1, 1), y, colour,
                          percent(t.difference->difference, true).c_str(),
                          percent(t.difference->interval.low, true).c_str(),
                          percent(t.difference->interval.high, true).c_str());
        }
    }
    return svg + "</svg>\n";
}

} // namespace sion::eval
