// SPDX-License-Identifier: MIT
// libcurl's multi interface on a libuv loop: curl names the sockets it waits on (a uv_poll_t each)
// and the one time-out it wants (a uv_timer_t); the loop tells curl what happened with
// curl_multi_socket_action. curl forbids calling the multi handle from inside its own callbacks,
// and a user's on_body may cancel, start or close anything, so changes asked for while curl is
// running are queued and made once it returns. Impl keeps itself alive while its handles are open,
// so close callbacks never touch freed memory.
#include "lib/uv_http.hpp"

#include "lib/curl_api.hpp"
#include "lib/http_transfer.hpp"

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace sion {

namespace {

// One transfer: its request, the handle, and what the callbacks share. Never moves once made.
struct Transfer {
    explicit Transfer(UvHttp::Id i, HttpRequest r, UvHttp::Done d)
        : id(i), request(std::move(r)), done(std::move(d)), state(request) {}

    UvHttp::Id id;
    HttpRequest request;
    UvHttp::Done done;
    HttpTransfer state;
    std::optional<CurlEasy> easy;         // none when it could not be made
    bool added = false;                   // to the multi handle
    std::optional<Error> failed_to_start; // given to `done` instead of running
};

uv_handle_t* as_handle(void* h) {
    return static_cast<uv_handle_t*>(h);
}

} // namespace

struct UvHttp::Impl {
    // A socket curl waits on.
    struct Watch {
        uv_poll_t poll{};
        curl_socket_t fd = CURL_SOCKET_BAD;
        Impl* impl = nullptr;
    };

    uv_loop_t* loop;
    CURLM* multi = nullptr;
    uv_timer_t curl_timer{}; // the time-out curl asked for
    uv_timer_t later{};      // work queued by start() and by calls from inside curl
    int open_handles = 0;
    int in_curl = 0; // depth of calls into curl that may call back into user code
    bool closed = false;
    Id next_id = 1;
    std::map<Id, std::unique_ptr<Transfer>> transfers; // started and not ended
    std::vector<Id> to_add;                            // started, not yet given to curl
    std::vector<std::unique_ptr<Transfer>> doomed;     // cancelled while curl ran
    std::vector<Watch*> watches;
    std::shared_ptr<Impl> keep_alive; // set while handles are open

    explicit Impl(uv_loop_t* l) : loop(l) {}

    Status open();
    Id start(HttpRequest request, Done done);
    void cancel(Id id);
    void close();

    void arm_later();
    void on_later();
    void add_pending();
    void socket_action(curl_socket_t fd, int events);
    void after_curl();
    void read_messages();
    void drop(std::unique_ptr<Transfer> transfer);
    void teardown();
    int on_socket(curl_socket_t fd, int what, Watch* watch);
    void close_watch(Watch* watch);
    void close_handle(void* h);
    void handle_closed() noexcept;
};

Status UvHttp::Impl::open() {
    SION_CHECK(curl_api());
    multi = curl().multi_init();
    if (multi == nullptr)
        return make_error(Exit::software, "cannot create a curl multi handle: out of memory");
    for (uv_timer_t* t : {&curl_timer, &later}) {
        if (int rc = uv_timer_init(loop, t); rc != 0)
            return make_error(Exit::os, "cannot start an HTTP timer: %s", uv_strerror(rc));
        t->data = this;
        ++open_handles;
    }
    auto on_socket = [](CURL*, curl_socket_t fd, int what, void* user, void* socketp) noexcept {
        return static_cast<Impl*>(user)->on_socket(fd, what, static_cast<Watch*>(socketp));
    };
    auto on_timer = [](CURLM*, long timeout_ms, void* user) noexcept {
        auto* impl = static_cast<Impl*>(user);
        if (timeout_ms < 0) {
            uv_timer_stop(&impl->curl_timer);
            return 0;
        }
        auto fire = [](uv_timer_t* t) noexcept {
            static_cast<Impl*>(t->data)->socket_action(CURL_SOCKET_TIMEOUT, 0);
        };
        // Never from inside curl: a zero time-out waits for the loop's next turn.
        uv_timer_start(&impl->curl_timer, fire, static_cast<uint64_t>(timeout_ms), 0);
        return 0;
    };
    using SocketFn = int (*)(CURL*, curl_socket_t, int, void*, void*);
    using TimerFn = int (*)(CURLM*, long, void*);
    CURLMcode rc =
        curl().multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, static_cast<SocketFn>(on_socket));
    if (rc == CURLM_OK)
        rc = curl().multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    if (rc == CURLM_OK)
        rc = curl().multi_setopt(multi, CURLMOPT_TIMERFUNCTION, static_cast<TimerFn>(on_timer));
    if (rc == CURLM_OK)
        rc = curl().multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    if (rc != CURLM_OK)
        return make_error(Exit::software, "cannot set curl multi option: %s",
                          curl().multi_strerror(rc));
    return {};
}

