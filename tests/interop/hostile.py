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

Prints one line per check passed; exits non-zero with a message on the first that fails.
"""

import argparse
import sys

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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("addr")
    p.add_argument("--token", required=True)
    p.add_argument("checks", nargs="+", choices=["malformed", "gzip", "reflection"])
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
    print("OK")


def reflection(channel, md):
    fail("reflection: not yet")


if __name__ == "__main__":
    main()
