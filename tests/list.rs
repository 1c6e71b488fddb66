//! ListOperations as the list screen asks for it (summaries, pages, filters, unchanged
//! answers), through the real kube client code against the embedded API, on every path.

use crate::common;

use common::op;
use common::paths::{Path, User, connect};
use ichor_demo::apiserver::EmbeddedApi;
use ichor_model::{Code, ListQuery, Phase, Progress, Reason, View};
use ichor_resources::*;

/// `n` operations on clusters c1 and c2, one a minute apart (newest has the highest number),
/// every fifth Running with its second machine under way, the rest Completed.
fn history(n: usize) -> EmbeddedApi {
    let api = EmbeddedApi::default();
    for i in 0..n {
        let cluster = if i % 2 == 0 { "c1" } else { "c2" };
        let mut o = op(&format!("op-{i:04}"), cluster, "talos", 1);
        let running = i % 5 == 0;
        let at = jiff::Timestamp::from_second(1_800_000_000 + i as i64 * 60).unwrap();
        o.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at));
        let machine = |name: &str, phase: &str| ichor_resources::MachineProgress {
            name: name.into(),
            phase: phase.into(),
            ..Default::default()
        };
        o.status = Some(TalosOperationStatus {
            phase: if running { "Running" } else { "Completed" }.into(),
            machines: vec![
                machine("cp-a", "Completed"),
                machine("w-a", if running { "Running" } else { "Completed" }),
                machine("w-b", if running { "Pending" } else { "Completed" }),
            ],
            ..Default::default()
        });
        api.seed(&o).unwrap();
    }
    api
}

fn summary_page(size: u32) -> ListQuery {
    ListQuery {
        namespace: Some("default".into()),
        view: View::Summary,
        page_size: size,
        ..ListQuery::default()
    }
}

async fn pages_walk_the_whole_list_newest_first_as_summaries(path: Path) {
    let api = history(25);
    let c = connect(path, &api, User::Viewer).await;
    let mut q = summary_page(10);
    let mut names = Vec::new();
    let mut pages = 0;
    loop {
        let p = c.list_page(&q).await.unwrap();
        pages += 1;
        assert_eq!(p.total, 25);
        for o in &p.operations {
            // A finished operation's summary carries no machine list; an unfinished one's
            // its machines' phases and times, without their messages.
            match o.phase.is_finished() {
                true => assert!(o.machines.is_empty(), "{}: {:?}", o.name, o.machines),
                false => {
                    assert_eq!(o.machines.len(), 3, "{}", o.name);
                    assert!(o.machines.iter().all(|m| m.message.is_empty()));
                }
            }
            assert!(o.summary.is_some());
        }
        names.extend(p.operations.into_iter().map(|o| o.name));
        match p.next_page_token {
            Some(t) => q.page_token = Some(t),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..25).rev().map(|i| format!("op-{i:04}")).collect();
    assert_eq!(names, expected);
    // The running one's summary counts its machines and names the one under way.
    let first = c.list_page(&summary_page(1)).await.unwrap();
    let newest = &first.operations[0];
    assert_eq!(newest.name, "op-0024");
    assert_eq!(newest.phase, Phase::Completed);
    let running = c
        .list_page(&ListQuery {
            phases: vec![Phase::Running],
            ..summary_page(1)
        })
        .await
        .unwrap();
    assert_eq!(running.total, 5);
    assert_eq!(running.operations[0].name, "op-0020");
    assert_eq!(
        running.operations[0].summary,
        Some(Progress {
            done: 1,
            total: 3,
            current: Some("w-a".into()),
            failed: None,
        })
    );
    // The full view (what clients before summaries get) still carries the machines.
    let full = c.list_operations(Some("default")).await.unwrap();
    assert_eq!(full.len(), 25);
    assert!(
        full.iter()
            .all(|o| o.machines.len() == 3 && o.summary.is_none())
    );
    assert!(api.write_log().is_empty());
}

async fn filters_apply_on_the_server_before_paging(path: Path) {
    let api = history(20);
    let c = connect(path, &api, User::Viewer).await;
    let by_cluster = c
        .list_page(&ListQuery {
            cluster: Some("c2".into()),
            ..summary_page(3)
        })
        .await
        .unwrap();
    assert_eq!(by_cluster.total, 10);
    assert_eq!(by_cluster.operations.len(), 3);
    assert!(by_cluster.operations.iter().all(|o| o.cluster == "c2"));
    let by_text = c
        .list_page(&ListQuery {
            text: "OP-001".into(),
            ..summary_page(100)
        })
        .await
        .unwrap();
    let names: Vec<_> = by_text.operations.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "op-0019", "op-0018", "op-0017", "op-0016", "op-0015", "op-0014", "op-0013", "op-0012",
            "op-0011", "op-0010"
        ]
    );
    assert_eq!(by_text.next_page_token, None);
    // The words the row shows: "✗ Paused: failed" (失敗で停止 in Japanese), not the phase.
    let mut broken = op("op-broken", "c1", "talos", 1);
    broken.status = Some(TalosOperationStatus {
        phase: "Paused".into(),
        failure_reason: Some("machine w-a failed".into()),
        ..Default::default()
    });
    api.seed(&broken).unwrap();
    for needle in ["failed", "Paused: F", "失敗"] {
        let page = c
            .list_page(&ListQuery {
                text: needle.into(),
                ..summary_page(100)
            })
            .await
            .unwrap();
        let names: Vec<_> = page.operations.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["op-broken"], "{path:?}: {needle}");
    }
    // The kind's words too: every one of them is a Talos upgrade.
    let upgrades = c
        .list_page(&ListQuery {
            text: "talos upgrade".into(),
            ..summary_page(100)
        })
        .await
        .unwrap();
    assert_eq!(upgrades.total, 21, "{path:?}");
}

