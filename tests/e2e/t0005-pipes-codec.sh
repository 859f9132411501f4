#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The pipes codec end to end: pipe-peer (tests/tools, a fixture serving echo/say and echo/later on
# rpc::UvConnection) driven through real pipes. Every bad input the issue names (malformed JSON,
# over-long lines, invalid UTF-8, unknown methods, a closed stdin, input ending mid-line, a closed
# stdout) gets its answer or its one-line message and exit code, and what follows it is not lost.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$SION_BIN/pipe-peer" ]; then
    fail "pipe-peer is not built: build the target pipe-peer (tests/tools) first"
    done_testing
    exit 1
fi

in="$scratch/in"

# req ID METHOD [PARAMS]: one request line.
req() {
    if [ $# -ge 3 ]; then
        printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}\n' "$1" "$2" "$3"
    else
        printf '{"jsonrpc":"2.0","id":%s,"method":"%s"}\n' "$1" "$2"
    fi
}

# expect_status WANT GOT WHAT: a pipeline's exit statuses ("${PIPESTATUS[*]}") are exactly WANT.
expect_status() {
    if [ "$2" != "$1" ]; then
        fail "exit statuses '$2', want '$1': $3"
        sed 's/^/  stderr: /' "$scratch/err" >&2
        return 1
    fi
    ok
}

# An answer, and a clean end of input: exit 0 and nothing on stderr.
req 1 echo/say '{"a":[1,"two",null]}' >"$in"
expect_exit 0 pipe-peer <"$in" && expect_out '{"jsonrpc":"2.0","id":1,"result":{"a":[1,"two",null]}}' && expect_err ''

# Malformed JSON: one -32700 answer with id null, and the next request is still answered.
{
    echo 'not json'
    echo '{"jsonrpc":"2.0","id":2,"method":"echo/say",'
    echo '{"jsonrpc":"2.0","id":01,"method":"echo/say"}'
    req 3 echo/say '["next"]'
} >"$in"
expect_exit 0 pipe-peer <"$in" && expect_out '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 0"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 44"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 23"}}
{"jsonrpc":"2.0","id":3,"result":["next"]}' && expect_err ''

# The same through a pipe, every stage's status checked.
printf 'garbage\n%s\n' "$(req 4 echo/say '{"k":"v"}')" | pipe-peer >"$scratch/out" 2>"$scratch/err"
expect_status "0 0" "${PIPESTATUS[*]}" "malformed JSON through a pipe"
expect_out '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 0"}}
{"jsonrpc":"2.0","id":4,"result":{"k":"v"}}' && expect_err ''

