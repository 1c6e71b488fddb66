#!/usr/bin/env python3
"""An OperationService client from outside Rust: Python stubs generated from the project's .proto
files with grpcio-tools, talking to `ichor-tui serve --demo`.

    client.py HOST:PORT [--token TOKEN]

Lists the clusters, plans a shutdown of one without an unfinished operation, checks the plan,
starts it, and follows its progress until it completes. Also checks that a refusal carries the
structured reason (ichor.v1alpha1.ErrorDetail in grpc-status-details-bin). Exits non-zero with a
message on the first thing that is not as it should be.
"""

import argparse
import os
import sys
import tempfile
import time

import grpc
from grpc_tools import protoc

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "proto"))
PROTOS = ["ichor/v1alpha1/operation.proto", "ichor/v1alpha1/cluster.proto"]


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
            details = dict(e.trailing_metadata() or ()).get("grpc-status-details-bin")
            if details is None:
                fail("the refusal carries no grpc-status-details-bin")
            detail = operation_pb2.ErrorDetail.FromString(details)
            if detail.reason != "TARGET_NOT_TAKEN":
                fail(f"refusal reason {detail.reason!r} (want TARGET_NOT_TAKEN)")
            print(f"refused as expected: {detail.reason} {dict(detail.params)}")

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
