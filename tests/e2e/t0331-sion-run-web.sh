#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The web (seed 000, "Searching the web"): fetch_url reads real pages nobody here wrote (Debian's
# documentation of RE2 and npm, served from tests/web/standin.py on 127.0.0.1, reached with
# --web-allow) with their titles and known text found; a relative redirect followed; a redirect to
# a private address, a name that resolves to one, a redirect loop, a page too large, a slow page, a
# charset the page names and one nobody knows, JSON, a PDF, a binary type; long pages in parts; it
# taints. web_search against stand-ins of Brave Search, Tavily and SearXNG written from their
# documentation, each checking the request as its API documents it; each provider's errors (401,
# 429, 5xx) as one line to the model, the key never in them.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
re2_page=/usr/share/doc/libre2-9/syntax.html
npm_page=/usr/lib/node_modules/npm/docs/output/commands/npm-install.html
[ -r "$re2_page" ] || skip "RE2's syntax page is not installed (Debian package libre2-dev)"
[ -r "$npm_page" ] || skip "npm's documentation is not installed (Debian package nodejs)"
command -v pdftotext >/dev/null || skip "pdftotext is not installed (Debian package poppler-utils)"

cd "$scratch" || exit 1
python3 "$SION_SOURCE_DIR/tests/web/standin.py" --port-file port --log web.log --lifetime 300 \
    --page "re2=$re2_page" --page "npm=$npm_page" 2>web.err &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
wait_until 10 test -s port || fail "the web stand-in did not start: $(cat web.err)"
base="http://127.0.0.1:$(cat port)"
key=test-search-key-0123456789
id=$(sion agent create reader) || exit 1
fetches() { # the fetch_url calls of one answer, then "Read."
    local calls="" url
    for url in "$@"; do
        calls="$calls${calls:+, }{\"tool\": \"fetch_url\", \"input\": {\"url\": \"$url\"}}"
    done
    printf '{"turns": [{"calls": [%s]}, {"text": "Read."}]}\n' "$calls"
}
# run [VAR=VALUE...] OPTION...: a session of one answer's calls, in the environment given.
run() {
    local vars=()
    while [[ ${1:-} == [A-Z_]*=* ]]; do vars+=("$1") && shift; done
    timeout 120 env "${vars[@]}" sion agent run reader "$id" --task 'Read.' --autonomy L6 "$@" </dev/null
}

# --- real pages, titles and text; a redirect followed; parts; taint -------------------------------
fetches "$base/page/re2" "$base/to-page?name=npm" >real.json
printf '{"turns": [{"calls": [{"tool": "fetch_url", "input": {"url": "%s/page/npm", "part": 2}}]}, {"text": "Read."}]}\n' "$base" >part.json
expect_exit 0 run --model script:real.json --web --web-allow 127.0.0.1
expect_grep "^← RE2 regular expression syntax reference$" "$scratch/out"
expect_grep "^# RE2 regular expression syntax reference$" "$scratch/out"
expect_grep "^This page lists the regular expression syntax accepted by RE2\.$" "$scratch/out"
expect_grep '^\[\[:alpha:\]\] \| ASCII character class$' "$scratch/out"
expect_grep "^← npm-install$" "$scratch/out"
expect_grep "^$base/page/npm$" "$scratch/out"
expect_grep "^# npm-install @" "$scratch/out"
expect_grep "^Install a package$" "$scratch/out"
expect_grep "^\(part 1 of [0-9]+\)$" "$scratch/out"
expect_grep '^\(the page goes on: fetch_url with "part": 2 gives the next part\)$' "$scratch/out"
expect_grep "^the session is tainted: what fetch_url returned came from outside$" "$scratch/out"
expect_exit 0 run --model script:part.json --web --web-allow 127.0.0.1
expect_grep "^\(part 2 of [0-9]+\)$" "$scratch/out"

# --- refused: private addresses, loops, size, types; charsets, JSON, PDF --------------------------
fetches "http://localhost:$(cat port)/page/re2" "$base/to-private" "$base/loop" "$base/big" \
    "$base/picture.png" "$base/latin1" "$base/bogus-charset" "$base/meta-charset" "$base/data.json" \
    "$base/doc.pdf" "ftp://example.org/x" >edges.json
expect_exit 0 run --model script:edges.json --web --web-allow 127.0.0.1
expect_grep "^✗ fetch_url reads public pages only: 'http://localhost:[0-9]+/page/re2' is at (127\.0\.0\.1|::1), this machine's address \(the operator may allow the host with --web-allow localhost\)$" "$scratch/out"
expect_grep "^✗ fetch_url reads public pages only: 'http://localhost:[0-9]+/page/x' is at (127\.0\.0\.1|::1), this machine's address" "$scratch/out"
expect_grep "^✗ $base/loop redirects more than 10 times$" "$scratch/out"
expect_grep "^✗ the page at $base/big is larger than 5 MiB$" "$scratch/out"
expect_grep "^✗ fetch_url reads HTML, text, JSON and PDF: $base/picture\.png is image/png$" "$scratch/out"
expect_grep "^café crème$" "$scratch/out"
expect_grep "^\(its charset 'x-no-such-charset' is unknown: it is read as UTF-8\)$" "$scratch/out"
expect_grep "^plain words �$" "$scratch/out"
expect_grep "^naïve “quotes”$" "$scratch/out"
expect_grep '^\{"answer": 42\}$' "$scratch/out"
expect_grep "^Hello from a PDF page\.$" "$scratch/out"
expect_grep "^✗ bad URL 'ftp://example\.org/x': not an http or https URL with a host$" "$scratch/out"
# Without --web-allow, not even the operator's own machine.
fetches "$base/page/re2" >one.json
expect_exit 0 run --model script:one.json --web
expect_grep "^✗ fetch_url reads public pages only: '$base/page/re2' is at 127\.0\.0\.1, this machine's address \(the operator may allow the host with --web-allow 127\.0\.0\.1\)$" "$scratch/out"
expect_exit 64 run --model script:one.json --web-allow 127.0.0.1 &&
    expect_err "sion-run: --web-allow is for a session with --web: add --web"
