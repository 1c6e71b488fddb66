//! The kubeconfig's reading and its errors, tested on files written to a temporary directory.

use super::*;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn err(r: anyhow::Result<impl std::fmt::Debug>) -> String {
    ichor_model::error_text::one_line(&r.unwrap_err())
}

const TWO: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://k:6443\n    certificate-authority: ca.pem\n\
contexts:\n- name: a\n  context:\n    cluster: c\n    user: alice\n- name: b\n  context:\n    cluster: c\n    user: bob\n\
current-context: a\nusers:\n- name: alice\n  user:\n    token: t\n- name: bob\n  user:\n    tokenFile: tok\n";

#[test]
fn the_flag_then_the_variable_then_home() {
    let home = Some(PathBuf::from("/h"));
    assert_eq!(
        paths(Some(Path::new("/f")), Some("/e".into()), home.clone()).unwrap(),
        [PathBuf::from("/f")]
    );
    assert_eq!(
        paths(None, Some("/e1::/e2".into()), home.clone()).unwrap(),
        [PathBuf::from("/e1"), PathBuf::from("/e2")]
    );
    assert_eq!(
        paths(None, Some("".into()), home).unwrap(),
        [PathBuf::from("/h/.kube/config")]
    );
    assert!(paths(None, None, None).is_err());
}

#[test]
fn a_missing_file_is_said_once_without_debug_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nope");
    let e = err(read(Some(&p)));
    let io = std::fs::read(&p).unwrap_err().to_string();
    assert_eq!(e, format!("cannot read kubeconfig {}: {io}", p.display()));
    assert_eq!(e.matches(&io).count(), 1, "{e}");
    assert!(!e.contains("'\""), "{e}");
}

#[test]
fn bad_bytes_are_refused_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes, why) in [
        (
            "latin1",
            &b"kind: Config\ncurrent-context: caf\xe9\n"[..],
            "not UTF-8 text",
        ),
        ("odd", &b"\xff\xfeA"[..], "odd number of bytes"),
        ("surrogate", &b"\xff\xfe\x00\xd8"[..], "not UTF-16 text"),
        ("bom", &b"\xef\xbb\xbf\xff"[..], "not UTF-8 text"),
    ] {
        let p = write(dir.path(), name, bytes);
        let e = err(read_file(&p));
        assert_eq!(
            e.matches(why).count(),
            1,
            "{name}: one cause, said once: {e}"
        );
        assert!(
            e.starts_with(&format!("kubeconfig {}: ", p.display())),
            "{e}"
        );
    }
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(TWO.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let p = write(dir.path(), "utf16", &utf16);
    assert_eq!(read_file(&p).unwrap().contexts.len(), 2);
}

#[test]
fn yaml_errors_name_the_file_line_and_column_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "kcfg",
        b"apiVersion: v1\nkind: Config\ncontexts: [\n  - name: a\n    context: {cluster: c\n",
    );
    let e = err(read_file(&p));
    assert_eq!(
        e,
        format!(
            "kubeconfig {}:4:3: not a kubeconfig: \"-\" is only valid inside a block",
            p.display()
        )
    );
    let p = write(dir.path(), "wrong-type", b"contexts: 7\n");
    assert_eq!(
        err(read_file(&p)),
        format!(
            "kubeconfig {}:1:11: not a kubeconfig: expected sequence start",
            p.display()
        )
    );
}

#[test]
fn relative_files_are_relative_to_the_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "kcfg", TWO.as_bytes());
    let kc = read_file(&p).unwrap();
    let ca = kc.clusters[0]
        .cluster
        .as_ref()
        .unwrap()
        .certificate_authority
        .clone();
    assert_eq!(ca, Some(dir.path().join("ca.pem").display().to_string()));
    let tok = kc.auth_infos[1]
        .auth_info
        .as_ref()
        .unwrap()
        .token_file
        .clone();
    assert_eq!(tok, Some(dir.path().join("tok").display().to_string()));
}

