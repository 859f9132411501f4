#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sion-documents' search_documents over a folder of 1,000 documents of every kind it reads, a report
# and never a gate (issue 22's goal: at most 1 s the second time). The documents are made once by
# tools nobody here wrote — pandoc (.docx, .odt, .pptx, HTML) and Ghostscript's ps2pdf (PDF), beside
# Markdown and text written directly — from generated text (a fixed seed: every run sees the same
# words), and kept under the build directory for the next run. Prints the first search (every
# document extracted), the second (the texts kept in memory), and ripgrep over the same texts once
# extracted (one file each), with their ratio. Checks that both found the same documents; exits 1
# if not, 69 if a tool is missing, 0 otherwise.
#
#   tests/bench/documents.py [--bin DIR] [--docs N] [--runs N] [--cache DIR]
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

KINDS = ["md", "txt", "html", "docx", "odt", "pptx", "pdf"]
WORDS = ("orchard harvest ledger quarter budget minutes council report summary figure table "
         "apple pear plum damson medlar cider press barrel season frost spring autumn growth "
         "yield market price wholesale retail account audit review plan target forecast").split()
NEEDLE = "quincunx"  # in one document of ten
COMMON = "harvest"


def text_of(i, rng):
    lines = [f"# Document {i}", ""]
    for _ in range(rng.randint(30, 80)):
        lines.append(" ".join(rng.choices(WORDS, k=rng.randint(6, 14))).capitalize() + ".")
        lines.append("")
    if i % 10 == 3:
        lines.insert(rng.randint(2, len(lines) - 1), f"The {NEEDLE} planting is noted here.")
    return "\n".join(lines) + "\n"


def ps_escape(line):
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def postscript(text):
    """A page or more of Helvetica, a line of text a line of the page."""
    out = ["%!PS", "/Helvetica findfont 10 scalefont setfont"]
    y = 760
    for line in (l for l in text.splitlines() if l):
        if y < 40:
            out.append("showpage")
            out.append("/Helvetica findfont 10 scalefont setfont")
            y = 760
        out.append(f"40 {y} moveto ({ps_escape(line.lstrip('# '))}) show")
        y -= 12
    out.append("showpage")
    return "\n".join(out) + "\n"


def make_one(i, folder, work):
    rng = random.Random(22_000 + i)
    kind = KINDS[i % len(KINDS)]
    text = text_of(i, rng)
    sub = os.path.join(folder, f"set{i // 100:02d}")
    os.makedirs(sub, exist_ok=True)
    out = os.path.join(sub, f"doc{i:04d}.{kind}")
    if kind in ("md", "txt"):
        with open(out, "w") as f:
            f.write(text)
        return
    src = os.path.join(work, f"doc{i:04d}.md")
    with open(src, "w") as f:
        f.write(text)
    if kind == "pdf":
        ps = os.path.join(work, f"doc{i:04d}.ps")
        with open(ps, "w") as f:
            f.write(postscript(text))
        argv = ["ps2pdf", ps, out]
    elif kind == "html":
        argv = ["pandoc", src, "-s", "--metadata", f"title=Document {i}", "-o", out]
    else:
        argv = ["pandoc", src, "-o", out]
    p = subprocess.run(argv, capture_output=True, check=False)
    if p.returncode != 0:
        sys.exit(f"documents.py: {argv[0]} failed on document {i}: {p.stderr.decode()[:200]}")


def make_folder(cache, docs):
    """The folder of `docs` documents under `cache`, made once; its path."""
    folder = os.path.join(cache, f"documents-{docs}")
    done = os.path.join(cache, f"documents-{docs}.complete")
    if os.path.exists(done):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    work = os.path.join(cache, "work")
    os.makedirs(work, exist_ok=True)
    print(f"making {docs} documents with pandoc and ps2pdf (once, kept in {cache}) ...", flush=True)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(lambda i: make_one(i, folder, work), range(docs)))
    shutil.rmtree(work, ignore_errors=True)
    open(done, "w").close()
    print(f"made in {time.perf_counter() - start:.0f} s", flush=True)
    return folder


