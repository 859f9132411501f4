// SPDX-License-Identifier: MIT
// An OTLP/HTTP trace receiver for the trace tests: it decodes what it is sent with OpenTelemetry's
// own protocol definitions (the .proto files the official exporter package publishes, read with
// protobufjs), http/protobuf by the protobuf wire format and http/json by the protocol's JSON
// mapping (hex ids, 64-bit integers as decimal strings, enums as numbers), and writes each span as
// one JSON line to OUT:
//   {"contentType","resource":{k:v},"scope":{"name","version"},"traceId","spanId","parentSpanId",
//    "name","kind","start","end","attributes":{k:v},"status":{"code","message"},"links":[…],
//    "headers":{…}}
// A request it cannot decode is answered 400 and written as {"error": "..."}.
//
//   node receiver.mjs PORTFILE OUT [--lifetime SECONDS]
//
// Listens on 127.0.0.1 at a port of the kernel's choosing, written to PORTFILE once it listens;
// ends after --lifetime seconds (120 by default).
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { appendFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const peers = join(here, '..', 'peers');
const require = createRequire(join(peers, 'package.json'));
const protobuf = require('protobufjs');
const protos = join(dirname(require.resolve('@opentelemetry/otlp-grpc-exporter-base/package.json')),
                    'build', 'protos');

const [portFile, out, ...rest] = process.argv.slice(2);
let lifetime = 120;
for (let i = 0; i < rest.length; ++i)
    if (rest[i] === '--lifetime') lifetime = Number(rest[++i]);

const root = new protobuf.Root();
root.resolvePath = (origin, target) => join(protos, target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const Response = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

const hex = (bytes) => Buffer.from(bytes || []).toString('hex');
const fromHex = (text, size, what) => {
    if (text === undefined || text === '') return Buffer.alloc(0);
    if (typeof text !== 'string' || !new RegExp(`^[0-9a-f]{${2 * size}}$`).test(text))
        throw new Error(`${what} is not ${size} bytes of lowercase hex: ${JSON.stringify(text)}`);
    return Buffer.from(text, 'hex');
};

// An AnyValue (as toObject() gives it, its oneof named) as plain JSON.
function value(v) {
    switch (v.value) {
    case 'stringValue': return v.stringValue;
    case 'boolValue': return v.boolValue;
    case 'intValue': return Number(v.intValue);
    case 'doubleValue': return v.doubleValue;
    case 'arrayValue': return ((v.arrayValue && v.arrayValue.values) || []).map(value);
    case 'kvlistValue': return attributes(v.kvlistValue && v.kvlistValue.values);
    default: throw new Error(`an attribute value of no known kind: ${JSON.stringify(v)}`);
    }
}

function attributes(list) {
    const o = {};
    for (const kv of list || []) o[kv.key] = value(kv.value || {});
    return o;
}

// The protocol's JSON mapping to protobufjs's object form: hex ids to bytes, checked.
function fromJson(body) {
    const request = JSON.parse(body);
    for (const rs of request.resourceSpans || [])
        for (const ss of rs.scopeSpans || [])
            for (const s of ss.spans || []) {
                s.traceId = fromHex(s.traceId, 16, 'traceId');
                s.spanId = fromHex(s.spanId, 8, 'spanId');
                s.parentSpanId = fromHex(s.parentSpanId, 8, 'parentSpanId');
                for (const l of s.links || []) {
                    l.traceId = fromHex(l.traceId, 16, 'a link\'s traceId');
                    l.spanId = fromHex(l.spanId, 8, 'a link\'s spanId');
                }
                for (const t of ['startTimeUnixNano', 'endTimeUnixNano'])
                    if (typeof s[t] !== 'string' || !/^[0-9]+$/.test(s[t]))
                        throw new Error(`${t} is not a decimal string: ${JSON.stringify(s[t])}`);
                if (typeof s.kind !== 'number') throw new Error(`kind is not a number: ${s.kind}`);
            }
    const message = Request.fromObject(request);
    const problem = Request.verify(message);
    if (problem) throw new Error(problem);
    return message;
}

function spans(decoded, contentType, headers) {
    const message = Request.toObject(decoded, { longs: String, enums: Number, bytes: Array, oneofs: true });
    const lines = [];
    for (const rs of message.resourceSpans || []) {
        const resource = attributes(rs.resource && rs.resource.attributes);
        for (const ss of rs.scopeSpans || []) {
            const scope = { name: ss.scope ? ss.scope.name : '', version: ss.scope ? ss.scope.version : '' };
            for (const s of ss.spans || []) {
                if (s.traceId.length !== 16 || s.spanId.length !== 8)
                    throw new Error(`span ${s.name}: ids of ${s.traceId.length} and ${s.spanId.length} bytes`);
                lines.push({
                    contentType, resource, scope, headers,
                    traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId),
                    name: s.name, kind: s.kind,
                    start: String(s.startTimeUnixNano), end: String(s.endTimeUnixNano),
                    attributes: attributes(s.attributes),
                    status: { code: s.status ? s.status.code || 0 : 0, message: s.status ? s.status.message || '' : '' },
                    links: (s.links || []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
                });
            }
        }
    }
    return lines;
}

const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
        const body = Buffer.concat(chunks);
        const type = (req.headers['content-type'] || '').split(';')[0].trim();
        const headers = { ...req.headers };
        delete headers['content-length'];
        try {
            if (req.method !== 'POST' || req.url !== '/v1/traces')
                throw new Error(`${req.method} ${req.url} is not POST /v1/traces`);
            let message;
            if (type === 'application/x-protobuf') {
                message = Request.decode(body);
                const problem = Request.verify(message);
                if (problem) throw new Error(problem);
            } else if (type === 'application/json') {
                message = fromJson(body.toString('utf8'));
            } else {
                throw new Error(`Content-Type ${type} is neither protobuf nor JSON`);
            }
            const lines = spans(message, type, headers);
            appendFileSync(out, lines.map((l) => JSON.stringify(l) + '\n').join(''));
            if (type === 'application/json') {
                res.writeHead(200, { 'Content-Type': 'application/json' });
                res.end('{}');
            } else {
                res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
                res.end(Buffer.from(Response.encode(Response.create({})).finish()));
            }
        } catch (e) {
            appendFileSync(out, JSON.stringify({ error: String(e.message || e) }) + '\n');
            res.writeHead(400, { 'Content-Type': 'text/plain' });
            res.end(String(e.message || e));
        }
    });
});

server.listen(0, '127.0.0.1', () => {
    writeFileSync(portFile + '.tmp', String(server.address().port));
    renameSync(portFile + '.tmp', portFile);
});
setTimeout(() => process.exit(0), lifetime * 1000).unref();
process.on('SIGTERM', () => process.exit(0));
