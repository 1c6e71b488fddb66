//! `[[contexts]]`: kubeconfig contexts marked production or read only, by their name (`match`,
//! a glob: `*` any run of characters, `?` one), by the API server they reach (`server`, a URL
//! compared normalised, see [`ichor_model::ApiServer`]), or by both (a rule with both marks the
//! contexts for which both hold).
//!
//! A mark belongs to the API server, not to the name it is reached by: a context the rules mark
//! marks its API server, and every context of the kubeconfig that reaches that server carries
//! the mark too (`ichor-prod` marked production makes `operator@ichor-prod`, another user on the
//! same server, production). The dashboard at start, `:ctx`, `--context` and every command ask
//! [`ContextRules::marks`] with the whole kubeconfig.

use ichor_model::ApiServer;
use serde::Deserialize;

/// One `[[contexts]]` entry: which contexts, and what they are.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(try_from = "WrittenRule")]
pub(crate) struct ContextRule {
    /// A glob of context names.
    pub(crate) pattern: Option<String>,
    /// The API server the contexts reach.
    pub(crate) server: Option<ApiServer>,
    pub(crate) production: bool,
    pub(crate) read_only: bool,
}

/// The entry as written, checked into a [`ContextRule`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct WrittenRule {
    #[serde(rename = "match")]
    pattern: Option<String>,
    #[serde(default, deserialize_with = "server_url")]
    server: Option<ApiServer>,
    #[serde(default)]
    production: bool,
    #[serde(default)]
    read_only: bool,
}

impl TryFrom<WrittenRule> for ContextRule {
    type Error = String;

    fn try_from(w: WrittenRule) -> Result<ContextRule, String> {
        if w.pattern.is_none() && w.server.is_none() {
            return Err(
                "[[contexts]] needs match = \"GLOB\" (the context's name) or server = \"URL\" (its API server)"
                    .to_string(),
            );
        }
        Ok(ContextRule {
            pattern: w.pattern,
            server: w.server,
            production: w.production,
            read_only: w.read_only,
        })
    }
}

/// `server = "URL"`: an API server's URL, said at its line and column when it is not one.
fn server_url<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ApiServer>, D::Error> {
    let url = String::deserialize(d)?;
    match api_server(&url) {
        Some(server) => Ok(Some(server)),
        None => Err(serde::de::Error::custom(format!(
            "[[contexts]] server must be an API server's URL, such as \"https://10.0.0.1:6443\", not {}",
            ichor_model::error_text::quoted(&ichor_model::inert::truncate(&url, 100))
        ))),
    }
}

/// The API server `url` names, normalised; `None` when it is not an `http` or `https` URL with
/// a host. (The URL is parsed as kube parses a kubeconfig's server: as an `http::Uri`.)
pub(crate) fn api_server(url: &str) -> Option<ApiServer> {
    let uri: http::Uri = url.trim().parse().ok()?;
    ApiServer::new(uri.scheme_str()?, uri.host()?, uri.port_u16(), uri.path())
}

/// What the rules make of a context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    pub(crate) production: bool,
    pub(crate) read_only: bool,
}

impl Marks {
    fn or(self, other: Marks) -> Marks {
        Marks {
            production: self.production || other.production,
            read_only: self.read_only || other.read_only,
        }
    }
}

/// The context rules, in the order written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ContextRules(pub(crate) Vec<ContextRule>);

impl ContextRules {
    /// The marks of the rules that name context `name` reaching `server` itself.
    fn own(&self, name: &str, server: Option<&ApiServer>) -> Marks {
        self.0
            .iter()
            .filter(|r| {
                let named = r
                    .pattern
                    .as_ref()
                    .is_none_or(|p| wildmatch::WildMatch::new(p).matches(name));
                let reached = r.server.as_ref().is_none_or(|s| Some(s) == server);
                named && reached
            })
            .fold(Marks::default(), |m, r| {
                m.or(Marks {
                    production: r.production,
                    read_only: r.read_only,
                })
            })
    }

    /// The marks of context `name`, which reaches `server`, in a kubeconfig whose contexts
    /// (each with the API server it reaches, `name` among them) are `all`: its own, and those
    /// of every context that reaches the same server.
    pub(crate) fn marks<'a>(
        &self,
        name: &str,
        server: Option<&ApiServer>,
        all: impl IntoIterator<Item = (&'a str, Option<&'a ApiServer>)>,
    ) -> Marks {
        let own = self.own(name, server);
        let Some(server) = server else {
            return own;
        };
        all.into_iter()
            .filter(|(_, s)| *s == Some(server))
            .fold(own, |m, (other, s)| m.or(self.own(other, s)))
    }
}

#[cfg(test)]
mod tests;
