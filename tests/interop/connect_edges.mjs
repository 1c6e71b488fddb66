// connect-es (connect-node) at serve's protocol edges, with no generated code (the services come
// from a FileDescriptorSet read at run time, as in connect_client.mjs):
//
//   refusals   N rounds, on one connection per transport, of "a call without a token, then a
//              valid call": every refusal must be Unauthenticated with its ErrorInfo, every valid
//              call answered (over HTTP/1.1 a refusal must not cost the connection's next call).
//              With --bytes B the refused call's request carries about B bytes (a long
//              namespace): the refusal must still be read, not a broken pipe.
//   deadlines  WatchOperations with a deadline: the client's own (timeoutMs), and the deadline
//              header alone (the client then leaves the deadline to the server): each ends with
//              DeadlineExceeded near it; the header-only one with the server's words.
//   refused-stream  WatchOperations without a token: Unauthenticated with the server's message
//              and its ErrorInfo, on every transport.
//   grpc-web-json   gRPC-Web in JSON: a clean Unimplemented that names what the server speaks.
//   revoked    WatchOperations with the token: prints "[transport] subscribed" once its first page
//              came, then (the test revokes the token) the stream must end Unauthenticated with
//              its ErrorInfo, on every transport.
//
//   node connect_edges.mjs --descriptors FILE --url http://HOST:PORT --token TOKEN \
//       --check NAME [--rounds N] [--transport NAME]...
//
// Prints one line per transport and check; exits non-zero after printing every failure.

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const modules = process.env.ICHOR_NODE_MODULES;
if (!modules) {
  console.error("FAIL: ICHOR_NODE_MODULES is not set (a node_modules folder with connect-es)");
  process.exit(2);
}
const require = createRequire(join(modules, "..", "resolve-from-here.js"));
const { create, fromBinary, createFileRegistry } = require("@bufbuild/protobuf");
const { FileDescriptorSetSchema } = require("@bufbuild/protobuf/wkt");
const { createClient, ConnectError, Code } = require("@connectrpc/connect");
const {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} = require("@connectrpc/connect-node");

const { values: args } = parseArgs({
  options: {
    descriptors: { type: "string" },
    url: { type: "string" },
    token: { type: "string" },
    check: { type: "string" },
    rounds: { type: "string", default: "20" },
    bytes: { type: "string", default: "0" },
    transport: { type: "string", multiple: true },
  },
});
if (!args.descriptors || !args.url || !args.token || !args.check) {
  console.error("usage: connect_edges.mjs --descriptors FILE --url URL --token T --check NAME");
  process.exit(2);
}

const registry = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, readFileSync(args.descriptors)),
);
const OperationService = registry.getService("ichor.v1alpha1.OperationService");
const ErrorInfo = registry.getMessage("google.rpc.ErrorInfo");
const SUMMARY = registry
  .getEnum("ichor.v1alpha1.OperationView")
  .values.find((v) => v.name === "OPERATION_VIEW_SUMMARY").number;

// Each transport once: a client on it reuses its connection (HTTP/1.1: node's keep-alive agent;
// HTTP/2: the transport's session).
const TRANSPORTS = {
  "connect-http1": () => createConnectTransport({ baseUrl: args.url, httpVersion: "1.1" }),
  "connect-http1-json": () =>
    createConnectTransport({ baseUrl: args.url, httpVersion: "1.1", useBinaryFormat: false }),
  "connect-http2": () => createConnectTransport({ baseUrl: args.url, httpVersion: "2" }),
  "grpc-web-http1": () => createGrpcWebTransport({ baseUrl: args.url, httpVersion: "1.1" }),
  "grpc-web-http2": () => createGrpcWebTransport({ baseUrl: args.url, httpVersion: "2" }),
  grpc: () => createGrpcTransport({ baseUrl: args.url }),
  "grpc-web-json-http1": () =>
    createGrpcWebTransport({ baseUrl: args.url, httpVersion: "1.1", useBinaryFormat: false }),
  "grpc-web-json-http2": () =>
    createGrpcWebTransport({ baseUrl: args.url, httpVersion: "2", useBinaryFormat: false }),
};

const bearer = { authorization: `Bearer ${args.token}` };
const list = () =>
  create(OperationService.method.listOperations.input, { namespace: "default", view: SUMMARY });
// The refused call's request: `--bytes` long.
const padded = () =>
  Number(args.bytes) > 0
    ? create(OperationService.method.listOperations.input, {
        namespace: "x".repeat(Number(args.bytes)),
        view: SUMMARY,
      })
    : list();
const watch = () =>
  create(OperationService.method.watchOperations.input, {
    list: { namespace: "default", view: SUMMARY },
  });

let failures = 0;
function fail(name, message) {
  failures += 1;
  console.log(`FAIL [${name}] ${message}`);
}

/** The error a call ends with, or undefined. */
async function errorOf(call) {
  try {
    await call();
    return undefined;
  } catch (e) {
    return ConnectError.from(e);
  }
}

/** "Code: message (reason)" of an error, for the printout. */
function said(err) {
  if (!err) return "answered";
  const info = err.findDetails(ErrorInfo)[0];
  return `${Code[err.code]}: ${err.rawMessage}${info ? ` (${info.reason})` : ""}`;
}

/** Whether `err` is the server's refusal of a missing token: code, words and ErrorInfo. */
function isUnauthenticated(err) {
  if (!err || err.code !== Code.Unauthenticated) return false;
  const info = err.findDetails(ErrorInfo)[0];
  return info?.reason === "UNAUTHENTICATED" && info?.domain === "ichor.maesh.dev" && /token/.test(err.rawMessage);
}

