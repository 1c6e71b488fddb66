//! Prometheus metrics of `serve` (the `prometheus-client` crate), served on a port of their
//! own (`--metrics-listen`), as in-cluster servers do: calls by service, method, protocol and
//! code; their latency; calls in flight; open connections; what a limit refused. The health
//! endpoints ([`super::health`]) are served there too, for the kubelet's probes.

use crate::wire::Rpc;
use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::Full;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Arc;

/// A call's labels. Service and method are those the server has (anything else is
/// `unknown`), so no caller can grow the label set.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    service: &'static str,
    method: &'static str,
    protocol: &'static str,
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    service: &'static str,
    method: &'static str,
    protocol: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

type LatencyFamily = Family<LatencyLabels, Histogram, fn() -> Histogram>;

struct Inner {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    latency: LatencyFamily,
    in_flight: Gauge,
    connections: Gauge,
    subscribers: Gauge,
    health_streams: Gauge,
    refused: Family<LimitLabels, Counter>,
}

/// The server's metrics; cloned cheaply.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

fn latency_histogram() -> Histogram {
    // 0.5 ms to about 16 s.
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// The services and methods the server answers beside the API's own (those are the table of
/// calls, [`crate::wire::Rpc`]), for the labels.
const OTHER_METHODS: &[(&str, &[&str])] = &[
    ("grpc.health.v1.Health", &["Check", "Watch", "List"]),
    (
        "grpc.reflection.v1.ServerReflection",
        &["ServerReflectionInfo"],
    ),
    (
        "grpc.reflection.v1alpha.ServerReflection",
        &["ServerReflectionInfo"],
    ),
];

/// `(service, method)` of a request path, each `unknown` when the server has no such thing.
pub(crate) fn call_of(path: &str) -> (&'static str, &'static str) {
    if let Some(rpc) = Rpc::of_path(path) {
        return (rpc.service(), rpc.method());
    }
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let (service, method) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if let Some(ours) = Rpc::service_named(service) {
        return (ours, "unknown");
    }
    for (s, methods) in OTHER_METHODS {
        if *s == service {
            let m = methods.iter().find(|m| **m == method).copied();
            return (s, m.unwrap_or("unknown"));
        }
    }
    ("unknown", "unknown")
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("ichor_serve");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "requests",
            "Calls answered, by service, method, protocol and code (ok or the Connect protocol's code name)",
            calls.clone(),
        );
        let latency = LatencyFamily::new_with_constructor(latency_histogram);
        registry.register(
            "request_duration_seconds",
            "Time from a call's headers to the end of its answer",
            latency.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "requests_in_flight",
            "Calls being answered",
            in_flight.clone(),
        );
        let connections = Gauge::default();
        registry.register("connections_open", "Open connections", connections.clone());
        let subscribers = Gauge::default();
        registry.register(
            "subscribers",
            "Open WatchOperations streams (dashboards subscribed to updates)",
            subscribers.clone(),
        );
        let health_streams = Gauge::default();
        registry.register(
            "health_streams",
            "Open grpc.health.v1.Health/Watch streams (they need no token)",
            health_streams.clone(),
        );
        let refused = Family::<LimitLabels, Counter>::default();
        registry.register(
            "refused",
            "What a bound refused, by its name (docs/limits.md): calls_in_flight, calls_per_person, writes_in_flight, writes_per_person, bodies, bodies_per_person, body_timeout, subscribing, subscribing_per_person, token_reviews, lists_in_flight, lists_per_person, reflection_streams, reflection_streams_per_person, header_timeout, connections (an accept waited), connections_per_person, unauthenticated_connection, streams, streams_per_caller, anonymous_streams, live_queries, live_queries_per_namespace, live_queries_per_caller, live_queries_per_caller_in_namespace, health_streams",
            refused.clone(),
        );
        Metrics(Arc::new(Inner {
            registry,
            calls,
            latency,
            in_flight,
            connections,
            subscribers,
            health_streams,
            refused,
        }))
    }

    /// A call begins: counted in flight until [`Metrics::call_ended`].
    pub(crate) fn call_began(&self) {
        self.0.in_flight.inc();
    }

    /// A call ended with `code` after `seconds`.
    pub(crate) fn call_ended(
        &self,
        (service, method): (&'static str, &'static str),
        protocol: &'static str,
        code: &'static str,
        seconds: f64,
    ) {
        self.0.in_flight.dec();
        self.0
            .calls
            .get_or_create(&CallLabels {
                service,
                method,
                protocol,
                code,
            })
            .inc();
        self.0
            .latency
            .get_or_create(&LatencyLabels {
                service,
                method,
                protocol,
            })
            .observe(seconds);
    }

    pub(crate) fn refused(&self, limit: &'static str) {
        self.0.refused.get_or_create(&LimitLabels { limit }).inc();
    }

    pub(crate) fn connection_opened(&self) {
        self.0.connections.inc();
    }

    pub(crate) fn connection_closed(&self) {
        self.0.connections.dec();
    }

    pub(crate) fn subscriber_joined(&self) {
        self.0.subscribers.inc();
    }

    pub(crate) fn subscriber_left(&self) {
        self.0.subscribers.dec();
    }

    pub(crate) fn health_stream_opened(&self) {
        self.0.health_streams.inc();
    }

    pub(crate) fn health_stream_closed(&self) {
        self.0.health_streams.dec();
    }

    /// The text exposition format (what `GET /metrics` answers).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.0.registry).is_err() {
            out.clear();
        }
        out
    }
}

