//! Objects the controller cannot read: one stops no other, and a lock or a cluster held stays held.

use super::*;
/// A cluster `name` in `ns` with a control plane and a worker, and no operation.
fn seed_cluster(api: &EmbeddedApi, ns: &str, name: &str) {
    let mut c = TalosCluster::new(
        name,
        TalosClusterSpec {
            talos_version: "v1.9.2".into(),
            kubernetes_version: "v1.32.3".into(),
            cni: CniSpec {
                kube_proxy: "enabled".into(),
            },
        },
    );
    c.metadata.namespace = Some(ns.into());
    api.seed(&c).unwrap();
    for (m, role) in [("cp", "controlplane"), ("w", "worker")] {
        let mut m = machine(name, &format!("{name}-{m}"), role, None, true, None);
        m.metadata.namespace = Some(ns.into());
        api.seed(&m).unwrap();
    }
}

/// An operation in `ns`.
fn op_in(ns: &str, name: &str, cluster: &str) -> TalosOperation {
    let mut o = op(name, cluster, "talos", 1);
    o.metadata.namespace = Some(ns.into());
    o
}

/// TalosOperations of `ns` as an admin's kubectl reaches them, as JSON (one that cannot be read
/// as a TalosOperation reads as JSON).
fn ops_json(h: &Harness, ns: &str) -> Api<kube::api::DynamicObject> {
    Api::namespaced_with(
        h.api.client(users::ADMIN_TOKEN),
        ns,
        &kube::api::ApiResource::erase::<TalosOperation>(&()),
    )
}

/// `kubectl patch --subresource=status --type=merge -p STATUS` on the operation `name` of `ns`;
/// a status the schema refuses (a phase of 42) is written around the API, as by a writer from
/// before a schema change (kube-apiserver, as the demo API, answers 422 to it).
async fn patch_status(h: &Harness, ns: &str, name: &str, status: serde_json::Value) {
    if !status["phase"].is_string() {
        let fields = status.as_object().cloned().unwrap_or_default();
        let merge = |o: &mut serde_json::Value| {
            for (k, v) in fields {
                o["status"][k.as_str()] = v;
            }
        };
        assert!(h.api.edit("talosoperations", ns, name, merge));
        return;
    }
    ops_json(h, ns)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await
        .unwrap();
}

/// The phase of `name` in `ns`, as JSON (42 for one written so).
async fn phase_of(h: &Harness, ns: &str, name: &str) -> serde_json::Value {
    ops_json(h, ns).get(name).await.unwrap().data["status"]["phase"].clone()
}

/// Controller passes, a second apart, until every operation named is Completed (each pass must
/// succeed: one object that cannot be read is not a failed pass).
async fn run_until_completed(h: &mut Harness, ops: &[(&str, &str)], max: usize) {
    for _ in 0..max {
        h.now += SignedDuration::from_secs(1);
        h.ctrl.reconcile(h.now).await.unwrap();
        let mut done = true;
        for (ns, name) in ops {
            done &= phase_of(h, ns, name).await == "Completed";
        }
        if done {
            return;
        }
    }
    let mut phases = Vec::new();
    for (ns, name) in ops {
        phases.push(format!("{ns}/{name}: {}", phase_of(h, ns, name).await));
    }
    panic!("not all completed: {phases:?}");
}

/// The Warning Events `Unreadable` of `ns`.
async fn unreadable_warnings(h: &Harness, ns: &str) -> Vec<Event> {
    Api::<Event>::namespaced(h.api.client(users::ADMIN_TOKEN), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("Unreadable"))
        .collect()
}

/// One operation whose status cannot be read (as `kubectl patch --subresource=status` can
/// leave it) stops no other: it is skipped, with one Warning Event on it that says why; the
/// operations in its namespace and in another complete; fixed, it goes on too.
#[tokio::test]
async fn an_unreadable_operation_is_skipped_with_a_warning_and_every_other_goes_on() {
    let mut h = Harness::new();
    seed_cluster(&h.api, "default", "c3");
    seed_cluster(&h.api, "other", "c2");
    h.create(op("broken", "c1", "talos", 1)).await;
    h.create(op_in("default", "mine", "c3")).await;
    Api::<TalosOperation>::namespaced(h.api.client(users::ADMIN_TOKEN), "other")
        .create(&PostParams::default(), &op_in("other", "theirs", "c2"))
        .await
        .unwrap();
    patch_status(&h, "default", "broken", json!({"phase": 42})).await;
    run_until_completed(&mut h, &[("default", "mine"), ("other", "theirs")], 100).await;

    assert_eq!(phase_of(&h, "default", "broken").await, 42, "untouched");
    let warnings = unreadable_warnings(&h, "default").await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert_eq!(w.type_.as_deref(), Some("Warning"));
    assert_eq!(w.count, Some(1), "once, not on every pass");
    let io = &w.involved_object;
    assert_eq!(
        (
            io.kind.as_deref(),
            io.name.as_deref(),
            io.namespace.as_deref()
        ),
        (Some("TalosOperation"), Some("broken"), Some("default"))
    );
    let uid = ops_json(&h, "default")
        .get("broken")
        .await
        .unwrap()
        .metadata
        .uid;
    assert_eq!(io.uid, uid);
    let message = w.message.clone().unwrap_or_default();
    assert!(
        message.contains("status: invalid type: integer `42`, expected a string"),
        "{message}"
    );
    assert!(
        message.contains("every other operation goes on"),
        "{message}"
    );
    assert!(message.len() < 400, "{message}");
    assert_eq!(
        w.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("ichor-controller")
    );
    assert!(unreadable_warnings(&h, "other").await.is_empty());

    // Fixed: it is read again, and carried out.
    patch_status(&h, "default", "broken", json!({"phase": "Pending"})).await;
    run_until_completed(&mut h, &[("default", "broken")], 100).await;
    assert_eq!(unreadable_warnings(&h, "default").await.len(), 1);
}

