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
        // A server over plain HTTP (`kubectl proxy`, the demo API) is reached without TLS, so
        // it needs no roots; with none named, kube would copy every webpki root into a store
        // that is never used (docs/performance.md).
        if config.cluster_url.scheme_str() == Some("http") && config.root_cert.is_none() {
            config.root_cert = Some(Vec::new());
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
mod tests;
