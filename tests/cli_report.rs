//! `operation report NAME [-o markdown|json]` (issue 38) on every path, of a run the demo's
//! controller carried out on a clock of its own (so its times are the same on every run): a
//! Talos upgrade of c1 where c1-w-a is slow (its steps take three times as long, with the
//! Warning the controller records) and c1-w-b fails. The report says who, when, the plan's
//! order, each machine's times and result, the warnings, the failure and what to do, what the
//! machines run and the totals; in English and Japanese, and in JSON; with no control
//! character from the cluster's text.

use crate::cli_guards::ran_guarded;
use crate::cli_verbs::Guard;
use crate::cli_verbs::world;
use crate::common;

use common::op;
use common::paths::{Path, User, dashboard_client};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_demo::apiserver::auth::users;
use ichor_demo::controller::Controller;
use ichor_resources::{TalosOperation, TalosOperationStatus, names};
use ichor_tui::cli::verbs::Exit;
use ichor_tui::cli::verbs::args::{ReportFormat, Verb};
use ichor_views::i18n::Lang;
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, PostParams};
use std::time::Duration;

/// c1 with c1-w-a slow (`slow`×) and c1-w-b failing a Talos upgrade to v1.9.3, whose actor's
/// name carries an escape; the upgrade `up` driven a second at a time from 2026-11-29 10:00
/// until `done` says of its status. The write log is then cleared.
async fn run_until(slow: &str, done: impl Fn(&TalosOperationStatus) -> bool) -> EmbeddedApi {
    let api = world();
    let annotate = |machine: &str, key: &str, value: &str| {
        assert!(api.edit("machines", "default", machine, |m| {
            m["metadata"]["annotations"] = serde_json::json!({ key: value });
        }));
    };
    // The start wrote the target into the cluster's spec.
    assert!(api.edit("talosclusters", "default", "c1", |c| {
        c["spec"]["talosVersion"] = "v1.9.3".into();
    }));
    annotate("c1-w-a", names::DEMO_SLOW, slow);
    annotate("c1-w-b", names::DEMO_FAIL, "talos");
    let ctrl = Controller::new(api.client(users::CONTROLLER_TOKEN), 1.0);
    let ops: Api<TalosOperation> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
    let mut up = op("up", "c1", "talos", 1);
    up.metadata.annotations = Some(
        [
            (names::ACTOR, "alice\u{1b}[2J|ops"),
            (names::CURRENT, "v1.9.2"),
            (names::TARGET, "v1.9.3"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into(),
    );
    ops.create(&PostParams::default(), &up).await.unwrap();
    let mut now: Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
    for _ in 0..400 {
        now += SignedDuration::from_secs(1);
        ctrl.reconcile(now).await.unwrap();
        let st = ops.get("up").await.unwrap().status.unwrap_or_default();
        if done(&st) {
            api.clear_write_log();
            return api;
        }
    }
    panic!("the run never got there");
}

/// The run with c1-w-a 3× slow, until c1-w-b's failure paused it. The workers' pace is the
/// median of 4 s (c1-w-c) and 12 s (c1-w-a).
async fn failed_run() -> EmbeddedApi {
    run_until("3", |st| st.failure_reason.is_some()).await
}

/// The report, its lines that say the present moment (the creation the API stamped, the time
/// taken so far, when the report was made) left out: the rest is the same on every run.
fn steady(report: &str) -> String {
    report
        .lines()
        .filter(|l| {
            ![
                "| Created |",
                "| 作成 |",
                "- Took ",
                "- 所要時間 ",
                "Report made ",
            ]
            .iter()
            .any(|p| l.starts_with(p))
                && !l.ends_with("に ichor-tui で作成したレポートです。")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn report(output: ReportFormat) -> Verb {
    Verb::Report {
        name: "up".into(),
        output,
    }
}

async fn a_report_says_the_run_for_a_ticket(path: Path) {
    let api = failed_run().await;
    let c = dashboard_client(path, &api, User::Viewer, Duration::from_secs(5)).await;
    for lang in [Lang::En, Lang::Ja] {
        let verb = report(ReportFormat::Markdown);
        let r = ran_guarded(c.as_ref(), verb, None, lang, Guard::default()).await;
        assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
        assert!(
            r.out.chars().all(|c| c == '\n' || !c.is_control()),
            "{path:?}: safe to paste:\n{}",
            r.out
        );
        crate::snapshot!(format!("report_{}", lang.code()), steady(&r.out));
    }
    assert!(api.write_log().is_empty(), "a report writes nothing");
}

async fn a_report_in_json_has_a_stable_shape(path: Path) {
    let api = failed_run().await;
    let c = dashboard_client(path, &api, User::Viewer, Duration::from_secs(5)).await;
    let verb = report(ReportFormat::Json);
    let r = ran_guarded(c.as_ref(), verb, None, Lang::Ja, Guard::default()).await;
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
    assert!(!r.out.contains('\u{1b}'), "{path:?}");
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    let machine = |name: &str| {
        v["machines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{path:?}: no {name} in {v}"))
    };
    let slow = machine("c1-w-a");
    assert_eq!(
        (&slow["role"], &slow["result"], &slow["tookSeconds"]),
        (&"worker".into(), &"Completed".into(), &12.into()),
        "{path:?}"
    );
    assert_eq!(machine("c1-w-b")["result"], "Failed", "{path:?}");
    assert_eq!(machine("c1-cp-a")["step"], 1, "{path:?}");
    let reasons: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["reason"].as_str())
        .collect();
    assert!(reasons.contains(&"StepSlow"), "{path:?}: {reasons:?}");
    assert!(reasons.contains(&"StepFailed"), "{path:?}: {reasons:?}");
    let totals = &v["totals"];
    assert_eq!(
        (&totals["completed"], &totals["failed"], &totals["left"]),
        (&4.into(), &1.into(), &0.into()),
        "{path:?}: {totals}"
    );
    assert_eq!(
        totals["paceSecondsByRole"]["worker"], 8,
        "{path:?}: {totals}"
    );
    assert_eq!(v["startedBy"], "alice\u{fffd}[2J|ops", "{path:?}");
    // A name that is not there: refused, nothing printed on stdout.
    let verb = Verb::Report {
        name: "gone".into(),
        output: ReportFormat::Json,
    };
    let r = ran_guarded(c.as_ref(), verb, None, Lang::En, Guard::default()).await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}");
    assert!(r.out.is_empty() && !r.err.is_empty(), "{path:?}");
}

/// `operation get` of a run whose c1-w-a (10× slow) has run past its bound: read now, days
/// after the run's clock, its step has taken days against a pace of 4 s.
async fn get_says_the_slow_machine_and_the_estimate(path: Path) {
    let api = run_until("10", |st| {
        st.machines
            .iter()
            .any(|m| m.name == "c1-w-a" && m.message.contains("waiting"))
    })
    .await;
    let c = dashboard_client(path, &api, User::Viewer, Duration::from_secs(5)).await;
    let get = |output: &str| Verb::Get {
        name: "up".into(),
        output: crate::cli_verbs::output(output),
        watch: false,
    };
    let r = ran_guarded(c.as_ref(), get("table"), None, Lang::En, Guard::default()).await;
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
    for said in [
        "Running for ",
        "under a minute left at the pace so far",
        "⚠ c1-w-a is slow: ",
        "the pace so far is 4s, slow past 34s.",
        "StepSlow: up: still waiting for the machine to report Ready after the reboot",
    ] {
        assert!(r.out.contains(said), "{path:?}: {said:?} in\n{}", r.out);
    }
    let row = r.out.lines().find(|l| l.starts_with("c1-w-a"));
    assert!(
        row.is_some_and(|l| l.contains("⚠ Slow") && l.contains("d of ~4s")),
        "{path:?}: {}",
        r.out
    );
    let r = ran_guarded(c.as_ref(), get("json"), None, Lang::En, Guard::default()).await;
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    let timing = &v["timing"];
    assert_eq!(
        (
            &timing["phase"],
            &timing["slow"],
            &timing["estimate"]["afterSlow"]["machine"]
        ),
        (&"Running".into(), &true.into(), &"c1-w-a".into()),
        "{path:?}: {timing}"
    );
    assert_eq!(timing["running"][0]["paceSeconds"], 4, "{path:?}: {timing}");
    assert!(api.write_log().is_empty(), "a get writes nothing");
}

crate::matrix!(
    get_says_the_slow_machine_and_the_estimate,
    a_report_says_the_run_for_a_ticket,
    a_report_in_json_has_a_stable_shape,
);
