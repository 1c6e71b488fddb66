//! The user's kubeconfig, read with errors a person can act on: which file, which line, which
//! contexts there are. The dashboard's in-process backend and `serve` both read it here.
//!
//! kube's own reader is not used on the bytes: it says the file's name in Debug quotes and its
//! cause twice, and it panics on a UTF-16 file of odd length. The YAML itself is kube's
//! (`Kubeconfig::from_yaml`), and relative file names are made absolute as kube does.

use ichor_model::error_text::quoted;
use ichor_model::inert::{sanitize, truncate};
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError, LoadDataError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable listing kubeconfig files.
pub(crate) const KUBECONFIG_ENV: &str = "KUBECONFIG";

/// How many context names an error lists at most.
const MAX_LISTED: usize = 10;

/// A kubeconfig and the files it came from.
#[derive(Clone, Debug)]
pub struct LoadedKubeconfig {
    pub(crate) kubeconfig: Kubeconfig,
    /// The file, or the files of `$KUBECONFIG` joined by `:`, as errors name them.
    pub(crate) source: String,
    /// Whom to act as (`--as`, `--as-group`), whatever the context.
    pub(crate) impersonate: Option<Impersonate>,
}

/// Kubernetes impersonation, as kubectl's `--as` and `--as-group` ask for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Impersonate {
    pub user: String,
    pub groups: Vec<String>,
}

/// The files to read: the flag's, else `$KUBECONFIG`'s (empty entries skipped), else
/// `~/.kube/config`.
pub(crate) fn paths(
    flag: Option<&Path>,
    env: Option<OsString>,
    home: Option<PathBuf>,
) -> anyhow::Result<Vec<PathBuf>> {
    if let Some(p) = flag {
        return Ok(vec![p.to_path_buf()]);
    }
    if let Some(v) = env {
        let listed: Vec<PathBuf> = std::env::split_paths(&v)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if !listed.is_empty() {
            return Ok(listed);
        }
    }
    match home {
        Some(h) => Ok(vec![h.join(".kube").join("config")]),
        None => anyhow::bail!(
            "no kubeconfig: give --kubeconfig FILE or set {KUBECONFIG_ENV} (no home directory to find ~/.kube/config in)"
        ),
    }
}

/// Reads the kubeconfig named by `--kubeconfig` (`flag`), `$KUBECONFIG` or `~/.kube/config`;
/// several files are merged as kubectl merges them.
pub fn read(flag: Option<&Path>) -> anyhow::Result<LoadedKubeconfig> {
    let paths = paths(flag, std::env::var_os(KUBECONFIG_ENV), std::env::home_dir())?;
    let mut merged: Option<Kubeconfig> = None;
    for path in &paths {
        let one = read_file(path)?;
        merged = Some(match merged {
            None => one,
            Some(m) => m.merge(one).map_err(|e| {
                anyhow::anyhow!("kubeconfig {}: {}", path.display(), kube_error_text(&e))
            })?,
        });
    }
    let source = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    Ok(LoadedKubeconfig {
        kubeconfig: merged.unwrap_or_default(),
        source,
        impersonate: None,
    })
}

/// One kubeconfig file: read, decoded, parsed, its relative file names made absolute.
pub(crate) fn read_file(path: &Path) -> anyhow::Result<Kubeconfig> {
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("cannot read kubeconfig {}: {e}", path.display()))?;
    let text =
        decode(&bytes).map_err(|why| anyhow::anyhow!("kubeconfig {}: {why}", path.display()))?;
    let mut kubeconfig = Kubeconfig::from_yaml(&text).map_err(|e| match &e {
        KubeconfigError::Parse(p) => {
            let at = p
                .location()
                .filter(|l| l.line() > 0)
                .map(|l| format!(":{}:{}", l.line(), l.column()))
                .unwrap_or_default();
            anyhow::anyhow!(
                "kubeconfig {}{at}: not a kubeconfig: {}",
                path.display(),
                yaml_message(&p.to_string())
            )
        }
        other => anyhow::anyhow!("kubeconfig {}: {}", path.display(), kube_error_text(other)),
    })?;
    if let Some(dir) = path.parent() {
        absolute_paths(&mut kubeconfig, dir);
    }
    Ok(kubeconfig)
}

