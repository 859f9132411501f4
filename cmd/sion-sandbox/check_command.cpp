// SPDX-License-Identifier: MIT
// sion-sandbox check: the pre-flight and a trivial command in the configured sandbox, one line
// each on stdout saying what works and what does not, with the fix.
#include "cmd/sion-sandbox/commands.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"
#include "sandboxd/bwrap.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/docker.hpp"
#include "sandboxd/preflight.hpp"

#include <string>

namespace sion::sandbox_cmd {

namespace {

using namespace sion::sandboxd;

CommandSpec check_spec() {
    return {
        "sion-sandbox check",
        "sion-sandbox check [options]",
        "Check that commands can run in the sandbox the options describe: the workspace and the\n"
        "--sandbox-read directories apart from $SION_HOME, bwrap and user namespaces (or the "
        "Docker\n"
        "engine and the image), and a trivial command run in it. One line each on stdout, \"ok: "
        "\"\n"
        "or \"fail: \" with the fix; exit 0 when all is ok, 78 when the configuration is refused,\n"
        "69 when the sandbox is unavailable.",
        sandbox_options(false),
        false,
    };
}

// The lines said so far and the status they make: 78 for a refused configuration, above all
// else; 69 for anything else that failed.
class Report {
public:
    void ok(const std::string& what) { say("ok: " + what); }

    void fail(const Error& error) {
        say("fail: " + error.message());
        if (error.exit() == Exit::config)
            m_refused = true;
        else
            m_unavailable = true;
    }

    [[nodiscard]] bool failed() const { return m_refused || m_unavailable; }

    [[nodiscard]] int status() const {
        if (m_refused)
            return to_int(Exit::config);
        return m_unavailable ? to_int(Exit::unavailable) : 0;
    }

private:
    static void say(const std::string& line) {
        if (int err = write_stdout(line + "\n"); err != 0)
            die_of_stdout_error(err);
    }

    bool m_refused = false;
    bool m_unavailable = false;
};

void check_configuration(const Config& config, Report& report) {
    if (Status apart = check_workspace(config); !apart)
        report.fail(apart.error());
    else
        report.ok(format("the workspace %s and %s are apart",
                         display_path(config.workspace).c_str(), config.home_as_given.c_str()));
    if (config.reads.empty())
        return;
    if (Status apart = check_reads(config); !apart)
        report.fail(apart.error());
    else
        report.ok(format("no --sandbox-read directory shows %s", config.home_as_given.c_str()));
}

// Whether a command can be tried: bwrap and user namespaces.
bool check_bwrap(Report& report) {
    auto bwrap = find_bwrap();
    if (!bwrap) {
        report.fail(
            Error(Exit::unavailable, "bwrap not found: install the Debian package bubblewrap"));
        return false;
    }
    auto version = bwrap_version(*bwrap);
    if (!version) {
        report.fail(version.error());
        return false;
    }
    report.ok("bwrap " + *version + " found");
    if (Status allowed = check_userns(*bwrap); !allowed) {
        report.fail(allowed.error());
        return false;
    }
    report.ok("user namespaces allowed");
    return true;
}

// Whether a command can be tried: the engine and the image.
bool check_docker(const Config& config, Report& report) {
    if (Status ready = docker_engine_ready(); !ready) {
        report.fail(ready.error());
        return false;
    }
    report.ok("the Docker engine answers");
    if (Status present = docker_image_present(config.image); !present) {
        report.fail(present.error());
        return false;
    }
    report.ok(format("image '%s' is on this machine", config.image.c_str()));
    return true;
}

} // namespace

int check_command(int argc, const char* const* argv) {
    const CommandSpec spec = check_spec();
    Args args = parse_args_or_exit(spec, argc, argv);
    if (!args.operands().empty())
        die(usage_error("check takes no command: sion-sandbox check [options]"));
    auto config = config_from_args(args);
    if (!config)
        die(config.error());
    Report report;
    check_configuration(*config, report);
    bool ready = config->backend == BackendKind::docker ? check_docker(*config, report)
                                                        : check_bwrap(report);
    // A refused configuration runs nothing: the workspace would show what it must not.
    if (!ready || report.failed())
        return report.status();
    auto uid = run_trivial_command(*config);
    if (!uid) {
        report.fail(uid.error().exit() == Exit::config
                        ? uid.error()
                        : Error(Exit::unavailable, uid.error().message()));
        return report.status();
    }
    report.ok("a command ran in the sandbox (id -u: " + *uid + ")");
    if (config->backend == BackendKind::bwrap) {
        report.ok(who_runs(*config));
        for (const std::string& line : bounds(*config))
            report.ok(line);
    }
    return report.status();
}

} // namespace sion::sandbox_cmd
