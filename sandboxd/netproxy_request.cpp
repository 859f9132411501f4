// SPDX-License-Identifier: MIT
// Proxy request heads. Strict where leniency would let a request mean two things (whitespace before
// a colon, folded lines, bare CRs, userinfo in a target), since the host it names is what the
// sandbox's network is checked against.
#include "sandboxd/netproxy_request.hpp"

#include "lib/text.hpp"
#include "sandboxd/host_pattern.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace sion::sandboxd {

namespace {

struct Header {
    std::string_view name;
    std::string_view value;
};

struct Head {
    std::string_view method;
    std::string_view target;
    std::string_view version;
    std::vector<Header> headers;
};

bool is_tchar(char c) {
    return std::isalnum(static_cast<unsigned char>(c))
           || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The head's lines without their ends, up to the empty one.
Result<std::vector<std::string_view>> split_lines(std::string_view head) {
    std::vector<std::string_view> lines;
    while (!head.empty()) {
        size_t nl = head.find('\n');
        std::string_view line = head.substr(0, nl);
        head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.find('\r') != std::string_view::npos || line.find('\0') != std::string_view::npos)
            return make_error(Exit::data, "a control byte inside a line");
        if (line.empty() && lines.empty())
            continue; // an empty line before the request line is allowed (RFC 9112, 2.2)
        if (line.empty())
            break;
        lines.push_back(line);
    }
    if (lines.empty())
        return make_error(Exit::data, "an empty request");
    return lines;
}

Result<Head> parse_head(std::string_view text) {
    SION_TRY(auto lines, split_lines(text));
    Head head;
    std::string_view rl = lines[0];
    size_t sp1 = rl.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos)
        return make_error(Exit::data, "the request line is not METHOD TARGET VERSION");
    head.method = rl.substr(0, sp1);
    head.target = rl.substr(sp1 + 1, sp2 - sp1 - 1);
    head.version = rl.substr(sp2 + 1);
    if (!is_token(head.method) || head.target.empty())
        return make_error(Exit::data, "the request line is not METHOD TARGET VERSION");
    if (head.version != "HTTP/1.1" && head.version != "HTTP/1.0")
        return make_error(Exit::data, "the version is not HTTP/1.1 or HTTP/1.0");
    for (size_t i = 1; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        if (line.front() == ' ' || line.front() == '\t')
            return make_error(Exit::data, "a folded header line");
        size_t colon = line.find(':');
        if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
            return make_error(Exit::data, "a header line that is not NAME: VALUE");
        head.headers.push_back({line.substr(0, colon), trim(line.substr(colon + 1))});
    }
    return head;
}

Result<int> parse_port(std::string_view text) {
    int port = 0;
    if (text.empty() || text.size() > 5)
        return make_error(Exit::data, "a bad port");
    for (char c : text) {
        if (c < '0' || c > '9')
            return make_error(Exit::data, "a bad port");
        port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535)
        return make_error(Exit::data, "a bad port");
    return port;
}

// "host", "host:port", "[v6]" or "[v6]:port" into `req`; a port is required unless `default_port`.
Status parse_authority(std::string_view text, int default_port, ProxyRequest& req) {
    std::string_view host = text;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        size_t close = text.find(']');
        if (close == std::string_view::npos)
            return make_error(Exit::data, "'[' without ']' in the target");
        host = text.substr(1, close - 1);
        std::string_view rest = text.substr(close + 1);
        if (!rest.empty() && rest.front() != ':')
            return make_error(Exit::data, "only ':PORT' may follow ']' in the target");
        port = rest.empty() ? rest : rest.substr(1);
    } else if (size_t colon = text.find(':'); colon != std::string_view::npos) {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (port.empty() && default_port == 0)
        return make_error(Exit::data, "CONNECT needs HOST:PORT");
    auto canonical = canonical_host(host);
    if (!canonical)
        return canonical.error().context(
            format("bad host '%.*s'", static_cast<int>(host.size()), host.data()));
    req.host = std::move(*canonical);
    if (port.empty()) {
        req.port = default_port;
        return {};
    }
    SION_TRY(req.port, parse_port(port));
    return {};
}

// The names a Connection header lists, in lower case: each is hop-by-hop.
std::vector<std::string> connection_options(const Head& head) {
    std::vector<std::string> out;
    for (const Header& h : head.headers) {
        if (ascii_lower(h.name) != "connection")
            continue;
        std::string_view v = h.value;
        while (!v.empty()) {
            size_t comma = v.find(',');
            std::string_view item = trim(v.substr(0, comma));
            if (!item.empty())
                out.push_back(ascii_lower(item));
            v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
        }
    }
    return out;
}

