// SPDX-License-Identifier: MIT
// fetch_url and web_search (seed 000, "Searching the web"; --web). fetch_url reads a public page:
// each address it goes to, redirects' too, resolved once, judged public (or allowed by name with
// --web-allow) and the connection pinned to it; HTML made text (lib/web.hpp), text and JSON as
// they are, PDF through pdftotext; long pages in parts. web_search asks the provider the operator
// set: Brave Search, Tavily or a SearXNG instance. What either returns is from outside.
#include "lib/address.hpp"
#include "lib/fd.hpp"
#include "lib/http.hpp"
#include "lib/redact.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"
#include "lib/version.hpp"
#include "lib/web.hpp"
#include "session/tools.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>

namespace sion::session {

namespace {

constexpr auto k_fetch_time = std::chrono::seconds(30);
constexpr size_t k_page_max = size_t{5} << 20;
constexpr size_t k_part = 16000; // bytes of text a part holds, at most
constexpr int k_redirects = 10;
constexpr size_t k_pages_kept = 8;

ToolResult answer_error(std::string text) {
    ToolResult r;
    r.text = std::move(text);
    r.is_error = true;
    r.taints = false;
    return r;
}

std::string where_kind(AddressKind kind) {
    switch (kind) {
    case AddressKind::loopback:
        return "this machine's";
    case AddressKind::private_network:
        return "a private network's";
    case AddressKind::unspecified:
        return "no server's";
    case AddressKind::public_network:
        break;
    }
    return "a public";
}

// A page's text, and where it ended up.
struct Page {
    std::string url; // as asked for
    std::string final_url;
    std::string title;
    std::string text;
    std::string note; // said before the text ("its charset 'x' is unknown: read as UTF-8")
};

class FetchUrl final : public Tool {
public:
    explicit FetchUrl(std::vector<std::string> allowed) : m_allowed(std::move(allowed)) {}

    [[nodiscard]] models::ToolSpec spec() const override { return tool_spec("fetch_url"); }

    // It sends a request where the model says: what it puts in the address leaves the machine.
    [[nodiscard]] Effect effect(JsonView) const override { return Effect::external; }

    [[nodiscard]] bool idempotent() const override { return true; }

    [[nodiscard]] Result<ToolResult> run(JsonView input, ToolContext&) override {
        auto url = input.string("url");
        if (!url)
            return answer_error("fetch_url needs 'url', an http or https address: "
                                + url.error().message());
        auto part = input.integer_or("part", 1);
        if (!part || *part < 1)
            return answer_error("fetch_url's 'part' is a whole number, 1 or more");
        std::optional<Page> page = kept(*url);
        if (!page || *part == 1) {
            auto fetched = fetch(std::string(*url));
            if (!fetched)
                return answer_error(fetched.error().message());
            page = std::move(*fetched);
            keep(*page);
        }
        return show(*page, static_cast<size_t>(*part));
    }

private:
    [[nodiscard]] bool allowed(const std::string& host) const {
        return std::any_of(m_allowed.begin(), m_allowed.end(),
                           [&](const std::string& a) { return ascii_iequals(a, host); });
    }

    [[nodiscard]] Result<Page> fetch(std::string url) const {
        SION_TRY(HttpClient client, HttpClient::make());
        Page page;
        page.url = url;
        for (int hop = 0; hop <= k_redirects; ++hop) {
            HttpRequest req;
            req.url = url;
            req.timeout = k_fetch_time;
            req.max_response_size = k_page_max;
            req.environment_proxy = true;
            req.headers.add("User-Agent", std::string("sion/") + version());
            req.headers.add("Accept", "text/html, application/xhtml+xml, text/plain, "
                                      "application/json, application/pdf;q=0.9, */*;q=0.1");
            req.reach = [this](const Destination& d) -> Status {
                if (allowed(d.host))
                    return {};
                for (const Address& a : d.addresses)
                    if (a.kind != AddressKind::public_network)
                        return make_error(Exit::no_perm,
                                          "fetch_url reads public pages only: '%s' is at %s, %s "
                                          "address (the operator may allow the host with "
                                          "--web-allow %s)",
                                          d.url.c_str(), a.text.c_str(), where_kind(a.kind).c_str(),
                                          d.host.c_str());
                return {};
            };
            auto got = client.send(req);
            if (!got) {
                if (got.error().message().find("larger than") != std::string::npos
                    || got.error().message().find("size limit") != std::string::npos)
                    return make_error(Exit::data, "the page at %s is larger than 5 MiB",
                                      url.c_str());
                return got.error();
            }
            HttpResponse& r = *got;
            if (r.status >= 300 && r.status < 400 && r.headers.has("Location")) {
                SION_TRY(url, web::resolve_location(url, *r.headers.get("Location")));
                continue;
            }
            if (r.status < 200 || r.status >= 300)
                return make_error(Exit::unavailable, "%s answered HTTP %d", url.c_str(), r.status);
            page.final_url = url;
            SION_CHECK(read_body(page, r));
            return page;
        }
        return make_error(Exit::data, "%s redirects more than %d times", page.url.c_str(),
                          k_redirects);
    }

