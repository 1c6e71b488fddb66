//! `deploy/` exercised: every manifest of the kustomize base read into k8s-openapi's types with
//! nothing left over, and the base and each overlay built by `kubectl kustomize` and read the
//! same way; the Deployment's container run with exactly its args and env and asked what its
//! probes ask, the image built from the Containerfile and its entrypoint run from the exported
//! filesystem, the ClusterRole proven least privilege in both modes, and the health endpoints
//! and logs serve gives a kubelet and a log collector.

#[path = "deploy/health.rs"]
mod health;
#[path = "deploy/image.rs"]
mod image;
#[path = "deploy/kustomize.rs"]
mod kustomize;
#[path = "deploy/least_privilege.rs"]
mod least_privilege;
#[path = "deploy/logs.rs"]
mod logs;
#[path = "deploy/manifests.rs"]
mod manifests;
#[path = "deploy/pod.rs"]
mod pod;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, Service, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's `deploy/`.
fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// The kustomize base: `deploy/base`.
fn base_dir() -> PathBuf {
    deploy_dir().join("base")
}

/// Every YAML document of the base's resources (the files its kustomization.yaml names, in
/// that order), with its file's name: what `kubectl apply -k deploy/base` applies, before
/// kustomize sets the namespace (which every namespaced one already names).
fn documents() -> Vec<(String, Value)> {
    let read = |name: &str| -> Vec<Value> {
        let text = std::fs::read_to_string(base_dir().join(name)).unwrap();
        serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{name} is not YAML: {e}"))
    };
    let kustomization = read("kustomization.yaml").remove(0);
    let files = kustomization["resources"].as_array().expect("resources");
    let mut docs = Vec::new();
    for file in files {
        let name = file.as_str().unwrap().to_string();
        docs.extend(read(&name).into_iter().map(|v| (name.clone(), v)));
    }
    docs
}

/// The manifests, each read into its k8s-openapi type.
struct Manifests {
    service_account: ServiceAccount,
    cluster_role: ClusterRole,
    binding: ClusterRoleBinding,
    deployment: Deployment,
    service: Service,
    budget: PodDisruptionBudget,
    network_policy: NetworkPolicy,
}

impl Manifests {
    fn read() -> Manifests {
        let docs = documents();
        let one = |kind: &str| -> (String, Value) {
            let of_kind: Vec<_> = docs
                .iter()
                .filter(|(_, d)| d["kind"] == kind)
                .cloned()
                .collect();
            assert_eq!(of_kind.len(), 1, "one {kind} in deploy/base");
            of_kind.into_iter().next().unwrap()
        };
        Manifests {
            service_account: manifests::strictly(&one("ServiceAccount")),
            cluster_role: manifests::strictly(&one("ClusterRole")),
            binding: manifests::strictly(&one("ClusterRoleBinding")),
            deployment: manifests::strictly(&one("Deployment")),
            service: manifests::strictly(&one("Service")),
            budget: manifests::strictly(&one("PodDisruptionBudget")),
            network_policy: manifests::strictly(&one("NetworkPolicy")),
        }
    }

    /// The Deployment's one container.
    fn container(&self) -> &Container {
        let pod = self
            .deployment
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref();
        let containers = &pod.unwrap().containers;
        assert_eq!(containers.len(), 1, "one container");
        &containers[0]
    }

    /// The container's port of that name.
    fn port(&self, name: &str) -> u16 {
        let ports = self.container().ports.as_ref().unwrap();
        let port = ports
            .iter()
            .find(|p| p.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("a container port named {name}"));
        u16::try_from(port.container_port).unwrap()
    }
}

/// Whether `tool ARGS` runs here. Where it does not: a notice and `false`, unless `$CI` is set
/// (`.ci/run` installs it), when the test fails.
fn present(tool: &str, args: &[&str]) -> bool {
    let runs = Command::new(tool)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        assert!(
            std::env::var_os("CI").is_none(),
            "{tool} is missing but CI is set: .ci/run installs it"
        );
        eprintln!("skipping: {tool} {} does not run here", args.join(" "));
    }
    runs
}

/// `curl -sS -i URL` (at most 10 s), in network namespace `netns` when given: the status code
/// and the body.
fn get(netns: Option<&Path>, url: &str) -> (u16, String) {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("nsenter");
            c.arg(format!("--net={}", ns.display()))
                .arg("--")
                .arg("curl");
            c
        }
        None => Command::new("curl"),
    };
    let out = cmd
        .args([
            "-sS",
            "--max-time",
            "10",
            "-o",
            "-",
            "-w",
            "\n%{http_code}",
            url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "curl {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (code.trim().parse().unwrap(), body.to_string())
}

/// A child process, killed when dropped.
struct Proc(std::process::Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    /// Starts `cmd` (its stdout piped) and waits, at most a minute, for each of `lines` to
    /// begin a line of its stdout, in turn: the process and those lines. The rest of its
    /// stdout is read and dropped.
    fn start_saying(mut cmd: Command, lines: &[&str]) -> (Proc, Vec<String>) {
        use std::io::BufRead as _;
        cmd.stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let proc = Proc(child);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let mut said = Vec::new();
        for want in lines {
            let line = loop {
                let line = rx
                    .recv_timeout(std::time::Duration::from_secs(60))
                    .unwrap_or_else(|_| panic!("{cmd:?} said {said:?}, then not {want:?}"));
                if line.starts_with(want) {
                    break line;
                }
            };
            said.push(line);
        }
        (proc, said)
    }
}

/// A kubeconfig naming the API at `server` with `token`.
fn kubeconfig(server: &str, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n\
         contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n\
         users:\n- name: u\n  user:\n    token: {token}\n"
    )
}
