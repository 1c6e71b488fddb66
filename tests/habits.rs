//! The k9s habits operators reach for: `:ns NAME`, `:ops CLUSTER`, Ctrl-D, and `R` saying it
//! ran; driven against the in-process service over the embedded API, so the server's answers
//! (a namespace's list, a cluster's pages) are real.

use crate::common;

use common::driver::Driver;
use common::fixtures;
use common::paths::{Path, User, connect};
use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::state::{Dialog, Notice, Screen, State};
use ichor_demo::apiserver::EmbeddedApi;

fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
}

/// Cluster c1 in `default` with two operations, one of cluster c2, and one in `platform`.
fn world() -> EmbeddedApi {
    let api = EmbeddedApi::default();
    common::small_cluster(&api);
    for (name, cluster, namespace) in [
        ("c1-talos-a", "c1", "default"),
        ("c1-talos-b", "c1", "default"),
        ("c2-talos-a", "c2", "default"),
        ("p1-talos-a", "p1", "platform"),
    ] {
        let mut o = common::op(name, cluster, "talos", 1);
        o.metadata.namespace = Some(namespace.into());
        o.status = Some(ichor_resources::TalosOperationStatus {
            phase: "Completed".into(),
            ..Default::default()
        });
        api.seed(&o).unwrap();
    }
    api
}

async fn dashboard(api: &EmbeddedApi) -> Driver {
    let client = connect(Path::InProcess, api, User::Admin).await;
    Driver::new(fixtures::state(), client).await
}

async fn command(d: &mut Driver, line: &str) {
    d.key(Key::ch(':')).await;
    d.type_text(line).await;
    d.code(KeyCode::Enter).await;
}

fn names(s: &State) -> Vec<String> {
    let mut n: Vec<String> = s
        .ops
        .all
        .data
        .iter()
        .flatten()
        .map(|o| o.name.clone())
        .collect();
    n.sort();
    n
}

#[tokio::test]
async fn ns_switches_the_namespace_listed_and_asks_what_may_be_done_there() {
    let api = world();
    let mut d = dashboard(&api).await;
    assert_eq!(names(&d.state), ["c1-talos-a", "c1-talos-b", "c2-talos-a"]);
    let asked = d.effects.len();
    command(&mut d, "ns platform").await;
    assert_eq!(d.state.session.namespace, "platform");
    assert_eq!(names(&d.state), ["p1-talos-a"]);
    assert!(
        d.effects[asked..]
            .iter()
            .any(|e| matches!(e, Effect::Permissions { namespace } if namespace == "platform")),
        "what the caller may do there is asked"
    );
    // `:ns all`: every namespace, as -A.
    command(&mut d, "ns all").await;
    assert!(d.state.session.all_namespaces);
    assert_eq!(names(&d.state).len(), 4);
    command(&mut d, "ns default").await;
    assert_eq!(names(&d.state).len(), 3);
    assert!(!d.effects.iter().any(Effect::is_write));
}

#[tokio::test]
async fn ns_alone_or_with_a_bad_name_says_what_can_be_typed_and_asks_nothing() {
    let api = world();
    let mut d = dashboard(&api).await;
    let before = d.state.session.clone();
    let asked = d.effects.len();
    command(&mut d, "ns").await;
    assert_eq!(d.state.notice, Some(Notice::NamespaceUsage));
    snap("ns_usage", &d.state);
    command(&mut d, "ns Not_A_Namespace").await;
    assert_eq!(
        d.state.notice,
        Some(Notice::BadNamespace("Not_A_Namespace".into()))
    );
    snap("ns_invalid", &d.state);
    assert_eq!(d.state.session, before);
    assert_eq!(d.effects[asked..], [], "nothing was asked of the server");
}

#[tokio::test]
async fn ops_cluster_lists_that_clusters_operations_on_every_page_and_in_the_watch() {
    let api = world();
    let mut d = dashboard(&api).await;
    d.key(Key::ch('2')).await;
    let asked = d.effects.len();
    command(&mut d, "ops c1").await;
    assert_eq!(d.state.screen, Screen::Operations);
    assert_eq!(d.state.ops.cluster.as_deref(), Some("c1"));
    assert_eq!(names(&d.state), ["c1-talos-a", "c1-talos-b"]);
    // The server filters: the list query, and the subscription, name the cluster.
    let queries: Vec<_> = d.effects[asked..]
        .iter()
        .filter_map(|e| match e {
            Effect::ListOperations { query, .. } => Some(query.cluster.clone()),
            Effect::Watch { request, .. } => Some(request.list.cluster.clone()),
            _ => None,
        })
        .collect();
    assert!(!queries.is_empty());
    assert!(
        queries.iter().all(|c| c.as_deref() == Some("c1")),
        "{queries:?}"
    );
    snap("ops_cluster", &d.state);
    command(&mut d, "ops nowhere").await;
    assert_eq!(names(&d.state), Vec::<String>::new());
    snap("ops_cluster_empty", &d.state);
    // `:ops` alone: every cluster's again.
    command(&mut d, "ops").await;
    assert_eq!(d.state.ops.cluster, None);
    assert_eq!(names(&d.state).len(), 3);
}

