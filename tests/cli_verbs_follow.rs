//! `--follow` and `get --watch` until the end (0 completed, 3 failed or paused by a failed
//! machine, naming it), `operation list` and `get` as tables and JSON (a snapshot), and the
//! words in Japanese.

use super::{Ran, Typed, drive, output, ran, seed, start, world};
use crate::common::paths::{Path, User, dashboard_client};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_model::{OperationClient, OperationKind};
use ichor_tui::cli::verbs::Exit;
use ichor_tui::cli::verbs::args::Verb;
use ichor_views::i18n::Lang;
use std::time::Duration;

async fn client(path: Path, api: &EmbeddedApi) -> std::sync::Arc<dyn OperationClient> {
    dashboard_client(path, api, User::Admin, Duration::from_secs(5)).await
}

fn followed(mut verb: Verb) -> Verb {
    if let Verb::Start { follow, .. } = &mut verb {
        *follow = true;
    }
    verb
}

async fn follow_ends_0_on_completion_and_3_on_a_failure(path: Path) {
    let api = world();
    let c = client(path, &api).await;
    let ctrl = drive(&api);
    let verb = followed(start(
        OperationKind::Kubernetes,
        "c1",
        Some("v1.33.0"),
        true,
    ));
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        ran(c.as_ref(), verb, None, Lang::En),
    )
    .await
    .expect("the follow ends");
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}\n{}", r.out, r.err);
    assert!(r.out.contains("Following c1-kubernetes-"), "{}", r.out);
    assert!(r.out.contains("c1-cp-a: Running"), "{}", r.out);
    assert!(r.out.contains("c1-cp-a: Done"), "{}", r.out);
    // The state lines say the estimate: none before a machine finished, then at the pace.
    assert!(
        r.out
            .contains("Running · 0/5 · no estimate yet: no machine has finished"),
        "{}",
        r.out
    );
    assert!(r.out.contains("left at the pace so far"), "{}", r.out);
    assert!(r.out.trim_end().ends_with("completed."), "{}", r.out);
    // A machine marked to fail: the failure pause is exit 3, naming the machine.
    let api = world();
    api.edit("machines", "default", "c1-cp-b", |m| {
        m["metadata"]["annotations"] = serde_json::json!({"demo.ichor.maesh.dev/fail": "talos"});
    });
    let c = client(path, &api).await;
    ctrl.abort();
    let ctrl = drive(&api);
    let verb = followed(start(OperationKind::Talos, "c1", Some("v1.9.3"), true));
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        ran(c.as_ref(), verb, None, Lang::En),
    )
    .await
    .expect("the follow ends");
    ctrl.abort();
    assert_eq!(r.exit, Exit::Failed, "{path:?}: {}\n{}", r.out, r.err);
    assert!(r.err.contains("Machine c1-cp-b failed"), "{}", r.err);
    assert!(r.err.contains("Nothing retries and nothing is rolled back: delete it (ichor-tui operation delete c1-talos-"), "{}", r.err);
    assert!(
        r.err
            .trim_end()
            .ends_with("stopped on a failure: exit code 3."),
        "{}",
        r.err
    );
}

async fn watch_prints_changes_and_the_ca_stage(path: Path) {
    let api = world();
    let c = client(path, &api).await;
    let ctrl = drive(&api);
    let r = ran(
        c.as_ref(),
        start(OperationKind::CaRotation, "c1", None, true),
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Done, "{}", r.err);
    let name = c.list_operations(Some("default")).await.unwrap()[0]
        .name
        .clone();
    let verb = Verb::Get {
        name,
        output: output("table"),
        watch: true,
    };
    let r = tokio::time::timeout(
        Duration::from_secs(90),
        ran(c.as_ref(), verb, None, Lang::En),
    )
    .await
    .expect("the watch ends");
    ctrl.abort();
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}\n{}", r.out, r.err);
    for said in [
        "Pass 1 of 5: Accepting",
        "Pass 3 of 5: Awaiting credentials",
        "fetch them now with ichor cluster bundle-export c1",
        "The rotation is complete",
    ] {
        assert!(r.out.contains(said), "{said:?} in\n{}", r.out);
    }
    // An operation already paused by a failure: the watch ends at once, exit 3.
    seed(&api, "broken", "Paused", Some("machine c1-w-a failed"));
    let verb = Verb::Get {
        name: "broken".into(),
        output: output("table"),
        watch: true,
    };
    let r = ran(c.as_ref(), verb, None, Lang::En).await;
    assert_eq!(r.exit, Exit::Failed);
    assert!(
        r.err
            .contains("Machine c1-w-a failed: installer\u{fffd}[31m exited 1"),
        "{}",
        r.err
    );
    assert!(
        !r.err.contains('\u{1b}') && !r.out.contains('\u{1b}'),
        "no escape reaches the terminal"
    );
}