    static Status read_body(Page& page, const HttpResponse& r) {
        web::MediaType media = web::parse_media_type(r.headers.get("Content-Type").value_or(""));
        const std::string& type = media.type;
        if (type == "text/html" || type == "application/xhtml+xml" || type.empty()) {
            SION_CHECK(web::html_ready());
            web::Html html = web::html_to_text(r.body, media.charset, page.final_url);
            page.title = html.title;
            page.text = html.text;
            return {};
        }
        bool textual = type.compare(0, 5, "text/") == 0 || type == "application/json"
                       || (type.size() > 5 && type.compare(type.size() - 5, 5, "+json") == 0)
                       || type == "application/xml" || type == "application/javascript";
        if (textual) {
            auto text = web::to_utf8(r.body, media.charset);
            if (!text) {
                page.note =
                    "its charset '" + one_line(media.charset) + "' is unknown: it is read as UTF-8";
                text = text_for_json(r.body);
            }
            page.text = std::move(*text);
            return {};
        }
        if (type == "application/pdf")
            return pdf_text(page, r.body);
        return make_error(Exit::data, "fetch_url reads HTML, text, JSON and PDF: %s is %s",
                          page.final_url.c_str(), one_line(type).c_str());
    }

    // pdftotext (poppler-utils) reads the PDF from a memory file, within the fetch's time.
    static Status pdf_text(Page& page, const std::string& bytes) {
        SION_TRY(Fd pdf, memory_file(bytes, "sion-fetch-pdf"));
        auto text = web::pdf_to_text(pdf.get(), k_fetch_time, k_page_max * 4);
        if (!text && text.error().exit() == Exit::unavailable)
            return make_error(Exit::unavailable,
                              "%s is a PDF, and reading one takes pdftotext (Debian package "
                              "poppler-utils), which is not installed",
                              page.final_url.c_str());
        if (!text)
            return make_error(Exit::data, "pdftotext cannot read the PDF at %s: %s",
                              page.final_url.c_str(), text.error().message().c_str());
        page.text = std::move(text->text);
        return {};
    }

    [[nodiscard]] std::optional<Page> kept(std::string_view url) const {
        std::lock_guard lock(m_mutex);
        for (const Page& p : m_pages)
            if (p.url == url)
                return p;
        return std::nullopt;
    }

    void keep(const Page& page) {
        std::lock_guard lock(m_mutex);
        std::erase_if(m_pages, [&](const Page& p) { return p.url == page.url; });
        m_pages.push_back(page);
        while (m_pages.size() > k_pages_kept)
            m_pages.pop_front();
    }

    // The part asked for: "<title>\n<address>\n\n<text>", and where the next one is.
    static ToolResult show(const Page& page, size_t part) {
        std::vector<std::pair<size_t, size_t>> parts; // offset, length
        std::string_view text = page.text;
        for (size_t at = 0; at < text.size();) {
            size_t len = std::min(k_part, text.size() - at);
            if (at + len < text.size()) {
                size_t nl = text.rfind('\n', at + len);
                len = nl != std::string_view::npos && nl > at + k_part / 2
                          ? nl + 1 - at
                          : utf8_boundary(text.substr(at), len);
            }
            parts.emplace_back(at, len);
            at += len;
        }
        if (parts.empty())
            parts.emplace_back(0, 0);
        ToolResult r;
        r.taints = true;
        if (part > parts.size()) {
            r.text = format("%s has %zu part%s, not %zu", page.final_url.c_str(), parts.size(),
                            parts.size() == 1 ? "" : "s", part);
            r.is_error = true;
            return r;
        }
        if (!page.title.empty())
            r.text = page.title + "\n";
        r.text += page.final_url + "\n";
        if (!page.note.empty())
            r.text += "(" + page.note + ")\n";
        if (parts.size() > 1)
            r.text += format("(part %zu of %zu)\n", part, parts.size());
        r.text += "\n";
        auto [at, len] = parts[part - 1];
        r.text += std::string(text.substr(at, len));
        while (!r.text.empty() && r.text.back() == '\n')
            r.text.pop_back();
        if (part < parts.size())
            r.text += format("\n\n(the page goes on: fetch_url with \"part\": %zu gives the next "
                             "part)",
                             part + 1);
        if (page.text.empty())
            r.text += "(the page has no text)";
        return r;
    }

