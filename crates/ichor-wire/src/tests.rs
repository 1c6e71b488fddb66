use super::*;
use ichor_model::*;
use jiff::Timestamp;
use prost::Message as _;
use std::collections::{BTreeMap, HashMap};

fn ts(s: &str) -> Option<Timestamp> {
    Some(s.parse().unwrap())
}

fn sample_operation() -> Operation {
    Operation {
        namespace: "default".into(),
        name: "c1-ca-rotation-x".into(),
        uid: "00000000-0000-0000-0000-000000000007".into(),
        generation: 3,
        request_id: Some("r-1".into()),
        cluster: "c1".into(),
        kind: Some(OperationKind::CaRotation),
        kind_raw: "ca-rotation".into(),
        max_unavailable: 1,
        paused: true,
        phase: Phase::Paused,
        failure_reason: Some("c1-w-a: timed out".into()),
        machines: vec![MachineProgress {
            name: "c1-w-a".into(),
            phase: MachinePhase::Failed,
            message: "timed out".into(),
            started_at: ts("2026-10-26T10:00:00Z"),
            finished_at: ts("2026-10-26T10:04:00.5Z"),
        }],
        ca_rotation: Some(CaRotation {
            stage: "Issuing".into(),
            pass: 2,
            passes: 5,
        }),
        conditions: vec![Condition {
            type_: "ClusterLockHeld".into(),
            status: "True".into(),
            reason: "Held".into(),
            message: "held by x".into(),
            last_transition_time: ts("2026-10-26T10:01:00Z"),
        }],
        created_at: ts("2026-10-26T09:59:59Z"),
        started_at: ts("2026-10-26T10:00:00Z"),
        finished_at: None,
        actor: Some("operator".into()),
        paused_by: Some("admin".into()),
        paused_at: ts("2026-10-26T10:05:00Z"),
        history: vec![ichor_model::HistoryEntry::read(
            "pause",
            "admin",
            ts("2026-10-26T10:05:00Z"),
            "applied",
        )],
        current: None,
        target: None,
        unreadable: None,
        resource_version: String::new(),
        summary: None,
        deleting: None,
    }
}

#[test]
fn operations_survive_the_wire() {
    let o = sample_operation();
    assert_eq!(operation_from_proto(operation_to_proto(&o)), o);
    let unknown = Operation {
        kind: None,
        kind_raw: "firmware".into(),
        phase: Phase::Other("Draining".into()),
        ca_rotation: None,
        ..o
    };
    let wire = operation_to_proto(&unknown);
    assert_eq!(wire.kind, proto::OperationKind::Unspecified as i32);
    assert_eq!(operation_from_proto(wire), unknown.clone());
    let unreadable = Operation {
        unreadable: Some("status: invalid type: integer `42`, expected a string".into()),
        ..unknown
    };
    assert_eq!(
        operation_from_proto(operation_to_proto(&unreadable)),
        unreadable
    );
}

#[test]
fn plans_and_starts_survive_the_wire() {
    let plan = Plan {
        namespace: "default".into(),
        cluster: "c1".into(),
        kind: OperationKind::Talos,
        effect: OperationEffect::Reboot,
        max_unavailable: 2,
        steps: vec![
            vec![PlanMachine {
                name: "cp".into(),
                role: "controlplane".into(),
                runs_target: true,
            }],
            vec![],
        ],
        held: vec![HeldMachine {
            name: "w".into(),
            reason: "disk".into(),
        }],
        current: "v1.9.2".into(),
        target: "v1.9.3".into(),
        spec_change: Some(SpecChange {
            resource_kind: "TalosCluster".into(),
            resource_name: "c1".into(),
            field: "spec.talosVersion".into(),
            from: "v1.9.2".into(),
            to: "v1.9.3".into(),
        }),
        also_blocked: Vec::new(),
        blocked: Some(Refusal::new(
            Reason::UnfinishedOperation,
            &[("operation", "x")],
            "busy",
        )),
        stages: vec!["Accepting".into()],
        replaces_secrets_bundle: true,
        shared_with: vec!["c2".into()],
        denied: Some(Refusal::new(
            Reason::NotPermitted,
            &[("verb", "update")],
            "no",
        )),
        fingerprint: "f00d".into(),
        credentials_stop_working: true,
        held_not_skipped: vec![HeldMachine {
            name: "w2".into(),
            reason: "disk".into(),
        }],
        unapproved: vec![PlanMachine {
            name: "w9".into(),
            role: "worker".into(),
            runs_target: false,
        }],
        shut_down: Some(ShutdownRecord {
            operation: "c1-shutdown-x".into(),
            actor: Some("bob".into()),
            finished_at: Some(Timestamp::UNIX_EPOCH),
            still_down: true,
        }),
        stray_confirmation: true,
    };
    assert_eq!(plan_from_proto(plan_to_proto(&plan)).unwrap(), plan);
    let created = Created {
        operation: sample_operation(),
        found: true,
        spec_written: plan.spec_change.clone(),
        warnings: vec![Warning {
            reason: Reason::AnnotationNotRemoved,
            params: BTreeMap::from([("annotation".into(), "a".into())]),
            message: "remove it".into(),
        }],
    };
    assert_eq!(
        created_from_proto(created_to_proto(&created)).unwrap(),
        created
    );
    let mut bad = plan_to_proto(&plan);
    bad.kind = 99;
    assert_eq!(plan_from_proto(bad).unwrap_err().code, Code::Internal);
}

