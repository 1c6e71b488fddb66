//! The simulated ichor controller: carries operations out inside the embedded cluster the way
//! the real controller does (cluster lock, machine order, steps, pause, failure, CA passes), so
//! the demo and the tests have something real to follow.

use anyhow::Context as _;
use ichor_resources::{
    CA_PASS_STAGES, CA_PASSES, CaRotationStatus, Condition, Machine, MachineProgress, MachineSteps,
    OperationKind, TalosCluster, TalosOperation, TalosOperationStatus, names, plan_steps,
};
use ichor_resources::{format_time, parse_time};
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams, PostParams};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long one machine step takes at speed 1.
const STEP_AT_SPEED_1: Duration = Duration::from_secs(4);

/// The controller, acting through its own kube client.
pub struct Controller {
    client: kube::Client,
    step: SignedDuration,
}

fn is_finished(op: &TalosOperation) -> bool {
    op.status
        .as_ref()
        .is_some_and(|s| s.phase == "Completed" || s.phase == "Failed")
}

fn paused_on_failure(op: &TalosOperation) -> bool {
    op.status
        .as_ref()
        .is_some_and(|s| s.phase == "Paused" && s.failure_reason.is_some())
}

fn name_of<K: kube::Resource>(k: &K) -> String {
    k.meta().name.clone().unwrap_or_default()
}

fn ns_of<K: kube::Resource>(k: &K) -> String {
    k.meta().namespace.clone().unwrap_or_default()
}

