//! The simulated ichor controller: carries operations out inside the embedded cluster the way
//! the real controller does (cluster lock, machine order, steps, pause, failure, CA passes), so
//! the demo and the tests have something real to follow; and records what it does as core
//! Events, as a real controller does (`notes` says which, `recorder` records them).
//!
//! It watches the operations, clusters and machines (`world`) and reconciles when one changes,
//! and while an operation runs also a few times per machine step (its steps advance with
//! time); with nothing running and nothing changing it asks the API nothing.
//!
//! It reads its objects one by one (`tolerant`), as Kubernetes controllers do: an object it
//! cannot read is skipped with a Warning Event on it (once per resourceVersion), and every
//! other operation goes on. An operation that cannot be read keeps the cluster lock it holds;
//! a cluster that cannot be read, or a machine that may be one of its, holds that cluster's
//! operations where they are (a plan read without that machine would leave it out), until it
//! can be read.

mod notes;
mod progress;
mod recorder;
mod tolerant;
mod versions;
mod world;

pub use self::notes::reasons;
pub(crate) use self::notes::{Context as NoteContext, Note, Regarding};
pub use self::recorder::COMPONENT;
pub(crate) use self::recorder::{event, event_name};

use self::notes::notes;
use self::progress::{Progress, start};
use self::recorder::Recorder;
use self::tolerant::Unreadable;
use self::world::{Watching, World, is_finished};
use anyhow::Context as _;
use ichor_resources::format_time;
use ichor_resources::{
    Condition, Machine, OperationKind, TalosCluster, TalosOperation, TalosOperationStatus, names,
    plan_steps,
};
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, PostParams};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

/// How long one machine step takes at speed 1.
const STEP_AT_SPEED_1: Duration = Duration::from_secs(4);

/// The controller, acting through its own kube client (its Events too).
pub struct Controller {
    client: kube::Client,
    step: SignedDuration,
    recorder: Recorder,
    /// The unreadable objects reported, each as read (kind, namespace, name, uid,
    /// resourceVersion): a Warning once per reading, not on every pass. Only those unreadable
    /// at the last pass are kept.
    reported: Mutex<BTreeSet<tolerant::Identity>>,
}

fn paused_on_failure(op: &TalosOperation) -> bool {
    op.status
        .as_ref()
        .is_some_and(|s| s.phase == "Paused" && s.failure_reason.is_some())
}

/// `cluster` with the lock held by `holder` (or free) and, when a CA rotation completed at
/// `rotated`, its `BundleBackupStale` condition.
fn with_lock(
    cluster: &TalosCluster,
    holder: Option<String>,
    rotated: Option<Timestamp>,
) -> TalosCluster {
    let mut c = cluster.clone();
    let status = c.status.get_or_insert_with(Default::default);
    status.lock_holder = holder;
    if let Some(at) = rotated {
        status
            .conditions
            .retain(|x| x.type_ != names::BUNDLE_BACKUP_STALE);
        status.conditions.push(Condition {
            type_: names::BUNDLE_BACKUP_STALE.into(),
            status: "True".into(),
            reason: "CARotated".into(),
            message: format!(
                "the backup of the secrets bundle of {} predates its new CA; export it again",
                name_of(cluster)
            ),
            last_transition_time: Some(format_time(at)),
        });
    }
    c
}