#[test]
fn requests_treat_empty_as_none_and_refuse_unknown_kinds() {
    let r = OperationRequest {
        namespace: "default".into(),
        cluster: None,
        kind: OperationKind::Shutdown,
        target: None,
        max_unavailable: Some(3),
        request_id: None,
        confirmed_plan: None,
    };
    let w = create_request_to_proto(&r);
    let back =
        request_from_proto(w.namespace, w.cluster, w.kind, w.target, w.max_unavailable).unwrap();
    assert_eq!(back, r);
    let bound = OperationRequest {
        request_id: Some("r-9".into()),
        confirmed_plan: Some("f00d".into()),
        ..r
    };
    let w = create_request_to_proto(&bound);
    assert_eq!(
        (w.request_id.as_str(), w.plan_fingerprint.as_str()),
        ("r-9", "f00d")
    );
    let c = Confirmed {
        uid: "u".into(),
        generation: 4,
        finished: true,
        paused: false,
    };
    assert_eq!(confirmed_from_proto(confirmed_to_proto(&c)), c);
    for kind in [0, 99, -1, i32::MAX] {
        let e = request_from_proto("default".into(), String::new(), kind, String::new(), None)
            .unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::InvalidArgument, Some(Reason::InvalidKind))
        );
    }
    for (code, want) in [
        (tonic::Code::ResourceExhausted, Code::ResourceExhausted),
        (tonic::Code::OutOfRange, Code::InvalidArgument),
    ] {
        assert_eq!(code_from_grpc(code), want);
        assert!(
            !code_from_grpc(code).is_transient(),
            "{code:?} is not retried"
        );
    }
}

#[test]
fn clusters_survive_the_wire() {
    let c = Cluster {
        namespace: "default".into(),
        name: "c1".into(),
        talos_version: "v1.9.2".into(),
        kubernetes_version: "v1.32.3".into(),
        kube_proxy: "enabled".into(),
        ichor_version: None,
        machines: vec![ClusterMachine {
            name: "m".into(),
            role: "worker".into(),
            order: Some(0),
            approved: false,
            hold: Some("why".into()),
            unreadable: Some("spec: missing field `role`".into()),
            talos_version: Some("v1.9.1".into()),
            kubernetes_version: Some("v1.32.2".into()),
        }],
        tracking: Some(Tracking {
            tool: "Flux".into(),
            object: "Kustomization flux-system/c1".into(),
        }),
        active_operation: Some(OperationRef {
            name: "o".into(),
            kind: "talos".into(),
            phase: Phase::Unknown,
        }),
        unreadable: Some("spec: invalid type".into()),
        last_shutdown: Some(ShutdownRecord {
            operation: "c1-shutdown-x".into(),
            actor: None,
            finished_at: None,
            still_down: false,
        }),
        stray_confirmation: true,
        bundle_backup_stale: Some(ichor_model::StaleBundle {
            reason: "RotatedCA".into(),
            message: "the backup predates the rotation".into(),
            since: Some(Timestamp::UNIX_EPOCH),
        }),
    };
    assert_eq!(cluster_from_proto(cluster_to_proto(&c)), c);
}

#[test]
fn errors_keep_code_reason_and_params() {
    for code in [
        Code::InvalidArgument,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::Unauthenticated,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::Unavailable,
        Code::DeadlineExceeded,
        Code::ResourceExhausted,
        Code::Internal,
        Code::Unimplemented,
    ] {
        let e = ApiError::refused(
            code,
            Reason::Downgrade,
            &[("from", "v1.9.2"), ("to", "v1.8.0")],
            "downgrade: ä",
        );
        assert_eq!(error_from_status(&status_from_error(&e)), e);
    }
    let plain = ApiError::new(Code::NotFound, "gone");
    assert_eq!(error_from_status(&status_from_error(&plain)), plain);
}

