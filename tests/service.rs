//! OperationService behaviour, through the real kube client code against the embedded API,
//! asserting the answer and what the cluster holds (the write log) afterwards. Every scenario
//! runs over every path (a matrix, not a copy).

use crate::common;

use common::paths::{Path, User, actor, connect, writer};
use common::{names, op, small_cluster};
use ichor_demo::apiserver::auth::users;
use ichor_demo::apiserver::{EmbeddedApi, Fault, FaultRule};
use ichor_demo::controller::Controller;
use ichor_model::{
    Code, MachinePhase, OperationEffect, OperationKind, OperationRequest, Phase, Reason,
};
use ichor_resources::*;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    small_cluster(&api);
    api
}

fn req(kind: OperationKind, target: Option<&str>) -> OperationRequest {
    OperationRequest {
        namespace: "default".into(),
        cluster: Some("c1".into()),
        kind,
        target: target.map(str::to_string),
        max_unavailable: None,
        request_id: None,
        confirmed_plan: None,
    }
}

async fn seed_op(api: &EmbeddedApi, name: &str, kind: &str, phase: &str, failure: Option<&str>) {
    let mut o = op(name, "c1", kind, 1);
    o.status = Some(TalosOperationStatus {
        phase: phase.into(),
        failure_reason: failure.map(str::to_string),
        machines: vec![ichor_resources::MachineProgress {
            name: "c1-cp-a".into(),
            phase: if failure.is_some() {
                "Failed"
            } else {
                "Completed"
            }
            .into(),
            message: "m".into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    if phase == "Paused" && failure.is_none() {
        o.spec.paused = true;
    }
    api.seed(&o).unwrap();
}

fn admin_clusters(api: &EmbeddedApi) -> Api<TalosCluster> {
    Api::namespaced(api.client(users::ADMIN_TOKEN), "default")
}

async fn track_with_argo(api: &EmbeddedApi) {
    admin_clusters(api)
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {names::ARGOCD_TRACKING_ID: "platform-c1:ichor.maesh.dev/TalosCluster:default/c1"}}})),
        )
        .await
        .unwrap();
    api.clear_write_log();
}

fn claim(api: &EmbeddedApi, holder: &str, renewed: jiff::Timestamp) {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    let lease = Lease {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("{}c1", names::START_CLAIM_PREFIX)),
            namespace: Some("default".into()),
            annotations: Some(
                [
                    (names::CLAIM_OPERATION.to_string(), "c1-talos-zzzzz".into()),
                    (names::ACTOR.to_string(), "carol".into()),
                ]
                .into(),
            ),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            renew_time: Some(MicroTime(renewed)),
            lease_duration_seconds: Some(60),
            ..Default::default()
        }),
    };
    api.seed(&lease).unwrap();
}

#[path = "service/reads.rs"]
mod reads;
use reads::*;
#[path = "service/plans.rs"]
mod plans;
use plans::*;
#[path = "service/plan_refusals.rs"]
mod plan_refusals;
use plan_refusals::*;
#[path = "service/starts.rs"]
mod starts;
use starts::*;
#[path = "service/confirmed.rs"]
mod confirmed;
use confirmed::*;
#[path = "service/permissions.rs"]
mod permissions;
use permissions::*;

#[path = "service/claims.rs"]
mod claims;
use claims::{
    a_create_answered_late_then_applied_makes_one_operation, a_hostile_claim_is_bounded_or_named,
    a_refused_start_leaves_its_request_id_free, a_request_id_names_one_request,
    a_stray_confirmation_is_named_and_taken_back, delete_and_start_again_works_at_once,
};

