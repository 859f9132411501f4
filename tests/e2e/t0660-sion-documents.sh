#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-documents (issue 22, seed 000's "sion's own servers"): documents made by tools nobody here
# wrote — pandoc's .docx, .odt, .pptx and HTML, Ghostscript's PDF — each read and searched for its
# known text; hostile ones (a path out of the folder, a link, a zip bomb, a billion laughs, a text
# that is not UTF-8) each one line with isError, and the server answering after; then `sion agent
# mcp add --first-party documents` reviews and pins the four tools with their effects, `sion-mcp
# serve` calls each one in the bubblewrap sandbox, write_document's text reads back, and the front
# door's `sion mcp documents` answers initialize.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"

command -v pandoc >/dev/null || skip "pandoc is not installed (Debian package pandoc)"
command -v ps2pdf >/dev/null || skip "ps2pdf is not installed (Debian package ghostscript)"
command -v pdftotext >/dev/null || skip "pdftotext is not installed (Debian package poppler-utils)"
command -v python3 >/dev/null || skip "python3 is not installed"

cd "$scratch" || exit 1
mkdir -p docs/sub src

# -- Documents made by pandoc and Ghostscript, each holding a word of its own and "quince".
printf '# Harvest report\n\nThe orchard yielded *quince* and medlar.\n\nTotals: apples | pears\n' >src/report.md
pandoc src/report.md -o docs/report.docx && ok || fail "pandoc could not write a .docx"
printf '# Minutes\n\nThe council spoke of **quince** and marrow.\n' >src/minutes.md
pandoc src/minutes.md -o docs/sub/minutes.odt && ok || fail "pandoc could not write an .odt"
printf '# First slide\n\nAlpha quince\n\n# Second slide\n\nBeta parsnip\n' >src/slides.md
pandoc src/slides.md -o docs/slides.pptx && ok || fail "pandoc could not write a .pptx"
printf '# Web page\n\nA page on quince and damson.\n' >src/page.md
pandoc src/page.md -s --metadata title=Orchard -o docs/page.html && ok || fail "pandoc could not write HTML"
printf '%%!PS\n/Helvetica findfont 14 scalefont setfont\n72 720 moveto (Zebra crossing quince) show\nshowpage\n' >src/scan.ps
ps2pdf src/scan.ps docs/scan.pdf && ok || fail "ps2pdf could not write a PDF"
printf 'Notes on quince jelly.\n' >docs/notes.md
printf 'plain quince words\n' >docs/plain.txt
printf 'hidden quince\n' >docs/.hidden.md

# serve_direct [ARGS...]: sion-documents on the folder, with the request lines of stdin.
serve_direct() { expect_exit 0 sion-documents --dir docs "$@"; }
# text ID: the text of the answer to request ID.
text() { python3 - "$scratch/out" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("id") == int(sys.argv[2]):
        print(m["result"]["content"][0]["text"])
PY
}
expect_text_of() { text "$2" >"$scratch/got"; expect_text "$scratch/got" "answer $2" "$1"; }

