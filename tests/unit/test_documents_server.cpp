// SPDX-License-Identifier: MIT
// sion-documents' tools and protocol (cmd/sion-documents/folder.cpp, lib/mcp_serve.cpp): confinement
// (.., absolute paths, a link to a file or a folder, inside or out, a link at a write's target),
// what each tool answers, the cache, and the protocol on malformed lines — each answered, never a
// crash.
#include "cmd/sion-documents/folder.hpp"
#include "lib/mcp_serve.hpp"
#include "lib/json.hpp"
#include "tests/unit/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sion::documents_cmd {
namespace {

void put(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class DocumentsFolder : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(m_tmp.path().empty());
        root = m_tmp.path() + "/docs";
        put(root + "/plan.md", "# Plan\nShip the budget on Friday.\nBUDGET again: budget.\n");
        put(root + "/notes/b.txt", "one budget line\n");
        put(root + "/notes/c.txt", "nothing here\n");
        put(root + "/.hidden.md", "budget budget budget budget\n");
        put(root + "/.git/x.md", "budget\n");
        put(root + "/image.png", "budget");
        put(m_tmp.path() + "/outside.md", "secret budget\n");
        ASSERT_EQ(::symlink("../outside.md", (root + "/out.md").c_str()), 0);
        ASSERT_EQ(::symlink("plan.md", (root + "/in.md").c_str()), 0);
        ASSERT_EQ(::symlink("notes", (root + "/linked").c_str()), 0);
        auto confined = Confined::open(root, "/folder", Confined::Links::refused);
        ASSERT_TRUE(confined) << confined.error().message();
        folder.emplace(std::move(*confined));
    }

    Answer call(const char* tool, const std::string& arguments) {
        auto args = Json::parse(arguments);
        EXPECT_TRUE(args);
        return folder->call(tool, args->view());
    }

    std::string root;
    std::optional<Folder> folder;

private:
    test::TempDir m_tmp;
};

