//! What the machines report they run: as a Talos or Kubernetes step completes on a machine,
//! its status says the version it now runs (as a real machine's would), so the clusters screen
//! and the plan can tell which machines already run a target.

use super::{Controller, name_of, ns_of};
use anyhow::Context as _;
use ichor_resources::{Machine, MachineStatus, OperationKind, TalosOperationStatus};
use kube::api::Api;

impl Controller {
    /// Writes the version `target` on each machine whose step completed between `old` and
    /// `new` (Talos and Kubernetes operations only).
    pub(super) async fn report_versions(
        &self,
        kind: OperationKind,
        target: &str,
        (old, new): (&TalosOperationStatus, &TalosOperationStatus),
        machines: &[Machine],
    ) -> anyhow::Result<()> {
        if !matches!(kind, OperationKind::Talos | OperationKind::Kubernetes) || target.is_empty() {
            return Ok(());
        }
        let was_done = |name: &str| {
            old.machines
                .iter()
                .any(|m| m.name == name && m.phase == "Completed")
        };
        let done = new
            .machines
            .iter()
            .filter(|m| m.phase == "Completed" && !was_done(&m.name));
        for step in done {
            let Some(machine) = machines.iter().find(|m| name_of(*m) == step.name) else {
                continue;
            };
            let mut next = machine.clone();
            let status = next.status.get_or_insert_with(MachineStatus::default);
            let field = match kind {
                OperationKind::Talos => &mut status.talos_version,
                _ => &mut status.kubernetes_version,
            };
            *field = Some(target.to_string());
            let api: Api<Machine> = Api::namespaced(self.client.clone(), &ns_of(machine));
            match api
                .replace_status(&name_of(machine), &super::writes(), &next)
                .await
            {
                Ok(_) => {}
                // Changed meanwhile: the next completion (or pass) does not rewrite it; a
                // version not reported says nothing rather than something wrong.
                Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => {}
                Err(e) => return Err(e).context("writing machine status"),
            }
        }
        Ok(())
    }
}
