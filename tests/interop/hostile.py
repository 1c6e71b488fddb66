#!/usr/bin/env python3
"""grpcio against `ichor-tui serve` where the issue of hostile load found it wanting.

    hostile.py HOST:PORT --token TOKEN CHECK...

CHECK is one of:
  malformed   request bodies that are not messages (a truncated varint, a string that is not
              UTF-8) are refused INVALID_ARGUMENT, never INTERNAL, and the server answers on
  gzip        calls made with grpcio's gzip compression are answered, and answers come back
  reflection  grpcio-reflection's descriptor database finds operation.proto with the
              cluster.proto it imports; an unknown symbol is answered in the stream (NOT_FOUND),
              which stays open for the next question
  list        a viewer's ListOperations answers within 60 s, asked again as a dashboard does
              when the server was busy or the call timed out (while others attack the server)
  symbols     reflection lists both its versions among the services, and resolves a field
              and an enum value to their file, raw and through grpcio's descriptor database
  health      grpc.health.v1 whole: Check, List, and a Watch of an unknown service that says
              SERVICE_UNKNOWN and stays open (until the call's own deadline)

Prints one line per check passed; exits non-zero with a message on the first that fails.
"""

import argparse
import os
import sys
import tempfile
import time

import grpc

LIST = "/ichor.v1alpha1.OperationService/ListOperations"
# ListOperationsRequest{namespace: "default"}: field 1, length 7.
LIST_DEFAULT = b"\x0a\x07default"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def raw_call(channel, body, md, compression=None):
    """A ListOperations with `body` as its bytes, as they are (no serializer)."""
    call = channel.unary_unary(LIST, request_serializer=None, response_deserializer=None)
    return call(body, metadata=md, timeout=15, compression=compression)


def malformed(channel, md):
    table = [
        ("a truncated varint", b"\x0a\xff"),
        ("a length past the end", b"\x0a\x10default"),
        ("a string that is not UTF-8", b"\x0a\x02\xff\xfe"),
    ]
    for what, body in table:
        try:
            raw_call(channel, body, md)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.INVALID_ARGUMENT:
                fail(f"{what}: {e.code()} {e.details()!r}, not INVALID_ARGUMENT")
            if len(e.details() or "") > 300:
                fail(f"{what}: a message of {len(e.details())} bytes")
            print(f"refused as expected: {what}: INVALID_ARGUMENT")
            continue
        fail(f"{what} was answered")
    answer = raw_call(channel, LIST_DEFAULT, md)
    if not answer:
        fail("the server did not answer a good call after the malformed ones")
    print("malformed: OK")


def gzip(channel, md):
    answer = raw_call(channel, LIST_DEFAULT, md, compression=grpc.Compression.Gzip)
    if len(answer) < 100:
        fail(f"a gzip call's answer is {len(answer)} bytes")
    print("gzip: OK")


def listed(channel, md):
    """A viewer's ListOperations, asked again while the server is busy (UNAVAILABLE,
    RESOURCE_EXHAUSTED) or a try times out, until it answers or 60 s have passed."""
    started = time.monotonic()
    again = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
             grpc.StatusCode.RESOURCE_EXHAUSTED)
    tries = 0
    while True:
        tries += 1
        try:
            raw_call(channel, LIST_DEFAULT, md)
            break
        except grpc.RpcError as e:
            if e.code() not in again or time.monotonic() - started > 60:
                fail(f"list: {e.code()}: {e.details()} after {time.monotonic() - started:.1f} s")
    print(f"list: answered {time.monotonic() - started:.1f} s after the first try ({tries} tries)")
    print("list: OK")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("addr")
    p.add_argument("--token", required=True)
    p.add_argument("checks", nargs="+",
                   choices=["malformed", "gzip", "reflection", "list", "symbols", "health"])
    a = p.parse_args()
    md = (("authorization", "Bearer " + a.token),)
    for check in a.checks:
        if check == "gzip":
            # The whole channel compresses its requests, and asks for compressed answers.
            with grpc.insecure_channel(a.addr, compression=grpc.Compression.Gzip) as channel:
                gzip(channel, md)
            continue
        with grpc.insecure_channel(a.addr) as channel:
            if check == "malformed":
                malformed(channel, md)
            elif check == "reflection":
                reflection(channel, md)
            elif check == "list":
                listed(channel, md)
            elif check == "symbols":
                symbols(channel, md)
            elif check == "health":
                health(channel)
    print("OK")


class _Bearer(grpc.StreamStreamClientInterceptor):
    """Adds the token to the reflection stream: serve's reflection takes one, as its calls do."""

    def __init__(self, md):
        self.md = md

    def intercept_stream_stream(self, continuation, details, requests):
        details = details._replace(metadata=tuple(details.metadata or ()) + self.md)
        return continuation(details, requests)