    std::vector<std::string> m_allowed;
    mutable std::mutex m_mutex;
    std::deque<Page> m_pages; // the latest fetched, whose parts are asked for
};

// --- web_search ----------------------------------------------------------------------------------

struct Hit {
    std::string title;
    std::string url;
    std::string snippet;
};

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name); // NOLINT(concurrency-mt-unsafe): nothing sets it meanwhile
    return v != nullptr && *v != '\0' ? v : fallback;
}

// An HTTP answer that is not 2xx, as one line: the status and what the provider said.
Error provider_error(const char* provider, const HttpResponse& r) {
    std::string said;
    if (auto body = Json::parse(r.body)) {
        JsonView v = body->view();
        for (JsonView m :
             {v.get("error").get("detail"), v.get("detail").get("error"), v.get("detail"),
              v.get("error").get("message"), v.get("error"), v.get("message")})
            if (m.is_string()) {
                said = std::string(m.as_string().value_or(""));
                break;
            }
    }
    if (said.empty())
        said = r.body.substr(0, 200);
    const char* what = r.status == 401 || r.status == 403 ? ": check its key"
                       : r.status == 429                  ? ": too many searches for now"
                                                          : "";
    return make_error(Exit::unavailable, "%s answered HTTP %d%s%s%s", provider, r.status, what,
                      said.empty() ? "" : ": ", one_line(said).c_str());
}

class WebSearch final : public Tool {
public:
    WebSearch(std::string provider, std::string base, std::string key)
        : m_provider(std::move(provider)), m_base(std::move(base)), m_key(std::move(key)) {}

    [[nodiscard]] models::ToolSpec spec() const override { return tool_spec("web_search"); }

    // Its query leaves the machine for the provider.
    [[nodiscard]] Effect effect(JsonView) const override { return Effect::external; }

    [[nodiscard]] bool idempotent() const override { return true; }

    [[nodiscard]] Result<ToolResult> run(JsonView input, ToolContext&) override {
        auto query = input.string("query");
        if (!query || query->find_first_not_of(" \t\n") == std::string_view::npos)
            return answer_error("web_search needs 'query', the words to search for");
        auto count = input.integer_or("count", 5);
        if (!count || *count < 1 || *count > 10)
            return answer_error("web_search's 'count' is 1 to 10 (5 unless given)");
        auto freshness = input.string_or("freshness", "");
        if (!freshness
            || (!freshness->empty() && *freshness != "day" && *freshness != "week"
                && *freshness != "month" && *freshness != "year"))
            return answer_error("web_search's 'freshness' is day, week, month or year");
        auto hits = search(std::string(*query), static_cast<int>(*count), std::string(*freshness));
        if (!hits) // what a provider says of a key it refused may hold the key
            return answer_error(Redactor({m_key}).redact(hits.error().message()));
        ToolResult r;
        r.taints = true;
        if (hits->empty())
            r.text = "no results";
        for (size_t i = 0; i < hits->size() && i < static_cast<size_t>(*count); ++i) {
            const Hit& h = (*hits)[i];
            r.text += format("%s%zu. %s\n   %s", i == 0 ? "" : "\n", i + 1,
                             one_line(h.title).c_str(), one_line(h.url).c_str());
            if (!h.snippet.empty())
                r.text += "\n   " + one_line(h.snippet);
        }
        return r;
    }

private:
    [[nodiscard]] Result<std::vector<Hit>> search(const std::string& query, int count,
                                                  const std::string& freshness) const {
        SION_TRY(HttpClient client, HttpClient::make());
        HttpRequest req;
        req.timeout = k_fetch_time;
        req.environment_proxy = true;
        req.max_response_size = k_page_max;
        req.headers.add("User-Agent", std::string("sion/") + version());
        req.headers.add("Accept", "application/json");
        std::vector<Hit> hits;
        const char* results = "results";
        const char* snippet = "content";
        if (m_provider == "brave") {
            static const std::map<std::string, std::string> k_fresh = {
                {"day", "pd"}, {"week", "pw"}, {"month", "pm"}, {"year", "py"}};
            req.url = m_base + "/res/v1/web/search?q=" + percent_encode(query)
                      + "&count=" + std::to_string(count);
            if (!freshness.empty())
                req.url += "&freshness=" + k_fresh.at(freshness);
            req.headers.add("X-Subscription-Token", m_key);
            snippet = "description";
        } else if (m_provider == "tavily") {
            req.method = "POST";
            req.url = m_base + "/search";
            req.headers.add("Authorization", "Bearer " + m_key);
            req.headers.add("Content-Type", "application/json");
            Json body = Json::object();
            body.set("query", std::string_view(query));
            body.set("max_results", count);
            if (!freshness.empty())
                body.set("time_range", std::string_view(freshness));
            req.body = body.view().dump();
        } else {
            req.url = m_base + "/search?q=" + percent_encode(query) + "&format=json";
            if (!freshness.empty())
                req.url += "&time_range=" + freshness;
        }
        const char* name = m_provider == "brave"    ? "Brave Search"
                           : m_provider == "tavily" ? "Tavily"
                                                    : "SearXNG";
        auto got = client.send(req);
        if (!got)
            return got.error().context(std::string(name));
        if (got->status < 200 || got->status >= 300)
            return provider_error(name, *got);
        auto body = Json::parse(got->body);
        if (!body)
            return make_error(Exit::data, "%s answered what is not JSON", name);
        JsonView list = m_provider == "brave" ? body->view().get("web").get(results)
                                              : body->view().get(results);
        for (JsonView h : list) {
            Hit hit;
            hit.title = std::string(h.string_or("title", "").value_or(""));
            hit.url = std::string(h.string_or("url", "").value_or(""));
            hit.snippet = web::html_to_text(h.string_or(snippet, "").value_or(""), "utf-8", "")
                              .text; // Brave marks words with <strong>
            if (!hit.url.empty())
                hits.push_back(std::move(hit));
        }
        return hits;
    }

