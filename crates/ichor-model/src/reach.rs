//! How the dashboard reaches the service: what the server said of its version, and why it runs
//! the service in-process when it does.

/// What a remote server said of its version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ServerVersion {
    /// No answer yet (or not a remote backend).
    #[default]
    NotYet,
    /// It answered without naming its version.
    Unknown,
    /// It named this version.
    Known(String),
}

/// Why the dashboard runs the service in-process instead of reaching ichor-ui.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// `--backend in-process`.
    Chosen,
    /// No such Service.
    NotFound,
    /// The Service has no ready pod.
    NotReady,
    /// The Service has no port of that name (or a pod lacks the port it names).
    NoPort,
    /// The kubeconfig's user authenticates without a token that could be forwarded.
    NoToken { how: &'static str },
    /// Kubernetes refused to show the Service or to open the forward.
    Forbidden { detail: String },
    /// The tunnel opened, but ichor-ui did not answer in time (or at all).
    NotAnswering { detail: String },
}

impl std::fmt::Display for Fallback {
    /// In English, for logs and errors (the screens say it in the person's language).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fallback::Chosen => write!(f, "the service in-process was chosen"),
            Fallback::NotFound => write!(f, "there is no such Service"),
            Fallback::NotReady => write!(f, "no pod of it is ready"),
            Fallback::NoPort => write!(f, "it has no port of that name"),
            Fallback::NoToken { how } => {
                write!(
                    f,
                    "the kubeconfig's user has no bearer token to forward ({how})"
                )
            }
            Fallback::Forbidden { detail } => write!(f, "Kubernetes refused: {detail}"),
            Fallback::NotAnswering { detail } => write!(f, "it did not answer: {detail}"),
        }
    }
}

/// A Kubernetes API server, as a kubeconfig's cluster or the config's `[[contexts]] server`
/// names it, normalised so that two spellings of one URL are one server: the scheme and the host
/// lowercased, the scheme's default port made explicit, the path's trailing slashes dropped, and
/// no user info, query or fragment. Names are not resolved: an IP address and a DNS name of one
/// machine are two servers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApiServer {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

impl ApiServer {
    /// A server from the parts of a URL (the caller parses it): `None` for a scheme other than
    /// `http` or `https`, or no host.
    pub fn new(scheme: &str, host: &str, port: Option<u16>, path: &str) -> Option<ApiServer> {
        let scheme = scheme.to_ascii_lowercase();
        let default = match scheme.as_str() {
            "https" => 443,
            "http" => 80,
            _ => return None,
        };
        if host.is_empty() {
            return None;
        }
        Some(ApiServer {
            scheme,
            host: host.to_ascii_lowercase(),
            port: port.unwrap_or(default),
            path: path.trim_end_matches('/').to_string(),
        })
    }

    /// The whole URL, normalised: `https://api.example.com:443`.
    pub fn url(&self) -> String {
        format!("{}://{}:{}{}", self.scheme, self.host, self.port, self.path)
    }

    /// The host (an IPv6 address in brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, made explicit.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The path after the port, without trailing slashes (often empty).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether the port is the scheme's default (a short form leaves it out).
    pub fn default_port(&self) -> bool {
        matches!(
            (self.scheme.as_str(), self.port),
            ("https", 443) | ("http", 80)
        )
    }
}

impl std::fmt::Display for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url())
    }
}

#[cfg(test)]
mod tests {
    use super::ApiServer;

    #[test]
    fn one_server_however_its_url_is_spelt() {
        let a = ApiServer::new("HTTPS", "API.Example.com", None, "/").unwrap();
        let b = ApiServer::new("https", "api.example.com", Some(443), "").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.url(), "https://api.example.com:443");
        assert!(a.default_port());
        let c = ApiServer::new("https", "api.example.com", Some(6443), "/k8s/c-1//").unwrap();
        assert_ne!(a, c);
        assert_eq!(c.url(), "https://api.example.com:6443/k8s/c-1");
        assert!(!c.default_port());
        // http and https on the same host and port are two servers.
        assert_ne!(
            ApiServer::new("http", "h", Some(8080), ""),
            ApiServer::new("https", "h", Some(8080), "")
        );
        assert_eq!(ApiServer::new("ftp", "h", None, ""), None);
        assert_eq!(ApiServer::new("https", "", None, ""), None);
    }
}
