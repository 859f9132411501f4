// SPDX-License-Identifier: MIT
// The OAuth requests on the wire: forms, JSON documents, token answers and client authentication.
#include "mcpd/oauth_wire.hpp"

#include "lib/base64.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <chrono>

namespace sion::mcpd::oauth {

namespace {

// What a peer wrote, fit for one line of a message: printable ASCII, at most 200 bytes.
std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 200))
        out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out;
}

HttpRequest request_for(const std::string& url, const Settings& settings) {
    HttpRequest r;
    r.url = url;
    r.timeout = settings.timeout;
    r.connect_timeout = std::min(settings.timeout, std::chrono::milliseconds(10000));
    r.max_response_size = size_t{1} << 20;
    r.headers.add("Accept", "application/json");
    return r;
}

} // namespace

std::string form_encode(const Form& form) {
    std::string out;
    for (const auto& [name, value] : form) {
        if (!out.empty())
            out += '&';
        out += percent_encode(name) + "=" + percent_encode(value);
    }
    return out;
}

Form form_decode(std::string_view text) {
    Form out;
    while (!text.empty()) {
        size_t amp = text.find('&');
        std::string_view field = text.substr(0, amp);
        text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
        if (field.empty())
            continue;
        size_t eq = field.find('=');
        std::string_view value = eq == std::string_view::npos ? "" : field.substr(eq + 1);
        out.emplace_back(percent_decode(field.substr(0, eq), true), percent_decode(value, true));
    }
    return out;
}

std::string form_value(const Form& form, std::string_view name) {
    for (const auto& [n, v] : form)
        if (n == name)
            return v;
    return {};
}