async fn list_and_get_print_tables(path: Path) {
    let api = world();
    seed(&api, "broken", "Paused", Some("machine c1-w-a failed"));
    let c = client(path, &api).await;
    let r = ran(
        c.as_ref(),
        Verb::List {
            all_namespaces: false,
            output: output("table"),
            no_headers: false,
            watch: false,
        },
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Done);
    let lines: Vec<&str> = r.out.lines().collect();
    assert!(
        lines[0].starts_with(
            "NAME     KIND            TARGET   CLUSTER   STATE            PROGRESS   AGE"
        ),
        "{}",
        r.out
    );
    assert!(
        lines[1].starts_with("broken   Talos upgrade   -        c1        Paused: failed   1/3"),
        "{}",
        r.out
    );
    let r = ran(
        c.as_ref(),
        Verb::List {
            all_namespaces: true,
            output: output("table"),
            no_headers: false,
            watch: false,
        },
        None,
        Lang::En,
    )
    .await;
    assert!(r.out.starts_with("NAMESPACE   NAME"), "{}", r.out);
    let r = ran(
        c.as_ref(),
        Verb::Get {
            name: "broken".into(),
            output: output("table"),
            watch: false,
        },
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Done);
    crate::snapshot!("get_table", &r.out);
    let r = ran(
        c.as_ref(),
        Verb::Get {
            name: "gone".into(),
            output: output("table"),
            watch: false,
        },
        None,
        Lang::En,
    )
    .await;
    assert_eq!(r.exit, Exit::Refused);
    assert!(!r.err.is_empty());
}

/// The list says where each operation goes, as its start recorded it (`-` where nothing
/// was); `-o wide` adds the machines under way.
async fn the_list_says_where_each_operation_goes(path: Path) {
    let api = world();
    seed(&api, "unrecorded", "Running", None);
    let mut o = crate::common::op("recorded", "c1", "talos", 1);
    o.metadata.annotations = Some(std::collections::BTreeMap::from([
        (ichor_resources::names::CURRENT.into(), "v1.9.2".into()),
        (
            ichor_resources::names::TARGET.into(),
            "v1.9.3\u{1b}[31m".into(),
        ),
    ]));
    api.seed(&o).unwrap();
    let c = client(path, &api).await;
    let list = |o: &str| Verb::List {
        all_namespaces: false,
        output: output(o),
        no_headers: false,
        watch: false,
    };
    let r = ran(c.as_ref(), list("table"), None, Lang::En).await;
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert!(
        lines[0].starts_with("NAME         KIND            TARGET"),
        "{path:?}: {}",
        r.out
    );
    let row = |name: &str| lines.iter().find(|l| l.starts_with(name)).copied();
    let recorded = row("recorded").unwrap_or_default();
    assert!(
        recorded.contains("v1.9.2 → v1.9.3\u{fffd}[31m"),
        "{path:?}: {}",
        r.out
    );
    let unrecorded = row("unrecorded").unwrap_or_default();
    assert!(
        unrecorded.contains("Talos upgrade   -  "),
        "{path:?}: {}",
        r.out
    );
    assert!(!r.out.contains('\u{1b}'), "no escape reaches the terminal");
    let r = ran(c.as_ref(), list("wide"), None, Lang::En).await;
    let lines: Vec<&str> = r.out.lines().collect();
    assert!(lines[0].ends_with("   MACHINE"), "{}", r.out);
    let unrecorded = lines.iter().find(|l| l.starts_with("unrecorded"));
    assert!(
        unrecorded.is_some_and(|l| l.ends_with("   c1-w-a")),
        "{}",
        r.out
    );
}

crate::matrix!(
    the_list_says_where_each_operation_goes,
    every_kind_starts,
    follow_ends_0_on_completion_and_3_on_a_failure,
    watch_prints_changes_and_the_ca_stage,
    list_and_get_print_tables,
    the_plan_names_the_machines_already_at_the_target,
);