/// The content type of the text exposition format.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves `GET /metrics` and the health endpoints on `listener` until `stop` completes.
pub(crate) async fn serve(
    metrics: Metrics,
    health: super::health::Health,
    listener: super::addr::Listeners,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    loop {
        let (tcp, _) = tokio::select! {
            _ = &mut stop => return,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!(error = %e, "accepting a metrics connection");
                    continue;
                }
            },
        };
        let (metrics, health) = (metrics.clone(), health.clone());
        let service =
            hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                let (metrics, health) = (metrics.clone(), health.clone());
                async move {
                    let resp = match super::health::is_health_request(&req) {
                        true => health.answer(req.uri()).await.map(Full::new),
                        false => answer(&metrics, &req),
                    };
                    Ok::<_, std::convert::Infallible>(resp)
                }
            });
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(super::listen::HEADER_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(tcp), service);
            let _ = tokio::time::timeout(std::time::Duration::from_secs(60), conn).await;
        });
    }
}

fn answer<B>(metrics: &Metrics, req: &http::Request<B>) -> http::Response<Full<Bytes>> {
    let mut resp = http::Response::new(Full::new(Bytes::new()));
    if req.uri().path() != "/metrics" {
        *resp.status_mut() = http::StatusCode::NOT_FOUND;
        return resp;
    }
    if req.method() != http::Method::GET && req.method() != http::Method::HEAD {
        *resp.status_mut() = http::StatusCode::METHOD_NOT_ALLOWED;
        return resp;
    }
    *resp.body_mut() = Full::new(Bytes::from(metrics.encode()));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(CONTENT_TYPE),
    );
    resp
}

/// Binds the metrics address (or addresses: [`super::addr`]).
pub(crate) fn bind(at: super::addr::ListenAddr) -> anyhow::Result<super::addr::Listeners> {
    super::addr::bind_all(at, 128).with_context(|| format!("listening on {at} for metrics"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_servers_own_calls() {
        assert_eq!(
            call_of("/ichor.v1alpha1.OperationService/ListOperations"),
            ("ichor.v1alpha1.OperationService", "ListOperations")
        );
        assert_eq!(
            call_of("/ichor.v1alpha1.OperationService/WatchOperations"),
            ("ichor.v1alpha1.OperationService", "WatchOperations")
        );
        assert_eq!(
            call_of("/ichor.v1alpha1.OperationService/Nope"),
            ("ichor.v1alpha1.OperationService", "unknown")
        );
        assert_eq!(call_of("/x/y"), ("unknown", "unknown"));
        assert_eq!(
            call_of("/grpc.health.v1.Health/Check"),
            ("grpc.health.v1.Health", "Check")
        );
        for rpc in Rpc::ALL {
            assert_eq!(call_of(rpc.path()), (rpc.service(), rpc.method()));
        }
        assert_eq!(call_of(""), ("unknown", "unknown"));
        let m = Metrics::new();
        m.call_began();
        m.call_ended(call_of("/x"), "grpc", "ok", 0.01);
        m.refused("calls_in_flight");
        let text = m.encode();
        assert!(
            text.contains("ichor_serve_requests_total{service=\"unknown\",method=\"unknown\",protocol=\"grpc\",code=\"ok\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("ichor_serve_refused_total{limit=\"calls_in_flight\"} 1"),
            "{text}"
        );
    }
}
