#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Checks files of sion-run's JSON events (`run --json`, `show --json`) against
# schemas/run.event.json, for the e2e suites: every line one event that passes its schema. With
# --schema, the lines a command prints against another schema of schemas/ (a list's, as
# run.sessions.json for `sion-run sessions --json`).
#
#   check_run_events.py [--schema NAME] SCHEMAS_DIR FILE...
#
# Prints "file:line: what is wrong" for each failure and exits 1 if there was any, 0 if none; 69
# without python3-jsonschema.
import json
import os
import sys
import warnings

try:
    import jsonschema
except ImportError:
    print("check_run_events.py: cannot import 'jsonschema': install the Debian package python3-jsonschema",
          file=sys.stderr)
    sys.exit(69)

warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver, deprecated in jsonschema 4.18


def main():
    args = sys.argv[1:]
    name = "run.event.json"
    if len(args) >= 2 and args[0] == "--schema":
        name = args[1]
        args = args[2:]
    if len(args) < 2:
        print("check_run_events.py: give the schemas directory and the event files", file=sys.stderr)
        sys.exit(64)
    schemas = args[0]
    store = {}
    for file in os.listdir(schemas):
        if file.endswith(".json"):
            with open(os.path.join(schemas, file), encoding="utf-8") as f:
                schema = json.load(f)
            store[schema.get("$id", file)] = schema
    if name not in store:
        print("check_run_events.py: no schema '%s' in '%s'" % (name, schemas), file=sys.stderr)
        sys.exit(66)
    schema = store[name]
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
    failures = 0
    for path in args[1:]:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                try:
                    event = json.loads(line)
                except ValueError as e:
                    print("%s:%d: not JSON: %s" % (path, n, e))
                    failures += 1
                    continue
                for error in validator.iter_errors(event):
                    where = "/".join(str(p) for p in error.absolute_path)
                    print("%s:%d: %s%s" % (path, n, where + ": " if where else "", error.message))
                    failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
