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
