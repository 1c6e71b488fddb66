//! Who did what (issue 43), through the built binary: one person pauses an operation and
//! another resumes it, each through their own kubeconfig context to the same embedded API; the
//! page in a pty, `operation get` and the report (Markdown and JSON) name both, each with the
//! moment they asked; the Events name them too.

use crate::cli_verbs::cli_verbs_process::Cluster;
use crate::cli_verbs::seed;

/// The embedded API with operation `up` running on cluster c1, and a kubeconfig whose contexts
/// `admin` and `operator` are two people reaching it.
fn two_people() -> Cluster {
    use ichor_demo::apiserver::auth::users;
    let c = Cluster::new();
    seed(&c.api, "up", "Running", None);
    let url = c.url.clone();
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n\
- name: demo\n  cluster:\n    server: {url}\n\
contexts:\n\
- name: admin\n  context:\n    cluster: demo\n    user: admin\n    namespace: default\n\
- name: operator\n  context:\n    cluster: demo\n    user: operator\n    namespace: default\n\
current-context: admin\nusers:\n\
- name: admin\n  user:\n    token: {admin}\n\
- name: operator\n  user:\n    token: {operator}\n",
        admin = users::ADMIN_TOKEN,
        operator = users::OPERATOR_TOKEN,
    );
    std::fs::write(&c.kubeconfig, kubeconfig).unwrap();
    c
}

/// Runs `args` through the kubeconfig (in-process), exit 0 asserted; its stdout.
fn ok(c: &Cluster, args: &[&str]) -> String {
    let (code, out, err) = c.run(args, true);
    assert_eq!(code, 0, "{args:?}: {out}\n{err}");
    out
}

#[test]
fn a_pause_by_one_person_and_a_resume_by_another_are_both_named_everywhere() {
    use ichor_demo::apiserver::auth::users;
    let c = two_people();
    ok(&c, &["op", "pause", "up", "--yes", "--context", "operator"]);
    ok(&c, &["op", "resume", "up", "--yes", "--context", "admin"]);
    let (op, admin) = (users::OPERATOR, users::ADMIN);
    let paused = format!("pause asked by {op}");
    let resumed = format!("resume asked by {admin}");

    // operation get: one History fact with both, in order.
    let got = ok(&c, &["op", "get", "up"]);
    let history = got
        .lines()
        .find(|l| l.starts_with("History"))
        .unwrap_or_else(|| panic!("no History line:\n{got}"));
    let (p, r) = (history.find(&paused), history.find(&resumed));
    assert!(p.is_some() && r.is_some() && p < r, "{history}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&c, &["op", "get", "up", "-o", "json"])).unwrap();
    let actions: Vec<(&str, &str)> = json["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["actor"].as_str().unwrap()))
        .collect();
    assert_eq!(actions, [("pause", op), ("resume", admin)], "{json}");

    // The report's timeline, Markdown and JSON.
    let md = ok(&c, &["op", "report", "up"]);
    let timeline = md
        .split("## Timeline")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .unwrap_or_else(|| panic!("no timeline:\n{md}"));
    for said in [&paused, &resumed] {
        let line = timeline.lines().find(|l| l.contains(said.as_str()));
        assert!(
            line.is_some_and(|l| l.starts_with("- 20")),
            "{said}:\n{timeline}"
        );
    }
    let report: serde_json::Value =
        serde_json::from_str(&ok(&c, &["op", "report", "up", "-o", "json"])).unwrap();
    assert_eq!(report["history"], json["history"], "{report}");

    // Each write an Event naming its person.
    let events: Vec<(String, String)> = c.rt.block_on(async {
        use k8s_openapi::api::core::v1::Event;
        let api: kube::Api<Event> =
            kube::Api::namespaced(c.api.client(users::ADMIN_TOKEN), "default");
        let list = api.list(&Default::default()).await.unwrap();
        list.items
            .into_iter()
            .map(|e| (e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
            .collect()
    });
    for (reason, who) in [("PauseRequested", op), ("ResumeRequested", admin)] {
        assert!(
            events
                .iter()
                .any(|(r, m)| r == reason && m.contains(&format!("by {who}"))),
            "{events:?}"
        );
    }

    // The page, in a terminal, says both.
    let mut p = c.pty(&["--context", "admin"]);
    p.wait_for("the list, its row selected", |s| s.contains("> up "));
    p.send("\r");
    p.wait_for("the page's history", |s| {
        s.contains("History") && s.contains(&paused) && s.contains(&resumed)
    });
    p.send("q");
    assert_eq!(p.wait_exit(), 0);
}