std::string rewrite_head(const Head& head, std::string_view path, const ProxyRequest& req) {
    std::vector<std::string> options = connection_options(head);
    auto listed = [&](const std::string& name) {
        return std::find(options.begin(), options.end(), name) != options.end();
    };
    bool upgrade = listed("upgrade")
                   && std::any_of(head.headers.begin(), head.headers.end(),
                                  [](const Header& h) { return ascii_lower(h.name) == "upgrade"; });
    std::string out = format("%.*s %.*s %.*s\r\n", static_cast<int>(head.method.size()),
                             head.method.data(), static_cast<int>(path.size()), path.data(),
                             static_cast<int>(head.version.size()), head.version.data());
    std::string authority = req.port != 80 ? host_port(req.host, req.port)
                            : req.host.find(':') == std::string::npos ? req.host
                                                                      : "[" + req.host + "]";
    out += "Host: " + authority + "\r\n";
    for (const Header& h : head.headers) {
        std::string name = ascii_lower(h.name);
        bool hop = name == "host" || name == "connection" || name == "keep-alive"
                   || name.rfind("proxy-", 0) == 0 || (name == "upgrade" && !upgrade)
                   || (listed(name) && !(upgrade && name == "upgrade"));
        if (!hop)
            out.append(h.name).append(": ").append(h.value).append("\r\n");
    }
    out += upgrade ? "Connection: upgrade\r\n\r\n" : "Connection: close\r\n\r\n";
    return out;
}

Result<ProxyRequest> parse_absolute(const Head& head) {
    ProxyRequest req;
    std::string_view target = head.target;
    if (target.front() == '/')
        return make_error(Exit::data,
                          "not a proxy request: the target is a path, not http://HOST/PATH");
    std::string scheme = ascii_lower(target.substr(0, target.find("://")));
    if (scheme == "https")
        return make_error(Exit::data, "https goes through CONNECT, not an https:// target");
    if (scheme != "http" || target.find("://") == std::string_view::npos)
        return make_error(Exit::data, "the target is not http://HOST[:PORT]/PATH");
    target.remove_prefix(7);
    size_t end = target.find_first_of("/?#");
    std::string_view authority = target.substr(0, end);
    std::string_view rest = end == std::string_view::npos ? std::string_view() : target.substr(end);
    if (authority.find('@') != std::string_view::npos)
        return make_error(Exit::data, "a user name in the target");
    if (rest.find('#') != std::string_view::npos)
        return make_error(Exit::data, "a fragment in the target");
    SION_CHECK(parse_authority(authority, 80, req));
    std::string path =
        rest.empty() || rest.front() == '?' ? "/" + std::string(rest) : std::string(rest);
    req.upstream_head = rewrite_head(head, path, req);
    return req;
}

} // namespace

size_t find_head_end(std::string_view buffer, size_t from) {
    for (size_t i = buffer.find('\n', from); i != std::string_view::npos;
         i = buffer.find('\n', i + 1)) {
        if (i + 1 < buffer.size() && buffer[i + 1] == '\n')
            return i + 2;
        if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n')
            return i + 3;
    }
    return std::string_view::npos;
}

Result<ProxyRequest> parse_proxy_request(std::string_view text) {
    SION_TRY(Head head, parse_head(text));
    if (head.method != "CONNECT")
        return parse_absolute(head);
    ProxyRequest req;
    req.tunnel = true;
    SION_CHECK(parse_authority(head.target, 0, req));
    return req;
}

std::string granted_head(std::string_view text, const Grant& grant) {
    auto head = parse_head(text);
    if (!head)
        return std::string(text);
    bool granted = on_grant_path(head->target, grant.path);
    std::string header = ascii_lower(grant.header);
    std::vector<std::string> options = connection_options(*head);
    std::string out = format("%.*s %.*s %.*s\r\n", static_cast<int>(head->method.size()),
                             head->method.data(), static_cast<int>(head->target.size()),
                             head->target.data(), static_cast<int>(head->version.size()),
                             head->version.data());
    for (const Header& h : head->headers) {
        std::string name = ascii_lower(h.name);
        bool hop = name == "connection" || name == "keep-alive" || name.rfind("proxy-", 0) == 0
                   || std::find(options.begin(), options.end(), name) != options.end();
        if (!hop && !(granted && name == header))
            out.append(h.name).append(": ").append(h.value).append("\r\n");
    }
    if (granted)
        out += grant.header + ": " + grant.value + "\r\n";
    out += "Connection: close\r\n\r\n";
    return out;
}

std::string http_error_response(int status, std::string_view body_line) {
    const char* reason = "Error";
    switch (status) {
    case 400:
        reason = "Bad Request";
        break;
    case 403:
        reason = "Forbidden";
        break;
    case 408:
        reason = "Request Timeout";
        break;
    case 431:
        reason = "Request Header Fields Too Large";
        break;
    case 502:
        reason = "Bad Gateway";
        break;
    case 504:
        reason = "Gateway Timeout";
        break;
    default:
        break;
    }
    return format(
        "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
        "Connection: close\r\n\r\n%.*s\n",
        status, reason, body_line.size() + 1, static_cast<int>(body_line.size()), body_line.data());
}

} // namespace sion::sandboxd