expect_exit 64 run --model script:one.json --web --web-allow http://x/ &&
    expect_err "sion-run: --web-allow takes a host's name, not 'http://x/'"

# --- web_search: three providers, their requests, their errors -----------------------------------
searches() {
    local calls="" q
    for q in "$@"; do calls="$calls${calls:+, }$q"; done
    printf '{"turns": [{"calls": [%s]}, {"text": "Searched."}]}\n' "$calls"
}
searches '{"tool": "web_search", "input": {"query": "sion agents"}}' \
    '{"tool": "web_search", "input": {"query": "sion agents", "count": 2, "freshness": "week"}}' \
    '{"tool": "web_search", "input": {"query": "busy"}}' \
    '{"tool": "web_search", "input": {"query": "boom"}}' \
    '{"tool": "web_search", "input": {"query": "x", "count": 11}}' >search.json
expect_exit 0 run BRAVE_SEARCH_API_KEY=$key BRAVE_SEARCH_BASE_URL="$base" --model script:search.json --web
expect_grep "^← 1\. Brave result 1$" "$scratch/out"
expect_grep "^   https://example\.org/brave/5$" "$scratch/out"
expect_grep "^   The 1th thing found\.$" "$scratch/out"
grep -q "example.org/brave/6" "$scratch/out" && fail "more than five results unless asked" || ok
expect_grep "^← 1\. Brave result 1 \(pw\)$" "$scratch/out"
expect_grep "^✗ Brave Search answered HTTP 429: too many searches for now: Request rate limit exceeded for plan\.$" "$scratch/out"
expect_grep "^✗ Brave Search answered HTTP 503: upstream unavailable$" "$scratch/out"
expect_grep "^✗ web_search's 'count' is 1 to 10 \(5 unless given\)$" "$scratch/out"
expect_grep "^the session is tainted: what web_search returned came from outside$" "$scratch/out"
expect_grep '"path": "/res/v1/web/search\?q=sion%20agents&count=2&freshness=pw"' web.log
expect_exit 0 run SION_SEARCH=tavily TAVILY_API_KEY=$key TAVILY_BASE_URL="$base" BRAVE_SEARCH_API_KEY=other \
    --model script:search.json --web
expect_grep "^← 1\. Tavily result 1$" "$scratch/out"
expect_grep "^← 1\. Tavily result 1 \(week\)$" "$scratch/out"
expect_grep "^✗ Tavily answered HTTP 429: too many searches for now: Your request has been blocked due to excessive requests\.$" "$scratch/out"
expect_grep "^✗ Tavily answered HTTP 500: Internal Server Error$" "$scratch/out"
expect_grep '"body": \{"query": "sion agents", "max_results": 2, "time_range": "week"\}' web.log
expect_exit 0 run SION_SEARCH="searxng:$base" --model script:search.json --web
expect_grep "^← 1\. SearXNG result 1$" "$scratch/out"
expect_grep "^← 1\. SearXNG result 1 \(week\)$" "$scratch/out"
expect_grep "^✗ SearXNG answered HTTP 502: Bad Gateway$" "$scratch/out"
# A key the provider refuses: one line, and the key nowhere.
searches '{"tool": "web_search", "input": {"query": "x"}}' >one-search.json
expect_exit 0 run BRAVE_SEARCH_API_KEY=bad BRAVE_SEARCH_BASE_URL="$base" --model script:one-search.json --web
expect_grep "^✗ Brave Search answered HTTP 401: check its key: The provided subscription token is invalid\.$" "$scratch/out"
expect_exit 0 run SION_SEARCH=tavily TAVILY_API_KEY=bad TAVILY_BASE_URL="$base" --model script:one-search.json --web
expect_grep "^✗ Tavily answered HTTP 401: check its key: Unauthorized: missing or invalid API key\.$" "$scratch/out"
# No provider: no web_search; a provider named wrong, or without its key, keeps the session from
# starting.
expect_exit 0 run --model script:one-search.json --web
expect_grep "^✗ there is no tool named web_search$" "$scratch/out"
expect_exit 1 run SION_SEARCH=bing --model script:one-search.json --web &&
    expect_err "error: SION_SEARCH is 'bing': give brave, tavily or searxng:https://…"
expect_exit 1 run SION_SEARCH=brave --model script:one-search.json --web &&
    expect_err "error: SION_SEARCH is brave, and no BRAVE_SEARCH_API_KEY is set or kept (sion agent credential add BRAVE_SEARCH_API_KEY)"

# --- a slow page: cut at fetch_url's 30 s ---------------------------------------------------------
fetches "$base/slow" >slow.json
expect_exit 0 run --model script:slow.json --web --web-allow 127.0.0.1
expect_grep "^✗ cannot reach '$base/slow': Timeout was reached" "$scratch/out"

done_testing
