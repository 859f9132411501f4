#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TLS to a model: the stand-in of the Messages API speaking HTTPS with certificates of a CA made
# here. A certificate of a CA the machine does not trust, or one for another name, is refused before
# anything is sent, and the next --model is asked; SSL_CERT_FILE naming the CA's bundle makes the
# same server trusted (a private CA, a proxy that inspects TLS); an SSL_CERT_FILE that cannot be
# read is the user's to fix: the session fails with its line, and no next model is asked; a
# plain http request does not read it.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/scripts"
cd "$scratch" || exit 1
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL SSL_CERT_FILE SION_MODEL_TIMEOUT
agent=$(sion agent create coder) || exit 1
export ANTHROPIC_API_KEY=sk-ant-test-0001 OPENAI_API_KEY=sk-test-0002
printf '%s\n' '[{"text": "Hello over TLS."}]' >"$scratch/scripts/hello.json"

# A CA, and two certificates it signs: one for localhost, one for another name.
tls="$scratch/tls"
tls_authority "$tls"
tls_certificate "$tls" localhost DNS:localhost,IP:127.0.0.1
tls_certificate "$tls" other.test DNS:other.test

start_standin s anthropic_server "$scratch/scripts/hello.json" --tls "$tls/localhost.pem"
s_url="https://localhost:${s_url##*:}"
start_standin w anthropic_server "$scratch/scripts/hello.json" --tls "$tls/other.test.pem"
w_url="https://localhost:${w_url##*:}"

# The machine's CAs do not know this one: refused in the handshake, nothing sent.
expect_exit 69 run_with ANTHROPIC_BASE_URL="$s_url" -- --task Hi --model anthropic:claude-opus-5-5 &&
    expect_grep "^session [0-9a-f]{16}: failed: the model anthropic:claude-opus-5-5 failed: cannot reach '$s_url/v1/messages': .*(certificate|issuer).*\$" "$scratch/out"
expect_query "$s_log" 'len(r)' '0'

# With SSL_CERT_FILE naming the CA, the same server is trusted.
expect_exit 0 run_with ANTHROPIC_BASE_URL="$s_url" SSL_CERT_FILE="$tls/ca.pem" -- --task Hi --model anthropic:claude-opus-5-5 &&
    expect_grep '^agent: Hello over TLS\.$' "$scratch/out"
expect_query "$s_log" '[(e["path"], e["headers"]["x-api-key"]) for e in r]' '[["/v1/messages", "sk-ant-test-0001"]]'
expect_clean "$s_log"

# A certificate of the trusted CA for another name is refused, and the next model is asked.
printf '%s\n' '[{"text": "Hello over TLS."}, {"text": "Hello over TLS."}]' >"$scratch/scripts/twice.json"
start_standin o openai_server "$scratch/scripts/twice.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$w_url" SSL_CERT_FILE="$tls/ca.pem" OPENAI_BASE_URL="$o_url/v1" \
    -- --task Hi --model anthropic:claude-opus-5-5 --model openai:gpt-5 &&
    expect_grep '^agent: Hello over TLS\.$' "$scratch/out"
expect_query "$w_log" 'len(r)' '0'
expect_query "$o_log" 'len(r)' '1'

# An SSL_CERT_FILE that cannot be read is the user's to fix: the session fails with its line, and
# the next model is not asked (it would fail alike).
mkdir -p "$tls/dir"
for bad in "$tls/missing.pem" "$tls/dir"; do
    case $bad in
    *missing*) why="cannot be read: No such file or directory" ;;
    *) why="is not a file" ;;
    esac
    expect_exit 69 run_with ANTHROPIC_BASE_URL="$s_url" SSL_CERT_FILE="$bad" OPENAI_BASE_URL="$o_url/v1" \
        -- --task Hi --model anthropic:claude-opus-5-5 --model openai:gpt-5 &&
        expect_grep "^session [0-9a-f]{16}: failed: the model anthropic:claude-opus-5-5 failed: SSL_CERT_FILE '$bad' $why\$" "$scratch/out"
done
expect_query "$s_log" 'len(r)' '1'
expect_query "$o_log" 'len(r)' '1'

# A plain http request to this machine does not read it.
expect_exit 0 run_with SSL_CERT_FILE="$tls/missing.pem" OPENAI_BASE_URL="$o_url/v1" -- --task Hi --model openai:gpt-5 &&
    expect_grep '^agent: Hello over TLS\.$' "$scratch/out"
expect_query "$o_log" 'len(r)' '2'

done_testing