/// How the controller writes: as its own field manager (`managedFields` names it).
pub(crate) fn writes() -> PostParams {
    PostParams {
        field_manager: Some(COMPONENT.to_string()),
        ..PostParams::default()
    }
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
            recorder: Recorder::new(client.clone()),
            client,
            step: SignedDuration::try_from(step).unwrap_or(SignedDuration::from_secs(4)),
            reported: Mutex::new(BTreeSet::new()),
        }
    }

    /// The duration of one machine step.
    fn step(&self) -> Duration {
        Duration::try_from(self.step).unwrap_or(STEP_AT_SPEED_1)
    }

    /// Runs until the task is dropped: a pass on every change its watches see, and a few per
    /// machine step while an operation runs.
    pub async fn run(self) {
        let tick = (self.step() / 4).max(Duration::from_millis(10));
        let mut watching = Watching::start(&self.client);
        watching.ready().await;
        loop {
            let world = watching.world();
            let running = world.has_running();
            if let Err(e) = self.reconcile_world(world, Timestamp::now()).await {
                tracing::debug!(error = %format!("{e:#}"), "simulated controller pass failed");
            }
            if running {
                tokio::select! {
                    () = watching.changed() => {}
                    () = tokio::time::sleep(tick) => {}
                }
            } else {
                watching.changed().await;
            }
        }
    }

    /// One pass over every cluster, as of `now`, from lists of every object.
    pub async fn reconcile(&self, now: Timestamp) -> anyhow::Result<()> {
        let world = World::listed(&self.client).await?;
        self.reconcile_world(world, now).await
    }

    /// One pass over the clusters of the operations in `world`.
    async fn reconcile_world(&self, world: World, now: Timestamp) -> anyhow::Result<()> {
        let World {
            ops,
            clusters,
            machines,
        } = world;
        self.report_unreadable(
            [&ops.unreadable, &clusters.unreadable, &machines.unreadable],
            now,
        )
        .await;
        let mut by_cluster: BTreeMap<(String, String), Vec<TalosOperation>> = BTreeMap::new();
        for op in ops.items.into_iter().filter(|o| !is_finished(o)) {
            by_cluster
                .entry((ns_of(&op), op.spec.cluster.clone()))
                .or_default()
                .push(op);
        }
        for ((ns, cluster_name), mut ops_here) in by_cluster {
            ops_here.sort_by(|a, b| {
                let key = |o: &TalosOperation| {
                    (
                        o.metadata.creation_timestamp.clone(),
                        o.metadata.uid.clone(),
                    )
                };
                key(a).cmp(&key(b))
            });
            // The cluster, or a machine that may be one of its, cannot be read: its operations
            // wait where they are (a cluster that cannot be read is not one that is gone).
            let cluster_unreadable = clusters
                .unreadable
                .iter()
                .any(|u| u.namespace() == ns && u.name() == cluster_name);
            let machine_unreadable = machines
                .unreadable
                .iter()
                .any(|u| u.namespace() == ns && u.may_belong_to(&cluster_name));
            if cluster_unreadable || machine_unreadable {
                continue;
            }
            let Some(cluster) = clusters
                .items
                .iter()
                .find(|c| ns_of(*c) == ns && name_of(*c) == cluster_name)
            else {
                for op in &ops_here {
                    self.fail_operation(op, &format!("cluster {cluster_name} not found"), now)
                        .await?;
                }
                continue;
            };
            let cluster_machines: Vec<Machine> = machines
                .items
                .iter()
                .filter(|m| ns_of(*m) == ns && m.spec.cluster == cluster_name)
                .cloned()
                .collect();
            // An operation that cannot be read keeps the cluster lock it holds.
            let unreadable_ops: Vec<&str> = ops
                .unreadable
                .iter()
                .filter(|u| u.namespace() == ns)
                .filter_map(|u| u.meta.name.as_deref())
                .collect();
            self.reconcile_cluster(cluster, &ops_here, &unreadable_ops, &cluster_machines, now)
                .await?;
        }
        Ok(())
    }

    /// A Warning Event on each object that cannot be read, once per resourceVersion read.
    async fn report_unreadable(&self, lists: [&Vec<Unreadable>; 3], now: Timestamp) {
        let mut unreadable = BTreeSet::new();
        let mut new = Vec::new();
        {
            let reported = self.reported.lock().unwrap_or_else(|p| p.into_inner());
            for u in lists.into_iter().flatten() {
                let id = tolerant::identity(u);
                if !reported.contains(&id) {
                    new.push(u);
                }
                unreadable.insert(id);
            }
        }
        for u in new {
            let skipped = match u.kind.as_str() {
                "TalosOperation" => {
                    "it is skipped until it can be read (it keeps the cluster lock it holds); every other operation goes on"
                }
                "TalosCluster" => "its operations wait until it can be read",
                _ => "the operations of its cluster wait until it can be read",
            };
            let note = Note::unreadable(&u.kind, &u.why, skipped);
            tracing::debug!(kind = %u.kind, namespace = %u.namespace(), name = %u.name(), why = %u.why, "skipping an object that cannot be read");
            self.recorder.record_on(u.reference(), &note, now).await;
        }
        *self.reported.lock().unwrap_or_else(|p| p.into_inner()) = unreadable;
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
        if self.write_status(&op).await? {
            self.recorder
                .record(&[Note::failed(reason)], &op, &[], now)
                .await;
        }
        Ok(())
    }

    /// Writes an operation's status; whether it was written.
    async fn write_status(&self, op: &TalosOperation) -> anyhow::Result<bool> {
        let api: Api<TalosOperation> = Api::namespaced(self.client.clone(), &ns_of(op));
        match api.replace_status(&name_of(op), &writes(), op).await {
            Ok(_) => Ok(true),
            // Someone wrote first (a pause, a delete): the next pass reads afresh.
            Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => Ok(false),
            Err(e) => Err(e).context("writing operation status"),
        }
    }

    /// Sets (or frees) the cluster lock; `rotated`: a CA rotation completed at that moment, so
    /// the cluster's secrets bundle backup is stale from then on (`BundleBackupStale`). The
    /// rotation is not seen again (it completed): when the write loses a race, its condition
    /// is written once more on a fresh read.
    async fn set_lock(
        &self,
        cluster: &TalosCluster,
        holder: Option<String>,
        rotated: Option<Timestamp>,
    ) -> anyhow::Result<()> {
        let api: Api<TalosCluster> = Api::namespaced(self.client.clone(), &ns_of(cluster));
        let name = name_of(cluster);
        let mut read = cluster.clone();
        for _ in 0..2 {
            let c = with_lock(&read, holder.clone(), rotated);
            match api.replace_status(&name, &writes(), &c).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 && rotated.is_some() => {
                    read = api.get_status(&name).await?;
                }
                Err(kube::Error::Api(s)) if s.code == 409 => return Ok(()),
                Err(e) => return Err(e).context("writing the cluster lock"),
            }
        }
        Ok(())
    }

    /// One cluster's unfinished operations (`unreadable`: the names of the operations of its
    /// namespace that cannot be read; one of them that holds the lock keeps it).
    async fn reconcile_cluster(
        &self,
        cluster: &TalosCluster,
        ops: &[TalosOperation],
        unreadable: &[&str],
        machines: &[Machine],
        now: Timestamp,
    ) -> anyhow::Result<()> {
        let current = cluster.status.as_ref().and_then(|s| s.lock_holder.clone());
        let holds = |name: &str| {
            unreadable.contains(&name)
                || ops
                    .iter()
                    .any(|o| name_of(o) == name && !paused_on_failure(o))
        };
        let holder = match current.as_deref() {
            Some(h) if holds(h) => Some(h.to_string()),
            // Free, or held by an operation that is gone, finished or paused on a failure.
            _ => ops.iter().find(|o| !paused_on_failure(o)).map(name_of),
        };
        if holder != current {
            self.set_lock(cluster, holder.clone(), None).await?;
        }
        for op in ops {
            let name = name_of(op);
            if Some(&name) == holder.as_ref() {
                self.advance(cluster, op, machines, now).await?;
            } else if !paused_on_failure(op)
                && let Some(h) = &holder
            {
                self.wait_for_lock(op, &name_of(cluster), h, now).await?;
            }
        }
        Ok(())
    }

    async fn wait_for_lock(
        &self,
        op: &TalosOperation,
        cluster: &str,
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
        let newly = !st
            .conditions
            .iter()
            .any(|c| c.type_ == names::CLUSTER_LOCK_HELD);
        if newly {
            st.conditions.push(Condition {
                type_: names::CLUSTER_LOCK_HELD.into(),
                status: "True".into(),
                reason: "LockHeld".into(),
                message,
                last_transition_time: Some(format_time(now)),
            });
        }
        if next.status != op.status && self.write_status(&next).await? && newly {
            let note = Note::waiting_for_lock(cluster, holder);
            self.recorder.record(&[note], op, &[], now).await;
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
        let target = Self::target_text(kind, cluster);
        match st.phase.as_str() {
            "" | "Pending" if st.started_at.is_none() => start(st, kind, &plan, paused, now),
            "" | "Pending" => st.phase = if paused { "Paused" } else { "Running" }.into(),
            "Paused" if st.failure_reason.is_none() && !paused => st.phase = "Running".into(),
            "Running" => {
                let progress = Progress {
                    kind,
                    target: target.clone(),
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
        if next.status != op.status && self.write_status(&next).await? {
            let ctx = NoteContext {
                operation: &name_of(op),
                kind,
                cluster: &name_of(cluster),
                target: &target,
                plan: &plan,
            };
            let empty = TalosOperationStatus::default();
            let (old, new) = (
                op.status.as_ref().unwrap_or(&empty),
                next.status.as_ref().unwrap_or(&empty),
            );
            let notes = notes(&ctx, old, new);
            self.recorder.record(&notes, op, machines, now).await;
            self.report_versions(kind, &target, (old, new), machines)
                .await?;
        }
        if finished {
            let rotated = (kind == OperationKind::CaRotation).then_some(now);
            self.set_lock(cluster, None, rotated).await?;
            if kind == OperationKind::Ichor {
                tracing::debug!(cluster = %name_of(cluster), "ichor upgrade completed");
            }
        }
        Ok(())
    }
}