async fn an_unchanged_list_comes_back_empty_and_a_change_comes_back_whole(path: Path) {
    let api = history(30);
    let c = connect(path, &api, User::Viewer).await;
    let first = c.list_page(&summary_page(10)).await.unwrap();
    assert!(!first.unchanged);
    let again = ListQuery {
        known_version: Some(first.version.clone()),
        ..summary_page(10)
    };
    let same = c.list_page(&again).await.unwrap();
    assert!(same.unchanged);
    assert!(same.operations.is_empty());
    assert_eq!(same.total, 30);
    assert_eq!(same.next_page_token, first.next_page_token);
    // The controller moves the newest operation on: the page is sent again.
    let ops: kube::Api<TalosOperation> = kube::Api::namespaced(
        api.client(ichor_demo::apiserver::auth::users::ADMIN_TOKEN),
        "default",
    );
    ops.patch_status(
        "op-0029",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(serde_json::json!({"status": {"phase": "Failed"}})),
    )
    .await
    .unwrap();
    let changed = c.list_page(&again).await.unwrap();
    assert!(!changed.unchanged);
    assert_eq!(changed.operations.len(), 10);
    assert_eq!(changed.operations[0].phase, Phase::Failed);
    assert_ne!(changed.version, first.version);
}

async fn bad_pages_and_filters_are_refused_before_anything_is_read(path: Path) {
    let api = history(3);
    let c = connect(path, &api, User::Viewer).await;
    let token = c
        .list_page(&summary_page(1))
        .await
        .unwrap()
        .next_page_token
        .unwrap();
    let reads_before = api.request_count();
    for (q, what) in [
        (
            ListQuery {
                page_token: Some(token.clone()),
                cluster: Some("c1".into()),
                ..summary_page(1)
            },
            "page_token",
        ),
        (
            // A token of the default order, given with another order.
            ListQuery {
                page_token: Some(token.clone()),
                order: ichor_model::Order {
                    by: ichor_model::SortBy::Name,
                    reversed: false,
                },
                ..summary_page(1)
            },
            "page_token",
        ),
        (
            ListQuery {
                page_token: Some("\u{1b}]0;pwned\u{7}".into()),
                ..summary_page(1)
            },
            "page_token",
        ),
        (
            ListQuery {
                text: "x".repeat(500),
                ..summary_page(1)
            },
            "filter",
        ),
        (
            ListQuery {
                phases: vec![Phase::Other("Exploded".into())],
                ..summary_page(1)
            },
            "phases",
        ),
    ] {
        let e = c.list_page(&q).await.unwrap_err();
        assert_eq!(
            (e.code, e.reason, e.param("what")),
            (
                Code::InvalidArgument,
                Some(Reason::InvalidQuery),
                Some(what)
            ),
            "{e:?}"
        );
        assert!(!e.message.contains('\u{1b}') && !e.message.contains("xxxxxxxxxx"));
    }
    // Each was refused before anything was read.
    assert_eq!(api.request_count(), reads_before);
    assert!(api.write_log().is_empty());
}

crate::matrix!(
    pages_walk_the_whole_list_newest_first_as_summaries,
    filters_apply_on_the_server_before_paging,
    an_unchanged_list_comes_back_empty_and_a_change_comes_back_whole,
    bad_pages_and_filters_are_refused_before_anything_is_read,
    pages_walk_the_whole_list_in_every_order,
);

/// Every order of the list, walked page by page on every path: each operation once, in that
/// order (the server orders; the client only follows the tokens).
async fn pages_walk_the_whole_list_in_every_order(path: Path) {
    use ichor_model::{Order, SortBy};
    let api = history(13);
    let c = connect(path, &api, User::Viewer).await;
    let all = c.list_operations(Some("default")).await.unwrap();
    for by in [SortBy::Age, SortBy::Name, SortBy::State] {
        for reversed in [false, true] {
            let order = Order { by, reversed };
            let mut sorted = all.clone();
            sorted.sort_by(|a, b| order.cmp(a, b));
            let expected: Vec<String> = sorted.into_iter().map(|o| o.name).collect();
            let mut q = ListQuery {
                order,
                ..summary_page(4)
            };
            let mut names = Vec::new();
            loop {
                let p = c.list_page(&q).await.unwrap();
                names.extend(p.operations.into_iter().map(|o| o.name));
                match p.next_page_token {
                    Some(t) => q.page_token = Some(t),
                    None => break,
                }
            }
            assert_eq!(names, expected, "{order:?}");
        }
    }
    // Running first by state, and the other way last.
    let state = |reversed| ListQuery {
        order: Order {
            by: SortBy::State,
            reversed,
        },
        ..summary_page(1)
    };
    let first = c.list_page(&state(false)).await.unwrap();
    assert_eq!(first.operations[0].phase, Phase::Running);
    let first = c.list_page(&state(true)).await.unwrap();
    assert_eq!(first.operations[0].phase, Phase::Completed);
}