# -- Each type's known text, read and searched.
{
    req 1 initialize '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}'
    call 2 list_documents
    call 3 read_document '{"path":"report.docx"}'
    call 4 read_document '{"path":"sub/minutes.odt"}'
    call 5 read_document '{"path":"slides.pptx"}'
    call 6 read_document '{"path":"page.html"}'
    call 7 read_document '{"path":"scan.pdf"}'
    call 8 search_documents '{"query":"QUINCE"}'
    call 9 search_documents '{"query":"parsnip"}'
    call 10 search_documents '{"query":"Zebra crossing"}'
} | serve_direct
expect_py 'a(1)["protocolVersion"] == "2025-06-18" and a(1)["serverInfo"]["name"] == "sion-documents"'
expect_text_of "notes.md (markdown, 23 bytes)
page.html (html, $(stat -c %s docs/page.html) bytes)
plain.txt (text, 19 bytes)
report.docx (docx, $(stat -c %s docs/report.docx) bytes)
scan.pdf (pdf, $(stat -c %s docs/scan.pdf) bytes)
slides.pptx (pptx, $(stat -c %s docs/slides.pptx) bytes)
sub/minutes.odt (odt, $(stat -c %s docs/sub/minutes.odt) bytes)" 2
expect_text_of "Harvest report
The orchard yielded quince and medlar.
Totals: apples | pears" 3
expect_text_of "Minutes
The council spoke of quince and marrow." 4
expect_py '"[slide 1]" in a(5)["content"][0]["text"] and "Alpha quince" in a(5)["content"][0]["text"] and "Beta parsnip" in a(5)["content"][0]["text"] and a(5)["content"][0]["text"].index("Alpha") < a(5)["content"][0]["text"].index("Beta")'
expect_py 'a(6)["content"][0]["text"].startswith("Orchard") and "A page on quince and damson." in a(6)["content"][0]["text"]'
expect_py 'a(7)["content"][0]["text"].strip() == "Zebra crossing quince"'
expect_py 'a(8)["content"][0]["text"].startswith("7 documents hold '"'"'QUINCE'"'"'\n")'
for doc in notes.md page.html plain.txt report.docx scan.pdf slides.pptx sub/minutes.odt; do
    expect_py '"\n'"$doc"' (1 hit)\n" in a(8)["content"][0]["text"]'
done
expect_py '"hidden" not in a(8)["content"][0]["text"]'
expect_text_of "1 document holds 'parsnip'
slides.pptx (1 hit)
  7: Beta parsnip" 9
expect_text_of "1 document holds 'Zebra crossing'
scan.pdf (1 hit)
  1: Zebra crossing quince" 10
expect_py 'all(a(i).get("isError") is False for i in range(2, 11))'