UvHttp::Id UvHttp::Impl::start(HttpRequest request, Done done) {
    Id id = next_id++;
    auto transfer = std::make_unique<Transfer>(id, std::move(request), std::move(done));
    Status set;
    if (Result<CurlEasy> easy = CurlEasy::make(); !easy) {
        set = std::move(easy).error();
    } else {
        transfer->easy.emplace(std::move(*easy));
        set = transfer->state.configure(transfer->easy->get());
    }
    if (set
        && curl().easy_setopt(transfer->easy->get(), CURLOPT_PRIVATE, transfer.get()) != CURLE_OK)
        set = make_error(Exit::software, "cannot set curl option: CURLOPT_PRIVATE");
    if (!set)
        transfer->failed_to_start = std::move(set).error();
    if (closed)
        return id; // never runs, and its `done` is never called
    transfers.emplace(id, std::move(transfer));
    to_add.push_back(id);
    arm_later();
    return id;
}

void UvHttp::Impl::arm_later() {
    if (closed)
        return;
    auto fire = [](uv_timer_t* t) noexcept { static_cast<Impl*>(t->data)->on_later(); };
    uv_timer_start(&later, fire, 0, 0);
}

void UvHttp::Impl::on_later() {
    std::shared_ptr<Impl> hold = keep_alive; // a `done` may drop the UvHttp
    after_curl();
    add_pending();
}

// Gives the started transfers to curl, and fails those that could not start.
void UvHttp::Impl::add_pending() {
    std::vector<Id> ids = std::exchange(to_add, {});
    for (Id id : ids) {
        if (closed)
            return;
        auto it = transfers.find(id);
        if (it == transfers.end())
            continue; // cancelled meanwhile
        Transfer& t = *it->second;
        if (!t.failed_to_start) {
            CURLMcode rc = curl().multi_add_handle(multi, t.easy->get());
            if (rc == CURLM_OK) {
                t.added = true;
                continue;
            }
            t.failed_to_start = make_error(Exit::software, "cannot start a transfer: %s",
                                           curl().multi_strerror(rc));
        }
        std::unique_ptr<Transfer> failed = std::move(it->second);
        transfers.erase(it);
        Done done = std::move(failed->done);
        Error why = std::move(*failed->failed_to_start);
        failed.reset();
        if (done)
            done(std::move(why));
    }
}

void UvHttp::Impl::cancel(Id id) {
    auto it = transfers.find(id);
    if (it == transfers.end())
        return;
    std::unique_ptr<Transfer> transfer = std::move(it->second);
    transfers.erase(it);
    transfer->done = nullptr;
    transfer->state.abandon();
    if (in_curl > 0 && transfer->added) {
        doomed.push_back(std::move(transfer)); // curl may be inside its callbacks
        arm_later();
        return;
    }
    drop(std::move(transfer));
}

// Takes the transfer from curl and frees it; never while curl runs.
void UvHttp::Impl::drop(std::unique_ptr<Transfer> transfer) {
    if (transfer->added)
        curl().multi_remove_handle(multi, transfer->easy->get());
}

void UvHttp::Impl::socket_action(curl_socket_t fd, int events) {
    if (closed)
        return;
    std::shared_ptr<Impl> hold = keep_alive; // user code may drop the UvHttp
    int still_running = 0;
    ++in_curl;
    curl().multi_socket_action(multi, fd, events, &still_running);
    --in_curl;
    after_curl();
    read_messages();
}

// What was asked for while curl ran: cancelled transfers leave, and a close() is carried out.
void UvHttp::Impl::after_curl() {
    if (in_curl > 0)
        return;
    for (auto& transfer : std::exchange(doomed, {}))
        drop(std::move(transfer));
    if (closed)
        teardown();
}

void UvHttp::Impl::read_messages() {
    int left = 0;
    while (!closed) {
        CURLMsg* msg = curl().multi_info_read(multi, &left);
        if (msg == nullptr)
            break;
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL* easy = msg->easy_handle;
        CURLcode code = msg->data.result;
        void* user = nullptr;
        curl().easy_getinfo(easy, CURLINFO_PRIVATE, &user);
        auto* seen = static_cast<Transfer*>(user);
        auto it = seen == nullptr ? transfers.end() : transfers.find(seen->id);
        if (it == transfers.end() || it->second.get() != seen)
            continue;
        std::unique_ptr<Transfer> transfer = std::move(it->second);
        transfers.erase(it);
        Result<HttpResponse> result = transfer->state.finish(easy, code);
        Done done = std::move(transfer->done);
        drop(std::move(transfer));
        if (done)
            done(std::move(result)); // may start, cancel or close
    }
}

