// A client from the Connect project (connect-es: @connectrpc/connect, @connectrpc/connect-node,
// @bufbuild/protobuf v2) with no generated code: the services and messages come from a
// FileDescriptorSet read at run time. It talks to `ichor-tui serve` over each of connect-node's
// transports (the Connect protocol over HTTP/1.1, in binary and in JSON, and over HTTP/2; gRPC;
// gRPC-Web) and on each one lists, plans, has a start refused (reading the reason from the
// google.rpc.ErrorInfo in the error's details), starts, pauses, resumes and deletes.
//
//   node connect_client.mjs --descriptors FILE --url http://HOST:PORT --token TOKEN \
//       [--namespace NS] [--cluster NAME | --cluster-per-transport] [--target VERSION] \
//       [--transport NAME]...
//
// --cluster-per-transport: each transport works on the cluster named after it (the start
// claim of a cluster stands for a minute after a start, so one cluster could not be started
// on again at once).
//
// The packages are found in $ICHOR_NODE_MODULES (a node_modules folder; .ci/run installs one).
// Prints what it saw; exits non-zero with a message on the first thing that is not as it
// should be.

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
  compressionGzip,
} = require("@connectrpc/connect-node");

const { values: args } = parseArgs({
  options: {
    descriptors: { type: "string" },
    url: { type: "string" },
    token: { type: "string" },
    namespace: { type: "string", default: "default" },
    cluster: { type: "string", default: "c1" },
    "cluster-per-transport": { type: "boolean", default: false },
    target: { type: "string", default: "v1.9.3" },
    transport: { type: "string", multiple: true },
  },
});
if (!args.descriptors || !args.url) {
  console.error("usage: connect_client.mjs --descriptors FILE --url URL [--token TOKEN] ...");
  process.exit(2);
}

const registry = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, readFileSync(args.descriptors)),
);
const need = (what, desc) => {
  if (!desc) fail("setup", `${what} is not in the descriptor set`);
  return desc;
};
const OperationService = need(
  "ichor.v1alpha1.OperationService",
  registry.getService("ichor.v1alpha1.OperationService"),
);
const ClusterService = need(
  "ichor.v1alpha1.ClusterService",
  registry.getService("ichor.v1alpha1.ClusterService"),
);
const ErrorInfo = need("google.rpc.ErrorInfo", registry.getMessage("google.rpc.ErrorInfo"));
const OperationKind = need(
  "ichor.v1alpha1.OperationKind",
  registry.getEnum("ichor.v1alpha1.OperationKind"),
);
const OperationEffect = need(
  "ichor.v1alpha1.OperationEffect",
  registry.getEnum("ichor.v1alpha1.OperationEffect"),
);

/** The number of an enum value by its name. */
function number(desc, name) {
  const v = desc.values.find((x) => x.name === name);
  if (!v) fail("setup", `${desc.typeName} has no value ${name}`);
  return v.number;
}

/** The name of an enum value by its number. */
function nameOf(desc, n) {
  return desc.values.find((x) => x.number === n)?.name ?? `${n}`;
}

let current = "setup";

function fail(step, message) {
  console.error(`FAIL [${current}] ${step}: ${message}`);
  process.exit(1);
}

function check(step, cond, message) {
  if (!cond) fail(step, message);
}

/** A request message, built from its descriptor as an application without generated code would. */
function request(service, method, init) {
  return create(service.method[method].input, init);
}

/** The bearer token on every call, as a connect-es interceptor. */
const bearer = (next) => async (req) => {
  if (args.token) req.header.set("authorization", `Bearer ${args.token}`);
  return await next(req);
};

/** Options that send and accept gzip. */
const gzip = {
  interceptors: [bearer],
  sendCompression: compressionGzip,
  acceptCompression: [compressionGzip],
  compressMinBytes: 0,
};

const TRANSPORTS = {
  "connect-http1-proto": () =>
    createConnectTransport({ baseUrl: args.url, httpVersion: "1.1", interceptors: [bearer] }),
  "connect-http1-json": () =>
    createConnectTransport({
      baseUrl: args.url,
      httpVersion: "1.1",
      useBinaryFormat: false,
      interceptors: [bearer],
    }),
  "connect-http2-proto": () =>
    createConnectTransport({ baseUrl: args.url, httpVersion: "2", interceptors: [bearer] }),
  "connect-http2-json": () =>
    createConnectTransport({
      baseUrl: args.url,
      httpVersion: "2",
      useBinaryFormat: false,
      interceptors: [bearer],
    }),
  grpc: () => createGrpcTransport({ baseUrl: args.url, interceptors: [bearer] }),
  "grpc-web": () =>
    createGrpcWebTransport({ baseUrl: args.url, httpVersion: "1.1", interceptors: [bearer] }),
  // gzip both ways, every message compressed however small.
  "connect-http1-json-gzip": () =>
    createConnectTransport({ baseUrl: args.url, httpVersion: "1.1", useBinaryFormat: false, ...gzip }),
  "grpc-gzip": () => createGrpcTransport({ baseUrl: args.url, ...gzip }),
  "grpc-web-gzip": () =>
    createGrpcWebTransport({ baseUrl: args.url, httpVersion: "1.1", ...gzip }),
};

