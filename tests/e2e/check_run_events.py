#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Checks files of sion-run's JSON events (`run --json`, `show --json`) against
# schemas/run.event.json, for the e2e suites: every line one event that passes its schema.
#
#   check_run_events.py SCHEMAS_DIR FILE...
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
    if len(sys.argv) < 3:
        print("check_run_events.py: give the schemas directory and the event files", file=sys.stderr)
        sys.exit(64)
    schemas = sys.argv[1]
    store = {}
    for name in os.listdir(schemas):
        if name.endswith(".json"):
            with open(os.path.join(schemas, name), encoding="utf-8") as f:
                schema = json.load(f)
            store[schema.get("$id", name)] = schema
    schema = store["run.event.json"]
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
    failures = 0
    for path in sys.argv[2:]:
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
