// SPDX-License-Identifier: MIT
// The shells' completion scripts: each asks `PROGRAM __complete` what may come next, and turns
// its answer (lib/cli.hpp's print_completions()) into the shell's own: a list of words, or its
// own completion of files, directories or commands.
#include "cmd/sion/completion.hpp"

namespace sion::front_door {

namespace {

// bash: COMP_WORDS splits at '=' and ':' (COMP_WORDBREAKS), so the words are joined again before
// they are asked about, and what is offered loses what readline keeps, up to the word's last '='
// or ':'. Loaded by bash-completion from /usr/share/bash-completion/completions, or sourced.
constexpr std::string_view k_bash =
    R"(# bash completion for @PROGRAMS@: made by `sion completion bash` (sion(1)).
_sion_complete() {
    local line=${COMP_LINE:0:COMP_POINT} word glued i
    local -a words=() out=()
    # COMP_WORDS up to the cursor, with what readline split at '=' and ':' joined again
    for ((i = 0; i <= COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        glued=1
        if [[ $line == [[:space:]]* ]]; then
            line=${line#"${line%%[![:space:]]*}"}
            glued=0
        fi
        ((i == COMP_CWORD)) && word=$line
        line=${line#"$word"}
        if ((i > 0 && glued)) && [[ $word == [=:] || ${words[-1]} == *[=:] ]]; then
            words[-1]+=$word
        else
            words+=("$word")
        fi
    done
    local cur=${words[-1]}
    mapfile -t out < <("$1" __complete "${words[@]:1}" 2>/dev/null)
    local kind=${out[0]%%$'\t'*} lead=
    [[ ${out[0]} == *$'\t'* ]] && lead=${out[0]#*$'\t'}
    COMPREPLY=()
    case $kind in
    files)
        compopt -o filenames
        mapfile -t COMPREPLY < <(compgen -f -- "${cur#"$lead"}")
        ;;
    directories)
        compopt -o filenames
        mapfile -t COMPREPLY < <(compgen -d -- "${cur#"$lead"}")
        ;;
    commands)
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        ;;
    words)
        for word in "${out[@]:1}"; do
            COMPREPLY+=("${word%%$'\t'*}")
        done
        # readline replaces only what follows the word's last '=' or ':'
        local keep=${cur%"${cur##*[=:]}"}
        [[ -n $keep ]] && COMPREPLY=("${COMPREPLY[@]#"$keep"}")
        # a value that goes on (anthropic:) takes no space after it
        if ((${#COMPREPLY[@]} == 1)) && [[ ${COMPREPLY[0]} == *[=:] ]]; then
            compopt -o nospace
        fi
        ;;
    esac
    return 0
}
complete -F _sion_complete @PROGRAMS@
)";

// zsh: a file in $fpath (vendor-completions) whose body is the function, or sourced after
// compinit, which then registers it.
constexpr std::string_view k_zsh = R"(#compdef @PROGRAMS@
# zsh completion for @PROGRAMS@: made by `sion completion zsh` (sion(1)).
_sion() {
    local -a out plain goes_on
    local line word desc kind lead=
    out=("${(@f)$(${(Q)words[1]} __complete "${(@Q)words[2,CURRENT-1]}" "${(Q)PREFIX}" 2>/dev/null)}")
    kind=${out[1]%%$'\t'*}
    [[ ${out[1]} == *$'\t'* ]] && lead=${out[1]#*$'\t'}
    [[ -n $lead ]] && compset -P '*='
    case $kind in
    files) _files ;;
    directories) _files -/ ;;
    commands) _command_names -e ;;
    words)
        for line in "${(@)out[2,-1]}"; do
            word=${line%%$'\t'*}
            word=${word#$lead}
            desc=
            [[ $line == *$'\t'* ]] && desc=${line#*$'\t'}
            word=${word//:/\\:}
            # a value that goes on (anthropic:) takes no space after it
            if [[ $word == *[:=] ]]; then
                goes_on+=("$word${desc:+:$desc}")
            else
                plain+=("$word${desc:+:$desc}")
            fi
        done
        (( $#plain )) && _describe -t values value plain
        (( $#goes_on )) && _describe -t values value goes_on -S ''
        ;;
    esac
    return 0
}
if [[ $funcstack[1] == _sion ]]; then
    _sion "$@"
else
    compdef _sion @PROGRAMS@
fi
)";

// fish: a file in vendor_completions.d for each program, or sourced.
constexpr std::string_view k_fish =
    R"(# fish completion for @PROGRAMS@: made by `sion completion fish` (sion(1)).
function __sion_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l out ($words[1] __complete $words[2..] $current 2>/dev/null)
    set -l kind (string split -m 1 \t -- $out[1])
    set -l lead "$kind[2]"
    set -l rest $current
    if test -n "$lead"
        set rest (string sub -s (math (string length -- $lead) + 1) -- $current)
    end
    switch "$kind[1]"
        case files
            for path in $rest*
                test -d $path; and set path $path/
                echo $lead$path
            end
        case directories
            for path in $rest*/
                echo $lead$path
            end
        case commands
            __fish_complete_command
        case words
            printf '%s\n' $out[2..]
    end
end
for program in @PROGRAMS@
    complete -c $program -f -a '(__sion_complete)'
end
)";

} // namespace

CommandSpec completion_spec() {
    return {
        "sion completion",
        "sion completion bash|zsh|fish",
        "Print the shell's completion script for sion and its programs (sion(1), Shell\n"
        "completion); the packages install it where each shell looks.",
        {},
        false,
        {"bash zsh fish"},
    };
}

Result<std::string> completion_script(std::string_view shell,
                                      const std::vector<std::string>& programs) {
    std::string_view script = shell == "bash"   ? k_bash
                              : shell == "zsh"  ? k_zsh
                              : shell == "fish" ? k_fish
                                                : std::string_view();
    if (script.empty())
        return make_error(Exit::usage, "unknown shell '%s': give bash, zsh or fish",
                          std::string(shell).c_str());
    std::string names;
    for (const std::string& p : programs)
        names += (names.empty() ? "" : " ") + p;
    std::string out(script);
    for (size_t at = out.find("@PROGRAMS@"); at != std::string::npos;
         at = out.find("@PROGRAMS@", at + names.size()))
        out.replace(at, 10, names);
    return out;
}

} // namespace sion::front_door