/** Call options that keep the response's headers, to read the server's version from. */
function watched() {
  const seen = { header: null };
  return {
    seen,
    options: {
      timeoutMs: 15000,
      onHeader: (h) => {
        seen.header = h;
      },
    },
  };
}

async function expectRefusal(step, call, code, reason) {
  let err;
  try {
    await call();
  } catch (e) {
    err = ConnectError.from(e);
  }
  check(step, err !== undefined, "accepted, but it must be refused");
  check(
    step,
    err.code === code,
    `code ${Code[err.code]} (want ${Code[code]}): ${err.rawMessage}`,
  );
  const types = err.details.map((d) => d.type ?? d.desc?.typeName);
  const infos = err.findDetails(ErrorInfo);
  check(step, infos.length === 1, `ErrorInfo details: ${infos.length} (details: ${types})`);
  const info = infos[0];
  check(
    step,
    info.reason === reason && info.domain === "ichor.maesh.dev",
    `reason ${info.reason} in ${info.domain} (want ${reason} in ichor.maesh.dev)`,
  );
  check(step, err.metadata.get("ichor-version"), "the refusal names no ichor-version");
  return { err, info };
}

async function run(name) {
  current = name;
  const transport = TRANSPORTS[name]();
  const ops = createClient(OperationService, transport);
  const clusters = createClient(ClusterService, transport);
  const { namespace, target } = args;
  const cluster = args["cluster-per-transport"] ? name : args.cluster;

  // Clusters: the one the rest works on is there.
  const listed = await clusters.listClusters(
    request(ClusterService, "listClusters", { namespace }),
  );
  const c = listed.clusters.find((x) => x.name === cluster);
  check("list clusters", c, `no cluster ${cluster} in ${listed.clusters.map((x) => x.name)}`);
  check("list clusters", c.machines.length > 0, "the cluster has no machines");
  console.log(`[${name}] cluster ${c.name}: talos ${c.talosVersion}, ${c.machines.length} machines`);

  // List, and the server's version in the response headers.
  const w = watched();
  const before = await ops.listOperations(
    request(OperationService, "listOperations", { namespace }),
    w.options,
  );
  check("list", Array.isArray(before.operations), "no operations field");
  const version = w.seen.header?.get("ichor-version");
  check("list", version, "the answer names no ichor-version");
  console.log(`[${name}] list: ${before.operations.length} operations; server ${version}`);

  // Plan.
  const talos = number(OperationKind, "OPERATION_KIND_TALOS");
  const planned = await ops.planOperation(
    request(OperationService, "planOperation", { namespace, cluster, kind: talos, target }),
  );
  check(
    "plan",
    planned.effect === number(OperationEffect, "OPERATION_EFFECT_REBOOT"),
    `effect ${nameOf(OperationEffect, planned.effect)} (want OPERATION_EFFECT_REBOOT)`,
  );
  check("plan", planned.blocked === undefined, `blocked: ${planned.blocked?.reason}`);
  const steps = planned.steps.map((s) => s.machines.map((m) => m.name));
  check("plan", steps.length > 0 && steps.every((s) => s.length > 0), `steps ${JSON.stringify(steps)}`);
  check("plan", planned.fingerprint.length > 0, "no fingerprint");
  check("plan", planned.target === target || planned.target === target.replace(/^v/, ""), `target ${planned.target}`);
  console.log(
    `[${name}] plan: ${nameOf(OperationEffect, planned.effect)} ${planned.current} -> ${planned.target}, steps ${JSON.stringify(steps)}`,
  );

  // A refused start: a shutdown takes no target.
  const shutdown = number(OperationKind, "OPERATION_KIND_SHUTDOWN");
  const { info } = await expectRefusal(
    "refused start",
    () =>
      ops.createOperation(
        request(OperationService, "createOperation", {
          namespace,
          cluster,
          kind: shutdown,
          target: "v9.9.9",
        }),
      ),
    Code.InvalidArgument,
    "TARGET_NOT_TAKEN",
  );
  check("refused start", info.metadata.kind === "shutdown", `metadata ${JSON.stringify(info.metadata)}`);
  console.log(`[${name}] refused as expected: ${info.reason} ${JSON.stringify(info.metadata)}`);

  // A refusal before any call to Kubernetes: an invalid namespace.
  await expectRefusal(
    "refused list",
    () => ops.listOperations(request(OperationService, "listOperations", { namespace: "../x" })),
    Code.InvalidArgument,
    "INVALID_NAMESPACE",
  );

  // Start a shutdown (it writes no spec: an operator may), bound to the plan reviewed.
  const reviewed = await ops.planOperation(
    request(OperationService, "planOperation", { namespace, cluster, kind: shutdown }),
  );
  check(
    "plan shutdown",
    reviewed.effect === number(OperationEffect, "OPERATION_EFFECT_STOP") && !reviewed.blocked,
    `effect ${nameOf(OperationEffect, reviewed.effect)}, blocked ${reviewed.blocked?.reason}`,
  );
  const created = await ops.createOperation(
    request(OperationService, "createOperation", {
      namespace,
      cluster,
      kind: shutdown,
      requestId: `connect-es-${name}`,
      planFingerprint: reviewed.fingerprint,
    }),
  );
  const op = created.operation;
  check("start", op && op.name && op.cluster === cluster, `answered ${JSON.stringify(op?.name)}`);
  check("start", created.found === false, "found an earlier start");
  check("start", typeof op.generation === "bigint", `generation is a ${typeof op.generation}`);
  console.log(`[${name}] started ${op.namespace}/${op.name} by ${op.actor} (generation ${op.generation})`);

  const after = await ops.listOperations(request(OperationService, "listOperations", { namespace }));
  check(
    "list after start",
    after.operations.some((o) => o.name === op.name),
    `${op.name} is not listed`,
  );

  // Pause, bound to what was seen.
  const paused = await ops.setOperationPaused(
    request(OperationService, "setOperationPaused", {
      namespace,
      name: op.name,
      paused: true,
      confirmed: { uid: op.uid, generation: op.generation, finished: false, paused: false },
    }),
  );
  check("pause", paused.operation?.paused === true, "not paused");
  console.log(`[${name}] paused (generation ${paused.operation.generation})`);

  // A pause confirmed against an older generation is refused.
  await expectRefusal(
    "stale resume",
    () =>
      ops.setOperationPaused(
        request(OperationService, "setOperationPaused", {
          namespace,
          name: op.name,
          paused: false,
          confirmed: { uid: op.uid, generation: op.generation, finished: false, paused: true },
        }),
      ),
    Code.FailedPrecondition,
    "CHANGED_SINCE_CONFIRMED",
  );

  const resumed = await ops.setOperationPaused(
    request(OperationService, "setOperationPaused", {
      namespace,
      name: op.name,
      paused: false,
      confirmed: {
        uid: op.uid,
        generation: paused.operation.generation,
        finished: false,
        paused: true,
      },
    }),
  );
  check("resume", resumed.operation?.paused === false, "still paused");
  console.log(`[${name}] resumed (generation ${resumed.operation.generation})`);

  await ops.deleteOperation(
    request(OperationService, "deleteOperation", {
      namespace,
      name: op.name,
      confirmed: {
        uid: op.uid,
        generation: resumed.operation.generation,
        finished: false,
        paused: false,
      },
    }),
  );
  const gone = await ops.listOperations(request(OperationService, "listOperations", { namespace }));
  check("delete", !gone.operations.some((o) => o.name === op.name), `${op.name} is still listed`);
  await expectRefusal(
    "get deleted",
    () =>
      ops.getOperation(request(OperationService, "getOperation", { namespace, name: op.name })),
    Code.NotFound,
    "OPERATION_NOT_FOUND",
  );
  console.log(`[${name}] deleted ${op.name}`);
  console.log(`[${name}] OK`);
}

const chosen = args.transport ?? Object.keys(TRANSPORTS);
for (const name of chosen) {
  if (!TRANSPORTS[name]) fail("setup", `no transport ${name}: ${Object.keys(TRANSPORTS)}`);
}
try {
  for (const name of chosen) {
    await run(name);
  }
} catch (e) {
  const err = ConnectError.from(e);
  fail("call", `${Code[err.code]}: ${err.rawMessage}`);
}
console.log(`OK: ${chosen.length} transports`);
// HTTP/2 sessions would keep the process alive for a while.
process.exit(0);
