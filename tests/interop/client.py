#!/usr/bin/env python3
"""An OperationService client from outside Rust: Python stubs generated from the project's .proto
files with grpcio-tools, talking to `ichor-tui serve --demo`.

    client.py HOST:PORT [--token TOKEN]

Lists the clusters, plans a shutdown of one without an unfinished operation, checks the plan,
starts it, and follows its progress until it completes. Also checks that a refusal carries the
structured reason: grpc_status.rpc_status.from_call reads the google.rpc.Status in
grpc-status-details-bin, whose google.rpc.ErrorInfo has the reason (domain ichor.maesh.dev) and
its parameters as metadata. It also sends a table of
hostile requests (oversized, empty, traversal and escape-laden fields, unknown enum values,
negative and huge numbers): each must be refused INVALID_ARGUMENT with its reason and a short
grpc-message (OUT_OF_RANGE for the one over the server's 1 MiB message limit, which tonic
refuses before the service sees it), write nothing, and leave the server answering. Exits
non-zero with a message on the first thing that is not as it should be.
"""

import argparse
import os
import sys
import tempfile
import time

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from grpc_tools import protoc

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "proto"))
PROTOS = ["ichor/v1alpha1/operation.proto", "ichor/v1alpha1/cluster.proto"]


def error_info(e):
    """The google.rpc.ErrorInfo of a refusal, read as any gRPC client reads rich errors."""
    status = rpc_status.from_call(e)
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    return None


def generate(out):
    """Generates the message and stub modules into `out` and makes them importable."""
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    args = ["protoc", "-I", PROTO_ROOT, "-I", include,
            "--python_out", out, "--grpc_python_out", out] + PROTOS
    if protoc.main(args) != 0:
        sys.exit("protoc failed on " + ", ".join(PROTOS))
    sys.path.insert(0, out)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


MAX_MESSAGE_BYTES = 200


