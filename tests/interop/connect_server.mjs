// A server from the Connect project (connect-es: @connectrpc/connect-node's connectNodeAdapter)
// standing in for ichor-ui's connect-go server: OperationService and ClusterService with canned
// answers and canned refusals (ConnectError with a google.rpc.ErrorInfo detail, as ichor-ui
// refuses), every answer naming the server's version in `ichor-version`. No generated code:
// the services come from a FileDescriptorSet read at run time.
//
//   node connect_server.mjs --descriptors FILE [--version V]
//
// Serves the Connect protocol over HTTP/1.1 (http.createServer) on one loopback port and gRPC
// over h2c (http2.createServer) on another, and prints them as one JSON line:
// {"http1": PORT, "h2c": PORT}. Every call must carry `authorization: Bearer canned-token`.
// Stops when its standard input closes (or on SIGTERM).
//
// What it answers (tests/connect_peers.rs asserts each):
// - ListOperations: one running operation; namespace "forbidden": PERMISSION_DENIED;
//   namespace "bare": UNAVAILABLE with no details (a refusal without a reason).
// - GetOperation: that operation; name "gone": NOT_FOUND / OPERATION_NOT_FOUND.
// - PlanOperation: a talos plan; kind SHUTDOWN: a plan blocked by UNFINISHED_OPERATION.
// - CreateOperation: cluster "prod-eu": FAILED_PRECONDITION / UNFINISHED_OPERATION; else started.
// - SetOperationPaused, DeleteOperation, GetPermissions, ListClusters, GetCluster: canned.

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as http from "node:http";
import * as http2 from "node:http2";

const modules = process.env.ICHOR_NODE_MODULES;
if (!modules) {
  console.error("ICHOR_NODE_MODULES is not set (a node_modules folder with connect-es)");
  process.exit(2);
}
const require = createRequire(join(modules, "..", "resolve-from-here.js"));
const { fromBinary, createFileRegistry } = require("@bufbuild/protobuf");
const { FileDescriptorSetSchema } = require("@bufbuild/protobuf/wkt");
const { ConnectError, Code } = require("@connectrpc/connect");
const { connectNodeAdapter } = require("@connectrpc/connect-node");

const { values: args } = parseArgs({
  options: {
    descriptors: { type: "string" },
    version: { type: "string", default: "0.1.9" },
  },
});
if (!args.descriptors) {
  console.error("usage: connect_server.mjs --descriptors FILE [--version V]");
  process.exit(2);
}

const registry = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, readFileSync(args.descriptors)),
);
const OperationService = registry.getService("ichor.v1alpha1.OperationService");
const ClusterService = registry.getService("ichor.v1alpha1.ClusterService");
const ErrorInfo = registry.getMessage("google.rpc.ErrorInfo");
const OperationKind = registry.getEnum("ichor.v1alpha1.OperationKind");
const OperationEffect = registry.getEnum("ichor.v1alpha1.OperationEffect");
if (!OperationService || !ClusterService || !ErrorInfo || !OperationKind || !OperationEffect) {
  console.error("the descriptor set lacks the services, google.rpc.ErrorInfo or the enums");
  process.exit(2);
}
const kind = (name) => OperationKind.values.find((v) => v.name === `OPERATION_KIND_${name}`).number;
const effect = (name) =>
  OperationEffect.values.find((v) => v.name === `OPERATION_EFFECT_${name}`).number;

const TOKEN = "Bearer canned-token";

/** A refusal as ichor-ui makes one: the code, the English message, and the ErrorInfo. */
function refusal(code, reason, metadata, message) {
  return new ConnectError(message, code, undefined, [
    { desc: ErrorInfo, value: { reason, domain: "ichor.maesh.dev", metadata } },
  ]);
}

const OPERATION = {
  namespace: "default",
  name: "prod-eu-talos-7xk2p",
  cluster: "prod-eu",
  kind: kind("TALOS"),
  kindRaw: "talos",
  maxUnavailable: 1,
  paused: false,
  phase: "Running",
  machines: [
    {
      name: "prod-eu-cp1",
      phase: "Completed",
      message: "running Talos v1.9.3",
      startedAt: "2026-11-29T10:00:00Z",
      finishedAt: "2026-11-29T10:04:00Z",
    },
    {
      name: "prod-eu-w01",
      phase: "Running",
      message: "rebooting",
      startedAt: "2026-11-29T10:04:00Z",
    },
  ],
  conditions: [
    {
      type: "ClusterLockHeld",
      status: "True",
      reason: "Held",
      message: "held by prod-eu-talos-7xk2p",
    },
  ],
  createdAt: "2026-11-29T09:59:58Z",
  startedAt: "2026-11-29T10:00:00Z",
  actor: "alice@example.com",
  current: "v1.9.2",
  target: "v1.9.3",
  uid: "6f1c2a9e-0000-4000-8000-000000000001",
  generation: 3n,
  requestId: "req-7xk2p",
};

