//! `kubectl get -w` and the controller's Events, as kubectl shows them for a real controller.

use super::*;

/// A kubectl that runs until killed (`get -w`), its output read line by line as it comes.
struct Follower {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Follower {
    fn start(kubeconfig: &Path, args: &[&str]) -> Follower {
        let mut child = Command::new("kubectl")
            .env("KUBECONFIG", kubeconfig)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let (tx, lines) = std::sync::mpsc::channel();
        for out in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { return };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        Follower {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits up to 20 s for a line that `want` accepts; panics with everything seen.
    fn until(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if want(&line) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("{what}: kubectl printed\n{}", self.seen.join("\n"));
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn operation_yaml(name: &str, cluster: &str, kind: &str) -> String {
    format!(
        "apiVersion: ichor.maesh.dev/v1alpha1\nkind: TalosOperation\nmetadata:\n  name: {name}\nspec:\n  cluster: {cluster}\n  kind: {kind}\n"
    )
}

/// `kubectl get top -w`: the list, then a row for an operation created while it watches,
/// and rows as the controller moves it on. With a name, the watch is that object's only.
#[test]
fn kubectl_get_watch_prints_rows_for_changes() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let mut all = Follower::start(kc, &["get", "top", "-w"]);
    all.until("the list", |l| l.contains("staging-cni-p2m8v"));
    let mut one = Follower::start(kc, &["get", "top", "edge-tokyo-ichor-b5n2s", "-w"]);
    one.until("the object", |l| l.contains("edge-tokyo-ichor-b5n2s"));
    let (ok, out) = kubectl(
        kc,
        &["create", "-f", "-"],
        Some(&operation_yaml(
            "prod-eu-kubernetes-watched",
            "prod-eu",
            "kubernetes",
        )),
    );
    assert!(ok, "{out}");
    let row = all.until("a row for the new operation", |l| {
        l.starts_with("prod-eu-kubernetes-watched")
    });
    assert!(
        row.contains("prod-eu") && row.contains("kubernetes"),
        "{row}"
    );
    all.until("the controller starting it", |l| {
        l.starts_with("prod-eu-kubernetes-watched") && l.contains("Running")
    });
    assert!(
        !all.seen
            .iter()
            .any(|l| l.contains("error") || l.contains("Table")),
        "{:?}",
        all.seen
    );
    // The named watch saw nothing of it: a change of its own object, made after, comes to it
    // after anything the creation would have brought.
    let (ok, out) = kubectl(
        kc,
        &[
            "annotate",
            "top",
            "edge-tokyo-ichor-b5n2s",
            "ichor-test/marker=1",
        ],
        None,
    );
    assert!(ok, "{out}");
    one.until("its own object's change", |l| {
        l.starts_with("edge-tokyo-ichor-b5n2s")
    });
    assert!(
        !one.seen
            .iter()
            .any(|l| l.contains("prod-eu-kubernetes-watched")),
        "{:?}",
        one.seen
    );
}

/// `kubectl get top -w -o json`: each change printed as the object itself.
#[test]
fn kubectl_get_watch_as_json() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let mut w = Follower::start(kc, &["get", "top", "-w", "-o", "json"]);
    w.until("the objects", |l| {
        l.contains("\"name\": \"staging-cni-p2m8v\"")
    });
    let (ok, out) = kubectl(
        kc,
        &["create", "-f", "-"],
        Some(&operation_yaml("prod-eu-ichor-json", "prod-eu", "ichor")),
    );
    assert!(ok, "{out}");
    w.until("the new operation as JSON", |l| {
        l.contains("\"name\": \"prod-eu-ichor-json\"")
    });
    w.until("its status as the controller writes it", |l| {
        l.contains("\"phase\": \"Completed\"")
    });
}

/// Waits up to 20 s for `kubectl get top NAME -o jsonpath={.status.phase}` to say `phase`.
fn wait_for_phase(kc: &Path, name: &str, phase: &str) {
    for _ in 0..200 {
        let (_, out) = kubectl(
            kc,
            &["get", "top", name, "-o", "jsonpath={.status.phase}"],
            None,
        );
        if out == phase {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{name} never reached {phase}");
}

/// The controller's Events: `kubectl get events` (with a field selector, and `-w`) and
/// `kubectl describe top NAME`, as for a real controller's.
#[test]
fn kubectl_shows_the_controllers_events() {
    if !kubectl_available() {
        return;
    }
    let dc = start();
    let kc = dc.kubeconfig.as_path();
    let mut w = Follower::start(kc, &["get", "events", "-w"]);
    let (ok, out) = kubectl(
        kc,
        &["create", "-f", "-"],
        Some(&operation_yaml(
            "prod-eu-kubernetes-events",
            "prod-eu",
            "kubernetes",
        )),
    );
    assert!(ok, "{out}");
    w.until("the Started event, as it is recorded", |l| {
        l.contains("Started") && l.contains("talosoperation/prod-eu-kubernetes-events")
    });
    wait_for_phase(kc, "prod-eu-kubernetes-events", "Completed");

    let (ok, out) = kubectl(kc, &["get", "events"], None);
    assert!(ok, "{out}");
    let header = out.lines().next().unwrap_or_default();
    for col in ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        out.lines().any(|l| l.contains("Normal")
            && l.contains("StepCompleted")
            && l.contains("machine/prod-eu-cp1")),
        "{out}"
    );
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=prod-eu-kubernetes-events",
        ],
        None,
    );
    assert!(ok, "{out}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert!(
        rows.iter()
            .all(|l| l.contains("talosoperation/prod-eu-kubernetes-events")),
        "{out}"
    );
    for reason in ["Started", "Completed"] {
        assert!(rows.iter().any(|l| l.contains(reason)), "{reason}: {out}");
    }

    let (ok, out) = kubectl(kc, &["describe", "top", "prod-eu-kubernetes-events"], None);
    assert!(ok, "{out}");
    let events = out
        .split_once("Events:")
        .map(|(_, e)| e)
        .unwrap_or_else(|| panic!("no Events in\n{out}"));
    for word in ["Started", "Completed", "ichor-controller"] {
        assert!(events.contains(word), "{word}: {out}");
    }
    // A machine that failed: a Warning, on the paused operation and on the machine.
    let (ok, out) = kubectl(kc, &["describe", "top", "edge-tokyo-talos-m4q9z"], None);
    assert!(
        ok && out.contains("Warning") && out.contains("MachineFailed"),
        "{out}"
    );
    let (ok, out) = kubectl(kc, &["describe", "machine", "edge-tokyo-w03"], None);
    assert!(
        ok && out.contains("Warning") && out.contains("StepFailed"),
        "{out}"
    );
    // Who may not read Events is told so.
    let (ok, out) = kubectl(
        kc,
        &[
            "get",
            "events",
            "--as",
            "operations-reader",
            "--as-group",
            "ichor:operation-readers",
        ],
        None,
    );
    assert!(
        !ok && out.contains("cannot list resource \"events\""),
        "{out}"
    );
}