def hostile_table(op_pb, cl_pb, ops, clusters, ns, cluster):
    """(what, call, expected code, expected reason or None) for every hostile request."""
    big, huge = "x" * 5 * 1024, "y" * 1_000_000
    over = "z" * (1024 * 1024 + 64)
    talos = op_pb.OPERATION_KIND_TALOS
    plan = lambda **kw: (lambda md: ops.PlanOperation(op_pb.PlanOperationRequest(**kw),
                                                       metadata=md, timeout=15))
    create = lambda **kw: (lambda md: ops.CreateOperation(op_pb.CreateOperationRequest(**kw),
                                                           metadata=md, timeout=15))
    get = lambda **kw: (lambda md: ops.GetOperation(op_pb.GetOperationRequest(**kw),
                                                     metadata=md, timeout=15))
    lst = lambda **kw: (lambda md: ops.ListOperations(op_pb.ListOperationsRequest(**kw),
                                                       metadata=md, timeout=15))
    ok = dict(namespace=ns, cluster=cluster, kind=talos, target="v1.9.3")
    bad = grpc.StatusCode.INVALID_ARGUMENT
    return [
        ("list: 5 KB namespace", lst(namespace=big), bad, "INVALID_NAMESPACE"),
        ("list: 1 MB namespace", lst(namespace=huge), bad, "INVALID_NAMESPACE"),
        ("list: namespace over 1 MiB (the server's message limit)", lst(namespace=over),
         grpc.StatusCode.OUT_OF_RANGE, None),
        ("list: empty namespace", lst(namespace=""), bad, "INVALID_NAMESPACE"),
        ("list: ../kube-system", lst(namespace="../kube-system"), bad, "INVALID_NAMESPACE"),
        ("get: empty name", get(namespace=ns, name=""), bad, "INVALID_NAME"),
        ("get: traversal namespace", get(namespace="../kube-system", name="x"), bad,
         "INVALID_NAMESPACE"),
        ("get: staging/../x", get(namespace=ns, name="staging/../x"), bad, "INVALID_NAME"),
        ("get: a/b", get(namespace=ns, name="a/b"), bad, "INVALID_NAME"),
        ("get: escape", get(namespace=ns, name="\x1b[2J"), bad, "INVALID_NAME"),
        ("get: newline", get(namespace=ns, name="x\n"), bad, "INVALID_NAME"),
        ("get: 1 MB name", get(namespace=ns, name=huge), bad, "INVALID_NAME"),
        ("plan: 5 KB target", plan(**{**ok, "target": big}), bad, "INVALID_VERSION"),
        ("plan: 1 MB target", plan(**{**ok, "target": huge}), bad, "INVALID_VERSION"),
        ("plan: escape target", plan(**{**ok, "target": "\x1b[2J\nv1.9.3"}), bad,
         "INVALID_VERSION"),
        ("plan: 5 KB cluster", plan(**{**ok, "cluster": big}), bad, "INVALID_NAME"),
        ("plan: staging/../x cluster", plan(**{**ok, "cluster": "staging/../x"}), bad,
         "INVALID_NAME"),
        ("plan: 1 MB namespace", plan(**{**ok, "namespace": huge}), bad, "INVALID_NAMESPACE"),
        ("plan: kind 99", plan(**{**ok, "kind": 99}), bad, "INVALID_KIND"),
        ("plan: kind unspecified", plan(**{**ok, "kind": 0}), bad, "INVALID_KIND"),
        ("plan: max_unavailable -1", plan(**{**ok, "max_unavailable": -1}), bad,
         "INVALID_MAX_UNAVAILABLE"),
        ("plan: max_unavailable 0", plan(**{**ok, "max_unavailable": 0}), bad,
         "INVALID_MAX_UNAVAILABLE"),
        ("plan: max_unavailable 2147483647", plan(**{**ok, "max_unavailable": 2147483647}),
         bad, "INVALID_MAX_UNAVAILABLE"),
        ("plan: max_unavailable over the workers", plan(**{**ok, "max_unavailable": 999}),
         bad, "MAX_UNAVAILABLE_OVER_WORKERS"),
        ("create: escape request id", create(**ok, request_id="\x1b[2J"), bad,
         "INVALID_REQUEST_ID"),
        ("create: 5 KB request id", create(**ok, request_id=big), bad, "INVALID_REQUEST_ID"),
        ("create: fingerprint not hex", create(**ok, plan_fingerprint="zz\n"), bad,
         "INVALID_FINGERPRINT"),
        ("create: 1 MB fingerprint", create(**ok, plan_fingerprint="f" * 1_000_000), bad,
         "INVALID_FINGERPRINT"),
        ("create: kind 99", create(**{**ok, "kind": 99}), bad, "INVALID_KIND"),
        ("create: max_unavailable -1", create(**{**ok, "max_unavailable": -1}), bad,
         "INVALID_MAX_UNAVAILABLE"),
        ("create: traversal namespace", create(**{**ok, "namespace": "../kube-system"}), bad,
         "INVALID_NAMESPACE"),
        ("pause: traversal name",
         lambda md: ops.SetOperationPaused(op_pb.SetOperationPausedRequest(
             namespace=ns, name="../x", paused=True), metadata=md, timeout=15),
         bad, "INVALID_NAME"),
        ("pause: escape in the confirmed uid",
         lambda md: ops.SetOperationPaused(op_pb.SetOperationPausedRequest(
             namespace=ns, name="x", paused=True,
             confirmed=op_pb.ConfirmedState(uid="\x1b[2J" * 1000, generation=1)),
             metadata=md, timeout=15),
         bad, "INVALID_CONFIRMATION"),
        ("delete: a/b namespace",
         lambda md: ops.DeleteOperation(op_pb.DeleteOperationRequest(
             namespace="a/b", name="x"), metadata=md, timeout=15),
         bad, "INVALID_NAMESPACE"),
        ("permissions: 5 KB namespace",
         lambda md: ops.GetPermissions(op_pb.GetPermissionsRequest(namespace=big),
                                       metadata=md, timeout=15),
         bad, "INVALID_NAMESPACE"),
        ("clusters: escape namespace",
         lambda md: clusters.ListClusters(cl_pb.ListClustersRequest(namespace="\x1b[2J"),
                                          metadata=md, timeout=15),
         bad, "INVALID_NAMESPACE"),
        ("cluster: staging/../x",
         lambda md: clusters.GetCluster(cl_pb.GetClusterRequest(
             namespace=ns, name="staging/../x"), metadata=md, timeout=15),
         bad, "INVALID_NAME"),
    ]


def world(op_pb, cl_pb, ops, clusters, md):
    """What a write would change: every cluster's spec, and the operations that exist."""
    listed = clusters.ListClusters(cl_pb.ListClustersRequest(all_namespaces=True),
                                   metadata=md, timeout=15)
    specs = sorted((c.namespace, c.name, c.talos_version, c.kubernetes_version, c.kube_proxy,
                    c.ichor_version) for c in listed.clusters)
    names = sorted((o.namespace, o.name, o.paused) for o in ops.ListOperations(
        op_pb.ListOperationsRequest(all_namespaces=True), metadata=md, timeout=15).operations)
    return specs, names


