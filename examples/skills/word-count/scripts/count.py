#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Counts the words of a text file, and prints the five most common with their counts.
import collections
import re
import sys

if len(sys.argv) != 2:
    sys.exit("usage: count.py FILE")
with open(sys.argv[1], encoding="utf-8") as f:
    words = re.findall(r"[a-z']+", f.read().lower())
print(f"{len(words)} words")
for word, count in collections.Counter(words).most_common(5):
    print(count, word)