const PLAN = {
  namespace: "default",
  cluster: "staging",
  kind: kind("TALOS"),
  effect: effect("REBOOT"),
  maxUnavailable: 1,
  steps: [
    { machines: [{ name: "staging-cp1", role: "controlplane" }] },
    {
      machines: [
        { name: "staging-w01", role: "worker" },
        { name: "staging-w02", role: "worker" },
      ],
    },
  ],
  held: [{ name: "staging-w03", reason: "disk replacement" }],
  current: "v1.9.2",
  target: "v1.9.3",
  specChange: {
    resourceKind: "TalosCluster",
    resourceName: "staging",
    field: "spec.talosVersion",
    from: "v1.9.2",
    to: "v1.9.3",
  },
  fingerprint: "0123456789abcdef",
};

const CLUSTER = {
  namespace: "default",
  name: "prod-eu",
  talosVersion: "v1.9.2",
  kubernetesVersion: "v1.32.3",
  kubeProxy: "enabled",
  ichorVersion: "v0.14.2",
  machines: [
    { name: "prod-eu-cp1", role: "controlplane", order: 1n, approved: true },
    { name: "prod-eu-w01", role: "worker", order: 10n, approved: true },
    { name: "prod-eu-w03", role: "worker", approved: false, hold: "disk replacement" },
  ],
  tracking: { tool: "Argo CD", object: "platform/prod-eu" },
  activeOperation: { name: OPERATION.name, kind: "talos", phase: "Running" },
};

const unfinished = refusal(
  Code.FailedPrecondition,
  "UNFINISHED_OPERATION",
  { operation: OPERATION.name, cluster: "prod-eu", phase: "Running", kind: "talos" },
  `Operation ${OPERATION.name} on cluster prod-eu has not completed (Running): wait for it to complete, or delete it, before starting another.`,
);

const operations = {
  listOperations(req) {
    if (req.namespace === "forbidden") {
      throw refusal(
        Code.PermissionDenied,
        "PERMISSION_DENIED",
        { what: "listing operations", detail: 'User "nobody" cannot list talosoperations' },
        'listing operations: User "nobody" cannot list talosoperations',
      );
    }
    if (req.namespace === "bare") {
      throw new ConnectError("the cluster's API server is not answering", Code.Unavailable);
    }
    return { operations: [OPERATION] };
  },
  getOperation(req) {
    if (req.name === "gone") {
      throw refusal(
        Code.NotFound,
        "OPERATION_NOT_FOUND",
        { namespace: req.namespace, name: req.name },
        `operation ${req.namespace}/${req.name} not found`,
      );
    }
    return { operation: OPERATION };
  },
  planOperation(req) {
    if (req.kind === kind("SHUTDOWN")) {
      return {
        ...PLAN,
        cluster: "prod-eu",
        kind: req.kind,
        effect: effect("STOP"),
        specChange: undefined,
        blocked: {
          reason: "UNFINISHED_OPERATION",
          params: { operation: OPERATION.name, cluster: "prod-eu", phase: "Running", kind: "talos" },
          message: unfinished.rawMessage,
        },
      };
    }
    return PLAN;
  },
  createOperation(req) {
    if (req.cluster === "prod-eu") throw unfinished;
    return {
      operation: {
        ...OPERATION,
        name: "staging-talos-q9w8e",
        cluster: req.cluster,
        phase: "",
        machines: [],
        conditions: [],
        generation: 1n,
        requestId: req.requestId,
      },
      specWritten: PLAN.specChange,
      warnings: [],
      found: false,
    };
  },
  setOperationPaused(req) {
    return {
      operation: {
        ...OPERATION,
        name: req.name,
        paused: req.paused,
        phase: req.paused ? "Paused" : "Running",
        pausedBy: req.paused ? "alice@example.com" : "",
        pausedAt: req.paused ? "2026-11-29T10:05:00Z" : "",
        generation: req.confirmed ? req.confirmed.generation + 1n : 4n,
      },
    };
  },
  deleteOperation() {
    return {};
  },
  getPermissions() {
    return { start: true, pause: true, delete: false, editClusters: false, editInstallation: false };
  },
};

const clusters = {
  listClusters() {
    return { clusters: [CLUSTER] };
  },
  getCluster(req) {
    if (req.name !== CLUSTER.name) {
      throw refusal(
        Code.NotFound,
        "CLUSTER_NOT_FOUND",
        { namespace: req.namespace, cluster: req.name },
        `cluster ${req.namespace}/${req.name} not found`,
      );
    }
    return { cluster: CLUSTER };
  },
};

/** Every answer and every refusal names the server's version; no call without the token. */
const house = (next) => async (req) => {
  try {
    if (req.header.get("authorization") !== TOKEN) {
      throw new ConnectError("a bearer token is required", Code.Unauthenticated);
    }
    const res = await next(req);
    res.header.set("ichor-version", args.version);
    return res;
  } catch (e) {
    const err = ConnectError.from(e);
    err.metadata.set("ichor-version", args.version);
    throw err;
  }
};

const adapter = connectNodeAdapter({
  routes: (router) => {
    router.service(OperationService, operations);
    router.service(ClusterService, clusters);
  },
  interceptors: [house],
  // connect-go does not insist on it; this server does, to prove the client sends it.
  requireConnectProtocolHeader: true,
});

const h1 = http.createServer(adapter);
const h2c = http2.createServer(adapter);
const listen = (server) =>
  new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server.address().port));
  });
const ports = { http1: await listen(h1), h2c: await listen(h2c) };
console.log(JSON.stringify(ports));

const stop = () => {
  h1.close();
  h2c.close();
  process.exit(0);
};
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