async function refusals(name, client) {
  const rounds = Number(args.rounds);
  let refusedRight = 0;
  let answered = 0;
  const wrong = new Map();
  const count = (what) => wrong.set(what, (wrong.get(what) ?? 0) + 1);
  for (let i = 0; i < rounds; i++) {
    const refused = await errorOf(() => client.listOperations(padded()));
    if (isUnauthenticated(refused)) refusedRight += 1;
    else count(`refusal: ${said(refused)}`);
    const valid = await errorOf(() => client.listOperations(list(), { headers: bearer }));
    if (!valid) answered += 1;
    else count(`valid call: ${said(valid)}`);
  }
  console.log(`[${name}] refusals right ${refusedRight}/${rounds}, valid calls answered ${answered}/${rounds}`);
  for (const [what, n] of wrong) fail(name, `${n}x ${what}`);
}

/** Reads a stream to its end: the messages and the error it ended with, and the seconds taken. */
async function drain(stream) {
  const started = Date.now();
  let messages = 0;
  let err;
  try {
    for await (const _ of stream) messages += 1;
  } catch (e) {
    err = ConnectError.from(e);
  }
  return { messages, err, seconds: (Date.now() - started) / 1000 };
}

async function deadlines(name, client) {
  const header = name.startsWith("connect") ? { "connect-timeout-ms": "2000" } : { "grpc-timeout": "2S" };
  for (const [how, options] of [
    ["the client's deadline", { timeoutMs: 2000, headers: bearer }],
    ["the deadline header alone", { headers: { ...bearer, ...header } }],
  ]) {
    const { messages, err, seconds } = await drain(client.watchOperations(watch(), options));
    const line = `${how}: ${messages} messages, then ${said(err)} after ${seconds.toFixed(1)} s`;
    console.log(`[${name}] ${line}`);
    if (err?.code !== Code.DeadlineExceeded) fail(name, `${how}: not DeadlineExceeded: ${line}`);
    if (messages < 1) fail(name, `${how}: the first page did not come before the deadline`);
    if (seconds < 1.5 || seconds > 10) fail(name, `${how}: ended after ${seconds} s, not at 2 s`);
    if (how.endsWith("alone") && !/deadline/.test(err?.rawMessage ?? "")) {
      fail(name, `${how}: not the server's words: ${line}`);
    }
  }
}

async function refusedStream(name, client) {
  const { messages, err } = await drain(client.watchOperations(watch(), { timeoutMs: 10000 }));
  console.log(`[${name}] a stream without a token: ${messages} messages, then ${said(err)}`);
  if (messages !== 0 || !isUnauthenticated(err)) {
    fail(name, `not the server's refusal with its message and ErrorInfo: ${said(err)}`);
  }
}

async function grpcWebJson(name, client) {
  const err = await errorOf(() => client.listOperations(list(), { headers: bearer, timeoutMs: 10000 }));
  console.log(`[${name}] gRPC-Web in JSON: ${said(err)}`);
  if (err?.code !== Code.Unimplemented || !/application\/grpc-web\+proto/.test(err.rawMessage)) {
    fail(name, `not a clean Unimplemented naming what is served: ${said(err)}`);
  }
}

async function revoked(name, client) {
  const stream = client.watchOperations(watch(), { headers: bearer, timeoutMs: 60000 });
  const started = Date.now();
  let messages = 0;
  let err;
  try {
    for await (const _ of stream) {
      messages += 1;
      if (messages === 1) console.log(`[${name}] subscribed`);
    }
  } catch (e) {
    err = ConnectError.from(e);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`[${name}] the token revoked: ${messages} messages, then ${said(err)} after ${seconds} s`);
  const info = err?.findDetails(ErrorInfo)[0];
  if (err?.code !== Code.Unauthenticated || info?.reason !== "UNAUTHENTICATED") {
    fail(name, `the stream did not end Unauthenticated with its ErrorInfo: ${said(err)}`);
  }
}

const CHECKS = {
  refusals: [refusals, ["connect-http1", "connect-http1-json", "grpc-web-http1", "connect-http2", "grpc-web-http2", "grpc"]],
  deadlines: [deadlines, ["connect-http1", "connect-http2", "grpc-web-http1", "grpc-web-http2", "grpc"]],
  "refused-stream": [refusedStream, ["connect-http1", "connect-http1-json", "connect-http2", "grpc-web-http1", "grpc"]],
  "grpc-web-json": [grpcWebJson, ["grpc-web-json-http1", "grpc-web-json-http2"]],
  revoked: [revoked, ["connect-http1", "connect-http2", "grpc-web-http1", "grpc-web-http2", "grpc"]],
};

const chosen = CHECKS[args.check];
if (!chosen) {
  console.error(`no check ${args.check}: ${Object.keys(CHECKS)}`);
  process.exit(2);
}
const [check, defaults] = chosen;
const names = args.transport ?? defaults;
const one = async (name) => {
  const client = createClient(OperationService, TRANSPORTS[name]());
  try {
    await check(name, client);
  } catch (e) {
    fail(name, `threw ${said(ConnectError.from(e))}`);
  }
};
if (args.check === "refusals") {
  // One transport at a time: each round's two calls go over the one connection it holds.
  for (const name of names) await one(name);
} else {
  await Promise.all(names.map(one));
}
console.log(failures === 0 ? `OK: ${args.check} on ${names.length} transports` : `${failures} failures`);
// HTTP/2 sessions would keep the process alive for a while.
process.exit(failures === 0 ? 0 : 1);