impl Controller {
    /// A controller acting through `client` whose machine steps take 4 s / `speed` (a speed
    /// that is not a positive number counts as 1).
    pub fn new(client: kube::Client, speed: f64) -> Controller {
        let speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            1.0
        };
        let step = Duration::from_secs_f64(STEP_AT_SPEED_1.as_secs_f64() / speed);
        Controller {
            client,
            step: SignedDuration::try_from(step).unwrap_or(SignedDuration::from_secs(4)),
        }
    }

    /// The duration of one machine step.
    fn step(&self) -> Duration {
        Duration::try_from(self.step).unwrap_or(STEP_AT_SPEED_1)
    }

    /// Runs until the task is dropped, reconciling a few times per step.
    pub(crate) async fn run(self) {
        let tick = (self.step() / 4).max(Duration::from_millis(10));
        loop {
            if let Err(e) = self.reconcile(Timestamp::now()).await {
                tracing::debug!(error = %format!("{e:#}"), "simulated controller pass failed");
            }
            tokio::time::sleep(tick).await;
        }
    }

    /// One pass over every cluster, as of `now`.
    pub async fn reconcile(&self, now: Timestamp) -> anyhow::Result<()> {
        let ops: Api<TalosOperation> = Api::all(self.client.clone());
        let clusters: Api<TalosCluster> = Api::all(self.client.clone());
        let machines: Api<Machine> = Api::all(self.client.clone());
        let lp = ListParams::default();
        let ops = ops.list(&lp).await.context("listing operations")?.items;
        let clusters = clusters.list(&lp).await.context("listing clusters")?.items;
        let machines = machines.list(&lp).await.context("listing machines")?.items;
        let mut by_cluster: BTreeMap<(String, String), Vec<TalosOperation>> = BTreeMap::new();
        for op in ops.into_iter().filter(|o| !is_finished(o)) {
            by_cluster
                .entry((ns_of(&op), op.spec.cluster.clone()))
                .or_default()
                .push(op);
        }
        for ((ns, cluster_name), mut ops) in by_cluster {
            ops.sort_by(|a, b| {
                let key = |o: &TalosOperation| {
                    (
                        o.metadata.creation_timestamp.clone(),
                        o.metadata.uid.clone(),
                    )
                };
                key(a).cmp(&key(b))
            });
            let Some(cluster) = clusters
                .iter()
                .find(|c| ns_of(*c) == ns && name_of(*c) == cluster_name)
            else {
                for op in &ops {
                    self.fail_operation(op, &format!("cluster {cluster_name} not found"), now)
                        .await?;
                }
                continue;
            };
            let cluster_machines: Vec<Machine> = machines
                .iter()
                .filter(|m| ns_of(*m) == ns && m.spec.cluster == cluster_name)
                .cloned()
                .collect();
            self.reconcile_cluster(cluster, &ops, &cluster_machines, now)
                .await?;
        }
        Ok(())
    }

    async fn fail_operation(
        &self,
        op: &TalosOperation,
        reason: &str,
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let mut op = op.clone();
        let st = op.status.get_or_insert_with(TalosOperationStatus::default);
        st.phase = "Failed".into();
        st.failure_reason = Some(reason.into());
        st.finished_at = Some(format_time(now));
        self.write_status(&op).await
    }

    async fn write_status(&self, op: &TalosOperation) -> anyhow::Result<()> {
        let api: Api<TalosOperation> = Api::namespaced(self.client.clone(), &ns_of(op));
        match api
            .replace_status(&name_of(op), &PostParams::default(), op)
            .await
        {
            Ok(_) => Ok(()),
            // Someone wrote first (a pause, a delete): the next pass reads afresh.
            Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => Ok(()),
            Err(e) => Err(e).context("writing operation status"),
        }
    }

    async fn set_lock(&self, cluster: &TalosCluster, holder: Option<String>) -> anyhow::Result<()> {
        let mut c = cluster.clone();
        c.status.get_or_insert_with(Default::default).lock_holder = holder;
        let api: Api<TalosCluster> = Api::namespaced(self.client.clone(), &ns_of(cluster));
        match api
            .replace_status(&name_of(cluster), &PostParams::default(), &c)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            Err(e) => Err(e).context("writing the cluster lock"),
        }
    }

    async fn reconcile_cluster(
        &self,
        cluster: &TalosCluster,
        ops: &[TalosOperation],
        machines: &[Machine],
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let current = cluster.status.as_ref().and_then(|s| s.lock_holder.clone());
        let holds = |name: &str| {
            ops.iter()
                .any(|o| name_of(o) == name && !paused_on_failure(o))
        };
        let holder = match current.as_deref() {
            Some(h) if holds(h) => Some(h.to_string()),
            // Free, or held by an operation that is gone, finished or paused on a failure.
            _ => ops.iter().find(|o| !paused_on_failure(o)).map(name_of),
        };
        if holder != current {
            self.set_lock(cluster, holder.clone()).await?;
        }
        for op in ops {
            let name = name_of(op);
            if Some(&name) == holder.as_ref() {
                self.advance(cluster, op, machines, now).await?;
            } else if !paused_on_failure(op)
                && let Some(h) = &holder
            {
                self.wait_for_lock(op, h, now).await?;
            }
        }
        Ok(())
    }

    async fn wait_for_lock(
        &self,
        op: &TalosOperation,
        holder: &str,
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let mut next = op.clone();
        let st = next
            .status
            .get_or_insert_with(TalosOperationStatus::default);
        st.phase = "Pending".into();
        let message = format!("cluster lock held by {holder}");
        st.conditions
            .retain(|c| c.type_ != names::CLUSTER_LOCK_HELD || c.message == message);
        if !st
            .conditions
            .iter()
            .any(|c| c.type_ == names::CLUSTER_LOCK_HELD)
        {
            st.conditions.push(Condition {
                type_: names::CLUSTER_LOCK_HELD.into(),
                status: "True".into(),
                reason: "LockHeld".into(),
                message,
                last_transition_time: Some(format_time(now)),
            });
        }
        if next.status != op.status {
            self.write_status(&next).await?;
        }
        Ok(())
    }

    fn target_text(kind: OperationKind, cluster: &TalosCluster) -> String {
        match kind {
            OperationKind::Talos => cluster.spec.talos_version.clone(),
            OperationKind::Kubernetes => cluster.spec.kubernetes_version.clone(),
            OperationKind::Cni => cluster.spec.cni.kube_proxy.clone(),
            _ => String::new(),
        }
    }

    fn running_message(kind: OperationKind, target: &str, pass: i32) -> String {
        match kind {
            OperationKind::Talos => format!("installing Talos {target} and rebooting"),
            OperationKind::Kubernetes => {
                format!("upgrading control plane components and kubelet to {target}")
            }
            OperationKind::Cni => format!("switching kube-proxy to {target}; restarting CNI pods"),
            OperationKind::Shutdown => "shutting down".into(),
            OperationKind::CaRotation => format!("pass {pass}: applying machine configuration"),
            OperationKind::Ichor => String::new(),
        }
    }

    fn done_message(kind: OperationKind, target: &str, pass: i32) -> String {
        match kind {
            OperationKind::Talos => format!("running Talos {target}"),
            OperationKind::Kubernetes => format!("running Kubernetes {target}"),
            OperationKind::Cni => format!("kube-proxy {target}"),
            OperationKind::Shutdown => "stopped".into(),
            OperationKind::CaRotation => format!("pass {pass}: configuration applied"),
            OperationKind::Ichor => String::new(),
        }
    }

    async fn advance(
        &self,
        cluster: &TalosCluster,
        op: &TalosOperation,
        machines: &[Machine],
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let Some(kind) = OperationKind::parse(&op.spec.kind) else {
            return self
                .fail_operation(
                    op,
                    &format!("unknown operation kind {:?}", op.spec.kind),
                    now,
                )
                .await;
        };
        let mut next = op.clone();
        let st = next
            .status
            .get_or_insert_with(TalosOperationStatus::default);
        st.conditions
            .retain(|c| c.type_ != names::CLUSTER_LOCK_HELD);
        let plan = plan_steps(kind, machines, op.spec.max_unavailable);
        let paused = op.spec.paused;
        match st.phase.as_str() {
            "" | "Pending" if st.started_at.is_none() => start(st, kind, &plan, paused, now),
            "" | "Pending" => st.phase = if paused { "Paused" } else { "Running" }.into(),
            "Paused" if st.failure_reason.is_none() && !paused => st.phase = "Running".into(),
            "Running" => {
                let progress = Progress {
                    kind,
                    target: Self::target_text(kind, cluster),
                    pass: st.ca_rotation.as_ref().map_or(0, |c| c.pass),
                    machines,
                    now,
                    step: self.step,
                };
                progress.advance_running(paused, &plan, st);
            }
            _ => {}
        }
        let finished = next.status.as_ref().is_some_and(|s| s.phase == "Completed");
        if next.status != op.status {
            self.write_status(&next).await?;
        }
        if finished {
            self.set_lock(cluster, None).await?;
            if kind == OperationKind::Ichor {
                tracing::debug!(cluster = %name_of(cluster), "ichor upgrade completed");
            }
        }
        Ok(())
    }
}