int UvHttp::Impl::on_socket(curl_socket_t fd, int what, Watch* watch) {
    if (what == CURL_POLL_REMOVE) {
        if (watch != nullptr)
            close_watch(watch);
        return 0;
    }
    if (watch == nullptr) {
        auto made = std::make_unique<Watch>();
        made->fd = fd;
        made->impl = this;
        if (uv_poll_init_socket(loop, &made->poll, fd) != 0)
            return -1; // curl fails the transfer
        watch = made.release();
        watch->poll.data = watch;
        ++open_handles;
        watches.push_back(watch);
        curl().multi_assign(multi, fd, watch);
    }
    int events = 0;
    if ((what & CURL_POLL_IN) != 0)
        events |= UV_READABLE;
    if ((what & CURL_POLL_OUT) != 0)
        events |= UV_WRITABLE;
    auto ready = [](uv_poll_t* p, int status, int got) noexcept {
        auto* w = static_cast<Watch*>(p->data);
        int flags = 0;
        if (status < 0)
            flags = CURL_CSELECT_ERR;
        if ((got & UV_READABLE) != 0)
            flags |= CURL_CSELECT_IN;
        if ((got & UV_WRITABLE) != 0)
            flags |= CURL_CSELECT_OUT;
        w->impl->socket_action(w->fd, flags);
    };
    return uv_poll_start(&watch->poll, events, ready) == 0 ? 0 : -1;
}

void UvHttp::Impl::close_watch(Watch* watch) {
    std::erase(watches, watch);
    uv_poll_stop(&watch->poll);
    uv_close(as_handle(&watch->poll), [](uv_handle_t* h) noexcept {
        auto* w = static_cast<Watch*>(h->data);
        Impl* impl = w->impl;
        delete w; // NOLINT(cppcoreguidelines-owning-memory): owned by its handle until closed
        impl->handle_closed();
    });
}

void UvHttp::Impl::close() {
    if (closed)
        return;
    closed = true;
    for (auto& [id, transfer] : transfers) {
        transfer->done = nullptr;
        transfer->state.abandon();
    }
    if (in_curl == 0)
        teardown();
}

// Ends every transfer, frees the multi handle and closes the handles; never while curl runs.
void UvHttp::Impl::teardown() {
    if (multi != nullptr) {
        for (auto& transfer : std::exchange(doomed, {}))
            drop(std::move(transfer));
        std::map<Id, std::unique_ptr<Transfer>> ending = std::exchange(transfers, {});
        for (auto& [id, transfer] : ending)
            drop(std::move(transfer));
        // Cleaning up may still tell on_socket to forget sockets.
        curl().multi_cleanup(std::exchange(multi, nullptr));
    }
    transfers.clear();
    to_add.clear();
    for (Watch* watch : std::vector<Watch*>(watches))
        close_watch(watch);
    close_handle(&curl_timer);
    close_handle(&later);
}

// Initialised (its data points here) and not yet asked to close.
void UvHttp::Impl::close_handle(void* h) {
    if (as_handle(h)->data == nullptr || uv_is_closing(as_handle(h)) != 0)
        return;
    uv_close(as_handle(h),
             [](uv_handle_t* done) noexcept { static_cast<Impl*>(done->data)->handle_closed(); });
}

void UvHttp::Impl::handle_closed() noexcept {
    if (--open_handles == 0)
        keep_alive.reset(); // may free this: nothing after
}

Result<std::unique_ptr<UvHttp>> UvHttp::make(uv_loop_t* loop) {
    auto impl = std::make_shared<Impl>(loop);
    impl->keep_alive = impl;
    Status st = impl->open();
    if (!st) {
        impl->closed = true;
        impl->teardown();
        if (impl->open_handles == 0)
            impl->keep_alive.reset();
        return std::move(st).error();
    }
    return std::unique_ptr<UvHttp>(new UvHttp(std::move(impl)));
}

UvHttp::~UvHttp() {
    close();
}

UvHttp::Id UvHttp::start(HttpRequest request, Done done) {
    return m_impl->start(std::move(request), std::move(done));
}

void UvHttp::cancel(Id id) {
    m_impl->cancel(id);
}

size_t UvHttp::running() const {
    return m_impl->transfers.size();
}

void UvHttp::close() {
    m_impl->close();
}

} // namespace sion
