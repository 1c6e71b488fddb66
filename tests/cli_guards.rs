//! A production context's guard on the commands (issue 38), on every path: every write (pause,
//! resume, delete, every start) asks for the cluster's name typed; `--yes` writes only with
//! `--confirm-cluster NAME` naming the write's cluster; a `--confirm-cluster` that names another
//! cluster is refused in any context. Every refusal asserts the write log is empty.

use crate::cli_verbs::{Guard, Ran, Typed, ran_as, seed, start, world};
use crate::common;

use common::names;
use common::paths::{Path, User, dashboard_client};
use ichor_model::{OperationClient, OperationKind};
use ichor_tui::cli::verbs::Exit;
use ichor_tui::cli::verbs::args::{Verb, WriteKind};
use ichor_views::i18n::Lang;
use std::time::Duration;

/// Runs `verb` in `default` on `client` as the binary does, guarded by `guard`.
pub async fn ran_guarded(
    client: &dyn OperationClient,
    verb: Verb,
    typed: Option<Typed>,
    lang: Lang,
    guard: Guard<'_>,
) -> Ran {
    ran_as(client, verb, typed, lang, Duration::from_millis(40), guard).await
}

fn pause(yes: bool) -> Verb {
    Verb::Write {
        kind: WriteKind::Pause,
        name: "up".into(),
        yes,
    }
}

const PRODUCTION: Guard<'static> = Guard {
    production: Some("prod-eu-admin"),
    confirm: None,
};

async fn in_production_a_write_needs_the_cluster_named(path: Path) {
    let api = world();
    seed(&api, "up", "Running", None);
    let c = dashboard_client(path, &api, User::Admin, Duration::from_secs(5)).await;
    // --yes alone: refused before anything is written, exit 2.
    let r = ran_guarded(c.as_ref(), pause(true), None, Lang::En, PRODUCTION).await;
    assert_eq!(r.exit, Exit::Usage, "{path:?}: {}", r.err);
    assert_eq!(
        r.err.trim(),
        "Context prod-eu-admin is production: --yes writes only with --confirm-cluster NAME naming the cluster. Nothing was written."
    );
    // --yes with another cluster named.
    let other = Guard {
        confirm: Some("c2"),
        ..PRODUCTION
    };
    let r = ran_guarded(c.as_ref(), pause(true), None, Lang::En, other).await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.err);
    assert!(
        r.err.contains("--confirm-cluster c2 is not c1"),
        "{}",
        r.err
    );
    // Asked: a name that is not the cluster's.
    let typed = Some(Typed::new("c2\ny\n"));
    let r = ran_guarded(c.as_ref(), pause(false), typed, Lang::En, PRODUCTION).await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.err);
    assert!(
        r.err.contains("Context prod-eu-admin is production"),
        "{}",
        r.err
    );
    assert!(api.write_log().is_empty(), "{path:?}: no write");
    // The name typed, then y: the pause is written.
    let typed = Some(Typed::new("c1\ny\n"));
    let r = ran_guarded(c.as_ref(), pause(false), typed, Lang::Ja, PRODUCTION).await;
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
    assert!(
        r.err.contains("コンテキスト prod-eu-admin は本番環境です"),
        "{}",
        r.err
    );
    assert_eq!(
        names(&api.write_log()),
        ["patch talosoperations by admin"],
        "{path:?}"
    );
}

async fn in_production_a_start_needs_the_cluster_named(path: Path) {
    let api = world();
    let c = dashboard_client(path, &api, User::Admin, Duration::from_secs(5)).await;
    let talos = |yes| start(OperationKind::Talos, "c1", Some("v1.9.3"), yes);
    let r = ran_guarded(c.as_ref(), talos(true), None, Lang::En, PRODUCTION).await;
    assert_eq!(r.exit, Exit::Usage, "{path:?}: {}", r.err);
    let typed = Some(Typed::new("prod\ny\n"));
    let r = ran_guarded(c.as_ref(), talos(false), typed, Lang::En, PRODUCTION).await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.err);
    assert!(r.out.contains("Plan: Talos upgrade on cluster c1"));
    assert!(api.write_log().is_empty(), "{path:?}: no write");
    let named = Guard {
        confirm: Some("c1"),
        ..PRODUCTION
    };
    let r = ran_guarded(c.as_ref(), talos(true), None, Lang::En, named).await;
    assert_eq!(r.exit, Exit::Done, "{path:?}: {}", r.err);
    let created = names(&api.write_log())
        .into_iter()
        .filter(|w| w.starts_with("create talosoperations"))
        .count();
    assert_eq!(created, 1, "{path:?}");
}

async fn a_cluster_named_to_confirm_must_be_the_writes_in_any_context(path: Path) {
    let api = world();
    seed(&api, "up", "Running", None);
    let c = dashboard_client(path, &api, User::Admin, Duration::from_secs(5)).await;
    let other = Guard {
        production: None,
        confirm: Some("c2"),
    };
    let r = ran_guarded(c.as_ref(), pause(true), None, Lang::En, other).await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.err);
    let verb = start(OperationKind::Talos, "c1", Some("v1.9.3"), true);
    let r = ran_guarded(c.as_ref(), verb, None, Lang::En, other).await;
    assert_eq!(r.exit, Exit::Refused, "{path:?}: {}", r.err);
    assert!(api.write_log().is_empty(), "{path:?}: no write");
}

crate::matrix!(
    in_production_a_write_needs_the_cluster_named,
    in_production_a_start_needs_the_cluster_named,
    a_cluster_named_to_confirm_must_be_the_writes_in_any_context,
);