#[test]
fn foreign_or_absent_details_give_no_reason() {
    let s = tonic::Status::unavailable("tcp connect error");
    let e = error_from_status(&s);
    assert_eq!((e.code, e.reason), (Code::Unavailable, None));
    let s = tonic::Status::with_details(tonic::Code::NotFound, "x", vec![0xff, 0xff, 0xff].into());
    assert_eq!(error_from_status(&s).reason, None);
    let s = tonic::Status::with_details(
        tonic::Code::FailedPrecondition,
        "x",
        proto::ErrorDetail {
            reason: "SOMETHING_NEW".into(),
            params: HashMap::from([("k".into(), "v".into())]),
        }
        .encode_to_vec()
        .into(),
    );
    let e = error_from_status(&s);
    assert_eq!((e.reason, e.param("k")), (None, Some("v")));
}

#[test]
fn a_list_order_survives_the_wire_and_an_unknown_one_is_refused() {
    for by in [SortBy::Age, SortBy::Name, SortBy::State] {
        for reversed in [false, true] {
            let q = ListQuery {
                namespace: Some("default".into()),
                order: Order { by, reversed },
                ..ListQuery::default()
            };
            assert_eq!(list_query_from_proto(list_query_to_proto(&q)).unwrap(), q);
        }
    }
    let mut bad = list_query_to_proto(&ListQuery {
        namespace: Some("default".into()),
        ..ListQuery::default()
    });
    bad.order_by = "priority desc\u{1b}[2J".into();
    let e = list_query_from_proto(bad).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(!e.message.contains('\u{1b}'), "the input is not echoed");
}

/// The count of events crosses the wire; a server from before it says none (old bytes decode
/// as "not said"), and a client keeps no more than it asked for.
#[test]
fn events_and_their_count_both_ways() {
    let e = OperationEvent {
        reason: "MachineStepFinished".into(),
        count: 1,
        ..Default::default()
    };
    let answer = OperationEvents {
        events: vec![e.clone(); 3],
        total: Some(157),
    };
    let bytes = events_to_proto(&answer).encode_to_vec();
    let back = proto::ListOperationEventsResponse::decode(bytes.as_slice()).unwrap();
    assert_eq!(events_from_proto(back, EventsWanted::Newest), answer);
    // An old server's answer: the events only.
    let old = proto::ListOperationEventsResponse {
        events: vec![event_to_proto(&e); MAX_EVENTS],
        total: None,
    };
    let read = events_from_proto(old.clone(), EventsWanted::All);
    assert_eq!((read.events.len(), read.total), (MAX_EVENTS, None));
    assert!(
        read.older_not_loaded(),
        "a full answer without a count may leave some out"
    );
    // More than asked for is not kept (and counted as left out); a total below what came is
    // not believed.
    let mut many = old;
    many.events = vec![event_to_proto(&e); MAX_EVENTS + 5];
    many.total = Some(2);
    let read = events_from_proto(many, EventsWanted::Newest);
    assert_eq!(
        (read.events.len(), read.total),
        (MAX_EVENTS, Some(MAX_EVENTS + 5))
    );
    // A request without `all` (an old client's) is the newest, as before.
    let req = proto::ListOperationEventsRequest::decode(&b"\x0a\x07default"[..]).unwrap();
    assert!(!req.all);
}

#[test]
fn a_page_delta_survives_the_wire_and_the_request_asks_for_it() {
    let o = sample_operation();
    let d = PageDelta {
        base_version: "v1".into(),
        version: "v2".into(),
        rows: vec![
            (0, o.clone()),
            (
                7,
                Operation {
                    name: "b".into(),
                    ..o
                },
            ),
        ],
        removed: vec![("default".into(), "gone".into())],
        size: 100,
        next_page_token: Some("t".into()),
        total: 10_007,
    };
    let u = WatchUpdate {
        delta: Some(d.clone()),
        ..WatchUpdate::default()
    };
    let bytes = watch_update_to_proto(&u).encode_to_vec();
    let back = proto::WatchOperationsResponse::decode(bytes.as_slice()).unwrap();
    assert!(back.page.is_none(), "a delta instead of the page");
    assert_eq!(watch_update_from_proto(back), u);
    // Rows without their places (or places without rows) are left out, never misplaced.
    let mut unpaired = page_delta_to_proto(&d);
    unpaired.positions.pop();
    assert_eq!(page_delta_from_proto(unpaired).rows, d.rows[..1].to_vec());
    let req = WatchRequest {
        page_deltas: true,
        ..WatchRequest::default()
    };
    let wire = watch_request_to_proto(&req);
    assert!(wire.page_deltas);
    assert!(watch_request_from_proto(wire).unwrap().page_deltas);
    let old = proto::WatchOperationsRequest {
        list: Some(list_query_to_proto(&ListQuery::default())),
        ..Default::default()
    };
    assert!(!watch_request_from_proto(old).unwrap().page_deltas);
}