def reflection(channel, md):
    from google.protobuf import descriptor_pb2, descriptor_pool
    from grpc_reflection.v1alpha import reflection_pb2 as r, reflection_pb2_grpc as rg
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )

    # The raw stream: three questions, three answers, the stream open throughout.
    stub = rg.ServerReflectionStub(channel)
    questions = [
        r.ServerReflectionRequest(file_containing_symbol="ichor.v1alpha1.OperationService"),
        r.ServerReflectionRequest(file_containing_symbol="no.such.Symbol"),
        r.ServerReflectionRequest(list_services=""),
    ]
    answers = list(stub.ServerReflectionInfo(iter(questions), metadata=md, timeout=15))
    if len(answers) != 3:
        fail(f"reflection: {len(answers)} answers to 3 questions")
    names = []
    for raw in answers[0].file_descriptor_response.file_descriptor_proto:
        f = descriptor_pb2.FileDescriptorProto()
        f.ParseFromString(raw)
        names.append(f.name)
    if names[:1] != ["ichor/v1alpha1/operation.proto"] or "ichor/v1alpha1/cluster.proto" not in names:
        fail(f"reflection: the file and its import, not {names}")
    print(f"reflection: operation.proto comes with its imports: {names}")
    err = answers[1].error_response
    if not answers[1].HasField("error_response") or err.error_code != grpc.StatusCode.NOT_FOUND.value[0]:
        fail(f"reflection: an unknown symbol is answered in the stream, not {answers[1]}")
    print(f"reflection: an unknown symbol answered in the stream: {err.error_message}")
    services = [s.name for s in answers[2].list_services_response.service]
    if "ichor.v1alpha1.OperationService" not in services:
        fail(f"reflection: the stream stayed open, but the services are {services}")

    # grpcio's own descriptor database builds a pool from it: every import resolves.
    db = ProtoReflectionDescriptorDatabase(grpc.intercept_channel(channel, _Bearer(md)))
    pool = descriptor_pool.DescriptorPool(db)
    method = pool.FindMethodByName("ichor.v1alpha1.ClusterService.GetCluster")
    if method.output_type.full_name != "ichor.v1alpha1.GetClusterResponse":
        fail(f"reflection: {method.output_type.full_name}")
    pool.FindMessageTypeByName("ichor.v1alpha1.ListOperationsRequest")
    print("reflection: OK")


def symbols(channel, md):
    from grpc_reflection.v1alpha import reflection_pb2 as r, reflection_pb2_grpc as rg
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )
    from google.protobuf import descriptor_pool

    stub = rg.ServerReflectionStub(channel)
    questions = [
        r.ServerReflectionRequest(list_services=""),
        r.ServerReflectionRequest(file_containing_symbol="ichor.v1alpha1.PageDelta.base_version"),
        r.ServerReflectionRequest(file_containing_symbol="ichor.v1alpha1.OPERATION_KIND_TALOS"),
    ]
    answers = list(stub.ServerReflectionInfo(iter(questions), metadata=md, timeout=15))
    services = sorted(s.name for s in answers[0].list_services_response.service)
    for want in ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
                 "grpc.health.v1.Health", "ichor.v1alpha1.OperationService"]:
        if want not in services:
            fail(f"symbols: {want} not among the services {services}")
    print(f"symbols: services {services}")
    for question, answer in zip(questions[1:], answers[1:]):
        if not answer.HasField("file_descriptor_response"):
            fail(f"symbols: {question.file_containing_symbol}: {answer}")
    print("symbols: a field and an enum value resolve to their file")
    db = ProtoReflectionDescriptorDatabase(grpc.intercept_channel(channel, _Bearer(md)))
    pool = descriptor_pool.DescriptorPool(db)
    field = pool.FindFieldByName("ichor.v1alpha1.PageDelta.base_version")
    value = pool.FindEnumTypeByName("ichor.v1alpha1.OperationKind").values_by_name["OPERATION_KIND_TALOS"]
    print(f"symbols: {field.full_name} is field {field.number}; OPERATION_KIND_TALOS is {value.number}")
    print("symbols: OK")


def health_stubs():
    """grpc.health.v1's messages and stub, generated from the repository's health.proto (as
    the Python module `served_health`: a module under `grpc` would be grpcio's own package)."""
    import shutil

    from grpc_tools import protoc

    out = tempfile.mkdtemp()
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto"))
    os.makedirs(os.path.join(out, "served_health"))
    shutil.copy(os.path.join(root, "grpc", "health", "v1", "health.proto"),
                os.path.join(out, "served_health", "health.proto"))
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    args = ["protoc", "-I", out, "-I", include, "--python_out", out, "--grpc_python_out", out,
            "served_health/health.proto"]
    if protoc.main(args) != 0:
        fail("protoc failed on grpc/health/v1/health.proto")
    sys.path.insert(0, out)
    from served_health import health_pb2, health_pb2_grpc  # noqa: E402

    return health_pb2, health_pb2_grpc


def health(channel):
    h, hg = health_stubs()
    stub = hg.HealthStub(channel)
    serving = h.HealthCheckResponse.SERVING
    for service in ["", "ichor.v1alpha1.OperationService", "ichor.v1alpha1.ClusterService"]:
        got = stub.Check(h.HealthCheckRequest(service=service), timeout=10).status
        if got != serving:
            fail(f"health: Check({service!r}) is {got}")
    try:
        stub.Check(h.HealthCheckRequest(service="no.such.Service"), timeout=10)
        fail("health: Check of an unknown service answered")
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            fail(f"health: Check of an unknown service: {e.code()}")
    listed = stub.List(h.HealthListRequest(), timeout=10).statuses
    names = sorted(listed)
    if names != ["", "ichor.v1alpha1.ClusterService", "ichor.v1alpha1.OperationService"]:
        fail(f"health: List names {names}")
    if any(listed[n].status != serving for n in names):
        fail(f"health: List says {listed}")
    print(f"health: List: {names} serving")
    watch = stub.Watch(h.HealthCheckRequest(service="no.such.Service"), timeout=3)
    first = next(watch)
    if first.status != h.HealthCheckResponse.SERVICE_UNKNOWN:
        fail(f"health: Watch of an unknown service said {first.status}")
    try:
        for more in watch:
            fail(f"health: Watch of an unknown service said more: {more.status}")
        fail("health: Watch of an unknown service ended OK")
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
            fail(f"health: Watch of an unknown service ended {e.code()}, not at its deadline")
    print("health: Watch of an unknown service: SERVICE_UNKNOWN, open until its deadline")
    print("health: OK")


if __name__ == "__main__":
    main()