class Server:
    """sion-documents on the folder, asked one request at a time."""

    def __init__(self, binary, folder):
        self.p = subprocess.Popen([binary, "--dir", folder], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})

    def ask(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        answer = json.loads(self.p.stdout.readline())
        if "error" in answer:
            sys.exit(f"documents.py: {method} failed: {answer['error']}")
        return answer["result"]

    def call(self, tool, arguments):
        result = self.ask("tools/call", {"name": tool, "arguments": arguments})
        text = result["content"][0]["text"]
        if result.get("isError"):
            sys.exit(f"documents.py: {tool} failed: {text}")
        return text

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def timed_search(server, query):
    start = time.perf_counter()
    text = server.call("search_documents", {"query": query, "limit": 100})
    return time.perf_counter() - start, text


def found(text):
    """The documents a search named (its first line says how many hold the query)."""
    first = text.splitlines()[0]
    return 0 if first.startswith("no document") else int(first.split()[0])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(root, "build", "release", "bin"))
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", default=None, help="where the documents are kept (BIN/../bench-documents)")
    args = ap.parse_args()
    for tool, package in (("pandoc", "pandoc"), ("ps2pdf", "ghostscript"),
                          ("pdftotext", "poppler-utils"), ("rg", "ripgrep")):
        if shutil.which(tool) is None:
            print(f"documents.py: {tool} is not installed (Debian package {package})", file=sys.stderr)
            return 69
    binary = os.path.join(args.bin, "sion-documents")
    cache = args.cache or os.path.join(os.path.dirname(os.path.abspath(args.bin)), "bench-documents")
    folder = make_folder(cache, args.docs)

    # The first search: a new server extracts every document.
    firsts = []
    for _ in range(max(1, min(args.runs, 3))):
        server = Server(binary, folder)
        t, first_text = timed_search(server, NEEDLE)
        firsts.append(t)
        server.close()
    # The second and later: a server that has searched once.
    server = Server(binary, folder)
    timed_search(server, NEEDLE)
    seconds = [timed_search(server, NEEDLE)[0] for _ in range(args.runs)]
    commons = [timed_search(server, COMMON)[0] for _ in range(args.runs)]
    needle_text = timed_search(server, NEEDLE)[1]

    # The same texts for ripgrep, one file a document, as read_document gives them.
    texts = os.path.join(cache, f"texts-{args.docs}")
    if not os.path.isdir(texts):
        listing = server.call("list_documents", {})
        for line in listing.splitlines():
            rel = line.rsplit(" (", 1)[0]
            text = server.call("read_document", {"path": rel, "limit": 100000})
            out = os.path.join(texts, rel + ".txt")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w") as f:
                f.write(text)
    server.close()

    def rg(query):
        start = time.perf_counter()
        p = subprocess.run(["rg", "-n", "-i", "-F", "--max-count", "3", query, texts],
                           capture_output=True, check=False)
        return time.perf_counter() - start, p.stdout.decode()

    rg(NEEDLE)  # the page cache warm
    rg_times = [rg(NEEDLE)[0] for _ in range(args.runs)]
    rg_common = [rg(COMMON)[0] for _ in range(args.runs)]
    rg_docs = len({l.split(":", 1)[0] for l in rg(NEEDLE)[1].splitlines()})

    kinds = {k: 0 for k in KINDS}
    for i in range(args.docs):
        kinds[KINDS[i % len(KINDS)]] += 1
    print(f"search_documents over {args.docs} documents "
          f"({', '.join(f'{n} {k}' for k, n in kinds.items())}), median of {args.runs} "
          f"(first search: of {len(firsts)})")
    first = statistics.median(firsts) * 1000
    second = statistics.median(seconds) * 1000
    common = statistics.median(commons) * 1000
    rg_ms = statistics.median(rg_times) * 1000
    rg_common_ms = statistics.median(rg_common) * 1000
    print(f"  first search '{NEEDLE}' (every document extracted): {first:9.1f} ms")
    print(f"  second search '{NEEDLE}' (texts kept):               {second:9.1f} ms   goal <= 1000 ms")
    print(f"  rg -i -F '{NEEDLE}' over the extracted texts:        {rg_ms:9.1f} ms   ratio {second / rg_ms:.2f}x")
    print(f"  search '{COMMON}' (in every document, texts kept):    {common:9.1f} ms")
    print(f"  rg -i -F '{COMMON}' over the extracted texts:          {rg_common_ms:9.1f} ms   ratio {common / rg_common_ms:.2f}x")
    print(f"  first / second: {first / second:.0f}x")
    ours = found(needle_text)
    if ours != rg_docs or ours != found(first_text):
        print(f"documents.py: search_documents found {ours} documents (first time {found(first_text)}), "
              f"rg {rg_docs}", file=sys.stderr)
        return 1
    print(f"  both found {ours} documents holding '{NEEDLE}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