/// The text of a kubeconfig file, as kubectl reads it: UTF-8, or UTF-16 with its byte-order
/// mark; a UTF-8 byte-order mark is skipped. Never panics.
pub(crate) fn decode(bytes: &[u8]) -> Result<String, &'static str> {
    let utf16 = |rest: &[u8], unit: fn([u8; 2]) -> u16| {
        if !rest.len().is_multiple_of(2) {
            return Err("not UTF-16 text (an odd number of bytes after the byte-order mark)");
        }
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| unit([c[0], c[1]])).collect();
        String::from_utf16(&units).map_err(|_| "not UTF-16 text")
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xEF, 0xBB, 0xBF, rest @ ..] => {
            String::from_utf8(rest.to_vec()).map_err(|_| "not UTF-8 text")
        }
        _ => String::from_utf8(bytes.to_vec()).map_err(|_| "not UTF-8 text"),
    }
}

/// The first line of a YAML error, without the position it repeats (the caller says it as
/// `FILE:LINE:COLUMN`).
fn yaml_message(s: &str) -> String {
    let first = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // serde-saphyr says "line N column M: what"; others say "what at line N column M".
    let first = match first.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
        Some((at, what)) if at.split(" column ").all(|n| n.parse::<u64>().is_ok()) => what,
        _ => first,
    };
    let first = match first.find(" at line ") {
        Some(i) => &first[..i],
        None => first,
    };
    truncate(&sanitize(first), 200)
}

/// File names in a kubeconfig are relative to its directory (as kube and client-go read them).
fn absolute_paths(kc: &mut Kubeconfig, dir: &Path) {
    let abs = |p: &mut String| {
        let path = Path::new(p.as_str());
        if path.is_relative()
            && let Some(s) = dir.join(path).to_str()
        {
            *p = s.to_string();
        }
    };
    for c in kc.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        if let Some(p) = c.certificate_authority.as_mut() {
            abs(p);
        }
    }
    for a in kc
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
    {
        for p in [
            a.client_certificate.as_mut(),
            a.client_key.as_mut(),
            a.token_file.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            abs(p);
        }
        // As client-go: only a command with a path separator is a file name.
        if let Some(cmd) = a.exec.as_mut().and_then(|e| e.command.as_mut())
            && cmd.contains(std::path::MAIN_SEPARATOR)
        {
            abs(cmd);
        }
    }
}

/// The names of the contexts, for an error: at most [`MAX_LISTED`], each inert and short.
fn context_list(kc: &Kubeconfig) -> String {
    if kc.contexts.is_empty() {
        return "it has none".to_string();
    }
    let mut names: Vec<String> = kc
        .contexts
        .iter()
        .take(MAX_LISTED)
        .map(|c| truncate(&sanitize(&c.name), 40))
        .collect();
    if kc.contexts.len() > MAX_LISTED {
        names.push(format!("and {} more", kc.contexts.len() - MAX_LISTED));
    }
    format!("contexts: {}", names.join(", "))
}

impl LoadedKubeconfig {
    /// The context to use: `wanted` (`--context`), else the current context; either must
    /// exist. The error names the file and lists the contexts there are.
    pub(crate) fn context(&self, wanted: Option<&str>) -> anyhow::Result<String> {
        let kc = &self.kubeconfig;
        let exists = |n: &str| kc.contexts.iter().any(|c| c.name == n);
        match wanted {
            Some(w) if exists(w) => Ok(w.to_string()),
            Some(w) => anyhow::bail!(
                "kubeconfig context {} not found in {} ({})",
                quoted(w),
                self.source,
                context_list(kc)
            ),
            None => match kc.current_context.as_deref().filter(|c| !c.is_empty()) {
                Some(c) if exists(c) => Ok(c.to_string()),
                Some(c) => anyhow::bail!(
                    "the current context {} of {} does not exist; choose one with --context ({})",
                    quoted(c),
                    self.source,
                    context_list(kc)
                ),
                None => anyhow::bail!(
                    "{} sets no current context; choose one with --context ({})",
                    self.source,
                    context_list(kc)
                ),
            },
        }
    }

