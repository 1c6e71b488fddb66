//! The health endpoints a kubelet asks, as kube-apiserver serves them, over plain HTTP and
//! without a token, on the main port and on the metrics port: `/livez` (the process answers),
//! `/readyz` (it can serve: its own credentials get an answer from the Kubernetes API, every
//! shared watch has listed and follows, and it is not shutting down) and `/healthz` (the
//! checks of both but the shutdown, as kube-apiserver's).
//!
//! `ok` with 200 when every check passes; else 500 and every check listed, `[-]NAME failed:
//! reason withheld` for a failed one (the endpoints are public: the reason goes to the log,
//! once when a check begins to fail). `?verbose` lists the checks when all pass too,
//! `?exclude=NAME` leaves one out, `/readyz/NAME` asks one.
//!
//! The API is asked at most once every [`API_CHECK_HOLDS`] whoever asks and however often:
//! the answer is kept that long, and callers meanwhile wait for the one question under way.

use bytes::Bytes;
use ichor_service::shared::SharedReads;
use ichor_service::store::Health as WatchHealth;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::time::Instant;

/// How long the Kubernetes API has to answer the readiness question.
pub const API_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// How long its answer is kept.
pub const API_CHECK_HOLDS: Duration = Duration::from_secs(2);

/// The path serve asks of the Kubernetes API: kube-apiserver's own readiness, which every
/// authenticated user may read (the `system:public-info-viewer` ClusterRole), so an answer
/// says both that the API serves and that serve's credentials are accepted.
const API_READYZ: &str = "/readyz";

/// One check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Check {
    /// The process answers.
    Ping,
    /// The Kubernetes API answers serve's own credentials.
    KubernetesApi,
    /// Every shared watch has listed and follows.
    SharedWatches,
    /// serve is not shutting down (readiness only).
    Shutdown,
}

impl Check {
    fn name(self) -> &'static str {
        match self {
            Check::Ping => "ping",
            Check::KubernetesApi => "kubernetes-api",
            Check::SharedWatches => "shared-watches",
            Check::Shutdown => "shutdown",
        }
    }
}

/// An endpoint and its checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Livez,
    Readyz,
    Healthz,
}

impl Endpoint {
    fn name(self) -> &'static str {
        match self {
            Endpoint::Livez => "livez",
            Endpoint::Readyz => "readyz",
            Endpoint::Healthz => "healthz",
        }
    }

    fn checks(self) -> &'static [Check] {
        match self {
            Endpoint::Livez => &[Check::Ping],
            Endpoint::Readyz => &[
                Check::Ping,
                Check::KubernetesApi,
                Check::SharedWatches,
                Check::Shutdown,
            ],
            Endpoint::Healthz => &[Check::Ping, Check::KubernetesApi, Check::SharedWatches],
        }
    }

    /// The endpoint a path names, and the one check it asks for (`/readyz/NAME`), if any.
    fn of(path: &str) -> Option<(Endpoint, Option<&str>)> {
        let (root, rest) = match path.strip_prefix('/')?.split_once('/') {
            Some((root, rest)) => (root, Some(rest).filter(|r| !r.is_empty())),
            None => (path.strip_prefix('/')?, None),
        };
        let endpoint = match root {
            "livez" => Endpoint::Livez,
            "readyz" => Endpoint::Readyz,
            "healthz" => Endpoint::Healthz,
            _ => return None,
        };
        Some((endpoint, rest))
    }
}

/// Whether the request asks a health endpoint: a GET or HEAD of one's path. Answered without
/// a token.
pub(crate) fn is_health_request<B>(req: &http::Request<B>) -> bool {
    let method_ok = req.method() == http::Method::GET || req.method() == http::Method::HEAD;
    method_ok && Endpoint::of(req.uri().path()).is_some()
}

struct Inner {
    kube: kube::Client,
    reads: OnceLock<SharedReads>,
    stopping: AtomicBool,
    /// The API's last answer and when it came; held while a question is under way.
    api: tokio::sync::Mutex<Option<(Instant, Result<(), String>)>>,
    /// The checks failing when last asked, so a failure is logged once.
    failing: Mutex<BTreeSet<Check>>,
}

/// serve's health, shared by both ports.
#[derive(Clone)]
pub struct Health(Arc<Inner>);

impl Health {
    /// Health asking the Kubernetes API with `kube` (serve's own client).
    pub fn new(kube: kube::Client) -> Health {
        Health(Arc::new(Inner {
            kube,
            reads: OnceLock::new(),
            stopping: AtomicBool::new(false),
            api: tokio::sync::Mutex::new(None),
            failing: Mutex::new(BTreeSet::new()),
        }))
    }

