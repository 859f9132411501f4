// SPDX-License-Identifier: MIT
// sion-documents: sion's own MCP server over the documents of one folder (sion-documents(1)),
// speaking MCP on stdin and stdout.
#include "cmd/sion-documents/folder.hpp"
#include "lib/cli.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/mcp_serve.hpp"

#include <cstdlib>

namespace {

const sion::CommandSpec k_spec{
    "sion-documents",
    "sion-documents [--dir DIR]",
    "Serve the documents of the folder DIR (else $DOCUMENTS_DIR) as an MCP server on standard\n"
    "input and output: list_documents, read_document and search_documents read Markdown, text,\n"
    "HTML, .docx, .odt, .pptx and PDF as text; write_document writes Markdown and text. Nothing\n"
    "outside the folder is read or written, and no link is followed.",
    {{"dir", 0, "DIR", "the folder of documents (else $DOCUMENTS_DIR)", nullptr, ":directory"}},
};

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion-documents");
    sion::complete_or_return(k_spec, argc, argv);
    sion::or_die(sion::check_utf8_arguments(argc, argv));
    sion::Args args = sion::parse_args_or_exit(k_spec, argc, argv);
    sion::check_operands(args, 0, 0);
    std::string dir = args.value("dir").value_or("");
    if (dir.empty())
        if (const char* env = std::getenv("DOCUMENTS_DIR")) // NOLINT(concurrency-mt-unsafe)
            dir = env;
    if (dir.empty())
        sion::die(sion::usage_error("give the folder of documents: --dir DIR, or DOCUMENTS_DIR"));
    std::string root = sion::or_die(sion::resolve_path(dir));
    sion::Confined confined =
        sion::or_die(sion::Confined::open(root, "/folder", sion::Confined::Links::refused));
    sion::documents_cmd::Folder folder(std::move(confined));
    return sion::mcp_serve::serve(folder);
}