# Over-long lines: over 1 MiB by default is -32600, and reading goes on. A line of exactly 1 MiB
# is taken.
prefix='{"jsonrpc":"2.0","id":5,"method":"echo/say","params":["'
suffix='"]}'
pad=$((1048576 - ${#prefix} - ${#suffix}))
filler=$(head -c "$pad" /dev/zero | tr '\0' x)
{
    head -c 1048577 /dev/zero | tr '\0' y
    echo
    printf '%s%s%s\n' "$prefix" "$filler" "$suffix"
    req 6 echo/say '[6]'
} >"$in"
expect_exit 0 pipe-peer <"$in" && expect_out '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 1048577 bytes is longer than 1048576"}}
{"jsonrpc":"2.0","id":5,"result":["'"$filler"'"]}
{"jsonrpc":"2.0","id":6,"result":[6]}' && expect_err ''

# Far over the cap, streamed through a pipe: answered all the same.
{
    head -c 20000000 /dev/zero | tr '\0' z
    echo
    req 7 echo/say '[7]'
} | pipe-peer >"$scratch/out" 2>"$scratch/err"
expect_status "0 0" "${PIPESTATUS[*]}" "a 20 MB line through a pipe"
expect_out '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 20000000 bytes is longer than 1048576"}}
{"jsonrpc":"2.0","id":7,"result":[7]}' && expect_err ''

# --max-line 100: a line of 100 bytes is taken (with "\r\n" too), one of 101 is not.
base=$(req 8 echo/say '[""]')
fill100=$(head -c $((100 - ${#base})) /dev/zero | tr '\0' a)
line100=$(req 8 echo/say "[\"$fill100\"]")
line101=$(req 9 echo/say "[\"${fill100}b\"]")
[ ${#line100} -eq 100 ] && [ ${#line101} -eq 101 ] && ok || fail "test lines of 100 and 101 bytes are ${#line100} and ${#line101}"
printf '%s\n%s\n%s\r\n%s\n' "$line101" "$line100" "$line100" "$(req 10 echo/say '[10]')" >"$in"
expect_exit 0 pipe-peer --max-line 100 <"$in" && expect_out '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 101 bytes is longer than 100"}}
{"jsonrpc":"2.0","id":8,"result":["'"$fill100"'"]}
{"jsonrpc":"2.0","id":8,"result":["'"$fill100"'"]}
{"jsonrpc":"2.0","id":10,"result":[10]}' && expect_err ''
expect_exit 0 pipe-peer --max-line=100 <"$in" && expect_grep '"id":10,"result"' "$scratch/out"

# Invalid UTF-8 (a byte never in UTF-8, an overlong '/', a surrogate, a truncated sequence): -32700.
{
    printf '{"jsonrpc":"2.0","id":11,"method":"echo/say","params":["\xff"]}\n'
    printf '{"jsonrpc":"2.0","id":12,"method":"echo/say","params":["\xc0\xaf"]}\n'
    printf '{"jsonrpc":"2.0","id":13,"method":"echo/say","params":["\xed\xa0\x80"]}\n'
    printf '{"jsonrpc":"2.0","id":14,"method":"echo/say","params":["\xe2\x82"]}\n'
    printf '{"jsonrpc":"2.0","id":15,"method":"echo/say","params":["\xc3\xa9\xe2\x82\xac"]}\n'
} >"$in"
bad='{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid UTF-8 at byte 56"}}'
expect_exit 0 pipe-peer <"$in" && expect_out "$bad
$bad
$bad
$bad
{\"jsonrpc\":\"2.0\",\"id\":15,\"result\":[\"$(printf '\xc3\xa9\xe2\x82\xac')\"]}" && expect_err ''

# Unknown methods: -32601 with the request's id, string or number; bad requests: -32600.
{
    req '"abc"' nope
    req 16 echo/nothing '{}'
    echo '{"jsonrpc":"1.0","id":17,"method":"echo/say"}'
    echo '[{"jsonrpc":"2.0","id":18,"method":"echo/say"}]'
    echo '{"jsonrpc":"2.0","method":"unknown/notification"}'
    req 19 echo/say
} >"$in"
expect_exit 0 pipe-peer <"$in" && expect_out '{"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"method not found: nope"}}
{"jsonrpc":"2.0","id":16,"error":{"code":-32601,"message":"method not found: echo/nothing"}}
{"jsonrpc":"2.0","id":17,"error":{"code":-32600,"message":"invalid request: jsonrpc must be \"2.0\""}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported"}}
{"jsonrpc":"2.0","id":19,"result":null}' && expect_err ''

# echo/later: answers come out in the order they finish, each with its own id. The requests are
# read in one go from a file, so their timers start together and their order is their delays'.
{
    req 20 echo/later '{"ms":300,"tag":"slow"}'
    req 21 echo/later '{"ms":100}'
    req '"now"' echo/say '{}'
    req 22 echo/later '{"ms":0}'
    req 23 echo/later '{"ms":200}'
    req 24 echo/later '{"ms":"soon"}'
} >"$in"
expect_exit 0 pipe-peer <"$in" && expect_out '{"jsonrpc":"2.0","id":"now","result":{}}
{"jsonrpc":"2.0","id":24,"error":{"code":-32602,"message":"invalid params: ms must be a non-negative integer"}}
{"jsonrpc":"2.0","id":22,"result":{"ms":0}}
{"jsonrpc":"2.0","id":21,"result":{"ms":100}}
{"jsonrpc":"2.0","id":23,"result":{"ms":200}}
{"jsonrpc":"2.0","id":20,"result":{"ms":300,"tag":"slow"}}' && expect_err ''
# Input that ends before the answers are out does not lose them.
req 25 echo/later '{"ms":100}' | pipe-peer >"$scratch/out" 2>"$scratch/err"
expect_status "0 0" "${PIPESTATUS[*]}" "echo/later then the end of input"
expect_out '{"jsonrpc":"2.0","id":25,"result":{"ms":100}}' && expect_err ''

# A closed stdin: exit 0, nothing printed.
expect_exit 0 pipe-peer </dev/null && expect_out '' && expect_err ''
expect_exit 0 pipe-peer <&- && expect_out '' && expect_err ''
: | pipe-peer >"$scratch/out" 2>"$scratch/err"
expect_status "0 0" "${PIPESTATUS[*]}" "an empty pipe"
expect_out '' && expect_err ''

# Input that ends mid-line: exit 74 and one line saying so; the whole lines before it are answered.
{
    req 26 echo/say '[26]'
    printf '{"jsonrpc":"2.0","id":27,"meth'
} >"$in"
expect_exit 74 pipe-peer <"$in" && expect_out '{"jsonrpc":"2.0","id":26,"result":[26]}' && expect_err 'pipe-peer: peer closed mid-line'
# Mid-way through an over-long line.
head -c 300 /dev/zero | tr '\0' w >"$in"
expect_exit 74 pipe-peer --max-line 100 <"$in" && expect_out '' && expect_err 'pipe-peer: peer closed mid-line'
# A writer that dies mid-line.
{
    req 28 echo/say '[28]'
    printf '{"jsonrpc":"2.0","id":29,'
    kill -KILL "$BASHPID"
} | pipe-peer >"$scratch/out" 2>"$scratch/err"
expect_status "137 74" "${PIPESTATUS[*]}" "a writer killed mid-line"
expect_out '{"jsonrpc":"2.0","id":28,"result":[28]}' && expect_err 'pipe-peer: peer closed mid-line'

# A closed stdout: the reader is gone before the answers (far more than a pipe holds) are out.
for i in $(seq 1 3000); do
    req "$i" echo/say '["padding padding padding padding padding padding padding padding"]'
done >"$scratch/many"
pipe-peer <"$scratch/many" 2>"$scratch/err" | true
expect_status "74 0" "${PIPESTATUS[*]}" "pipe-peer | true"
expect_err 'pipe-peer: write error: Broken pipe'
# A reader that takes one line and leaves: it got that line whole.
pipe-peer <"$scratch/many" 2>"$scratch/err" | head -n 1 >"$scratch/out"
expect_status "74 0" "${PIPESTATUS[*]}" "pipe-peer | head -n 1"
expect_out '{"jsonrpc":"2.0","id":1,"result":["padding padding padding padding padding padding padding padding"]}'
expect_err 'pipe-peer: write error: Broken pipe'
# Through a FIFO whose reader closed after one line.
mkfifo "$scratch/fifo"
head -n 1 "$scratch/fifo" >"$scratch/out" &
reader=$!
pipe-peer <"$scratch/many" >"$scratch/fifo" 2>"$scratch/err"
expect_status 74 "$?" "pipe-peer > fifo"
wait "$reader"
expect_status 0 "$?" "the FIFO's reader"
expect_out '{"jsonrpc":"2.0","id":1,"result":["padding padding padding padding padding padding padding padding"]}'
expect_err 'pipe-peer: write error: Broken pipe'
# A stdout that refuses writes, as a file.
if [ -w /dev/full ]; then
    req 30 echo/say >"$in"
    expect_exit 74 sh -c 'pipe-peer >/dev/full' <"$in" && expect_err 'pipe-peer: write error: No space left on device'
fi
# fd 1 closed at the start is guarded to /dev/null: answers go nowhere, and that is no error.
req 31 echo/say >"$in"
expect_exit 0 sh -c 'pipe-peer >&-' <"$in" && expect_err ''

# The command line.
expect_exit 64 pipe-peer --max-line && expect_err "pipe-peer: option '--max-line' needs an argument"
expect_exit 64 pipe-peer --max-line 0 && expect_err "pipe-peer: option '--max-line' needs a positive number of bytes, not '0'"
expect_exit 64 pipe-peer --max-line 10k && expect_err "pipe-peer: option '--max-line' needs a positive number of bytes, not '10k'"
expect_exit 64 pipe-peer --max-line -5 && expect_err "pipe-peer: option '--max-line' needs a positive number of bytes, not '-5'"
expect_exit 64 pipe-peer --frob && expect_err "pipe-peer: unknown option '--frob'"
expect_exit 64 pipe-peer extra && expect_err "pipe-peer: unexpected operand 'extra'"
expect_exit 0 pipe-peer --help && expect_grep '^usage: pipe-peer ' "$scratch/out"

done_testing
