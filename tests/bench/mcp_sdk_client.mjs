// SPDX-License-Identifier: MIT
// The peer of tests/bench/mcp_client_bench.cpp: sequential tools/call round trips through the
// official TypeScript SDK's client over stdio. Prints the same JSON line.
//   node mcp_sdk_client.mjs SDK_DIR CALLS TOOL ARGUMENTS_JSON -- COMMAND [ARGS...]
import { pathToFileURL } from "node:url";
import path from "node:path";

const [sdkDir, callsText, tool, argumentsJson, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
    console.error("usage: node mcp_sdk_client.mjs SDK_DIR CALLS TOOL ARGUMENTS_JSON -- COMMAND [ARGS...]");
    process.exit(1);
}
const load = (p) => import(pathToFileURL(path.join(sdkDir, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const calls = Number(callsText);
const started = performance.now();
const client = new Client({ name: "bench", version: "0" });
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
await client.connect(transport);
await client.listTools();
const connectMs = performance.now() - started;
const argumentsObject = JSON.parse(argumentsJson);
const first = performance.now();
for (let i = 0; i < calls; i++)
    await client.callTool({ name: tool, arguments: argumentsObject });
const seconds = (performance.now() - first) / 1000;
await client.close();
console.log(JSON.stringify({ mode: "sdk", calls, connect_ms: connectMs, seconds,
                             calls_per_s: calls / seconds, protocol: client.getServerVersion()?.name ?? "" }));
