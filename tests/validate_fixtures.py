#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks schemas/, the message fixtures in tests/fixtures/ and the pipe sessions in examples/ against
each other (schemas/README.md).

Every schema must be a valid JSON Schema 2020-12 named for what it describes; every line of a valid
fixture (and of examples/pipes-*.jsonl) must pass the envelope and its method's schema; every line of an invalid fixture must fail;
every file in tests/fixtures/<name>/ must pass the file format's schema <name>.schema.json, and every
file in tests/fixtures/<name>-invalid/ fail it; every line in tests/fixtures/<program>-event/ must pass
the program's events' schema <program>.event.json, and every line in <program>-event-invalid/ fail it;
every line of tests/fixtures/lists/<program>.<command>.jsonl must pass the list's schema
<program>.<command>.json, and every line of lists-invalid/<program>.<command>.jsonl fail it;
every schema must be exercised by a fixture; every tool's spec in schemas/tools/ must be its name, a
description and a valid input schema. Prints one line per failure on stdout, as
"path:line: what is wrong" (or "path: …" for a whole file), and exits 1 if there was any, 0 if none.

Run with Debian's /usr/bin/python3, which has python3-jsonschema (4.10 or newer).
"""

import argparse
import json
import os
import re
import sys
import warnings

PROG = "validate_fixtures.py"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
ENVELOPE = "envelope.schema.json"
# <noun>.<verb>[.<more>].params.json or .result.json: a method's name with each '/' made a '.'.
METHOD_SCHEMA = re.compile(r"^([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+)\.(params|result)\.json$")
# <name>.schema.json, other than the envelope: a file that sion reads, such as a script of the scripted
# model; the name has no dot, so it is never taken for a method's.
FILE_SCHEMA = re.compile(r"^([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\.schema\.json$")
# <program>.event.json: the JSON events a program prints, one a line (run.event.json for sion-run).
EVENT_SCHEMA = re.compile(r"^([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\.event\.json$")
# <program>.<command>.json: the lines a command that lists prints with --json, one object a line
# (run.sessions.json for `sion-run sessions`, run.credential-list.json for `sion-run credential list`).
# Checked after the two above, whose last words (schema, event) no such command has.
LIST_SCHEMA = re.compile(r"^([a-z][a-z0-9]*(?:-[a-z0-9]+)*\.[a-z][a-z0-9]*(?:-[a-z0-9]+)*)\.json$")
METHOD_FIXTURE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+)\.jsonl$")

try:
    import jsonschema
    from jsonschema.exceptions import RefResolutionError, best_match
except ImportError:
    print(f"{PROG}: cannot import 'jsonschema': install the Debian package python3-jsonschema",
          file=sys.stderr)
    sys.exit(69)

warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver, deprecated in jsonschema 4.18


class Checker:
    def __init__(self, root, schemas_dir, fixtures_dir, examples_dir=None):
        self.root = root
        self.schemas_dir = schemas_dir
        self.fixtures_dir = fixtures_dir
        self.examples_dir = examples_dir
        self.failures = 0
        self.schemas = {}     # file name -> parsed schema, for the valid ones
        self.exercised = set()  # schema file names some valid fixture line was checked against
        self.validators = {}    # (schema, its document) -> validator, by identity

    def show(self, path):
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel

    def fail(self, where, what):
        self.failures += 1
        print(f"{where}: {what}")

    # --- schemas -----------------------------------------------------------------------------

    def load_schemas(self):
        names = sorted(n for n in os.listdir(self.schemas_dir) if n.endswith(".json"))
        raw = {}
        for name in names:
            path = os.path.join(self.schemas_dir, name)
            where = self.show(path)
            if not any(p.match(name) for p in (FILE_SCHEMA, METHOD_SCHEMA, EVENT_SCHEMA, LIST_SCHEMA)):
                self.fail(where, "not a schema's name: want envelope.schema.json, <name>.schema.json, "
                                 "<program>.event.json, <program>.<command>.json, "
                                 "<noun>.<verb>.params.json or <noun>.<verb>.result.json")
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    schema = json.load(f, parse_constant=reject_constant)
            except (ValueError, UnicodeDecodeError) as e:
                self.fail(where, f"not JSON: {e}")
                continue
            if not isinstance(schema, dict):
                self.fail(where, "not a schema: the document is not an object")
                continue
            if schema.get("$schema") != DRAFT:
                self.fail(where, f"$schema is not {DRAFT}")
                continue
            if schema.get("$id") != name:
                self.fail(where, f"$id is not '{name}'")
                continue
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.SchemaError as e:
                self.fail(where, f"not a valid 2020-12 schema: {e.message} at {json_path(e.path)}")
                continue
            raw[name] = schema
        for name, schema in raw.items():
            resolver = self.resolver(schema, raw)
            bad = False
            for ref in refs(schema):
                try:
                    resolver.resolve(ref)
                except RefResolutionError as e:
                    self.fail(self.show(os.path.join(self.schemas_dir, name)),
                              f"cannot resolve $ref '{ref}': {e}")
                    bad = True
            if not bad:
                self.schemas[name] = schema
        if ENVELOPE not in self.schemas and ENVELOPE not in names:
            self.fail(self.show(self.schemas_dir), f"{ENVELOPE} is missing")

    # --- the tools' specs ------------------------------------------------------------------------

    def check_tool_specs(self):
        """schemas/tools/<name>.json: what the model is told of a tool, built into sion-run."""
        tools = os.path.join(self.schemas_dir, "tools")
        if not os.path.isdir(tools):
            return
        for name in sorted(os.listdir(tools)):
            path = os.path.join(tools, name)
            where = self.show(path)
            if not name.endswith(".json"):
                self.fail(where, "not a tool's spec: want <tool>.json")
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    spec = json.load(f, parse_constant=reject_constant)
            except (ValueError, UnicodeDecodeError) as e:
                self.fail(where, f"not JSON: {e}")
                continue
            if not isinstance(spec, dict) or sorted(spec) != ["description", "input_schema", "name"]:
                self.fail(where, "a tool's spec is an object of exactly name, description and input_schema")
                continue
            if spec["name"] != name[:-len(".json")]:
                self.fail(where, f"its name is '{spec['name']}', not its file's")
            if not isinstance(spec["description"], str) or not spec["description"].strip():
                self.fail(where, "its description is not a text")
            schema = spec["input_schema"]
            if not isinstance(schema, dict) or schema.get("type") != "object":
                self.fail(where, "its input_schema is not a schema of an object")
                continue
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.SchemaError as e:
                self.fail(where, f"its input_schema is not a valid 2020-12 schema: {e.message}")

    @staticmethod
    def resolver(schema, store):
        # Schemas name each other by file name ($id); nothing is ever fetched.
        def refuse(uri):
            raise RefResolutionError(f"'{uri}' is not a schema in schemas/")
        return jsonschema.RefResolver.from_schema(
            schema, store=dict(store), handlers={s: refuse for s in ("", "file", "http", "https")})

    def errors(self, schema_name, instance):
        """None if instance is valid against the schema, else the best error's message."""
        schema = self.schemas[schema_name]
        why = self.first_error(schema, schema, instance)
        if why is None or schema_name != ENVELOPE or not isinstance(instance, dict):
            return why
        # "not valid under any of the given schemas" says little: say what is wrong with the kind
        # of message its members make it.
        kind = ("request" if "method" in instance and "id" in instance else
                "notification" if "method" in instance else
                "success_response" if "result" in instance else
                "error_response" if "error" in instance else None)
        if kind is None:
            return "has none of 'method', 'result' and 'error'"
        sub = schema.get("$defs", {}).get(kind)
        if sub is None:
            return why
        name = kind.replace("_", " ")
        article = "an" if name[0] in "aeiou" else "a"
        forbidden = [r for branch in sub.get("not", {}).get("anyOf", []) for r in branch.get("required", [])]
        extra = [m for m in forbidden if m in instance]
        if extra:
            return f"as {article} {name}, it may not have " + " or ".join(f"'{m}'" for m in extra)
        return f"as {article} {name}: " + (self.first_error(sub, schema, instance) or why)

    def first_error(self, schema, document, instance):
        key = (id(schema), id(document))
        validator = self.validators.get(key)
        if validator is None:
            validator = jsonschema.Draft202012Validator(schema, resolver=self.resolver(document, self.schemas))
            self.validators[key] = validator
        error = best_match(validator.iter_errors(instance))
        if error is None:
            return None
        return f"{error.message} at {json_path(error.absolute_path)}"

    # --- fixtures ----------------------------------------------------------------------------

    def lines(self, path):
        """(where, message) for each line of a fixture file that is a JSON value; reports the rest."""
        with open(path, "rb") as f:
            data = f.read()
        if not data:
            self.fail(self.show(path), "empty file")
            return
        rows = data.split(b"\n")
        if rows[-1]:
            self.fail(self.show(path), "the last line has no newline")
        else:
            rows.pop()
        for number, line in enumerate(rows, start=1):
            where = f"{self.show(path)}:{number}"
            if not line.strip():
                self.fail(where, "blank line")
                continue
            try:
                message = json.loads(line.decode("utf-8"), parse_constant=reject_constant)
            except UnicodeDecodeError as e:
                self.fail(where, f"not UTF-8: {e}")
                continue
            except ValueError as e:
                self.fail(where, f"not JSON: {e}")
                continue
            yield where, message

    def jsonl_files(self, sub):
        d = os.path.join(self.fixtures_dir, sub)
        if not os.path.isdir(d):
            return []
        out = []
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if name.endswith(".jsonl"):
                out.append(path)
            else:
                self.fail(self.show(path), "not a fixture: want <name>.jsonl")
        return out

    def check_envelope_fixtures(self):
        if ENVELOPE not in self.schemas:
            return
        files = self.jsonl_files("envelope")
        if not files:
            self.fail(self.show(os.path.join(self.fixtures_dir, "envelope")), "no valid envelope fixtures")
        if self.examples_dir and os.path.isdir(self.examples_dir):
            files += [os.path.join(self.examples_dir, n) for n in sorted(os.listdir(self.examples_dir))
                      if n.startswith("pipes-") and n.endswith(".jsonl")]
        for path in files:
            for where, message in self.lines(path):
                why = self.errors(ENVELOPE, message)
                if why is not None:
                    self.fail(where, f"{ENVELOPE}: {why}")
                    continue
                self.exercised.add(ENVELOPE)
                # A call of a method that has a schema is checked against it wherever it appears.
                if "method" in message:
                    stem = message["method"].replace("/", ".")
                    self.check_part(where, f"{stem}.params.json", message.get("params", {}))
        for path in self.jsonl_files("envelope-invalid"):
            for where, message in self.lines(path):
                if self.errors(ENVELOPE, message) is None:
                    self.fail(where, f"valid against {ENVELOPE}, but it must fail")

    def check_part(self, where, schema_name, value, must_exist=False):
        """Checks params or a result against its method's schema; True if it passed."""
        if schema_name not in self.schemas:
            if must_exist:
                self.fail(where, f"schemas/{schema_name} is missing")
            return must_exist is False
        why = self.errors(schema_name, value)
        if why is not None:
            self.fail(where, f"{schema_name}: {why}")
            return False
        self.exercised.add(schema_name)
        return True

    def method_lines(self, path):
        """(where, message, part schema name, value) for each line of methods[-invalid]/<M>.jsonl."""
        stem_match = METHOD_FIXTURE.match(os.path.basename(path))
        if not stem_match:
            self.fail(self.show(path), "not a method's fixture: want <noun>.<verb>.jsonl")
            return
        stem = stem_match.group(1)
        for where, message in self.lines(path):
            if ENVELOPE in self.schemas:
                why = self.errors(ENVELOPE, message)
                if why is not None:
                    self.fail(where, f"{ENVELOPE}: {why}")
                    continue
            elif not isinstance(message, dict):
                self.fail(where, "not an object")
                continue
            if "method" in message:
                if str(message["method"]).replace("/", ".") != stem:
                    self.fail(where, f"method '{message['method']}' in the fixture of "
                                     f"'{stem.replace('.', '/')}'")
                    continue
                if "id" in message and f"{stem}.result.json" not in self.schemas:
                    self.fail(where, f"a request, but schemas/{stem}.result.json is missing")
                yield where, message, f"{stem}.params.json", message.get("params", {})
            elif "result" in message:
                yield where, message, f"{stem}.result.json", message["result"]
            else:
                yield where, message, None, None

    def check_method_fixtures(self):
        for path in self.jsonl_files("methods"):
            for where, _message, part, value in self.method_lines(path):
                if part is not None:
                    self.check_part(where, part, value, must_exist=True)
        for path in self.jsonl_files("methods-invalid"):
            for where, _message, part, value in self.method_lines(path):
                if part is None:
                    self.fail(where, "an error response, which no method's schema checks")
                elif part not in self.schemas:
                    self.fail(where, f"schemas/{part} is missing")
                elif self.errors(part, value) is None:
                    self.fail(where, f"valid against {part}, but it must fail")

    # --- files of a format --------------------------------------------------------------------

    def json_files(self, sub):
        d = os.path.join(self.fixtures_dir, sub)
        if not os.path.isdir(d):
            return []
        out = []
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if name.endswith(".json"):
                out.append(path)
            else:
                self.fail(self.show(path), "not a fixture: want <name>.json")
        return out

    def document(self, path):
        """(True, the JSON value) of a whole file, or (False, None) after reporting why it is none.
        An invalid fixture must be JSON too: one that is not would fail for the wrong reason."""
        try:
            with open(path, "rb") as f:
                return True, json.loads(f.read().decode("utf-8"), parse_constant=reject_constant)
        except UnicodeDecodeError as e:
            self.fail(self.show(path), f"not UTF-8: {e}")
        except ValueError as e:
            self.fail(self.show(path), f"not JSON: {e}")
        return False, None

    def check_file_fixtures(self):
        for name in sorted(self.schemas):
            match = FILE_SCHEMA.match(name)
            if not match or name == ENVELOPE:
                continue
            stem = match.group(1)
            for path in self.json_files(stem):
                ok, value = self.document(path)
                if not ok:
                    continue
                why = self.errors(name, value)
                if why is not None:
                    self.fail(self.show(path), f"{name}: {why}")
                else:
                    self.exercised.add(name)
            for path in self.json_files(f"{stem}-invalid"):
                ok, value = self.document(path)
                if ok and self.errors(name, value) is None:
                    self.fail(self.show(path), f"valid against {name}, but it must fail")

    # --- a program's events -------------------------------------------------------------------

    def check_event_fixtures(self):
        for name in sorted(self.schemas):
            match = EVENT_SCHEMA.match(name)
            if not match:
                continue
            stem = match.group(1)
            for path in self.jsonl_files(f"{stem}-event"):
                for where, event in self.lines(path):
                    why = self.errors(name, event)
                    if why is not None:
                        self.fail(where, f"{name}: {why}")
                    else:
                        self.exercised.add(name)
            for path in self.jsonl_files(f"{stem}-event-invalid"):
                for where, event in self.lines(path):
                    if self.errors(name, event) is None:
                        self.fail(where, f"valid against {name}, but it must fail")

    # --- a list's lines --------------------------------------------------------------------------

    @staticmethod
    def list_stem(name):
        """<program>.<command> of a list's schema, or None for a schema of another kind."""
        if FILE_SCHEMA.match(name) or EVENT_SCHEMA.match(name):
            return None
        match = LIST_SCHEMA.match(name)
        return match.group(1) if match else None

    def check_list_fixtures(self):
        for sub, valid in (("lists", True), ("lists-invalid", False)):
            for path in self.jsonl_files(sub):
                name = os.path.basename(path)[: -len(".jsonl")] + ".json"
                if self.list_stem(name) is None:
                    self.fail(self.show(path), "not a list's fixture: want <program>.<command>.jsonl")
                    continue
                if name not in self.schemas:
                    self.fail(self.show(path), f"schemas/{name} is missing")
                    continue
                for where, line in self.lines(path):
                    why = self.errors(name, line)
                    if valid and why is not None:
                        self.fail(where, f"{name}: {why}")
                    elif valid:
                        self.exercised.add(name)
                    elif why is None:
                        self.fail(where, f"valid against {name}, but it must fail")

    def check_coverage(self):
        for name in sorted(self.schemas):
            if name not in self.exercised:
                stem = METHOD_SCHEMA.match(name)
                file_stem = FILE_SCHEMA.match(name) if name != ENVELOPE else None
                event_stem = EVENT_SCHEMA.match(name)
                list_stem = self.list_stem(name) if not stem else None
                fixture = (f"methods/{stem.group(1)}.jsonl" if stem else
                           f"{file_stem.group(1)}/" if file_stem else
                           f"{event_stem.group(1)}-event/" if event_stem else
                           f"lists/{list_stem}.jsonl" if list_stem else "envelope/")
                self.fail(self.show(os.path.join(self.schemas_dir, name)),
                          f"no valid fixture in {self.show(os.path.join(self.fixtures_dir, fixture))}")


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def json_path(path):
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", default=os.path.join(root, "schemas"), help="the schemas directory")
    parser.add_argument("--fixtures", default=os.path.join(here, "fixtures"), help="the fixtures directory")
    parser.add_argument("--examples", default=os.path.join(root, "examples"),
                        help="the examples directory, whose pipes-*.jsonl are checked as valid messages")
    args = parser.parse_args()
    for d in (args.schemas, args.fixtures):
        if not os.path.isdir(d):
            print(f"{PROG}: cannot read directory '{d}': No such file or directory", file=sys.stderr)
            return 66
    checker = Checker(os.getcwd(), os.path.abspath(args.schemas), os.path.abspath(args.fixtures),
                      os.path.abspath(args.examples))
    checker.load_schemas()
    checker.check_envelope_fixtures()
    checker.check_method_fixtures()
    checker.check_file_fixtures()
    checker.check_event_fixtures()
    checker.check_list_fixtures()
    checker.check_tool_specs()
    checker.check_coverage()
    sys.stdout.flush()
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