TEST_F(DocumentsFolder, ListLeavesOutHiddenLinksAndNonDocuments) {
    Answer a = call("list_documents", "{}");
    EXPECT_FALSE(a.is_error);
    EXPECT_EQ(a.text, "notes/b.txt (text, 16 bytes)\nnotes/c.txt (text, 13 bytes)\n"
                      "plan.md (markdown, 56 bytes)");
    a = call("list_documents", R"({"path":"notes"})");
    EXPECT_EQ(a.text, "notes/b.txt (text, 16 bytes)\nnotes/c.txt (text, 13 bytes)");
    a = call("list_documents", R"({"path":"../"})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text, "cannot list '../': '../' is outside the folder");
    a = call("list_documents", R"({"path":"linked"})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text, "cannot list 'linked': it is a symbolic link, or in a folder that is one");
}

TEST_F(DocumentsFolder, ReadRefusesEveryWayOut) {
    struct Case {
        const char* path;
        const char* said;
    } cases[] = {
        {"../outside.md", "cannot read '../outside.md': '../outside.md' is outside the folder"},
        {"/etc/passwd.md", "cannot read '/etc/passwd.md': '/etc/passwd.md' is outside the folder"},
        {"out.md", "cannot read 'out.md': it is a symbolic link, or in a folder that is one"},
        {"in.md", "cannot read 'in.md': it is a symbolic link, or in a folder that is one"},
        {"linked/b.txt",
         "cannot read 'linked/b.txt': it is a symbolic link, or in a folder that is one"},
        {"missing.md", "cannot read 'missing.md': No such file or directory"},
        {"image.png", "cannot read 'image.png': it is not a document sion-documents reads "
                      "(Markdown, plain text, HTML, Word (.docx), OpenDocument (.odt), "
                      "PowerPoint (.pptx) or PDF)"},
    };

    for (const Case& c : cases) {
        Answer a = call("read_document", std::string(R"({"path":")") + c.path + "\"}");
        EXPECT_TRUE(a.is_error) << c.path;
        EXPECT_EQ(a.text, c.said);
    }
    put(root + "/latin1.txt", "caf\xE9\n");
    Answer a = call("read_document", R"({"path":"latin1.txt"})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text, "cannot read 'latin1.txt': it is not UTF-8 text");
    std::filesystem::create_directories(root + "/dir.md");
    a = call("read_document", R"({"path":"dir.md"})");
    EXPECT_EQ(a.text, "cannot read 'dir.md': it is a directory");
    ASSERT_EQ(::mkfifo((root + "/fifo.md").c_str(), 0600), 0);
    a = call("read_document", R"({"path":"fifo.md"})");
    EXPECT_EQ(a.text, "cannot read 'fifo.md': it is not a regular file");
}

TEST_F(DocumentsFolder, ReadInParts) {
    Answer a = call("read_document", R"({"path":"plan.md"})");
    EXPECT_FALSE(a.is_error);
    EXPECT_EQ(a.text, "# Plan\nShip the budget on Friday.\nBUDGET again: budget.\n");
    a = call("read_document", R"({"path":"./plan.md","offset":2,"limit":1})");
    EXPECT_EQ(a.text, "Ship the budget on Friday.\n[lines 2-2 of 3: read on with offset 3]");
    a = call("read_document", R"({"path":"plan.md","offset":3})");
    EXPECT_EQ(a.text, "BUDGET again: budget.\n[lines 3-3 of 3]");
    a = call("read_document", R"({"path":"plan.md","offset":9})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text, "cannot read 'plan.md' from line 9: it has 3 lines");
    a = call("read_document", R"({"path":"plan.md","limit":0})");
    EXPECT_TRUE(a.is_error);
    a = call("read_document", R"({"path":7})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text, "read_document: member 'path' is a number, not a string");
    a = call("read_document", "{}");
    EXPECT_EQ(a.text, "read_document: member 'path' is missing");
    a = folder->call("read_document", Json::parse("[1]")->view());
    EXPECT_EQ(a.text, "read_document takes its arguments as an object");
}

TEST_F(DocumentsFolder, SearchRanksByHitsAndKeepsTexts) {
    Answer a = call("search_documents", R"({"query":"Budget"})");
    EXPECT_FALSE(a.is_error);
    EXPECT_EQ(a.text, "2 documents hold 'Budget'\n"
                      "plan.md (3 hits)\n"
                      "  2: Ship the budget on Friday.\n"
                      "  3: BUDGET again: budget.\n"
                      "notes/b.txt (1 hit)\n"
                      "  1: one budget line");
    a = call("search_documents", R"({"query":"budget","limit":1})");
    EXPECT_EQ(a.text, "2 documents hold 'budget'\nplan.md (3 hits)\n  2: Ship the budget on "
                      "Friday.\n  3: BUDGET again: budget.\n… and 1 more with fewer hits");
    a = call("search_documents", R"({"query":"a.b"})");
    EXPECT_EQ(a.text, "no document holds 'a.b'");
    // A changed document is read again.
    put(root + "/notes/c.txt", "now a budget, and another budget\n");
    a = call("search_documents", R"({"query":"budget"})");
    EXPECT_EQ(a.text.substr(0, 45), "3 documents hold 'budget'\nplan.md (3 hits)\n  ");
    EXPECT_NE(a.text.find("notes/c.txt (2 hits)\n  1: now a budget"), std::string::npos);
    // A document that cannot be read is named, and the others are searched.
    put(root + "/bad.txt", "budget \xFF\n");
    a = call("search_documents", R"({"query":"budget"})");
    EXPECT_FALSE(a.is_error);
    EXPECT_NE(a.text.find("\nnot searched: cannot read 'bad.txt': it is not UTF-8 text"),
              std::string::npos)
        << a.text;
    EXPECT_TRUE(call("search_documents", R"({"query":""})").is_error);
    EXPECT_TRUE(call("search_documents", R"({"query":"x","limit":101})").is_error);
}

TEST_F(DocumentsFolder, WriteMarkdownAndTextOnlyInside) {
    Answer a = call("write_document", R"({"path":"new/deep/n.md","text":"# New\nÉtude\n"})");
    EXPECT_FALSE(a.is_error) << a.text;
    EXPECT_EQ(a.text, "wrote 'new/deep/n.md' (13 bytes)");
    EXPECT_EQ(slurp(root + "/new/deep/n.md"), "# New\nÉtude\n");
    a = call("read_document", R"({"path":"new/deep/n.md"})");
    EXPECT_EQ(a.text, "# New\nÉtude\n");
    a = call("write_document", R"({"path":"new/deep/n.md","text":"replaced\n"})");
    EXPECT_FALSE(a.is_error);
    EXPECT_EQ(call("read_document", R"({"path":"new/deep/n.md"})").text, "replaced\n");
    a = call("write_document", R"({"path":"x.docx","text":"x"})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text,
              "cannot write 'x.docx': only Markdown and plain text are written (.md, .markdown, "
              ".txt)");
    a = call("write_document", R"({"path":"../escape.md","text":"x"})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text, "cannot write '../escape.md': '../escape.md' is outside the folder");
    a = call("write_document", R"({"path":"out.md","text":"x"})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text, "cannot write 'out.md': it is a symbolic link, or in a folder that is one");
    EXPECT_EQ(slurp(root + "/../outside.md"), "secret budget\n");
    a = call("write_document", R"({"path":"linked/x.md","text":"x"})");
    EXPECT_TRUE(a.is_error);
    EXPECT_EQ(a.text,
              "cannot write 'linked/x.md': it is a symbolic link, or in a folder that is one");
    EXPECT_FALSE(std::filesystem::exists(root + "/notes/x.md"));
    a = call("write_document", R"({"path":"n.md"})");
    EXPECT_EQ(a.text, "write_document: member 'text' is missing");
}

// The protocol, a line at a time.
class DocumentsProtocol : public DocumentsFolder {
protected:
    Json answer(const std::string& line) {
        std::string out;
        mcp_serve::answer_line(*folder, line, false, line.size(), out);
        if (out.empty())
            return {};
        EXPECT_EQ(out.back(), '\n');
        EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line";
        auto parsed = Json::parse(out);
        EXPECT_TRUE(parsed) << out;
        return parsed ? std::move(*parsed) : Json();
    }
};

TEST_F(DocumentsProtocol, InitializeAndTools) {
    Json a = answer(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_EQ(a.get("result").get("protocolVersion").dump(), "\"2025-06-18\"");
    EXPECT_EQ(a.get("result").get("serverInfo").get("name").dump(), "\"sion-documents\"");
    EXPECT_EQ(a.get("result").get("capabilities").dump(), R"({"tools":{}})");
    a = answer(
        R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2099-01-01"}})");
    EXPECT_EQ(a.get("result").get("protocolVersion").dump(), "\"2025-11-25\"");
    EXPECT_FALSE(answer(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").exists());
    a = answer(R"({"jsonrpc":"2.0","id":"p","method":"ping"})");
    EXPECT_EQ(a.dump(), R"({"jsonrpc":"2.0","id":"p","result":{}})");
    a = answer(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
    JsonView tools = a.get("result").get("tools");
    ASSERT_EQ(tools.size(), 4U);
    const char* names[] = {"list_documents", "read_document", "search_documents", "write_document"};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(tools.at(i).get("name").dump(), std::string("\"") + names[i] + "\"");
        JsonView hints = tools.at(i).get("annotations");
        EXPECT_EQ(hints.get("openWorldHint").dump(), "false");
        EXPECT_EQ(hints.get("readOnlyHint").dump(), i < 3 ? "true" : "false");
    }
    EXPECT_EQ(tools.at(3).get("annotations").get("idempotentHint").dump(), "true");
}

TEST_F(DocumentsProtocol, CallsAndMalformedLines) {
    Json a = answer(
        R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_document","arguments":{"path":"../x.md"}}})");
    EXPECT_EQ(
        a.get("result").dump(),
        R"({"content":[{"type":"text","text":"cannot read '../x.md': '../x.md' is outside the folder"}],"isError":true})");
    a = answer(
        R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}})");
    EXPECT_EQ(a.get("error").dump(),
              R"({"code":-32602,"message":"invalid params: there is no tool named 'rm_rf'"})");
    a = answer(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}})");
    EXPECT_EQ(a.get("error").get("code").dump(), "-32602");
    a = answer(R"({"jsonrpc":"2.0","id":7,"method":"server/discover"})");
    EXPECT_EQ(a.get("error").get("code").dump(), "-32601");
    a = answer("not json");
    EXPECT_EQ(a.get("error").get("code").dump(), "-32700");
    EXPECT_EQ(a.get("id").dump(), "null");
    a = answer("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"x\":\"\xFF\"}");
    EXPECT_EQ(a.get("error").get("code").dump(), "-32700");
    a = answer(R"({"jsonrpc":"1.0","id":9,"method":"ping"})");
    EXPECT_EQ(a.get("error").get("code").dump(), "-32600");
    a = answer(R"([{"jsonrpc":"2.0","id":10,"method":"ping"}])");
    EXPECT_EQ(a.get("error").get("code").dump(), "-32600");
    std::string out;
    mcp_serve::answer_line(*folder, "", true, 5u << 20, out);
    EXPECT_EQ(Json::parse(out)->get("error").get("code").dump(), "-32600");
    EXPECT_FALSE(answer(R"({"jsonrpc":"2.0","id":11,"result":{}})").exists());
    a = answer(
        R"({"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"list_documents","arguments":"x"}})");
    EXPECT_EQ(a.get("result").get("isError").dump(), "true");
}

} // namespace
} // namespace sion::documents_cmd