    std::string m_provider; // "brave", "tavily" or "searxng"
    std::string m_base;
    std::string m_key;
};

} // namespace

Result<std::optional<WebSearchProvider>> web_search_provider() {
    std::string chosen = env_or("SION_SEARCH", "");
    auto key_of = [](const char* name) -> Result<std::string> {
        SION_TRY(auto value, secrets::lookup(name));
        return value.value_or("");
    };
    WebSearchProvider p;
    if (chosen.compare(0, 8, "searxng:") == 0) {
        p.name = "searxng";
        p.base = chosen.substr(8);
        SION_TRY(Destination d, split_url(p.base));
        (void)d;
        while (!p.base.empty() && p.base.back() == '/')
            p.base.pop_back();
        return std::optional<WebSearchProvider>(std::move(p));
    }
    if (!chosen.empty() && chosen != "brave" && chosen != "tavily")
        return make_error(Exit::config,
                          "SION_SEARCH is '%s': give brave, tavily or "
                          "searxng:https://…",
                          one_line(chosen).c_str());
    SION_TRY(std::string brave, key_of("BRAVE_SEARCH_API_KEY"));
    SION_TRY(std::string tavily, key_of("TAVILY_API_KEY"));
    if (chosen == "brave" || (chosen.empty() && !brave.empty())) {
        if (brave.empty())
            return make_error(Exit::config, "SION_SEARCH is brave, and no BRAVE_SEARCH_API_KEY "
                                            "is set or kept (sion agent credential add "
                                            "BRAVE_SEARCH_API_KEY)");
        return std::optional<WebSearchProvider>(WebSearchProvider{
            "brave", env_or("BRAVE_SEARCH_BASE_URL", "https://api.search.brave.com"), brave});
    }
    if (chosen == "tavily" || (chosen.empty() && !tavily.empty())) {
        if (tavily.empty())
            return make_error(Exit::config, "SION_SEARCH is tavily, and no TAVILY_API_KEY is set "
                                            "or kept (sion agent credential add TAVILY_API_KEY)");
        return std::optional<WebSearchProvider>(WebSearchProvider{
            "tavily", env_or("TAVILY_BASE_URL", "https://api.tavily.com"), tavily});
    }
    return std::optional<WebSearchProvider>();
}

std::unique_ptr<Tool> make_fetch_url_tool(std::vector<std::string> allowed) {
    return std::make_unique<FetchUrl>(std::move(allowed));
}

std::unique_ptr<Tool> make_web_search_tool(const WebSearchProvider& provider) {
    std::string base = provider.base;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return std::make_unique<WebSearch>(provider.name, base, provider.key);
}

} // namespace sion::session
