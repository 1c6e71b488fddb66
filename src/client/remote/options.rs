//! How to reach a server: the URL, the protocol, the token, the CA, the deadline.

use anyhow::Context as _;
use http::HeaderValue;
use std::path::Path;
use std::time::Duration;

/// The default deadline of one call.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(15);

/// The environment variable that may hold the bearer token.
pub const TOKEN_ENV: &str = "ICHOR_TOKEN";

/// The largest response the client accepts. tonic's default (4 MiB) is about 7,500 operations
/// in one ListOperations answer; 64 MiB is over 100,000.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// The protocol a remote client speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// The Connect protocol: unary calls as HTTP POSTs, over HTTP/1.1 or HTTP/2; passes
    /// HTTP/1.1-only proxies and TLS-terminating ingresses.
    #[default]
    Connect,
    /// gRPC over HTTP/2.
    Grpc,
}

/// How to reach a server.
#[derive(Clone)]
pub struct RemoteOptions {
    /// `https://host:port` or `http://host:port`.
    pub url: String,
    pub(crate) protocol: Protocol,
    /// The bearer token sent with every call (never logged).
    pub token: Option<String>,
    /// PEM certificates trusted in addition to the system roots (https only).
    pub ca_pem: Option<Vec<u8>>,
    /// The deadline of every call.
    pub deadline: Duration,
    /// Send the token over plain HTTP to a host that is not loopback all the same
    /// (`--insecure-send-token-over-http`); otherwise [`RemoteOptions::check_token_transport`]
    /// refuses.
    pub insecure_send_token_over_http: bool,
}

impl std::fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("url", &self.url)
            .field("protocol", &self.protocol)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .field("deadline", &self.deadline)
            .field(
                "insecure_send_token_over_http",
                &self.insecure_send_token_over_http,
            )
            .finish()
    }
}

/// A server's address as the transports need it, checked.
pub(super) struct Target {
    pub(crate) uri: http::Uri,
    pub(crate) https: bool,
    /// `Bearer …`, marked sensitive.
    pub(crate) token: Option<HeaderValue>,
    pub(crate) ca_pem: Option<Vec<u8>>,
}

impl RemoteOptions {
    /// Options with the default protocol and deadline, no token, no extra CA.
    pub fn new(url: impl Into<String>) -> RemoteOptions {
        RemoteOptions {
            url: url.into(),
            protocol: Protocol::default(),
            token: None,
            ca_pem: None,
            deadline: DEFAULT_DEADLINE,
            insecure_send_token_over_http: false,
        }
    }

    /// As client-go keeps credentials off the wire in the clear: a bearer token is never sent
    /// over plain HTTP to a host that is not loopback (`localhost`, 127.0.0.0/8, ::1) unless
    /// [`RemoteOptions::insecure_send_token_over_http`] says so. A URL that does not parse is
    /// left to [`RemoteClient::new`](super::RemoteClient::new) to refuse.
    pub fn check_token_transport(&self) -> anyhow::Result<()> {
        let Ok(uri) = self.url.parse::<http::Uri>() else {
            return Ok(());
        };
        if self.token.is_none() || uri.scheme_str() != Some("http") {
            return Ok(());
        }
        let host = uri.host().unwrap_or("");
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = bare.eq_ignore_ascii_case("localhost")
            || bare
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if loopback {
            return Ok(());
        }
        if self.insecure_send_token_over_http {
            tracing::warn!(
                host = %ichor_model::error_text::quoted(host),
                "sending the bearer token over plain HTTP to a host that is not loopback (--insecure-send-token-over-http)"
            );
            return Ok(());
        }
        anyhow::bail!(
            "refusing to send the bearer token over plain HTTP to {}, which is not loopback: \
             use an https:// server URL (TLS), or pass --insecure-send-token-over-http if the \
             network between is trusted",
            ichor_model::error_text::quoted(host)
        )
    }

    /// The same options with `protocol`.
    pub fn with_protocol(mut self, protocol: Protocol) -> RemoteOptions {
        self.protocol = protocol;
        self
    }

    /// Checks the URL, the token and the CA file's fit with the scheme.
    pub(super) fn target(&self) -> anyhow::Result<Target> {
        let quoted = ichor_model::error_text::quoted(&self.url);
        let uri: http::Uri = self
            .url
            .parse()
            .with_context(|| format!("the server URL {quoted} is not a URL"))?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => anyhow::bail!("the server URL {quoted} must start with https:// or http://"),
        };
        if uri.host().is_none() {
            anyhow::bail!("the server URL {quoted} names no host");
        }
        if !https && self.ca_pem.is_some() {
            anyhow::bail!("--ca-file is given but the server URL {quoted} is not https");
        }
        let token = match &self.token {
            Some(t) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {t}")).map_err(|_| {
                    anyhow::anyhow!("the bearer token contains characters a header cannot carry")
                })?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        Ok(Target {
            uri,
            https,
            token,
            ca_pem: self.ca_pem.clone(),
        })
    }
}

/// The bearer token: the first line of `token_file` when given, else `$ICHOR_TOKEN` (`env`),
/// else none. An empty file or variable is an error, not an anonymous call.
pub fn load_token(
    token_file: Option<&Path>,
    env: Option<String>,
) -> anyhow::Result<Option<String>> {
    let (token, from) = match (token_file, env) {
        (Some(path), _) => (
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the token file {}", path.display()))?,
            format!("the token file {}", path.display()),
        ),
        (None, Some(v)) => (v, format!("${TOKEN_ENV}")),
        (None, None) => return Ok(None),
    };
    let token = token.trim().to_string();
    if token.is_empty() {
        anyhow::bail!("{from} is empty");
    }
    Ok(Some(token))
}