#[tokio::test]
async fn ctrl_d_asks_as_d_does_and_writes_nothing_without_y() {
    let api = world();
    let mut d = dashboard(&api).await;
    api.clear_write_log();
    d.key(Key::ctrl('d')).await;
    assert!(
        matches!(d.state.dialog, Some(Dialog::Confirm(_))),
        "{:?}",
        d.state.dialog
    );
    d.code(KeyCode::Enter).await;
    assert_eq!(d.state.dialog, None, "No is the default");
    assert!(!d.effects.iter().any(Effect::is_write));
    assert_eq!(common::names(&api.write_log()), Vec::<String>::new());
    d.key(Key::ctrl('d')).await;
    d.key(Key::ch('y')).await;
    assert!(
        common::names(&api.write_log())
            .iter()
            .any(|w| w.starts_with("delete talosoperations")),
        "deleted once asked"
    );
}

#[tokio::test]
async fn r_says_refreshed_once_the_refresh_answers() {
    let api = world();
    let mut d = dashboard(&api).await;
    assert_eq!(d.state.notice, None);
    // The key alone says nothing: the answer does.
    let effects = ichor_app::update::update(&mut d.state, Action::Key(Key::ch('R')));
    assert_eq!(d.state.notice, None);
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::ListOperations { .. }))
    );
    d.key(Key::ch('R')).await;
    assert_eq!(d.state.notice, Some(Notice::Refreshed));
    snap("refreshed", &d.state);
    // The next key clears it.
    d.key(Key::ch('j')).await;
    assert_eq!(d.state.notice, None);
    // On the Clusters list too.
    d.key(Key::ch('2')).await;
    d.key(Key::ch('R')).await;
    assert_eq!(d.state.notice, Some(Notice::Refreshed));
}

fn in_order(s: &State) -> Vec<String> {
    s.ops
        .all
        .data
        .iter()
        .flatten()
        .map(|o| o.name.clone())
        .collect()
}

#[tokio::test]
async fn shift_letters_order_the_list_on_the_server_and_again_the_other_way() {
    use ichor_model::{Order, SortBy};
    let api = world();
    let mut d = dashboard(&api).await;
    let asked = d.effects.len();
    d.key(Key::ch('N')).await;
    let name = Order {
        by: SortBy::Name,
        reversed: false,
    };
    assert_eq!(d.state.ops.order, name);
    assert_eq!(
        in_order(&d.state),
        ["c1-talos-a", "c1-talos-b", "c2-talos-a"]
    );
    // The server orders: the list query and the subscription carry the order.
    let orders: Vec<Order> = d.effects[asked..]
        .iter()
        .filter_map(|e| match e {
            Effect::ListOperations { query, .. } => Some(query.order),
            Effect::Watch { request, .. } => Some(request.list.order),
            _ => None,
        })
        .collect();
    assert!(
        !orders.is_empty() && orders.iter().all(|o| *o == name),
        "{orders:?}"
    );
    snap("sorted_by_name", &d.state);
    d.key(Key::ch('N')).await;
    assert!(d.state.ops.order.reversed);
    assert_eq!(
        in_order(&d.state),
        ["c2-talos-a", "c1-talos-b", "c1-talos-a"]
    );
    snap("sorted_by_name_reversed", &d.state);
    d.key(Key::ch('S')).await;
    assert_eq!(
        d.state.ops.order,
        Order {
            by: SortBy::State,
            reversed: false
        }
    );
    // Shift-A from another column: by age, newest first (the default, no marker).
    d.key(Key::ch('A')).await;
    assert_eq!(d.state.ops.order, Order::default());
    d.key(Key::ch('A')).await;
    assert_eq!(
        d.state.ops.order,
        Order {
            by: SortBy::Age,
            reversed: true
        }
    );
    assert!(!d.effects.iter().any(Effect::is_write));
}
