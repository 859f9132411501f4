// SPDX-License-Identifier: MIT
// Messages read and built with GMime (cmd/sion-mail/message.hpp). GMime objects are GObjects:
// each one made here is owned by a Ref, which drops its reference when it goes.
#include "cmd/sion-mail/message.hpp"

#include "lib/text.hpp"
#include "lib/utf8.hpp"
#include "lib/web.hpp"

#include <gmime/gmime.h>

#include <mutex>

namespace sion::mail_cmd {

namespace {

bool utf8_valid(std::string_view s) {
    return invalid_utf8_at(s) == std::string_view::npos;
}

template <class T>
class Ref {
public:
    explicit Ref(T* p) : m_p(p) {}

    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    Ref(Ref&&) = delete;
    Ref& operator=(Ref&&) = delete;

    ~Ref() {
        if (m_p != nullptr)
            g_object_unref(m_p);
    }

    [[nodiscard]] T* get() const { return m_p; }

    explicit operator bool() const { return m_p != nullptr; }

private:
    T* m_p;
};

// A string GMime allocated, freed with g_free.
std::string take(char* s) {
    if (s == nullptr)
        return {};
    std::string out(s);
    g_free(s);
    return out;
}

std::string or_empty(const char* s) {
    return s != nullptr ? std::string(s) : std::string();
}

std::string addresses(InternetAddressList* list) {
    if (list == nullptr || internet_address_list_length(list) == 0)
        return {};
    return one_line(take(internet_address_list_to_string(list, nullptr, FALSE)));
}

std::string mime_type(GMimeObject* part) {
    GMimeContentType* type = g_mime_object_get_content_type(part);
    return type != nullptr ? ascii_lower(take(g_mime_content_type_get_mime_type(type)))
                           : std::string("text/plain");
}

// The text of a text part, as UTF-8 (GMime converts from its charset, and falls back to the
// parser's charsets when it names none or one it does not know).
std::string text_of(GMimeTextPart* part) {
    std::string text = take(g_mime_text_part_get_text(part));
    return utf8_valid(text) ? text : text_for_json(text);
}

uint64_t decoded_size(GMimePart* part) {
    GMimeDataWrapper* content = g_mime_part_get_content(part);
    if (content == nullptr)
        return 0;
    Ref<GMimeStream> null(g_mime_stream_null_new());
    ssize_t n = g_mime_data_wrapper_write_to_stream(content, null.get());
    return n > 0 ? static_cast<uint64_t>(n) : 0;
}

class Walk {
public:
    Walk(Message& out, Limits limits) : m_out(out), m_limits(limits) {}

    void part(GMimeObject* obj, size_t depth) {
        if (obj == nullptr)
            return;
        if (depth > k_depth_max) {
            m_deep = true;
            return;
        }
        if (GMIME_IS_MULTIPART(obj)) {
            multipart(GMIME_MULTIPART(obj), depth);
        } else if (GMIME_IS_MESSAGE_PART(obj)) {
            GMimeMessage* inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(obj));
            std::string subject =
                inner != nullptr ? or_empty(g_mime_message_get_subject(inner)) : "";
            attach(subject.empty() ? "forwarded message" : one_line(subject) + ".eml",
                   "message/rfc822", 0);
        } else if (GMIME_IS_PART(obj)) {
            leaf(GMIME_PART(obj));
        }
    }

