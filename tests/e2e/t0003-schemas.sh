#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# schemas/ and the fixtures: every schema is a valid JSON Schema 2020-12, every line of
# tests/fixtures/envelope/ and methods/ passes the envelope and its method's schemas, every line of
# envelope-invalid/ and methods-invalid/ fails, every file of a format's fixtures (script-model/) passes
# its schema and every file of script-model-invalid/ fails, every line of a program's events
# (run-event/) passes its schema and every line of run-event-invalid/ fails, every line of a
# command's list (lists/) passes its schema and every line of lists-invalid/ fails
# (tests/validate_fixtures.py, schemas/README.md). Then the validator is shown to catch each kind of mistake, on copies in the
# scratch directory.
. "$(dirname "$0")/lib.sh"

# Debian's interpreter, which has python3-jsonschema; the python3 first on PATH may be another one.
py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"
"$py" -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null ||
    skip "$py cannot import jsonschema with draft 2020-12 (Debian package python3-jsonschema)"
validate="$SION_SOURCE_DIR/tests/validate_fixtures.py"

# The tree as it is: nothing to say.
cd "$SION_SOURCE_DIR" || exit 1
expect_exit 0 "$py" "$validate" && expect_out ""
for d in tests/fixtures/envelope tests/fixtures/envelope-invalid examples; do
    set -- "$SION_SOURCE_DIR/$d"/*.jsonl
    [ -f "$1" ] && ok || fail "no message fixtures in $d"
done
for d in tests/fixtures/script-model tests/fixtures/script-model-invalid; do
    set -- "$SION_SOURCE_DIR/$d"/*.json
    [ -f "$1" ] && ok || fail "no script fixtures in $d"
done
for d in tests/fixtures/run-event tests/fixtures/run-event-invalid; do
    set -- "$SION_SOURCE_DIR/$d"/*.jsonl
    [ -f "$1" ] && ok || fail "no event fixtures in $d"
done
for d in tests/fixtures/lists tests/fixtures/lists-invalid; do
    set -- "$SION_SOURCE_DIR/$d"/*.jsonl
    [ -f "$1" ] && ok || fail "no list fixtures in $d"
done
cd "$scratch" || exit 1

# check NAME EXPECTED-EXIT EXPECTED-STDOUT: runs the validator on the copies in $scratch/t.
check() {
    local name=$1 want=$2 out=$3
    expect_exit "$want" "$py" "$validate" --schemas t/schemas --fixtures t/fixtures --examples t/examples || {
        sed 's/^/  stdout: /' "$scratch/out" >&2
        return
    }
    expect_out "$out" || echo "  in: $name" >&2
}

# fresh: a copy of schemas/, tests/fixtures/ and examples/ to spoil.
fresh() {
    rm -rf t && mkdir t && cp -R "$SION_SOURCE_DIR/schemas" "$SION_SOURCE_DIR/tests/fixtures" "$SION_SOURCE_DIR/examples" t/
}

fresh
check "the copies" 0 ""

fresh
echo '{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}' >>t/fixtures/envelope/request.jsonl
echo '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"no"}}' >>t/fixtures/envelope/response.jsonl
n=$(wc -l <t/fixtures/envelope/request.jsonl)
m=$(wc -l <t/fixtures/envelope/response.jsonl)
check "bad valid lines" 1 "t/fixtures/envelope/request.jsonl:$n: envelope.schema.json: as a request: {'n': 1} is not of type 'string', 'integer' at \$.id
t/fixtures/envelope/response.jsonl:$m: envelope.schema.json: as a success response, it may not have 'error'"

fresh
echo '{"jsonrpc":"2.0","id":1,"result":{},"error":null}' >t/examples/pipes-bad.jsonl
echo '{"jsonrpc":"2.0","id":1,"result":{},"error":null}' >t/examples/other.jsonl
check "a bad example of a pipe" 1 "t/examples/pipes-bad.jsonl:1: envelope.schema.json: as a success response, it may not have 'error'"

fresh
echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' >>t/fixtures/envelope-invalid/id.jsonl
n=$(wc -l <t/fixtures/envelope-invalid/id.jsonl)
check "a valid line among the invalid" 1 "t/fixtures/envelope-invalid/id.jsonl:$n: valid against envelope.schema.json, but it must fail"

fresh
printf '{"jsonrpc":"2.0","method":"ping"}\n\n{"jsonrpc":\n{"jsonrpc":"2.0","id":1,"result":NaN}\n{"jsonrpc":"2.0","method":"ping"}' >t/fixtures/envelope/odd.jsonl
: >t/fixtures/envelope-invalid/empty.jsonl
check "lines that are not messages" 1 "t/fixtures/envelope/odd.jsonl: the last line has no newline
t/fixtures/envelope/odd.jsonl:2: blank line
t/fixtures/envelope/odd.jsonl:3: not JSON: Expecting value: line 1 column 12 (char 11)
t/fixtures/envelope/odd.jsonl:4: not JSON: NaN is not JSON
t/fixtures/envelope-invalid/empty.jsonl: empty file"

fresh
printf '{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"demo.echo.params.json","type":"objekt"}\n' >t/schemas/demo.echo.params.json
printf '{"$schema":"http://json-schema.org/draft-07/schema#","$id":"demo.echo.result.json"}\n' >t/schemas/demo.echo.result.json
printf '{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"other.json"}\n' >t/schemas/demo.json
printf '{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"demo.ref.params.json","$ref":"common.json"}\n' >t/schemas/demo.ref.params.json
printf '{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"demo.doc.schema.json"}\n' >t/schemas/demo.doc.schema.json
check "bad schemas" 1 "t/schemas/demo.doc.schema.json: not a schema's name: want envelope.schema.json, <name>.schema.json, <program>.event.json, <program>.<command>.json, <noun>.<verb>.params.json or <noun>.<verb>.result.json
t/schemas/demo.echo.params.json: not a valid 2020-12 schema: 'objekt' is not valid under any of the given schemas at \$.type
t/schemas/demo.echo.result.json: \$schema is not https://json-schema.org/draft/2020-12/schema
t/schemas/demo.json: not a schema's name: want envelope.schema.json, <name>.schema.json, <program>.event.json, <program>.<command>.json, <noun>.<verb>.params.json or <noun>.<verb>.result.json
t/schemas/demo.ref.params.json: cannot resolve \$ref 'common.json': 'common.json' is not a schema in schemas/"

# A method's schemas and fixtures: demo/echo takes {"text": string} and answers {"echoed": string}.
method_schemas() {
    cat >t/schemas/demo.echo.params.json <<'EOF'
{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"demo.echo.params.json",
 "type":"object","required":["text"],"properties":{"text":{"$ref":"demo.echo.result.json#/$defs/text"}}}
EOF
    cat >t/schemas/demo.echo.result.json <<'EOF'
{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"demo.echo.result.json",
 "type":"object","required":["echoed"],"properties":{"echoed":{"$ref":"#/$defs/text"}},
 "$defs":{"text":{"type":"string"}}}
EOF
    mkdir -p t/fixtures/methods t/fixtures/methods-invalid
    cat >t/fixtures/methods/demo.echo.jsonl <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"demo/echo","params":{"text":"hi"}}
{"jsonrpc":"2.0","id":1,"result":{"echoed":"hi"}}
{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params"}}
EOF
    cat >t/fixtures/methods-invalid/demo.echo.jsonl <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"demo/echo","params":{"text":7}}
{"jsonrpc":"2.0","id":1,"method":"demo/echo"}
{"jsonrpc":"2.0","id":1,"result":{"said":"hi"}}
EOF
}

fresh && method_schemas
check "a method's schemas and fixtures" 0 ""

fresh && method_schemas
echo '{"jsonrpc":"2.0","id":3,"method":"demo/echo","params":{}}' >>t/fixtures/methods/demo.echo.jsonl
echo '{"jsonrpc":"2.0","id":3,"result":{"echoed":false}}' >>t/fixtures/methods/demo.echo.jsonl
echo '{"jsonrpc":"2.0","id":4,"method":"demo/other","params":{"text":"hi"}}' >>t/fixtures/methods/demo.echo.jsonl
echo '{"jsonrpc":"2.0","id":5,"method":"demo/echo","params":{"text":7}}' >>t/fixtures/envelope/request.jsonl
n=$(wc -l <t/fixtures/envelope/request.jsonl)
echo '{"jsonrpc":"2.0","id":1,"method":"demo/echo","params":{"text":"fine"}}' >>t/fixtures/methods-invalid/demo.echo.jsonl
echo '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"no"}}' >>t/fixtures/methods-invalid/demo.echo.jsonl
echo '{"jsonrpc":"2.0","method":"demo/echo","params":"x"}' >>t/fixtures/methods-invalid/demo.echo.jsonl
check "a method's fixtures that break its schemas" 1 "t/fixtures/envelope/request.jsonl:$n: demo.echo.params.json: 7 is not of type 'string' at \$.text
t/fixtures/methods/demo.echo.jsonl:4: demo.echo.params.json: 'text' is a required property at \$
t/fixtures/methods/demo.echo.jsonl:5: demo.echo.result.json: False is not of type 'string' at \$.echoed
t/fixtures/methods/demo.echo.jsonl:6: method 'demo/other' in the fixture of 'demo/echo'
t/fixtures/methods-invalid/demo.echo.jsonl:4: valid against demo.echo.params.json, but it must fail
t/fixtures/methods-invalid/demo.echo.jsonl:5: an error response, which no method's schema checks
t/fixtures/methods-invalid/demo.echo.jsonl:6: envelope.schema.json: as a notification: 'x' is not of type 'object', 'array' at \$.params"

# A schema no fixture exercises, a fixture without its schema, a request without a result schema.
fresh && method_schemas
rm t/fixtures/methods/demo.echo.jsonl
echo '{"jsonrpc":"2.0","id":1,"method":"demo/ping"}' >t/fixtures/methods/demo.ping.jsonl
printf '{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"demo.tell.params.json","type":"object"}\n' >t/schemas/demo.tell.params.json
echo '{"jsonrpc":"2.0","id":1,"method":"demo/tell"}' >t/fixtures/methods/demo.tell.jsonl
echo '{}' >t/fixtures/methods/README.txt
check "coverage" 1 "t/fixtures/methods/README.txt: not a fixture: want <name>.jsonl
t/fixtures/methods/demo.ping.jsonl:1: a request, but schemas/demo.ping.result.json is missing
t/fixtures/methods/demo.ping.jsonl:1: schemas/demo.ping.params.json is missing
t/fixtures/methods/demo.tell.jsonl:1: a request, but schemas/demo.tell.result.json is missing
t/schemas/demo.echo.params.json: no valid fixture in t/fixtures/methods/demo.echo.jsonl
t/schemas/demo.echo.result.json: no valid fixture in t/fixtures/methods/demo.echo.jsonl"

# A file format's schema and its fixtures: script-model.schema.json, tests/fixtures/script-model[-invalid]/.
fresh
echo '{"turns":[{"text":""}]}' >t/fixtures/script-model/zz-empty-text.json
printf '{"turns":' >t/fixtures/script-model/zz-cut.json
echo '{}' >t/fixtures/script-model/zz-notes.txt
echo '{"turns":[]}' >t/fixtures/script-model-invalid/zz-empty.json
printf '{"turns":[{"text":"\377"}]}\n' >t/fixtures/script-model-invalid/zz-latin1.json
check "a script's fixtures that break its schema" 1 "t/fixtures/script-model/zz-notes.txt: not a fixture: want <name>.json
t/fixtures/script-model/zz-cut.json: not JSON: Expecting value: line 1 column 10 (char 9)
t/fixtures/script-model/zz-empty-text.json: script-model.schema.json: '' is too short at \$.turns[0].text
t/fixtures/script-model-invalid/zz-empty.json: valid against script-model.schema.json, but it must fail
t/fixtures/script-model-invalid/zz-latin1.json: not UTF-8: 'utf-8' codec can't decode byte 0xff in position 19: invalid start byte"

fresh
rm t/fixtures/script-model/*.json
check "a file format without valid fixtures" 1 "t/schemas/script-model.schema.json: no valid fixture in t/fixtures/script-model"

fresh
rm -r t/fixtures/script-model t/fixtures/script-model-invalid
check "a file format without fixtures at all" 1 "t/schemas/script-model.schema.json: no valid fixture in t/fixtures/script-model"

# A program's events and their fixtures: run.event.json, tests/fixtures/run-event[-invalid]/.
fresh
echo '{"event":"text"}' >>t/fixtures/run-event/primes.jsonl
n=$(wc -l <t/fixtures/run-event/primes.jsonl)
echo '{"event":"text","text":"fine"}' >>t/fixtures/run-event-invalid/said.jsonl
m=$(wc -l <t/fixtures/run-event-invalid/said.jsonl)
echo '{}' >t/fixtures/run-event/notes.json
check "events that break their schema" 1 "t/fixtures/run-event/notes.json: not a fixture: want <name>.jsonl
t/fixtures/run-event/primes.jsonl:$n: run.event.json: 'text' is a required property at \$
t/fixtures/run-event-invalid/said.jsonl:$m: valid against run.event.json, but it must fail"

fresh
rm -r t/fixtures/run-event
check "events without fixtures" 1 "t/schemas/run.event.json: no valid fixture in t/fixtures/run-event"

# A command's list and its fixtures: run.sessions.json, tests/fixtures/lists[-invalid]/run.sessions.jsonl.
fresh
echo '{"session":"af88d6083cc5587b","state":"done"}' >>t/fixtures/lists/run.sessions.jsonl
n=$(wc -l <t/fixtures/lists/run.sessions.jsonl)
head -n 1 t/fixtures/lists/run.sessions.jsonl >>t/fixtures/lists-invalid/run.sessions.jsonl
m=$(wc -l <t/fixtures/lists-invalid/run.sessions.jsonl)
echo '{}' >t/fixtures/lists/run.nothing.jsonl
echo '{}' >t/fixtures/lists/sessions.jsonl
check "list lines that break their schema" 1 "t/fixtures/lists/run.nothing.jsonl: schemas/run.nothing.json is missing
t/fixtures/lists/run.sessions.jsonl:$n: run.sessions.json: 'agent' is a required property at \$
t/fixtures/lists/sessions.jsonl: not a list's fixture: want <program>.<command>.jsonl
t/fixtures/lists-invalid/run.sessions.jsonl:$m: valid against run.sessions.json, but it must fail"

fresh
rm t/fixtures/lists/run.sessions.jsonl
check "a list without fixtures" 1 "t/schemas/run.sessions.json: no valid fixture in t/fixtures/lists/run.sessions.jsonl"

# No envelope at all.
fresh
rm t/schemas/envelope.schema.json
check "no envelope" 1 "t/schemas: envelope.schema.json is missing"

# The validator wrote nothing into the source tree.
[ -z "$(find "$SION_SOURCE_DIR/schemas" "$SION_SOURCE_DIR/tests" -name '__pycache__' -o -name '*.pyc' | head -n 1)" ] &&
    ok || fail "the validator left compiled files in the source tree"

done_testing
