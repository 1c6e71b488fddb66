#!/usr/bin/env python3
"""The Python `kubernetes` client against `ichor-tui demo-cluster`, as GitOps scripts use it.

    kube_client.py KUBECONFIG

Reads the CustomResourceDefinitions; applies a TalosOperation server-side (its dynamic
client's `server_side_apply`), twice with a changed field; sees a second manager's change of
that field refused 409 naming it and its manager, with nothing written; forces it; and sends a
JSON patch list as the client's default merge patch, refused 400 as kube-apiserver refuses it.

Prints one line per step; exits non-zero with a message on the first that fails.
"""

import json
import sys

from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException

NAME = "python-applied"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def operation(max_unavailable):
    return {
        "apiVersion": "ichor.maesh.dev/v1alpha1",
        "kind": "TalosOperation",
        "metadata": {"name": NAME},
        "spec": {"cluster": "prod-eu", "kind": "kubernetes", "paused": True,
                 "maxUnavailable": max_unavailable},
    }


def appliers(obj):
    """The managers that applied (the demo's controller writes the status as an update)."""
    entries = obj["metadata"].get("managedFields") or []
    return sorted(e["manager"] for e in entries if e["operation"] == "Apply")


def main():
    api_client = config.new_client_from_config(config_file=sys.argv[1])
    crds = client.ApiextensionsV1Api(api_client).list_custom_resource_definition()
    names = sorted(c.metadata.name for c in crds.items)
    if "talosoperations.ichor.maesh.dev" not in names:
        fail("no CRD of talosoperations in %s" % names)
    print("crds: " + ", ".join(names))

    dyn = dynamic.DynamicClient(api_client)
    ops = dyn.resources.get(api_version="ichor.maesh.dev/v1alpha1", kind="TalosOperation")
    ops.server_side_apply(body=operation(1), namespace="default", field_manager="python-a")
    applied = ops.server_side_apply(body=operation(2), namespace="default",
                                    field_manager="python-a").to_dict()
    if applied["spec"]["maxUnavailable"] != 2:
        fail("the second apply did not change maxUnavailable: %s" % applied["spec"])
    if appliers(applied) != ["python-a"]:
        fail("appliers after two applies: %s" % appliers(applied))
    print("applied twice: maxUnavailable=2 by python-a")

    # The controller may write the status meanwhile (its own resourceVersion); what the
    # refused apply would have written is the spec, its generation and the appliers.
    def written(obj):
        return (obj["metadata"].get("generation"), obj["spec"], appliers(obj))
    before = written(applied)
    try:
        ops.server_side_apply(body=operation(3), namespace="default", field_manager="python-b")
        fail("a second manager's change of an owned field was accepted")
    except ApiException as e:
        status = json.loads(e.body)
        want = 'Apply failed with 1 conflict: conflict with "python-a": .spec.maxUnavailable'
        if e.status != 409 or status.get("message") != want:
            fail("conflict: %s %s" % (e.status, e.body))
    now = ops.get(name=NAME, namespace="default").to_dict()
    if written(now) != before:
        fail("the refused apply wrote: %s -> %s" % (before, written(now)))
    print("conflict: 409 naming .spec.maxUnavailable and python-a; nothing written")

    forced = ops.server_side_apply(body=operation(3), namespace="default",
                                   field_manager="python-b", force_conflicts=True).to_dict()
    if forced["spec"]["maxUnavailable"] != 3:
        fail("the forced apply did not change maxUnavailable: %s" % forced["spec"])
    print("forced: maxUnavailable=3; appliers %s" % appliers(forced))

    custom = client.CustomObjectsApi(api_client)
    as_list = [{"op": "replace", "path": "/spec/paused", "value": False}]
    try:
        custom.patch_namespaced_custom_object("ichor.maesh.dev", "v1alpha1", "default",
                                              "talosoperations", NAME, as_list)
        fail("a merge patch that is a list was accepted")
    except ApiException as e:
        want = "cannot unmarshal array into Go value of type map[string]interface {}"
        if e.status != 400 or want not in e.body:
            fail("a list as a merge patch: %s %s" % (e.status, e.body))
    print("a list as a merge patch: 400")
    print("OK")


if __name__ == "__main__":
    main()