/// The JSON is stable: field names and shape, snapshotted (times and uids left out).
#[tokio::test]
async fn json_and_yaml_output_is_stable() {
    let api = world();
    seed(&api, "broken", "Paused", Some("machine c1-w-a failed"));
    seed(&api, "run", "Running", None);
    let c = client(Path::InProcess, &api).await;
    let scrub = |r: &Ran| {
        let mut v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
        fn walk(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m.iter_mut() {
                        if k.ends_with("At") && !x.is_null() || k == "uid" {
                            *x = serde_json::json!("<volatile>");
                        } else {
                            walk(x);
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        walk(&mut v);
        serde_json::to_string_pretty(&v).unwrap()
    };
    let r = ran(
        c.as_ref(),
        Verb::List {
            all_namespaces: false,
            output: output("json"),
            no_headers: false,
            watch: false,
        },
        None,
        Lang::En,
    )
    .await;
    crate::snapshot!("list_json", scrub(&r));
    let r = ran(
        c.as_ref(),
        Verb::Get {
            name: "broken".into(),
            output: output("json"),
            watch: false,
        },
        None,
        Lang::Ja,
    )
    .await;
    crate::snapshot!("get_json", scrub(&r));
    let r = ran(
        c.as_ref(),
        Verb::Get {
            name: "broken".into(),
            output: output("yaml"),
            watch: false,
        },
        None,
        Lang::En,
    )
    .await;
    assert!(
        r.out.contains("name: broken") && r.out.contains("failedMachine: c1-w-a"),
        "{}",
        r.out
    );
}

/// The same commands in Japanese: tables, the plan, the questions, the refusals.
#[tokio::test]
async fn japanese_text() {
    let api = world();
    seed(&api, "broken", "Paused", Some("machine c1-w-a failed"));
    let c = client(Path::InProcess, &api).await;
    let r = ran(
        c.as_ref(),
        Verb::List {
            all_namespaces: false,
            output: output("table"),
            no_headers: false,
            watch: false,
        },
        None,
        Lang::Ja,
    )
    .await;
    assert!(
        r.out.starts_with(
            "名前     種類                   変更先   クラスター   状態         進捗   経過"
        ),
        "{}",
        r.out
    );
    let r = ran(
        c.as_ref(),
        Verb::Get {
            name: "broken".into(),
            output: output("table"),
            watch: false,
        },
        None,
        Lang::Ja,
    )
    .await;
    crate::snapshot!("get_table_ja", &r.out);
    let fresh = world();
    let c2 = client(Path::InProcess, &fresh).await;
    let verb = start(OperationKind::Shutdown, "c1", None, false);
    let r = ran(c2.as_ref(), verb, Some(Typed::new("c1\nn\n")), Lang::Ja).await;
    assert!(fresh.write_log().is_empty());
    assert_eq!(r.exit, Exit::Refused);
    crate::snapshot!("shutdown_plan_ja", format!("{}\n---\n{}", r.out, r.err));
    let r = ran(
        c.as_ref(),
        start(OperationKind::Talos, "c1", Some("v1.9.3"), false),
        None,
        Lang::Ja,
    )
    .await;
    assert_eq!(
        r.err,
        "ichor-tui upgrade talos は書き込む前に確認しますが、標準入力が端末ではありません。何も書き込んでいません。確認なしで実行するには --yes を付けてください。\n"
    );
    assert!(api.write_log().is_empty());
}

/// A start whose answer is lost is found by its request id, or said not to have happened, or
/// (the create late) looked for until it can no longer land; never sent twice.
async fn a_start_whose_answer_is_lost_is_found_or_said_not_done(path: Path) {
    use ichor_demo::apiserver::{Fault, FaultRule};
    for fault in [
        Fault::ResetAfterApply,
        Fault::Reset,
        Fault::Unavailable,
        Fault::Delay(Duration::from_millis(2500)),
    ] {
        let case = format!("{path:?} {fault:?}");
        let api = world();
        let c = dashboard_client(path, &api, User::Admin, Duration::from_millis(1000)).await;
        api.fail_when(FaultRule::on("create", "talosoperations"), fault);
        let verb = start(OperationKind::Talos, "c1", Some("v1.9.3"), true);
        let r = tokio::time::timeout(
            Duration::from_secs(120),
            ran(c.as_ref(), verb, None, Lang::En),
        )
        .await
        .expect("the start is settled");
        crate::common::api_settled(&api).await;
        let created = crate::common::operations_created(&api);
        let ops = c.list_operations(Some("default")).await.unwrap().len();
        assert!(created <= 1, "{case}: sent once");
        match r.exit {
            Exit::Done => {
                assert_eq!(ops, 1, "{case}");
                assert!(r.out.contains("Started c1-talos-"), "{case}: {}", r.out);
            }
            Exit::Refused => {
                assert_eq!(ops, 0, "{case}: {}", r.err);
                let half = "was written on TalosCluster c1, but creating the operation failed";
                assert!(
                    r.err.contains("did not happen") || r.err.contains(half),
                    "{case}: {}",
                    r.err
                );
            }
            other => panic!("{case}: {other:?} {}", r.err),
        }
        if matches!(fault, Fault::ResetAfterApply) {
            assert_eq!(r.exit, Exit::Done, "{case}: found by its request id");
        }
        if matches!(fault, Fault::Reset | Fault::Unavailable) {
            assert_eq!(r.exit, Exit::Refused, "{case}");
            // Run again, as the words say (the fault met one request): it starts now.
            let verb = start(OperationKind::Talos, "c1", Some("v1.9.3"), true);
            let r = ran(c.as_ref(), verb, None, Lang::En).await;
            assert_eq!(r.exit, Exit::Done, "{case}: {}", r.err);
            assert_eq!(crate::common::operations_created(&api), 1, "{case}");
        }
    }
}

/// Where the server streams, `--follow` is pushed: with a poll of ten minutes it still sees
/// every change and ends as soon as the operation completes.
async fn follow_is_pushed_where_the_server_streams(path: Path) {
    let api = world();
    let c = client(path, &api).await;
    assert!(c.pushes(), "{path:?}");
    let ctrl = drive(&api);
    let verb = followed(start(
        OperationKind::Kubernetes,
        "c1",
        Some("v1.33.0"),
        true,
    ));
    let poll = Duration::from_secs(600);
    let run = super::ran_polling(c.as_ref(), verb, None, Lang::En, poll);
    let r = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("pushed, not polled every 10 minutes");
    ctrl.abort();
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}\n{}", r.out, r.err);
    assert!(r.out.contains("c1-cp-a: Running"), "{}", r.out);
    assert!(r.out.contains("c1-w-b: Done"), "{}", r.out);
    assert!(!r.err.contains("live updates off"), "{}", r.err);
}

crate::matrix!(paths: [Grpc => grpc_push, Connect => connect_push, Tunnel => tunnel_push]; [follow_is_pushed_where_the_server_streams]);

crate::matrix!(paths: [InProcess => in_process_faults, Grpc => grpc_faults]; [a_start_whose_answer_is_lost_is_found_or_said_not_done]);

/// Every kind starts with --yes on every path, with its max unavailable; the kube-proxy
/// confirmation does not outlive the start.
async fn every_kind_starts(path: Path) {
    for (kind, target) in [
        (OperationKind::Talos, Some("1.9.3")),
        (OperationKind::Kubernetes, Some("v1.33.0")),
        (OperationKind::Ichor, Some("0.15.0")),
        (OperationKind::Cni, Some("replaced")),
        (OperationKind::Shutdown, None),
        (OperationKind::CaRotation, None),
    ] {
        let api = world();
        let c = client(path, &api).await;
        let mut verb = start(kind, "c1", target, true);
        if let Verb::Start {
            max_unavailable, ..
        } = &mut verb
        {
            *max_unavailable = kind.takes_max_unavailable().then_some(2);
        }
        let r = ran(c.as_ref(), verb, None, Lang::En).await;
        assert_eq!(r.exit, Exit::Done, "{path:?} {kind:?}: {}", r.err);
        let ops = c.list_operations(Some("default")).await.unwrap();
        assert_eq!(ops.len(), 1, "{path:?} {kind:?}");
        assert_eq!(ops[0].kind, Some(kind));
        if kind.takes_max_unavailable() {
            assert_eq!(ops[0].max_unavailable, 2, "{kind:?}");
        }
        let cluster = api.object("talosclusters", "default", "c1").unwrap();
        let annotations = cluster.pointer("/metadata/annotations").cloned();
        assert!(
            annotations
                .is_none_or(|a| a.get("ichor.maesh.dev/confirm-kube-proxy-switch").is_none()),
            "{path:?} {kind:?}: the confirmation is taken back"
        );
    }
}

/// After "delete and start again" on the demo's edge-tokyo, the plan printed before the
/// question names the five machines that already report the target, in the Review's words,
/// en and ja; n writes nothing.
async fn the_plan_names_the_machines_already_at_the_target(path: Path) {
    let api = EmbeddedApi::default();
    ichor_demo::demo::seed(&api, crate::common::fixtures::now()).unwrap();
    let ops: kube::Api<ichor_resources::TalosOperation> = kube::Api::namespaced(
        api.client(ichor_demo::apiserver::auth::users::ADMIN_TOKEN),
        "default",
    );
    ops.delete("edge-tokyo-talos-m4q9z", &Default::default())
        .await
        .unwrap();
    let before = api.write_log().len();
    let c = client(path, &api).await;
    let machines = "edge-tokyo-cp1, edge-tokyo-cp2, edge-tokyo-cp3, edge-tokyo-w01, edge-tokyo-w02";
    for (lang, want) in [
        (
            Lang::En,
            format!(
                "5 of the 8 machines already report v1.9.3 ({machines}). The plan does not leave them out: they are in the steps, in the order the executor handles the machines. The executor takes the target from the spec when each machine's turn comes.\n"
            ),
        ),
        (
            Lang::Ja,
            format!(
                "8 台中 5 台（{machines}）はすでに v1.9.3 を報告しています。計画はこれらも除外せず、実行側がマシンを処理する順に手順へ含めています。実行側は各マシンの順番が来たときに spec から目標バージョンを読み取ります。\n"
            ),
        ),
    ] {
        let verb = start(OperationKind::Talos, "edge-tokyo", Some("1.9.3"), false);
        let r = ran(c.as_ref(), verb, Some(Typed::new("n\n")), lang).await;
        assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.err);
        assert!(
            r.out.contains(&want),
            "{path:?} {lang:?}: {want} in\n{}",
            r.out
        );
    }
    // A plan where no machine runs the target says nothing of it.
    let verb = start(OperationKind::Kubernetes, "prod-eu", Some("1.33.0"), false);
    let r = ran(c.as_ref(), verb, Some(Typed::new("n\n")), Lang::En).await;
    assert!(!r.out.contains("already report"), "{path:?}: {}", r.out);
    assert_eq!(api.write_log().len(), before, "{path:?}: n writes nothing");
}

/// `get --watch` whose stream ends: "live updates off" is said with the time, as the lines of
/// the changes are, then the operation is read (and ends here, completed).
#[tokio::test]
async fn live_updates_off_is_said_with_its_time() {
    use ichor_client::fake::FakeClient;
    use ichor_model::{Phase, WatchUpdate};
    let running = crate::common::fixtures::running_rollout();
    let mut done = running.clone();
    done.phase = Phase::Completed;
    let mut fake = FakeClient::with_operations(vec![running.clone()]);
    fake.pushes = true;
    let pushed = WatchUpdate {
        followed: Some(Ok(running.clone())),
        ..WatchUpdate::default()
    };
    fake.watches.lock().unwrap().push_back(Ok(vec![Ok(pushed)]));
    // Read first as it is running, and after the stream's end as it completed.
    fake.gets
        .lock()
        .unwrap()
        .extend([Ok(running.clone()), Ok(done)]);
    let verb = Verb::Get {
        name: running.name.clone(),
        output: output("table"),
        watch: true,
    };
    let r = ran(&fake, verb, None, Lang::En).await;
    assert_eq!(r.exit, Exit::Done, "{}\n{}", r.out, r.err);
    let line = r
        .err
        .lines()
        .find(|l| l.contains("live updates off"))
        .unwrap_or_else(|| panic!("said: {}", r.err));
    let (time, said) = line.split_once(' ').unwrap();
    assert!(
        jiff::civil::Time::strptime("%H:%M:%S", time).is_ok(),
        "{line}"
    );
    assert_eq!(said, "live updates off");
    // The changes' lines carry one the same way.
    let changed = r.out.lines().find(|l| l.contains("Completed")).unwrap();
    let time = changed.split_once(' ').unwrap().0;
    assert!(
        jiff::civil::Time::strptime("%H:%M:%S", time).is_ok(),
        "{changed}"
    );
}