std::vector<std::string> strings_of(JsonView object, std::string_view member) {
    std::vector<std::string> out;
    JsonView list = object.get(member);
    if (!list.is_array())
        return out;
    for (JsonView item : list)
        if (item.is_string())
            out.emplace_back(*item.as_string());
    return out;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

std::string_view trimmed(std::string_view url) {
    while (url.ends_with('/'))
        url.remove_suffix(1);
    return url;
}

std::string words_union(std::string_view a, std::string_view b) {
    std::vector<std::string> words;
    for (std::string_view s : {a, b}) {
        while (!s.empty()) {
            size_t space = s.find(' ');
            std::string word(s.substr(0, space));
            s = space == std::string_view::npos ? std::string_view() : s.substr(space + 1);
            if (!word.empty() && !contains(words, word))
                words.push_back(word);
        }
    }
    std::string out;
    for (const std::string& w : words)
        out += (out.empty() ? "" : " ") + w;
    return out;
}

int64_t now_s() {
    using namespace std::chrono;
    return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

Result<Fetched> get_json(const Url& server, const std::string& url, const char* what,
                         const Settings& settings) {
    SION_TRY(Url target, parse_url(url));
    HttpRequest request = request_for(url, settings);
    request.reach = reach_rule(server, target, what);
    SION_TRY(HttpResponse response, http_send(request));
    Fetched out;
    out.status = response.status;
    if (response.status != 200)
        return out;
    auto doc = Json::parse(response.body);
    if (!doc || !doc->view().is_object())
        return make_error(Exit::data, "cannot read the %s at '%s': it is not a JSON object", what,
                          redact_url(url).c_str());
    out.doc = std::move(*doc);
    return out;
}

void authenticate(const std::string& method, const std::string& client_id,
                  const std::string& secret, Form& form, HttpHeaders& headers) {
    if (method == "client_secret_basic") {
        // RFC 6749 section 2.3.1: each part form-encoded before they are joined.
        std::string pair = percent_encode(client_id) + ":" + percent_encode(secret);
        headers.add("Authorization", "Basic " + base64_encode(pair));
        wipe(pair);
        return;
    }
    form.emplace_back("client_id", client_id);
    if (method == "client_secret_post")
        form.emplace_back("client_secret", secret);
}

std::string jwt_part(const Json& json) {
    return base64url_encode(json.dump());
}

namespace {

// The error of a token endpoint's refusal, for its message: "invalid_grant (the code expired)".
std::string refusal_of(const HttpResponse& response, JsonView doc) {
    std::string why = printable(doc.string_or("error", "").value_or(""));
    std::string more = printable(doc.string_or("error_description", "").value_or(""));
    if (why.empty())
        why = format("HTTP %d", response.status);
    if (!more.empty())
        why += " (" + more + ")";
    return why;
}

Result<HttpResponse> send_token_request(HttpRequest request, const std::string& url,
                                        DpopSigner dpop) {
    if (!dpop.key.empty()) {
        std::string nonce = dpop.nonces ? dpop.nonces->of(url) : std::string();
        SION_TRY(std::string proof, dpop_proof(dpop.key, "POST", url, "", nonce));
        request.headers.add("DPoP", proof);
    }
    auto sent = http_send(request);
    wipe(request.body);
    if (sent && dpop.nonces)
        if (auto nonce = sent->headers.get("DPoP-Nonce"))
            (void)dpop.nonces->keep(url, *nonce); // a fresh one may come with any answer (8.2)
    return sent;
}

} // namespace

Result<Tokens> post_token(const Url& server, const std::string& url, const Form& form,
                          const HttpHeaders& headers, const Settings& settings, DpopSigner dpop,
                          bool any_type) {
    SION_TRY(Url target, parse_url(url));
    HttpRequest request = request_for(url, settings);
    request.reach = reach_rule(server, target, "token endpoint");
    request.method = "POST";
    for (const auto& [name, value] : headers.entries())
        request.headers.add(name, value);
    request.headers.add("Content-Type", "application/x-www-form-urlencoded");
    request.body = form_encode(form);
    std::string shown = redact_url(url);
    Result<HttpResponse> sent = send_token_request(request, url, dpop);
    Json doc; // the answer, when it is a JSON object
    for (bool retried = false;; retried = true) {
        if (!sent) {
            wipe(request.body);
            return std::move(sent).error();
        }
        auto parsed = Json::parse(sent->body);
        doc = parsed && parsed->view().is_object() ? std::move(*parsed) : Json();
        bool wants_nonce = sent->status == 400 && !dpop.key.empty()
                           && doc.view().string_or("error", "").value_or("") == "use_dpop_nonce";
        if (!wants_nonce || retried)
            break;
        // RFC 9449 section 8: once more with the nonce it gave; a second refusal is final.
        std::string nonce(sent->headers.get("DPoP-Nonce").value_or(""));
        if (!dpop.nonces || !dpop.nonces->keep(url, nonce)) {
            wipe(request.body);
            return make_error(Exit::data, "the token endpoint '%s' asks for a DPoP nonce and "
                              "gives none that is usable (a token68 of at most %zu characters)",
                              shown.c_str(), DpopNonces::k_max_size);
        }
        sent = send_token_request(request, url, dpop);
    }
    wipe(request.body);
    if (sent->status != 200) {
        std::string why = refusal_of(*sent, doc.view());
        return make_error(Exit::no_perm, "the token endpoint '%s' refused the request: %s",
                          shown.c_str(), why.c_str());
    }
    if (!doc.exists())
        return make_error(Exit::data, "cannot read the answer of the token endpoint '%s': it is "
                          "not a JSON object", shown.c_str());
    JsonView v = doc.view();
    auto access = v.string("access_token");
    if (!access || access->empty())
        return make_error(Exit::data, "the token endpoint '%s' gave no access_token",
                          shown.c_str());
    std::string type = ascii_lower(v.string_or("token_type", "Bearer").value_or(""));
    if (type == "dpop" && dpop.key.empty())
        return make_error(Exit::data, "the token endpoint '%s' gave a DPoP token, though its "
                          "authorization server does not offer DPoP with ES256", shown.c_str());
    if (type != "bearer" && type != "dpop" && !any_type)
        return make_error(Exit::data, "the token endpoint '%s' gave a token of type '%s', not Bearer",
                          shown.c_str(), printable(type).c_str());
    Tokens tokens;
    tokens.access_token = std::string(*access);
    tokens.refresh_token = std::string(v.string_or("refresh_token", "").value_or(""));
    tokens.scope = std::string(v.string_or("scope", "").value_or(""));
    tokens.dpop = type == "dpop";
    auto expires = v.get("expires_in").as_number();
    if (expires && *expires > 0 && *expires < 1e9)
        tokens.expires_at = now_s() + static_cast<int64_t>(*expires);
    std::string body = std::move(sent->body);
    wipe(body);
    return tokens;
}

} // namespace sion::mcpd::oauth
