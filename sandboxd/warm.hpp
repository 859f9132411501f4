// SPDX-License-Identifier: MIT
// The warm bubblewrap sandbox, from outside: bwrap started once with `init --serve` inside (see
// init.hpp), commands relayed to it as init/exec, and, with the declared network and hosts, the
// proxy those hosts are reached through (netproxy.hpp): it listens on a Unix socket in a private
// directory, bound into the sandbox at k_proxy_inside, where the init's forwarder relays to it.
//
// Threads: everything happens on the loop's thread, callbacks included. Lifetime: the loop must
// run until stop() has taken effect (bwrap reaped, handles closed) before the WarmSandbox is
// destroyed; destroying it earlier kills bwrap all the same.
#pragma once

#include "lib/proto/sandbox_exec.hpp"
#include "lib/result.hpp"
#include "lib/rpc/connection.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/grants.hpp"
#include "sandboxd/mounts.hpp"
#include "sandboxd/netproxy.hpp"

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sion::sandboxd {

// Whether `config` needs the declared network's proxy: the declared network, with hosts.
[[nodiscard]] bool wants_proxy(const Config& config);

// That proxy, started on `loop` for a bwrap sandbox of `config` (the warm one, or `run`'s): it
// listens on `socket`, in a new directory only this user may enter (the socket is root's
// bwrap's, k_host_id's), to be bound at k_proxy_inside. With grants (grants.hpp) it writes their
// credentials, ending TLS with certificates from sion's authority (opened, or made, in config's
// home), and `trust` holds what the sandbox is to trust for it. `dir` is set as soon as the directory exists, even when a later step fails: the caller
// removes it, empty once the proxy has closed. Errors: the host rules', the authority's,
// trusted_roots()', Proxy::start()'s, Exit::os.
struct SandboxProxy {
    std::unique_ptr<EgressAuthority> authority; // outlives the proxy, whose TLS it signs
    std::unique_ptr<Proxy> proxy;
    std::string socket;
    EgressTrust trust;
};

[[nodiscard]] Result<SandboxProxy> start_sandbox_proxy(uv_loop_t* loop, const Config& config,
                                                       std::string& dir,
                                                       Egress egress = {});

class WarmSandbox {
public:
    struct Events {
        std::function<void()> ready;      // init answers: commands may be sent
        std::function<void(Error)> ended; // the sandbox ended before stop(): why
    };

    // Starts bwrap; `events.ready` comes once init listens. Errors: those of prepare_launch() and
    // spawning, and of the proxy (Exit::os).
    [[nodiscard]] static Result<std::unique_ptr<WarmSandbox>>
    start(uv_loop_t* loop, const Config& config, Events events);

    WarmSandbox(const WarmSandbox&) = delete;
    WarmSandbox& operator=(const WarmSandbox&) = delete;
    WarmSandbox(WarmSandbox&&) = delete;
    WarmSandbox& operator=(WarmSandbox&&) = delete;
    ~WarmSandbox();

    // Runs `request` (its timeout already within the session's) with the session's output cap;
    // `done` gets the result object, or the error to answer with.
    void exec(const proto::ExecRequest& request, std::function<void(rpc::Reply)> done);

    // Ends the sandbox: requests still waiting are failed, bwrap is killed (and with it whatever
    // runs inside), the proxy closes. `ended` is not called after it.
    // Ends what runs: SIGTERM, then SIGKILL half a second later; each is answered as it ends, and
    // no command starts after it (init/end).
    void end_commands();

    void stop();

    struct Impl;

private:
    explicit WarmSandbox(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace sion::sandboxd