# -- Hostile documents: each one line, isError, and the server answers after.
printf 'secret quince\n' >outside.md
ln -s ../outside.md docs/link.md
ln -s sub docs/linkdir
printf 'caf\xe9 quince\n' >docs/latin1.txt
python3 - <<'PY'
import zipfile
# A zip bomb: word/document.xml unpacks to 100 MiB of spaces from a file of about 100 KiB.
with zipfile.ZipFile("docs/bomb.docx", "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("word/document.xml", "w", force_zip64=True) as f:
        for _ in range(100):
            f.write(b" " * (1 << 20))
# A billion laughs.
laughs = '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
for i in range(1, 10):
    laughs += ' <!ENTITY lol%d "%s">\n' % (i, ("&lol%s;" % ("" if i == 1 else i - 1)) * 10)
laughs += ']>\n<w:document xmlns:w="urn:w"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>'
with zipfile.ZipFile("docs/laughs.docx", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("word/document.xml", laughs)
PY
[ "$(stat -c %s docs/bomb.docx)" -lt 1000000 ] && ok || fail "the zip bomb is not small"
{
    call 1 read_document '{"path":"../outside.md"}'
    call 2 read_document "{\"path\":\"$scratch/outside.md\"}"
    call 3 read_document '{"path":"link.md"}'
    call 4 read_document '{"path":"linkdir/minutes.odt"}'
    call 5 read_document '{"path":"bomb.docx"}'
    call 6 read_document '{"path":"laughs.docx"}'
    call 7 read_document '{"path":"latin1.txt"}'
    call 8 write_document '{"path":"../escape.md","text":"x"}'
    call 9 write_document '{"path":"link.md","text":"overwritten"}'
    call 10 write_document '{"path":"report.docx","text":"x"}'
    call 11 search_documents '{"query":"quince"}'
    echo 'this is not JSON'
    req 12 server/discover
    req 13 ping
} | serve_direct
expect_text_of "cannot read '../outside.md': '../outside.md' is outside the folder" 1
expect_text_of "cannot read '$scratch/outside.md': '$scratch/outside.md' is outside the folder" 2
expect_text_of "cannot read 'link.md': it is a symbolic link, or in a folder that is one" 3
expect_text_of "cannot read 'linkdir/minutes.odt': it is a symbolic link, or in a folder that is one" 4
expect_text_of "cannot read 'bomb.docx': it unpacks to more than 64 MiB" 5
expect_text_of "cannot read 'laughs.docx': its XML has a DTD (<!DOCTYPE>): entities are not expanded" 6
expect_text_of "cannot read 'latin1.txt': it is not UTF-8 text" 7
expect_text_of "cannot write '../escape.md': '../escape.md' is outside the folder" 8
expect_text_of "cannot write 'link.md': it is a symbolic link, or in a folder that is one" 9
expect_text_of "cannot write 'report.docx': only Markdown and plain text are written (.md, .markdown, .txt)" 10
expect_py 'all(a(i)["isError"] is True for i in range(1, 11))'
[ "$(cat outside.md)" = "secret quince" ] && ok || fail "a write went through the link"
[ ! -e escape.md ] && ok || fail "a write left the folder"
expect_py 'a(11)["isError"] is False and a(11)["content"][0]["text"].startswith("7 documents hold")'
expect_py '"not searched: cannot read '"'"'bomb.docx'"'"': it unpacks to more than 64 MiB" in a(11)["content"][0]["text"]'
expect_py '"secret" not in a(11)["content"][0]["text"]'
expect_py 'any(m.get("error", {}).get("code") == -32700 and m["id"] is None for m in messages)'
expect_py 'a(12)["error"]["code"] == -32601 and a(13) == {}'
rm docs/link.md docs/linkdir docs/latin1.txt docs/bomb.docx docs/laughs.docx

# -- The command line.
expect_exit 64 env -u DOCUMENTS_DIR sion-documents </dev/null &&
    expect_err "sion-documents: give the folder of documents: --dir DIR, or DOCUMENTS_DIR"
expect_exit 66 sion-documents --dir nowhere </dev/null &&
    expect_err "sion-documents: cannot open the directory '$scratch/nowhere': No such file or directory"
expect_exit 64 sion-documents --dir docs extra </dev/null && expect_err "sion-documents: unexpected operand 'extra'"
call 1 list_documents | DOCUMENTS_DIR=docs expect_exit 0 sion-documents && expect_py 'a(1)["content"][0]["text"].startswith("notes.md")'
printf '{"jsonrpc":"2.0","id":1,"method":"ping"}' | expect_exit 74 sion-documents --dir docs &&
    expect_err "sion-documents: the input ended inside a line"
expect_exit 0 sion-documents --version && expect_grep '^sion-documents [0-9]' "$scratch/out"

# -- The front door runs it.
req 1 initialize '{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}' |
    expect_exit 0 sion mcp documents --dir docs
expect_py 'a(1)["protocolVersion"] == "2024-11-05" and a(1)["capabilities"] == {"tools": {}}'

# -- On the shelf: reviewed and pinned with their effects, run in bubblewrap.
expect_exit 64 sion agent mcp add m --first-party mail --dir docs &&
    expect_err "sion-mcp: --dir goes with --first-party documents: the mail server keeps nothing in a folder"
expect_exit 64 sion agent mcp add x --first-party notes &&
    expect_err "sion-mcp: --first-party takes documents, mail or calendar, not 'notes'"
expect_exit 64 sion agent mcp add x --first-party documents &&
    expect_err "sion-mcp: --first-party documents needs --dir DIR: the folder it serves"
expect_exit 64 sion agent mcp add x --first-party documents --dir docs -- python3 x.py &&
    expect_err "sion-mcp: give either --first-party or a command, not both"
need_bwrap
version=$(sion-documents --version | cut -d' ' -f2)
expect_exit 0 timeout 60 sion agent mcp add docs --first-party documents --dir docs
expect_out "MCP server docs (sion-documents $version, protocol 2025-11-25): reviewed tools
list_documents (read): List the documents in the folder, or in one of its subfolders: each one's path, kind and size, sorted by path. Hidden files and files that are not documents are left out.
read_document (read): Read a document of the folder as text: Markdown, plain text, HTML, Word (.docx), OpenDocument (.odt), PowerPoint (.pptx) or PDF. A long one comes in parts: offset is the first line to read, limit how many.
search_documents (read): Find the documents of the folder whose text holds the query (plain text, letters A to Z in either case), most hits first, each with its first matching lines and their numbers.
write_document (write, repeats run again): Write a Markdown (.md, .markdown) or plain text (.txt) document in the folder, replacing one of that path; missing subfolders are made.
Give it to a session with --mcp docs."
expect_exit 0 sion agent mcp list
expect_grep "^docs: $SION_BIN/sion-documents --dir /workspace, in bwrap$" "$scratch/out"
expect_grep '^write_document \(write, repeats run again\)$' "$scratch/out"
# In the sandbox, whose seccomp filter refuses openat2, no link is followed either.
ln -s ../notes.md docs/sub/link.md
{
    req 1 mcp/state
    echo
    call 2 docs_list_documents '{"path":"sub"}'
    call 3 docs_read_document '{"path":"report.docx"}'
    call 4 docs_search_documents '{"query":"zebra"}'
    call 5 docs_write_document '{"path":"drafts/summary.md","text":"# Summary\n\nQuince everywhere.\n"}'
    call 6 docs_read_document '{"path":"drafts/summary.md"}'
    call 7 docs_read_document '{"path":"../outside.md"}'
    call 8 docs_read_document '{"path":"scan.pdf"}'
    call 9 docs_read_document '{"path":"sub/link.md"}'
    call 10 docs_list_documents
} | expect_exit 0 bridge -- sion-mcp serve docs
expect_got 'connected' 1 servers.0.state
python3 - "$scratch/out" <<'PY' && ok || fail "mcp/state's tools are not the pinned ones with their effects"
import json, sys
state = next(m for m in map(json.loads, open(sys.argv[1])) if m.get("id") == 1)["result"]
tools = state["servers"][0]["tools"]
got = [(t["name"], t["effect"], t["idempotent"], t["taints"]) for t in tools][:4]
assert got == [("docs_list_documents", "read", True, False), ("docs_read_document", "read", True, False),
               ("docs_search_documents", "read", True, False), ("docs_write_document", "write", True, False)], got
PY
expect_got "sub/minutes.odt (odt, $(stat -c %s docs/sub/minutes.odt) bytes)" 2 text
expect_got "Harvest report
The orchard yielded quince and medlar.
Totals: apples | pears" 3 text
expect_got "1 document holds 'zebra'
scan.pdf (1 hit)
  1: Zebra crossing quince" 4 text
expect_got "wrote 'drafts/summary.md' (30 bytes)" 5 text
expect_got "# Summary

Quince everywhere." 6 text
[ "$(cat docs/drafts/summary.md)" = "# Summary

Quince everywhere." ] && ok || fail "write_document did not write into the folder"
expect_got "cannot read '../outside.md': '../outside.md' is outside the folder" 7 text
expect_got 'true' 7 isError
expect_got 'Zebra crossing quince' 8 text
expect_got "cannot read 'sub/link.md': it is a symbolic link, or in a folder that is one" 9 text
expect_got "drafts/summary.md (markdown, 30 bytes)
notes.md (markdown, 23 bytes)
page.html (html, $(stat -c %s docs/page.html) bytes)
plain.txt (text, 19 bytes)
report.docx (docx, $(stat -c %s docs/report.docx) bytes)
scan.pdf (pdf, $(stat -c %s docs/scan.pdf) bytes)
slides.pptx (pptx, $(stat -c %s docs/slides.pptx) bytes)
sub/minutes.odt (odt, $(stat -c %s docs/sub/minutes.odt) bytes)" 10 text

done_testing
