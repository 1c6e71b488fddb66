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