def hostile(op_pb, cl_pb, ops, clusters, md, ns, cluster):
    before = world(op_pb, cl_pb, ops, clusters, md)
    table = hostile_table(op_pb, cl_pb, ops, clusters, ns, cluster)
    for what, call, code, reason in table:
        try:
            call(md)
            fail(f"hostile request accepted: {what}")
        except grpc.RpcError as e:
            if e.code() != code:
                fail(f"{what}: {e.code()} (want {code}): {(e.details() or '')[:200]!r}")
            message = (e.details() or "").encode()
            if len(message) >= MAX_MESSAGE_BYTES:
                fail(f"{what}: a grpc-message of {len(message)} bytes: {message[:120]!r}")
            if any(ch < 0x20 for ch in message):
                fail(f"{what}: control characters in the grpc-message: {message!r}")
            if reason is not None:
                info = error_info(e)
                got = info.reason if info else None
                if got != reason:
                    fail(f"{what}: reason {got!r} (want {reason})")
        # The server still answers, on the same channel.
        clusters.ListClusters(cl_pb.ListClustersRequest(namespace=ns), metadata=md, timeout=15)
    after = world(op_pb, cl_pb, ops, clusters, md)
    if before != after:
        fail(f"hostile requests changed the cluster: {before} -> {after}")
    print(f"hostile: {len(table)} requests refused, nothing written, the server still answers")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("addr")
    p.add_argument("--token")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the operation to complete")
    a = p.parse_args()

    with tempfile.TemporaryDirectory() as out:
        generate(out)
        from ichor.v1alpha1 import cluster_pb2, cluster_pb2_grpc
        from ichor.v1alpha1 import operation_pb2, operation_pb2_grpc

        md = [("authorization", "Bearer " + a.token)] if a.token else []
        channel = grpc.insecure_channel(a.addr)
        grpc.channel_ready_future(channel).result(timeout=10)
        clusters = cluster_pb2_grpc.ClusterServiceStub(channel)
        ops = operation_pb2_grpc.OperationServiceStub(channel)

        listed = clusters.ListClusters(
            cluster_pb2.ListClustersRequest(all_namespaces=True), metadata=md, timeout=15)
        if not listed.clusters:
            fail("ListClusters returned no clusters")
        for c in listed.clusters:
            active = c.active_operation.name if c.HasField("active_operation") else "-"
            print(f"cluster {c.namespace}/{c.name} talos={c.talos_version} "
                  f"machines={len(c.machines)} active={active}")
        free = [c for c in listed.clusters if not c.HasField("active_operation")]
        if not free:
            fail("every demo cluster has an unfinished operation")
        target = free[0]

        hostile(operation_pb2, cluster_pb2, ops, clusters, md, target.namespace, target.name)

        # A refusal is structured: the code and the reason with its parameters.
        try:
            ops.PlanOperation(operation_pb2.PlanOperationRequest(
                namespace=target.namespace, cluster=target.name,
                kind=operation_pb2.OPERATION_KIND_SHUTDOWN, target="v9.9.9"),
                metadata=md, timeout=15)
            fail("a shutdown with a target was not refused")
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.INVALID_ARGUMENT:
                fail(f"refusal code {e.code()} (want INVALID_ARGUMENT): {e.details()}")
            info = error_info(e)
            if info is None:
                fail("the refusal carries no google.rpc.ErrorInfo that rpc_status.from_call reads")
            if info.reason != "TARGET_NOT_TAKEN" or info.domain != "ichor.maesh.dev":
                fail(f"refusal reason {info.reason!r} in {info.domain!r} (want TARGET_NOT_TAKEN in ichor.maesh.dev)")
            print(f"refused as expected: {info.reason} {dict(info.metadata)}")

        req = dict(namespace=target.namespace, cluster=target.name,
                   kind=operation_pb2.OPERATION_KIND_SHUTDOWN)
        plan = ops.PlanOperation(operation_pb2.PlanOperationRequest(**req),
                                 metadata=md, timeout=15)
        if plan.HasField("blocked"):
            fail(f"the plan is blocked: {plan.blocked.reason} {plan.blocked.message}")
        if plan.effect != operation_pb2.OPERATION_EFFECT_STOP:
            fail(f"plan effect {operation_pb2.OperationEffect.Name(plan.effect)} (want STOP)")
        steps = [[m.name for m in s.machines] for s in plan.steps]
        if not steps or not all(steps):
            fail(f"the plan has empty steps: {steps}")
        print(f"plan: {operation_pb2.OperationEffect.Name(plan.effect)} steps={steps}")

        created = ops.CreateOperation(operation_pb2.CreateOperationRequest(**req),
                                      metadata=md, timeout=15)
        op = created.operation
        if not op.name or op.cluster != target.name:
            fail(f"CreateOperation answered {op}")
        print(f"started {op.namespace}/{op.name} by {op.actor or '?'}")

        deadline = time.monotonic() + a.timeout
        seen = None
        while True:
            got = ops.GetOperation(operation_pb2.GetOperationRequest(
                namespace=op.namespace, name=op.name), metadata=md, timeout=15).operation
            done = sum(1 for m in got.machines if m.phase == "Completed")
            state = (got.phase, done, len(got.machines))
            if state != seen:
                print(f"progress: phase={got.phase or '-'} machines {done}/{len(got.machines)}")
                seen = state
            if got.phase == "Completed":
                if done != len(got.machines) or not got.machines:
                    fail(f"completed with machines {[(m.name, m.phase) for m in got.machines]}")
                break
            if got.phase == "Failed" or got.failure_reason:
                fail(f"the operation failed: {got.failure_reason}")
            if time.monotonic() > deadline:
                fail(f"not completed after {a.timeout} s: {state}")
            time.sleep(0.2)
        print("OK")


if __name__ == "__main__":
    main()
