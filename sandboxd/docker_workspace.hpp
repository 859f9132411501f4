// SPDX-License-Identifier: MIT
// Who a Docker container runs as, and what it binds at /workspace: the workspace's owner and the
// workspace itself (the seed's table), except that no container runs as host root: when the
// workspace is root's, the container runs as k_host_id and binds an idmapped mount of the workspace
// (stage.hpp), so that what it writes is still root's.
//
// That mount is made in the host's mount namespace, where the engine finds what it binds: at
// k_docker_mounts/docker-PID-N/workspace, in a directory only root may enter; it is unmounted and
// removed when the DockerWorkspace goes. Those a killed sion-sandbox left (its PID ended) are
// removed by the next open().
#pragma once

#include "sandboxd/config.hpp"

#include "lib/result.hpp"

#include <sys/types.h>

#include <string>

namespace sion::sandboxd {

inline constexpr const char* k_docker_mounts = "/run/sion-sandbox";

class DockerWorkspace {
public:
    // The workspace must be a directory (Exit::no_input, "cannot use the workspace '/w': …"). A
    // workspace of root's needs root to map it: otherwise Exit::config,
    //   "the workspace '/w' is root's, and its commands would run as root: give a workspace of
    //    another user's, or run sion-sandbox as root, which maps it to uid 2000010001"
    // and stage.hpp's errors when it cannot be mapped.
    [[nodiscard]] static Result<DockerWorkspace> open(const Config& config);

    DockerWorkspace(DockerWorkspace&& other) noexcept;
    DockerWorkspace& operator=(DockerWorkspace&&) = delete;
    DockerWorkspace(const DockerWorkspace&) = delete;
    DockerWorkspace& operator=(const DockerWorkspace&) = delete;
    ~DockerWorkspace();

    uid_t uid = 0;         // who the container runs as
    gid_t gid = 0;
    std::string source;    // what it binds at /workspace

private:
    DockerWorkspace() = default;
    std::string m_mount; // the directory of the idmapped mount, or empty
};

} // namespace sion::sandboxd