    void finish() {
        if (m_text.empty() && !m_html.empty()) {
            m_out.html = true;
            m_text = web::html_to_text(m_html, "utf-8", "").text;
        }
        if (m_deep)
            m_text += std::string(m_text.empty() ? "" : "\n\n") + "[parts nested deeper than "
                      + std::to_string(k_depth_max) + " left out]";
        // GMime keeps the message's CRLF line ends; the text is read with LF ones.
        std::string lf;
        lf.reserve(m_text.size());
        for (size_t i = 0; i < m_text.size(); ++i)
            if (!(m_text[i] == '\r' && i + 1 < m_text.size() && m_text[i + 1] == '\n'))
                lf += m_text[i];
        m_text = std::move(lf);
        if (m_text.size() > m_limits.text) {
            m_text.resize(utf8_boundary(m_text, m_limits.text));
            m_out.cut = true;
        }
        m_out.text = std::move(m_text);
    }

private:
    void multipart(GMimeMultipart* mp, size_t depth) {
        int count = g_mime_multipart_get_count(mp);
        std::string type = mime_type(GMIME_OBJECT(mp));
        if (type == "multipart/alternative") {
            // The plain text when there is one, else the richest part GMime can show.
            GMimeObject* chosen = nullptr;
            for (int i = 0; i < count; ++i) {
                GMimeObject* child = g_mime_multipart_get_part(mp, i);
                std::string t = mime_type(child);
                if (t == "text/plain") {
                    chosen = child;
                    break;
                }
                if (t == "text/html" || GMIME_IS_MULTIPART(child))
                    chosen = child;
            }
            if (chosen == nullptr && count > 0)
                chosen = g_mime_multipart_get_part(mp, 0);
            part(chosen, depth + 1);
            return;
        }
        for (int i = 0; i < count; ++i)
            part(g_mime_multipart_get_part(mp, i), depth + 1);
    }

    void leaf(GMimePart* p) {
        std::string type = mime_type(GMIME_OBJECT(p));
        std::string name = one_line(or_empty(g_mime_part_get_filename(p)));
        bool attached = g_mime_part_is_attachment(p) != FALSE || !name.empty();
        if (!attached && GMIME_IS_TEXT_PART(p) && type == "text/plain") {
            if (!m_text.empty())
                m_text += "\n\n";
            m_text += text_of(GMIME_TEXT_PART(p));
            return;
        }
        if (!attached && GMIME_IS_TEXT_PART(p) && type == "text/html") {
            m_html += text_of(GMIME_TEXT_PART(p));
            return;
        }
        attach(name, type, decoded_size(p));
    }

    void attach(std::string name, std::string type, uint64_t size) {
        if (m_out.attachments.size() >= m_limits.attachments) {
            ++m_out.attachments_more;
            return;
        }
        m_out.attachments.push_back({std::move(name), std::move(type), size});
    }

    Message& m_out;
    Limits m_limits;
    std::string m_text, m_html;
    bool m_deep = false;
};

GMimeMessage* parse(std::string_view bytes) {
    Ref<GMimeStream> stream(g_mime_stream_mem_new_with_buffer(bytes.data(), bytes.size()));
    Ref<GMimeParser> parser(g_mime_parser_new_with_stream(stream.get()));
    return g_mime_parser_construct_message(parser.get(), nullptr);
}

bool has_bad_bytes(std::string_view s) {
    return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// Adds each mailbox of `given` to `type` of `msg` and their addresses to `rcpts`.
Status add_addresses(GMimeMessage* msg, GMimeAddressType type,
                     const std::vector<std::string>& given, const char* what,
                     std::vector<std::string>& rcpts) {
    for (const std::string& one : given) {
        if (has_bad_bytes(one))
            return make_error(Exit::usage, "%s address cannot hold a line break", what);
        std::string addr = address_of(one);
        if (addr.empty())
            return make_error(Exit::usage, "'%s' is not a mail address", one_line(one).c_str());
        Ref<InternetAddressList> list(internet_address_list_parse(nullptr, one.c_str()));
        if (type != GMIME_ADDRESS_TYPE_BCC)
            internet_address_list_append(g_mime_message_get_addresses(msg, type), list.get());
        rcpts.push_back(addr);
    }
    return {};
}

} // namespace

void mime_init() {
    static std::once_flag once;
    std::call_once(once, [] { g_mime_init(); });
}

std::string decode_header(std::string_view raw) {
    mime_init();
    std::string s(raw);
    return one_line(take(g_mime_utils_header_decode_text(nullptr, s.c_str())));
}

Message read_message(std::string_view bytes, Limits limits) {
    mime_init();
    Message out;
    Ref<GMimeMessage> msg(parse(bytes));
    if (!msg) {
        out.text = "[the message could not be read as MIME]";
        return out;
    }
    GMimeMessage* m = msg.get();
    out.from = addresses(g_mime_message_get_from(m));
    out.to = addresses(g_mime_message_get_to(m));
    out.cc = addresses(g_mime_message_get_cc(m));
    out.reply_to = addresses(g_mime_message_get_reply_to(m));
    out.subject = one_line(or_empty(g_mime_message_get_subject(m)));
    out.date = one_line(or_empty(g_mime_object_get_header(GMIME_OBJECT(m), "Date")));
    out.message_id = one_line(or_empty(g_mime_message_get_message_id(m)));
    out.references = one_line(or_empty(g_mime_object_get_header(GMIME_OBJECT(m), "References")));
    for (std::string* s : {&out.from, &out.to, &out.cc, &out.reply_to, &out.subject})
        if (!utf8_valid(*s))
            *s = text_for_json(*s);
    Walk walk(out, limits);
    walk.part(g_mime_message_get_mime_part(m), 0);
    walk.finish();
    return out;
}

std::string address_of(std::string_view mailbox) {
    mime_init();
    std::string s(mailbox);
    Ref<InternetAddressList> list(internet_address_list_parse(nullptr, s.c_str()));
    if (!list || internet_address_list_length(list.get()) != 1)
        return {};
    InternetAddress* a = internet_address_list_get_address(list.get(), 0);
    if (!INTERNET_ADDRESS_IS_MAILBOX(a))
        return {};
    std::string addr = or_empty(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a)));
    if (addr.find('@') == std::string::npos || has_bad_bytes(addr)
        || addr.find_first_of(" <>\t") != std::string::npos)
        return {};
    return addr;
}

