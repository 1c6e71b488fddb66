//! An embedded API holding the demo's data and a long history: what the server-side measures
//! list.

use ichor_demo::apiserver::EmbeddedApi;
use ichor_resources::{MachineProgress, TalosOperation, TalosOperationSpec, TalosOperationStatus};

/// The demo's data, and `extra` more Completed operations of a 4-machine cluster.
pub fn world(extra: usize) -> EmbeddedApi {
    let api = EmbeddedApi::default();
    let now = jiff::Timestamp::now();
    ichor_demo::demo::seed(&api, now).expect("seeding the demo");
    for i in 0..extra {
        let mut op = TalosOperation::new(
            &format!("staging-talos-h{i:06}"),
            TalosOperationSpec {
                cluster: "staging".into(),
                kind: "talos".into(),
                max_unavailable: 1,
                paused: false,
            },
        );
        op.metadata.namespace = Some("default".into());
        op.metadata.annotations = Some(
            [(
                ichor_resources::names::ACTOR.to_string(),
                "history-bot".to_string(),
            )]
            .into(),
        );
        let at = |mins: i64| (now - jiff::SignedDuration::from_mins(mins)).to_string();
        let start = 60 * 24 * (40 + i as i64);
        op.status = Some(TalosOperationStatus {
            phase: "Completed".into(),
            machines: ["staging-cp1", "staging-w01", "staging-w02", "staging-w03"]
                .iter()
                .enumerate()
                .map(|(m, name)| MachineProgress {
                    name: (*name).into(),
                    phase: "Completed".into(),
                    message: "running Talos v1.9.3".into(),
                    started_at: Some(at(start - 3 * m as i64)),
                    finished_at: Some(at(start - 3 * m as i64 - 3)),
                })
                .collect(),
            started_at: Some(at(start)),
            finished_at: Some(at(start - 15)),
            ..Default::default()
        });
        api.seed(&op).expect("seeding an operation");
    }
    api
}

/// A paused Talos upgrade of `staging` named `name`, created now: a change the push measures
/// make (newest, so at the top of the list).
pub fn paused_operation(name: &str) -> TalosOperation {
    let mut o = TalosOperation::new(
        name,
        TalosOperationSpec {
            cluster: "staging".into(),
            kind: "talos".into(),
            max_unavailable: 1,
            paused: true,
        },
    );
    o.metadata.namespace = Some("default".into());
    o.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        jiff::Timestamp::now(),
    ));
    o
}
