//! Production follows the API server (issue 43), through the built binary: a kubeconfig with
//! two contexts to one API server (its URL spelt two ways), the config marking one of them,
//! `ichor-prod`, by its name. A write through the other, `operator`, is guarded as one through
//! `ichor-prod` is: the cluster's name asked for in a terminal, `--yes` refused without
//! `--confirm-cluster` (exit 2), with `--server` too (the kubeconfig's context decides); `:ctx
//! operator` in the dashboard keeps the guard. The embedded API's write log is empty after each
//! refusal.

use crate::cli_verbs::cli_verbs_process::Cluster;
use crate::cli_verbs::seed;
use crate::common::server;

/// The embedded API with operation `up` running on cluster c1, a kubeconfig whose contexts
/// `ichor-prod` (the admin) and `operator` reach it through two clusters that spell its URL
/// differently (a third, `elsewhere`, reaches another server), and a config marking
/// `ichor-prod` production by name. Returns the cluster, the config file and the API's URL as
/// the kubeconfig spells it for `ichor-prod`.
fn production() -> (Cluster, String, String) {
    use ichor_demo::apiserver::auth::users;
    let c = Cluster::new();
    seed(&c.api, "up", "Running", None);
    let url = c.url.clone();
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n\
- name: prod\n  cluster:\n    server: {url}\n\
- name: prod-again\n  cluster:\n    server: {url}/\n\
- name: other\n  cluster:\n    server: http://127.0.0.1:1\n\
contexts:\n\
- name: ichor-prod\n  context:\n    cluster: prod\n    user: admin\n    namespace: default\n\
- name: operator\n  context:\n    cluster: prod-again\n    user: operator\n    namespace: default\n\
- name: elsewhere\n  context:\n    cluster: other\n    user: admin\n    namespace: default\n\
current-context: ichor-prod\nusers:\n\
- name: admin\n  user:\n    token: {admin}\n\
- name: operator\n  user:\n    token: {operator}\n    as: {op}\n    as-groups:\n    - ichor:operators\n",
        admin = users::ADMIN_TOKEN,
        operator = users::OPERATOR_TOKEN,
        op = users::OPERATOR,
    );
    std::fs::write(&c.kubeconfig, kubeconfig).unwrap();
    let config = c.home.path().join("config.toml");
    std::fs::write(
        &config,
        "[[contexts]]\nmatch = \"ichor-prod\"\nproduction = true\n",
    )
    .unwrap();
    (c, config.display().to_string(), url)
}

#[test]
fn a_write_through_another_context_to_a_production_server_is_refused_without_the_name() {
    let (c, config, url) = production();
    let guarded = format!(
        "Context operator reaches API server {url}, which is production: --yes writes only with --confirm-cluster NAME naming the cluster. Nothing was written."
    );
    for args in [
        &["op", "pause", "up", "--yes"][..],
        &["op", "delete", "up", "--yes"],
        &["upgrade", "talos", "1.9.3", "--cluster", "c1", "--yes"],
    ] {
        let mut all = args.to_vec();
        all.extend(["--context", "operator", "--config", &config]);
        let (code, out, err) = c.run(&all, true);
        assert_eq!(code, 2, "{args:?}: {out}\n{err}");
        assert!(err.lines().any(|l| l == guarded), "{args:?}: {err}");
        assert!(c.written().is_empty(), "{args:?}: {:?}", c.written());
    }
    // The context marked by name, the same.
    let all = [
        "op",
        "pause",
        "up",
        "--yes",
        "--context",
        "ichor-prod",
        "--config",
        &config,
    ];
    let (code, _, err) = c.run(&all, true);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("Context ichor-prod reaches API server"),
        "{err}"
    );
    assert!(c.written().is_empty(), "{:?}", c.written());
    // Named, the write goes through: the guard, not something else, said no above.
    let all = [
        "op",
        "pause",
        "up",
        "--yes",
        "--confirm-cluster",
        "c1",
        "--context",
        "operator",
        "--config",
        &config,
    ];
    let (code, out, err) = c.run(&all, true);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(c.written(), ["patch talosoperations by operator"]);
}

#[test]
fn in_a_terminal_the_other_context_asks_for_the_cluster_name_and_a_wrong_one_writes_nothing() {
    let (c, config, url) = production();
    for lang in ["en", "ja"] {
        let mut p = c.pty(&[
            "op",
            "pause",
            "up",
            "--context",
            "operator",
            "--config",
            &config,
            "--lang",
            lang,
        ]);
        let (asked, typed) = match lang {
            "en" => (
                format!("Context operator reaches API server {url}, which is production"),
                "Type the cluster name c1 to confirm:",
            ),
            _ => (
                format!("コンテキスト operator の API サーバー {url} は本番環境です。"),
                "確認のため、クラスター名 c1 を入力してください：",
            ),
        };
        p.wait_text(&asked);
        p.wait_text(typed);
        p.send("c2\r");
        assert_eq!(p.wait_exit(), 1, "{}", p.screen());
        assert!(c.written().is_empty(), "{lang}: {:?}", c.written());
    }
}

#[test]
fn with_server_the_kubeconfigs_context_decides() {
    let (c, config, url) = production();
    let served = c.rt.block_on(async {
        let running = server::start(&c.api, Default::default()).await;
        let served = running.url(false);
        std::mem::forget(running);
        served
    });
    let token = c.home.path().join("token");
    std::fs::write(&token, ichor_demo::apiserver::auth::users::ADMIN_TOKEN).unwrap();
    let token = token.display().to_string();
    let remote = |context: &str, args: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend([
            "--server",
            &served,
            "--token-file",
            &token,
            "--kubeconfig",
            &c.kubeconfig,
            "--context",
            context,
            "--config",
            &config,
        ]);
        c.run(&all, false)
    };
    let (code, _, err) = remote("operator", &["op", "pause", "up", "--yes"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("Context operator reaches API server {url}")),
        "{err}"
    );
    assert!(c.written().is_empty(), "{:?}", c.written());
    // A context that is not in the kubeconfig is an error before anything is contacted.
    let (code, _, err) = remote("nowhere", &["op", "pause", "up", "--yes"]);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("kubeconfig context \"nowhere\" not found"),
        "{err}"
    );
    assert!(c.written().is_empty(), "{:?}", c.written());
}

#[test]
fn ctx_to_another_context_of_the_production_server_keeps_the_guard() {
    let (c, config, url) = production();
    let host = url.trim_start_matches("http://");
    // As the issue found it: started in the context marked by name, then `:ctx operator`.
    let mut p = c.pty(&["--config", &config]);
    p.wait_for("ichor-prod's list, in production", |s| {
        s.contains(" PRODUCTION ichor-prod ") && s.contains(&format!("API {host}"))
    });
    p.command(":ctx operator");
    p.wait_for("operator's list, in production", |s| {
        s.contains(" PRODUCTION operator ")
            && s.contains(&format!("API {host}"))
            && s.contains("> up ")
    });
    // The pause asks for the cluster's name typed; a wrong one writes nothing.
    p.send("p");
    p.wait_text("Production: type the cluster name c1 to confirm, then Enter.");
    p.send("c2\r");
    p.wait_text("Not done: the cluster name c1 was not typed. Nothing was written.");
    assert!(c.written().is_empty(), "{:?}", c.written());
    p.send("q");
    assert_eq!(p.wait_exit(), 0);
}