Result<Built> build_message(const Draft& draft) {
    mime_init();
    if (has_bad_bytes(draft.subject))
        return make_error(Exit::usage, "the subject cannot hold a line break");
    if (!utf8_valid(draft.subject) || !utf8_valid(draft.text))
        return make_error(Exit::usage, "the subject and text must be UTF-8");
    Built built;
    Ref<GMimeMessage> msg(g_mime_message_new(TRUE));
    GMimeMessage* m = msg.get();
    std::vector<std::string> from_list;
    SION_CHECK(add_addresses(m, GMIME_ADDRESS_TYPE_FROM, {draft.from}, "the sender's", from_list));
    SION_CHECK(
        add_addresses(m, GMIME_ADDRESS_TYPE_TO, draft.to, "a recipient's", built.recipients));
    SION_CHECK(
        add_addresses(m, GMIME_ADDRESS_TYPE_CC, draft.cc, "a recipient's", built.recipients));
    SION_CHECK(
        add_addresses(m, GMIME_ADDRESS_TYPE_BCC, draft.bcc, "a recipient's", built.recipients));
    g_mime_message_set_subject(m, draft.subject.c_str(), "utf-8");
    GDateTime* now = g_date_time_new_now_local();
    g_mime_message_set_date(m, now);
    g_date_time_unref(now);
    std::string domain = from_list.front().substr(from_list.front().rfind('@') + 1);
    built.message_id = take(g_mime_utils_generate_message_id(domain.c_str()));
    g_mime_message_set_message_id(m, built.message_id.c_str());
    if (!draft.in_reply_to.empty() && !has_bad_bytes(draft.in_reply_to))
        g_mime_object_set_header(GMIME_OBJECT(m), "In-Reply-To", draft.in_reply_to.c_str(),
                                 nullptr);
    if (!draft.references.empty() && !has_bad_bytes(draft.references))
        g_mime_object_set_header(GMIME_OBJECT(m), "References", draft.references.c_str(), nullptr);
    Ref<GMimeTextPart> body(g_mime_text_part_new_with_subtype("plain"));
    std::string text = draft.text;
    if (text.empty() || text.back() != '\n')
        text += '\n';
    g_mime_text_part_set_text(body.get(), text.c_str());
    g_mime_part_set_content_encoding(GMIME_PART(body.get()),
                                     g_mime_part_get_best_content_encoding(
                                         GMIME_PART(body.get()), GMIME_ENCODING_CONSTRAINT_7BIT));
    g_mime_message_set_mime_part(m, GMIME_OBJECT(body.get()));
    GMimeFormatOptions* options = g_mime_format_options_new();
    g_mime_format_options_set_newline_format(options, GMIME_NEWLINE_FORMAT_DOS);
    built.bytes = take(g_mime_object_to_string(GMIME_OBJECT(m), options));
    g_mime_format_options_free(options);
    return built;
}

} // namespace sion::mail_cmd