    /// The names of the contexts, as the file has them (`:ctx` switches between them).
    pub(crate) fn context_names(&self) -> Vec<String> {
        self.kubeconfig
            .contexts
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// Each context with the API server its cluster names (normalised; `None` when the
    /// cluster is missing or its server is not an http(s) URL), as the config's `[[contexts]]`
    /// rules compare them.
    pub(crate) fn api_servers(&self) -> Vec<(String, Option<ichor_model::ApiServer>)> {
        let kc = &self.kubeconfig;
        let server_of = |cluster: &str| {
            kc.clusters
                .iter()
                .find(|c| c.name == cluster)
                .and_then(|c| c.cluster.as_ref())
                .and_then(|c| c.server.as_deref())
                .and_then(crate::config::contexts::api_server)
        };
        kc.contexts
            .iter()
            .map(|c| {
                let server = c.context.as_ref().and_then(|c| server_of(&c.cluster));
                (c.name.clone(), server)
            })
            .collect()
    }

    /// The user (`AuthInfo`) a context names, for messages; the one impersonated, if any.
    pub(crate) fn user_of(&self, context: &str) -> Option<String> {
        if let Some(i) = &self.impersonate {
            return Some(i.user.clone());
        }
        self.kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context)
            .and_then(|c| c.context.as_ref())
            .and_then(|c| c.user.clone())
    }

    /// The client configuration of `context` (which [`LoadedKubeconfig::context`] checked).
    pub(crate) async fn client_config(&self, context: &str) -> anyhow::Result<kube::Config> {
        let options = KubeConfigOptions {
            context: Some(context.to_string()),
            ..Default::default()
        };
        let mut config = kube::Config::from_custom_kubeconfig(self.kubeconfig.clone(), &options)
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "kubeconfig {}, context {}: {}",
                    self.source,
                    quoted(context),
                    kube_error_text(&e)
                )
            })?;
        if let Some(i) = &self.impersonate {
            // As kubectl: the flags replace whatever the kubeconfig's user impersonates.
            config.auth_info.impersonate = Some(i.user.clone());
            config.auth_info.impersonate_groups = (!i.groups.is_empty()).then(|| i.groups.clone());
        }
        Ok(config)
    }
}

impl LoadedKubeconfig {
    /// A Kubernetes client for `context` (which [`LoadedKubeconfig::context`] checked), with the
    /// namespace the context names. Files the kubeconfig names (certificates, keys) are read
    /// here; an error names the one that failed, once.
    pub async fn client(&self, context: &str) -> anyhow::Result<(kube::Client, String)> {
        let config = self.client_config(context).await?;
        let namespace = config.default_namespace.clone();
        let client = kube::Client::try_from(config).map_err(|e| {
            let mut texts = Vec::new();
            let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            while let Some(c) = cause {
                if let Some(k) = c.downcast_ref::<KubeconfigError>() {
                    texts = vec![kube_error_text(k)];
                    break;
                }
                texts.push(c.to_string());
                cause = c.source();
            }
            anyhow::anyhow!(
                "kubeconfig {}, context {}: {}",
                self.source,
                quoted(context),
                ichor_model::error_text::chain_line(texts)
            )
        })?;
        Ok((client, namespace))
    }
}

/// kube's error in words, each cause once and file names without Debug quotes.
fn kube_error_text(e: &KubeconfigError) -> String {
    let data = |what: &str, d: &LoadDataError| match d {
        LoadDataError::ReadFile(io, path) => {
            format!("cannot read the {what} {}: {io}", path.display())
        }
        LoadDataError::DecodeBase64(b) => format!("the {what} is not valid base64: {b}"),
        LoadDataError::NoBase64DataOrFile => format!("the {what} names no data and no file"),
    };
    let text = match e {
        KubeconfigError::LoadCertificateAuthority(d) => data("certificate authority", d),
        KubeconfigError::LoadClientCertificate(d) => data("client certificate", d),
        KubeconfigError::LoadClientKey(d) => data("client key", d),
        KubeconfigError::ReadConfig(io, path) => {
            format!("cannot read {}: {io}", path.display())
        }
        other => other.to_string(),
    };
    ichor_model::error_text::chain_line([text])
}

#[cfg(test)]
mod tests {
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
}