/// An operation's first status: every machine of the plan Pending in its order, the held
/// ones Skipped; Running (or Paused); the first CA pass of a CA rotation.
fn start(
    st: &mut TalosOperationStatus,
    kind: OperationKind,
    plan: &MachineSteps,
    paused: bool,
    now: Timestamp,
) {
    st.machines = plan
        .order()
        .map(|n| MachineProgress {
            name: n.to_string(),
            phase: "Pending".into(),
            ..Default::default()
        })
        .chain(plan.held.iter().map(|(n, reason)| MachineProgress {
            name: n.clone(),
            phase: "Skipped".into(),
            message: format!("held: {reason}"),
            ..Default::default()
        }))
        .collect();
    st.phase = if paused { "Paused" } else { "Running" }.into();
    st.started_at = Some(format_time(now));
    if kind == OperationKind::CaRotation {
        st.ca_rotation = Some(CaRotationStatus {
            stage: CA_PASS_STAGES[0].0.into(),
            pass: 1,
            passes: CA_PASSES,
        });
    }
}

/// What moving a running operation along needs to know.
struct Progress<'a> {
    kind: OperationKind,
    /// The version or mode the operation goes to (see [`Controller::target_text`]).
    target: String,
    /// The CA rotation's pass (0 for other kinds).
    pass: i32,
    /// The cluster's machines.
    machines: &'a [Machine],
    now: Timestamp,
    /// How long one machine step takes.
    step: SignedDuration,
}