    /// The shared watches whose state readiness reports (set once, when the server starts).
    pub(crate) fn follow(&self, reads: SharedReads) {
        let _ = self.0.reads.set(reads);
    }

    /// The server has begun to stop: not ready any more.
    pub(crate) fn stopping(&self) {
        self.0.stopping.store(true, Ordering::SeqCst);
    }

    /// The answer to a request [`is_health_request`] says is one (404 for any other).
    pub(crate) async fn answer(&self, uri: &http::Uri) -> http::Response<Bytes> {
        let Some((endpoint, one)) = Endpoint::of(uri.path()) else {
            return text(
                http::StatusCode::NOT_FOUND,
                "404 page not found\n".to_string(),
            );
        };
        match one {
            Some(name) => self.one(endpoint, name).await,
            None => self.all(endpoint, &Query::parse(uri.query())).await,
        }
    }

    /// `/ENDPOINT/NAME`: one check.
    async fn one(&self, endpoint: Endpoint, name: &str) -> http::Response<Bytes> {
        let Some(check) = endpoint.checks().iter().find(|c| c.name() == name) else {
            return text(
                http::StatusCode::NOT_FOUND,
                "404 page not found\n".to_string(),
            );
        };
        match self.run(*check).await {
            Ok(()) => text(http::StatusCode::OK, "ok".to_string()),
            Err(_) => text(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                "internal server error: reason withheld\n".to_string(),
            ),
        }
    }

    /// `/ENDPOINT`: every check but those excluded.
    async fn all(&self, endpoint: Endpoint, query: &Query) -> http::Response<Bytes> {
        let mut listing = String::new();
        let mut failed = false;
        let mut unknown: BTreeSet<&str> = query.excluded.iter().map(String::as_str).collect();
        for check in endpoint.checks() {
            if unknown.remove(check.name()) {
                listing.push_str(&format!("[+]{} excluded: ok\n", check.name()));
                continue;
            }
            match self.run(*check).await {
                Ok(()) => listing.push_str(&format!("[+]{} ok\n", check.name())),
                Err(_) => {
                    failed = true;
                    listing.push_str(&format!("[-]{} failed: reason withheld\n", check.name()));
                }
            }
        }
        if !unknown.is_empty() {
            let names: Vec<String> = unknown
                .iter()
                .map(|n| format!("{:?}", ichor_model::inert::truncate(n, 64)))
                .collect();
            listing.push_str(&format!(
                "warn: some health checks cannot be excluded: no matches for {}\n",
                names.join(",")
            ));
        }
        let name = endpoint.name();
        if failed {
            let body = format!("{listing}{name} check failed\n");
            return text(http::StatusCode::INTERNAL_SERVER_ERROR, body);
        }
        match query.verbose {
            true => text(
                http::StatusCode::OK,
                format!("{listing}{name} check passed\n"),
            ),
            false => text(http::StatusCode::OK, "ok".to_string()),
        }
    }

    /// Runs one check; a failure's reason is logged when the check begins to fail.
    async fn run(&self, check: Check) -> Result<(), String> {
        let outcome = match check {
            Check::Ping => Ok(()),
            Check::KubernetesApi => self.api().await,
            Check::SharedWatches => self.watches(),
            Check::Shutdown => match self.0.stopping.load(Ordering::SeqCst) {
                true => Err("the server is shutting down".to_string()),
                false => Ok(()),
            },
        };
        let mut failing = self.0.failing.lock().unwrap_or_else(|p| p.into_inner());
        match &outcome {
            Err(why) if failing.insert(check) => {
                tracing::warn!(check = check.name(), reason = %why, "a health check fails");
            }
            Ok(()) if failing.remove(&check) => {
                tracing::info!(check = check.name(), "a health check passes again");
            }
            _ => {}
        }
        outcome
    }

    /// Whether the Kubernetes API answered serve's credentials lately, asking it when the last
    /// answer is older than [`API_CHECK_HOLDS`].
    async fn api(&self) -> Result<(), String> {
        let mut last = self.0.api.lock().await;
        if let Some((at, outcome)) = last.as_ref()
            && at.elapsed() < API_CHECK_HOLDS
        {
            return outcome.clone();
        }
        let outcome = self.ask_api().await;
        *last = Some((Instant::now(), outcome.clone()));
        outcome
    }