crate::matrix!(
    delete_and_start_again_works_at_once,
    a_create_answered_late_then_applied_makes_one_operation,
    a_hostile_claim_is_bounded_or_named,
    a_request_id_names_one_request,
    a_refused_start_leaves_its_request_id_free,
    a_stray_confirmation_is_named_and_taken_back,
    list_and_get_return_the_status_as_it_is,
    clusters_show_versions_machines_tracking_and_the_unfinished_operation,
    plan_talos_steps_held_and_versions,
    plan_effects_and_shapes_for_every_kind,
    plan_says_what_the_review_must_say_besides_the_steps,
    a_completed_shutdown_is_remembered_and_a_start_after_it_warned,
    the_resource_is_read_as_yaml_as_the_caller,
    plan_blocked_by_an_unfinished_operation,
    plan_blocked_by_gitops_tracking,
    plan_blocked_by_a_downgrade,
    invalid_arguments,
    a_plan_that_touches_no_machine_is_blocked,
    the_cluster_may_be_omitted_only_when_there_is_one,
    plan_order_matches_the_executors_order,
    create_writes_the_spec_then_the_operation,
    a_rerun_after_a_half_failure_only_creates_the_operation,
    a_tracked_spec_is_refused_then_started_with_the_version_git_wrote,
    create_refuses_what_the_plan_refuses_and_writes_nothing,
    kube_proxy_switch_sets_and_removes_the_confirmation,
    a_confirmation_that_cannot_be_removed_is_a_warning,
    the_kube_proxy_confirmation_never_outlives_its_start,
    writes_are_bound_to_what_was_confirmed,
    the_write_goes_to_the_object_that_was_read,
    a_start_is_bound_to_the_plan_it_was_reviewed_on,
    a_repeated_start_returns_its_operation_and_writes_nothing,
    a_standing_claim_refuses_other_starts,
    an_ichor_upgrade_names_the_clusters_it_serves_and_waits_for_them,
    who_may_start_pause_and_delete_is_asked_of_kubernetes,
    pause_and_resume_record_who_and_when,
    a_pause_whose_event_cannot_be_written_is_still_done,
    resuming_a_pause_caused_by_a_failure_is_refused,
    finished_operations_cannot_be_paused_or_resumed,
    delete_removes_the_operation,
    a_viewer_may_read_and_nothing_else,
    a_caller_who_may_edit_clusters_but_not_create_operations_changes_nothing,
    an_operator_may_not_edit_the_spec_but_may_start_what_it_names,
    kubernetes_faults_come_back_as_codes,
    a_badly_typed_object_is_a_row_and_the_list_mends_when_it_is_fixed,
    an_unreadable_cluster_or_machine_is_listed_as_such_and_blocks_a_start,
);

#[tokio::test(start_paused = true)]
async fn a_request_that_outlasts_its_deadline_is_deadline_exceeded() {
    let api = world();
    let c = connect(Path::InProcess, &api, User::Admin).await;
    api.fail_next(1, Fault::Delay(Duration::from_secs(120)));
    let e = c.list_operations(Some("default")).await.unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded);
}

#[tokio::test]
async fn read_only_clients_refuse_writes_themselves() {
    use ichor_client::inprocess::InProcessClient;
    use ichor_client::retry::Retrying;
    use ichor_model::OperationClient;
    use ichor_service::OperationService;
    use ichor_service::access::{Caller, KubeAccess};
    let api = world();
    seed_op(&api, "run", "talos", "Running", None).await;
    let service =
        OperationService::new(KubeAccess::new(api.client(users::ADMIN_TOKEN), "ichor-tui"));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let c = Retrying::new(InProcessClient::new(service, Caller::in_process()), tx).read_only(true);
    c.list_operations(None).await.unwrap();
    c.plan_operation(&req(OperationKind::Shutdown, None))
        .await
        .unwrap();
    for e in [
        c.create_operation(&req(OperationKind::Talos, Some("v1.9.3")))
            .await
            .map(drop)
            .unwrap_err(),
        c.set_operation_paused("default", "run", true, None)
            .await
            .map(drop)
            .unwrap_err(),
        c.delete_operation("default", "run", None)
            .await
            .unwrap_err(),
    ] {
        assert_eq!(
            (e.code, e.reason),
            (Code::PermissionDenied, Some(Reason::ReadOnly))
        );
    }
    assert!(api.write_log().is_empty());
}