#[test]
fn each_context_names_the_api_server_of_its_cluster() {
    let text = "apiVersion: v1\nkind: Config\nclusters:\n\
- name: c\n  cluster:\n    server: https://k:6443\n\
- name: c-again\n  cluster:\n    server: HTTPS://K:6443/\n\
- name: odd\n  cluster:\n    server: k:6443\n\
contexts:\n\
- name: a\n  context:\n    cluster: c\n\
- name: b\n  context:\n    cluster: c-again\n\
- name: d\n  context:\n    cluster: odd\n\
- name: e\n  context:\n    cluster: absent\n";
    let loaded = LoadedKubeconfig {
        impersonate: None,
        kubeconfig: Kubeconfig::from_yaml(text).unwrap(),
        source: "/k/config".into(),
    };
    let servers: Vec<(String, Option<String>)> = loaded
        .api_servers()
        .into_iter()
        .map(|(n, s)| (n, s.map(|s| s.url())))
        .collect();
    let k = Some("https://k:6443".to_string());
    assert_eq!(
        servers,
        [
            ("a".to_string(), k.clone()),
            ("b".to_string(), k),
            ("d".to_string(), None),
            ("e".to_string(), None),
        ]
    );
}

#[test]
fn a_context_that_does_not_exist_lists_the_ones_that_do() {
    let loaded = LoadedKubeconfig {
        impersonate: None,
        kubeconfig: Kubeconfig::from_yaml(TWO).unwrap(),
        source: "/k/config".into(),
    };
    assert_eq!(loaded.context(None).unwrap(), "a");
    assert_eq!(loaded.context(Some("b")).unwrap(), "b");
    assert_eq!(loaded.user_of("b").as_deref(), Some("bob"));
    assert_eq!(
        err(loaded.context(Some("nope"))),
        "kubeconfig context \"nope\" not found in /k/config (contexts: a, b)"
    );
    let mut many = loaded.clone();
    many.kubeconfig.contexts = (0..25)
        .map(|i| kube::config::NamedContext {
            name: if i == 3 {
                format!("evil\x1b]0;x\x07{}", "y".repeat(100))
            } else {
                format!("ctx{i}")
            },
            context: None,
            other: Default::default(),
        })
        .collect();
    let e = err(many.context(Some(&"z".repeat(500))));
    assert!(e.contains("ctx0, ctx1, ctx2, evil"), "{e}");
    assert!(e.ends_with("ctx9, and 15 more)"), "{e}");
    assert!(!e.contains('\x1b') && !e.contains('\x07'), "{e}");
    assert!(e.len() < 800, "bounded: {e}");
    let mut none = loaded.clone();
    none.kubeconfig.current_context = None;
    assert_eq!(
        err(none.context(None)),
        "/k/config sets no current context; choose one with --context (contexts: a, b)"
    );
    none.kubeconfig.current_context = Some("gone".into());
    assert_eq!(
        err(none.context(None)),
        "the current context \"gone\" of /k/config does not exist; choose one with --context (contexts: a, b)"
    );
    none.kubeconfig.contexts.clear();
    assert_eq!(
        err(none.context(Some("x"))),
        "kubeconfig context \"x\" not found in /k/config (it has none)"
    );
}

#[tokio::test]
async fn a_client_file_that_is_missing_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let text = TWO
        .replace(
            "certificate-authority: ca.pem",
            "insecure-skip-tls-verify: true",
        )
        .replace(
            "token: t",
            "token: t\n    client-key: nokey.pem\n    client-certificate: nocert.pem",
        );
    let p = write(dir.path(), "kcfg", text.as_bytes());
    let loaded = read(Some(&p)).unwrap();
    let e = err(loaded.client("a").await.map(|(_, ns)| ns));
    let io = std::fs::read(dir.path().join("nocert.pem"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "kubeconfig {}, context \"a\": cannot read the client certificate {}: {io}",
            p.display(),
            dir.path().join("nocert.pem").display()
        )
    );
}

#[tokio::test]
async fn a_server_over_plain_http_gets_no_roots_and_one_over_tls_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let plain = TWO
        .replace("https://k:6443", "http://127.0.0.1:8001")
        .replace("    certificate-authority: ca.pem\n", "");
    let p = write(dir.path(), "plain", plain.as_bytes());
    let config = read(Some(&p)).unwrap().client_config("a").await.unwrap();
    assert_eq!(config.root_cert, Some(Vec::new()));
    // Over TLS without a named authority, kube's roots are used, as kubectl uses the system's.
    let tls = TWO.replace("    certificate-authority: ca.pem\n", "");
    let p = write(dir.path(), "tls", tls.as_bytes());
    let config = read(Some(&p)).unwrap().client_config("a").await.unwrap();
    assert_eq!(config.root_cert, None);
}