impl Progress<'_> {
    /// One move of a Running operation: finish the step under way, or pause, or start the next
    /// step, or (every machine of the pass done) start the next CA pass, or complete.
    fn advance_running(&self, paused: bool, plan: &MachineSteps, st: &mut TalosOperationStatus) {
        if st.machines.iter().any(|m| m.phase == "Running") {
            self.finish_due_machines(st);
            return;
        }
        if paused {
            st.phase = "Paused".into();
            return;
        }
        if self.start_next_step(plan, st) {
            return;
        }
        // Every machine of this pass is done.
        if self.kind == OperationKind::Ichor && self.elapsed(st.started_at.as_deref()) < self.step {
            return;
        }
        if self.next_ca_pass(st) {
            return;
        }
        st.phase = "Completed".into();
        st.finished_at = Some(format_time(self.now));
    }

    /// The time since `since` (zero when unknown).
    fn elapsed(&self, since: Option<&str>) -> SignedDuration {
        since
            .and_then(parse_time)
            .map(|t| self.now.duration_since(t))
            .unwrap_or(SignedDuration::ZERO)
    }

    /// Whether the demo data marks the machine `name` to fail this kind of operation.
    fn fails(&self, name: &str) -> bool {
        self.machines.iter().any(|x| {
            name_of(x) == name
                && x.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(names::DEMO_FAIL))
                    .is_some_and(|k| k == self.kind.as_str())
        })
    }

    /// The step under way: its machines whose time has come are done, or failed (which pauses
    /// the operation with the failure).
    fn finish_due_machines(&self, st: &mut TalosOperationStatus) {
        for m in st.machines.iter_mut().filter(|m| m.phase == "Running") {
            if self.elapsed(m.started_at.as_deref()) < self.step {
                continue;
            }
            m.finished_at = Some(format_time(self.now));
            if self.fails(&m.name) {
                m.phase = "Failed".into();
                m.message = "installer exited with code 1: image verification failed".into();
                st.failure_reason = Some(format!("machine {} failed: {}", m.name, m.message));
                st.phase = "Paused".into();
            } else {
                m.phase = "Completed".into();
                m.message = Controller::done_message(self.kind, &self.target, self.pass);
            }
        }
    }

    /// Starts the first step of the plan that still has Pending machines; false when none has.
    fn start_next_step(&self, plan: &MachineSteps, st: &mut TalosOperationStatus) -> bool {
        let pending = |name: &str| {
            st.machines
                .iter()
                .any(|m| m.name == name && m.phase == "Pending")
        };
        let Some(step) = plan
            .steps
            .iter()
            .map(|s| s.iter().filter(|n| pending(n)).cloned().collect::<Vec<_>>())
            .find(|s| !s.is_empty())
        else {
            return false;
        };
        for m in st.machines.iter_mut().filter(|m| step.contains(&m.name)) {
            m.phase = "Running".into();
            m.started_at = Some(format_time(self.now));
            m.finished_at = None;
            m.message = Controller::running_message(self.kind, &self.target, self.pass);
        }
        true
    }

    /// A CA rotation whose pass is done moves on: after pass 3 it first awaits the new
    /// credentials for a step, then every machine is Pending again for the next pass. False
    /// when there is no pass left (or no CA rotation).
    fn next_ca_pass(&self, st: &mut TalosOperationStatus) -> bool {
        let Some(ca) = st.ca_rotation.as_mut().filter(|ca| ca.pass < CA_PASSES) else {
            return false;
        };
        let last_finish = st
            .machines
            .iter()
            .filter_map(|m| m.finished_at.as_deref().and_then(parse_time))
            .max()
            .unwrap_or(self.now);
        // Between the issuing and the dropping passes the controller hands the new
        // credentials over and waits briefly for them to be picked up.
        if ca.pass == 3 && ca.stage != "AwaitingCredentials" {
            ca.stage = "AwaitingCredentials".into();
            return true;
        }
        if ca.stage == "AwaitingCredentials" && self.now.duration_since(last_finish) < self.step {
            return true;
        }
        ca.pass += 1;
        let idx = usize::try_from(ca.pass - 1)
            .unwrap_or(0)
            .min(CA_PASS_STAGES.len() - 1);
        ca.stage = CA_PASS_STAGES[idx].0.into();
        for m in st.machines.iter_mut() {
            m.phase = "Pending".into();
            m.started_at = None;
            m.finished_at = None;
            m.message = String::new();
        }
        true
    }
}
