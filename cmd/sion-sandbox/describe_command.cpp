// SPDX-License-Identifier: MIT
// sion-sandbox describe: the options judged as exec and serve judge them, pre-flight included, and
// the sandbox they describe printed as one JSON object; nothing runs. sion-run asks it before a
// session starts, so the seeds' refusals are sion-sandbox's words.
#include "cmd/sion-sandbox/commands.hpp"

#include "sandboxd/preflight.hpp"

#include "lib/log.hpp"

namespace sion::sandbox_cmd {

namespace {

void print(const Json& object) {
    if (int err = write_stdout(object.dump() + "\n"); err != 0)
        die_of_stdout_error(err);
}

// A refusal: on stdout for the program that asked, on stderr for a person, and its status.
int refuse(const Error& error) {
    Json e = Json::object();
    e.set("code", to_int(error.exit()));
    e.set("message", error.message());
    Json answer = Json::object();
    answer.set("error", std::move(e));
    print(answer);
    report(error);
    return to_int(error.exit());
}

} // namespace

int describe_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-sandbox describe",
        "sion-sandbox describe [options]",
        "Judge the options as exec and serve judge them, pre-flight included, and print the\n"
        "sandbox they describe as one JSON object, or {\"error\":{\"code\",\"message\"}} with the\n"
        "refusal and its exit status (64 or 78). Nothing runs.",
        sandbox_options(false),
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    auto config = sandboxd::config_from_args(args);
    if (!config)
        return refuse(config.error());
    if (Status ok = sandboxd::preflight(*config); !ok)
        return refuse(ok.error());
    print(proto::config_to_json(*config));
    return 0;
}

} // namespace sion::sandbox_cmd