    async fn ask_api(&self) -> Result<(), String> {
        let request = http::Request::get(API_READYZ)
            .body(Vec::new())
            .map_err(|e| format!("building the request: {e}"))?;
        match tokio::time::timeout(API_CHECK_TIMEOUT, self.0.kube.request_text(request)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(ichor_model::inert::truncate(
                &ichor_model::inert::sanitize(&format!("GET {API_READYZ}: {e}")),
                200,
            )),
            Err(_) => Err(format!(
                "GET {API_READYZ}: no answer within {} s",
                API_CHECK_TIMEOUT.as_secs()
            )),
        }
    }

    /// Whether every shared watch has listed and follows.
    fn watches(&self) -> Result<(), String> {
        let Some(reads) = self.0.reads.get() else {
            return Err("the server has not started".to_string());
        };
        let watches = reads.watches();
        let behind: Vec<String> = watches
            .iter()
            .filter_map(|(scope, health)| {
                let scope = scope.as_deref().unwrap_or("all namespaces");
                match health {
                    WatchHealth::Ready => None,
                    WatchHealth::Starting => Some(format!("{scope}: not listed yet")),
                    WatchHealth::Failed(why) => Some(format!("{scope}: {why}")),
                }
            })
            .collect();
        match behind.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "{} of {} shared watches do not follow ({})",
                behind.len(),
                watches.len(),
                ichor_model::inert::truncate(&behind.join("; "), 300)
            )),
        }
    }
}

/// What the query asks: `verbose` (with or without a value) and each `exclude`.
#[derive(Default)]
struct Query {
    verbose: bool,
    excluded: Vec<String>,
}

/// At most this many `exclude` parameters are read.
const MAX_EXCLUDES: usize = 16;

impl Query {
    fn parse(query: Option<&str>) -> Query {
        let mut q = Query::default();
        for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            match k.as_ref() {
                "verbose" => q.verbose = true,
                "exclude" if q.excluded.len() < MAX_EXCLUDES => q.excluded.push(v.into_owned()),
                _ => {}
            }
        }
        q
    }
}

/// A plain-text answer, with the headers kube-apiserver's health endpoints send.
fn text(status: http::StatusCode, body: String) -> http::Response<Bytes> {
    let mut resp = http::Response::new(Bytes::from(body));
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache, private"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_an_endpoint_and_maybe_one_check() {
        assert_eq!(Endpoint::of("/readyz"), Some((Endpoint::Readyz, None)));
        assert_eq!(Endpoint::of("/readyz/"), Some((Endpoint::Readyz, None)));
        assert_eq!(
            Endpoint::of("/livez/ping"),
            Some((Endpoint::Livez, Some("ping")))
        );
        assert_eq!(Endpoint::of("/healthz"), Some((Endpoint::Healthz, None)));
        assert_eq!(Endpoint::of("/metrics"), None);
        assert_eq!(Endpoint::of("/readyzz"), None);
        assert_eq!(Endpoint::of("readyz"), None);
        assert_eq!(
            Endpoint::of("/ichor.v1alpha1.OperationService/ListOperations"),
            None
        );
    }

    #[tokio::test]
    async fn a_server_that_is_stopping_is_not_ready_yet_alive() {
        let nowhere = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let health = Health::new(kube::Client::try_from(nowhere).unwrap());
        let ask = |path: &'static str| {
            let health = health.clone();
            async move {
                let r = health.answer(&http::Uri::from_static(path)).await;
                (
                    r.status().as_u16(),
                    String::from_utf8_lossy(r.body()).into_owned(),
                )
            }
        };
        let only_shutdown = "/readyz?exclude=kubernetes-api&exclude=shared-watches";
        assert_eq!(ask(only_shutdown).await, (200, "ok".to_string()));
        health.stopping();
        assert_eq!(
            ask(only_shutdown).await,
            (
                500,
                "[+]ping ok\n[+]kubernetes-api excluded: ok\n[+]shared-watches excluded: ok\n\
                 [-]shutdown failed: reason withheld\nreadyz check failed\n"
                    .to_string()
            )
        );
        assert_eq!(ask("/readyz/shutdown").await.0, 500);
        assert_eq!(ask("/livez").await, (200, "ok".to_string()));
        assert_eq!(
            ask("/healthz?exclude=kubernetes-api&exclude=shared-watches")
                .await
                .0,
            200
        );
    }

    #[test]
    fn the_query_says_verbose_and_what_to_exclude() {
        let q = Query::parse(Some("verbose&exclude=shutdown&exclude=kubernetes-api"));
        assert!(q.verbose);
        assert_eq!(q.excluded, ["shutdown", "kubernetes-api"]);
        let many = vec!["exclude=x"; 100].join("&");
        assert_eq!(Query::parse(Some(&many)).excluded.len(), MAX_EXCLUDES);
        assert!(!Query::parse(None).verbose);
    }
}
