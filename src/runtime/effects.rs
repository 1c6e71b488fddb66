//! An action applied: `update` turns it into Effects; those that call the service run on
//! workers, which post their results back as Actions; the loop itself handles the rest
//! (suspend, quit, a context switch, an outcome's notification).

use super::frames::full_redraw;
use super::workers::Workers;
use super::{Host, Runtime, panics, perform, report};
use ichor_app::action::{Action, Effect};
use ichor_app::update::update;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;

impl Runtime {
    /// Starts the effects that call the service on workers, which post their results back as
    /// Actions; returns the effects the loop itself handles (suspend, quit). A write once sent
    /// runs to its end on its worker, as in `serve`: abandoning it stops the waiting (the app
    /// drops its answer), never the write, so nothing it began is left half done.
    pub(super) fn run_effects(
        &self,
        effects: Vec<Effect>,
        tx: &mpsc::UnboundedSender<Action>,
        workers: &mut Workers,
    ) -> Vec<Effect> {
        let mut local = Vec::new();
        for e in effects {
            match e {
                Effect::Suspend
                | Effect::Quit
                | Effect::Notify { .. }
                | Effect::SwitchContext(_) => {
                    local.push(e);
                    continue;
                }
                Effect::SaveReport { namespace, name } => {
                    let client = self.client.clone();
                    let lang = self.texts.lang();
                    let (tz, tx) = (self.state.tz.clone(), tx.clone());
                    tokio::spawn(async move {
                        let dir = std::env::current_dir().map_err(|e| e.to_string());
                        let saved = match dir {
                            Ok(dir) => {
                                let of = (namespace.as_str(), name.as_str());
                                report::save(client.as_ref(), lang, tz, &dir, of).await
                            }
                            Err(e) => Err(e),
                        };
                        let _ = tx.send(Action::ReportSaved {
                            name,
                            result: saved,
                        });
                    });
                    continue;
                }
                Effect::Watch { sub, request } => {
                    workers
                        .live
                        .replace(self.client.clone(), sub, request, tx.clone());
                    continue;
                }
                _ => {}
            }
            let client = self.client.clone();
            let tx = tx.clone();
            let what = e.what();
            let slot = e.slot();
            let task = tokio::spawn(async move {
                let answer = panics::answered(what, perform(client.as_ref(), e)).await;
                if let Some(action) = answer {
                    let _ = tx.send(action);
                }
            });
            if let Some(slot) = slot {
                workers.read(slot, task.abort_handle());
            }
        }
        local
    }

    /// Applies one action and starts its effects; says whether the screen must be repainted
    /// whole (after a redraw request or a suspend).
    pub(super) fn apply<B>(
        &mut self,
        a: Action,
        terminal: &mut Terminal<B>,
        host: &mut dyn Host,
        tx: &mpsc::UnboundedSender<Action>,
        workers: &mut Workers,
    ) -> anyhow::Result<bool>
    where
        B: Backend,
        B::Error: Send + Sync + 'static,
    {
        let mut repaint = false;
        if a == Action::Redraw {
            full_redraw(terminal)?;
            repaint = true;
        }
        self.state.now = self.clock.now();
        let effects = update(&mut self.state, a);
        for e in self.run_effects(effects, tx, workers) {
            match e {
                Effect::Suspend => {
                    host.suspend()?;
                    full_redraw(terminal)?;
                    repaint = true;
                }
                Effect::Quit => self.state.quit = true,
                Effect::SwitchContext(context) => match host.reach_context(&context) {
                    Some(reaching) => workers.reach(context, reaching),
                    None => {
                        let message = "this dashboard has no kubeconfig".to_string();
                        let failed = Action::ContextFailed { context, message };
                        let _ = tx.send(failed);
                    }
                },
                Effect::Notify {
                    outcome,
                    name,
                    cluster,
                } => {
                    let (title, body) = self.notification(outcome, &name, &cluster);
                    if let Err(e) = host.notify(&title, &body) {
                        tracing::info!(error = %e, "the notification could not be written");
                    }
                }
                _ => {}
            }
        }
        Ok(repaint)
    }

    /// The words of an outcome's notification: a title and a line.
    fn notification(
        &self,
        outcome: ichor_app::state::Outcome,
        name: &str,
        cluster: &str,
    ) -> (String, String) {
        use ichor_app::state::Outcome;
        let key = match outcome {
            Outcome::Completed => "notify-completed",
            Outcome::Failed => "notify-failed",
            Outcome::AwaitsCredentials => "notify-awaits-credentials",
            Outcome::Slow => "notify-slow",
        };
        let t = &self.texts;
        (
            t.t("notify-title"),
            t.tr(key, &[("name", name), ("cluster", cluster)]),
        )
    }
}