/// An operation that cannot be read while it holds its cluster's lock keeps it: the next one on
/// that cluster waits for it, as it would for a readable one; fixed, both complete in turn.
#[tokio::test]
async fn an_unreadable_operation_keeps_the_cluster_lock_it_holds() {
    let mut h = Harness::new();
    h.create(op("first", "c1", "talos", 1)).await;
    h.run_until("first", "Running", 5).await;
    h.create(op("second", "c1", "kubernetes", 1)).await;
    patch_status(&h, "default", "first", json!({"phase": 42})).await;
    for _ in 0..20 {
        h.now += SignedDuration::from_secs(1);
        h.ctrl.reconcile(h.now).await.unwrap();
    }
    let second = h.status("second").await;
    assert_eq!(second.phase, "Pending", "{second:?}");
    assert!(
        second
            .conditions
            .iter()
            .any(|c| c.message == "cluster lock held by first"),
        "{second:?}"
    );
    assert!(second.machines.iter().all(|m| m.phase != "Running"));
    patch_status(&h, "default", "first", json!({"phase": "Running"})).await;
    run_until_completed(&mut h, &[("default", "first"), ("default", "second")], 400).await;
}

/// A cluster that cannot be read, or one of its machines, holds that cluster's operations
/// where they are (never "cluster not found", never a plan without the machine), with a
/// Warning on the object; the operations of other clusters go on; fixed, they go on too.
#[tokio::test]
async fn an_unreadable_cluster_or_machine_holds_its_operations_and_no_other() {
    let mut h = Harness::new();
    seed_cluster(&h.api, "default", "c3");
    seed_cluster(&h.api, "other", "c2");
    h.create(op("on-c1", "c1", "talos", 1)).await;
    h.create(op_in("default", "on-c3", "c3")).await;
    Api::<TalosOperation>::namespaced(h.api.client(users::ADMIN_TOKEN), "other")
        .create(&PostParams::default(), &op_in("other", "on-c2", "c2"))
        .await
        .unwrap();
    // As another writer leaves them, past the schema.
    assert!(h.api.edit("machines", "default", "c1-w-a", |m| {
        m["spec"]["approved"] = json!("yes");
    }));
    assert!(h.api.edit("talosclusters", "other", "c2", |c| {
        c["spec"]["talosVersion"] = json!(42);
    }));
    run_until_completed(&mut h, &[("default", "on-c3")], 100).await;
    for (ns, name) in [("default", "on-c1"), ("other", "on-c2")] {
        let phase = phase_of(&h, ns, name).await;
        assert!(
            phase.is_null() || phase == "Pending",
            "{ns}/{name}: {phase}"
        );
    }
    let machine = unreadable_warnings(&h, "default").await;
    assert_eq!(machine.len(), 1, "{machine:?}");
    assert_eq!(machine[0].involved_object.name.as_deref(), Some("c1-w-a"));
    assert!(
        machine[0]
            .message
            .as_deref()
            .is_some_and(|m| m.contains("spec: invalid type: string \"yes\", expected a boolean")),
        "{machine:?}"
    );
    let cluster = unreadable_warnings(&h, "other").await;
    assert_eq!(cluster.len(), 1, "{cluster:?}");
    assert_eq!(
        cluster[0].involved_object.kind.as_deref(),
        Some("TalosCluster")
    );
    assert!(h.api.edit("machines", "default", "c1-w-a", |m| {
        m["spec"]["approved"] = json!(true);
    }));
    assert!(h.api.edit("talosclusters", "other", "c2", |c| {
        c["spec"]["talosVersion"] = json!("v1.9.2");
    }));
    run_until_completed(&mut h, &[("default", "on-c1"), ("other", "on-c2")], 200).await;
    // Every machine of c1 was carried out, the one that could not be read too.
    let st = h.status("on-c1").await;
    assert!(
        st.machines
            .iter()
            .any(|m| m.name == "c1-w-a" && m.phase == "Completed"),
        "{st:?}"
    );
}
