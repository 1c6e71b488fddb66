//! What the terminal layer gives the loop: the [`Host`]'s hooks (suspend on Ctrl-Z, a
//! notification, reaching another kubeconfig context for `:ctx`), and the switch to the
//! service a context reached.

use super::workers::Workers;
use super::{Runtime, panics};
use ichor_app::action::Action;
use ichor_model::OperationClient;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Hooks the terminal layer provides (suspend on Ctrl-Z). Tests use the no-op.
pub trait Host {
    /// Restores the terminal, stops the process until `fg`, then takes the terminal again.
    fn suspend(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Says an operation's outcome (the bell, a desktop notification).
    fn notify(&mut self, _title: &str, _body: &str) -> anyhow::Result<()> {
        Ok(())
    }
    /// Reaches the service through kubeconfig context `context` (`:ctx`): `None` when this
    /// dashboard has no kubeconfig to switch in.
    fn reach_context(&mut self, _context: &str) -> Option<Reaching> {
        None
    }
}

/// The service reached through another kubeconfig context.
pub struct Reached {
    pub client: Arc<dyn OperationClient>,
    pub route: ichor_app::state::Route,
    pub namespace: String,
    pub all_namespaces: bool,
    /// Who the context's credentials are, when known before the first answer.
    pub user: Option<String>,
    /// The config marks the context production (by its name, or by its API server's).
    pub production: bool,
    /// Writes are off there (`--read-only`, or the config marks the context read only).
    pub read_only: bool,
    /// The API server the context reaches (the status bar names it).
    pub api_server: Option<ichor_model::ApiServer>,
}

/// A context being reached: the new connection, or why there is none (one line, bounded).
pub type Reaching =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Reached, String>> + Send>>;

/// What reaches a kubeconfig context by its name (`:ctx`).
pub type ContextReacher = Box<dyn FnMut(&str) -> Reaching + Send>;

/// A host that does nothing (tests, benchmarks).
pub struct NoHost;
impl Host for NoHost {}

impl Runtime {
    /// A context was reached (or not): on success every read and the subscription of the
    /// connection before are stopped, and what they still send is dropped with their channel
    /// (a write cannot be in flight: `:ctx` waits for it); the new client answers from now on.
    pub(super) fn switch(
        &mut self,
        context: String,
        reached: Result<Reached, String>,
        tx: &mut mpsc::UnboundedSender<Action>,
        rx: &mut mpsc::UnboundedReceiver<Action>,
        workers: &mut Workers,
    ) -> Action {
        let reached = match reached {
            Ok(r) => r,
            Err(message) => return Action::ContextFailed { context, message },
        };
        *workers = Workers::default();
        (*tx, *rx) = mpsc::unbounded_channel();
        panics::report_to(tx.clone());
        self.client = reached.client;
        Action::ContextReached(Box::new(ichor_app::action::Reached {
            context,
            route: reached.route,
            namespace: reached.namespace,
            all_namespaces: reached.all_namespaces,
            user: reached.user,
            pushes: self.client.pushes(),
            production: reached.production,
            read_only: reached.read_only,
            api_server: reached.api_server,
        }))
    }
}
