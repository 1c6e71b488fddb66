//! The cluster's start claim: a `coordination.k8s.io/v1` Lease per cluster, taken by a start
//! with the API server's optimistic concurrency (create, or replace with the resourceVersion
//! read), so that of concurrent starts on one cluster exactly one goes on, across processes.
//!
//! The claim serializes starts; it ends with the start's outcome: given back right after the
//! create answered (or when nothing was created), kept while an unanswered create may still
//! land (marked settling) until the API server's own request timeout has passed. A Lease is data
//! anyone who may write leases can write: it is decoded with bounds, field by field, and stands
//! at most [`CLAIM_SECONDS`] from a renew time that is not in the future. A renew time that
//! cannot be believed (missing, unreadable, past the last moment a timestamp can hold, or more
//! than [`MAX_CLOCK_SKEW`] ahead) counts as the moment the API server created the Lease, so one
//! write of a Lease blocks starts for at most [`CLAIM_SECONDS`]. Only a Lease whose spec is not
//! an object, or whose holder is not text, is a named refusal.

use super::super::access::{APISERVER_REQUEST_TIMEOUT, Caller};
use super::super::tolerant::Unreadable;
use super::super::{OperationService, plan};
use ichor_model::{ApiError, Code, Reason};
use ichor_resources::names;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::Api;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The longest a start claim stands from its renew time: other starts on the cluster are
/// refused meanwhile, unless the claiming start's operation exists by then. A claim marked
/// settling stands until its unanswered create can no longer land, so it can stand the API
/// server's request timeout.
pub(crate) const CLAIM_SECONDS: i32 = APISERVER_REQUEST_TIMEOUT.as_secs() as i32;

/// A start that holds the claim gives up before its writes once this much time has passed since
/// it took it, so that it never writes after its claim could have lapsed.
pub(crate) const CLAIM_WORK_LIMIT: Duration = Duration::from_secs(30);

/// The most characters of a claim's words (operation, actor) that are kept: a Lease is anyone's.
const MAX_CLAIM_TEXT: usize = 253;

/// How far ahead of this clock a renew time may be and still count (as now): another replica's
/// clock, which wrote it, may run ahead of this one by about so much (NTP keeps them within
/// milliseconds). Further ahead, the renew time is not believed.
pub(crate) const MAX_CLOCK_SKEW: SignedDuration = SignedDuration::from_secs(10);

/// A Lease that does not decode as a whole, read field by field: a time or a number of its spec
/// that cannot be read (`9999-12-31T00:00:00Z` is past the last moment a timestamp holds) counts
/// as missing. `None` when even that does not decode (its spec is not an object, its holder is
/// not text).
pub(crate) fn lenient(u: &Unreadable) -> Option<Lease> {
    use serde::Deserialize as _;
    let mut raw = u.raw.clone();
    let spec = raw.get_mut("spec")?.as_object_mut()?;
    spec.retain(|k, v| match k.as_str() {
        "renewTime" | "acquireTime" => MicroTime::deserialize(&*v).is_ok(),
        "leaseDurationSeconds" | "leaseTransitions" => i32::deserialize(&*v).is_ok(),
        _ => true,
    });
    Lease::deserialize(&raw).ok()
}

/// The Lease that holds a cluster's start claim. Names stay within Kubernetes' 253 characters.
pub(crate) fn claim_name(cluster: &str) -> String {
    let name = format!("{}{cluster}", names::START_CLAIM_PREFIX);
    if name.len() <= 253 {
        return name;
    }
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(cluster.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let keep: String = name.chars().take(240).collect();
    format!("{}-{hash}", keep.trim_end_matches(['-', '.']))
}

/// The claim a Lease records, as of `now`: `Ok(None)` when no start holds it (no holder),
/// `Err(why)` when it cannot be read. Never panics, whatever the Lease holds: a renew time up
/// to [`MAX_CLOCK_SKEW`] ahead counts as now; one further ahead or missing counts as the
/// Lease's creation (`creationTimestamp`, which the API server sets and no client writes;
/// without one, the claim has lapsed); the duration counts between 0 and [`CLAIM_SECONDS`].
pub(crate) fn claim_of(lease: &Lease, now: Timestamp) -> Result<Option<plan::Claim>, String> {
    let text =
        |s: &str| ichor_model::inert::truncate(&ichor_model::inert::sanitize(s), MAX_CLAIM_TEXT);
    let ann = |k: &str| {
        lease
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(k))
            .map(|v| text(v))
            .unwrap_or_default()
    };
    let Some(spec) = lease.spec.as_ref() else {
        return Ok(None);
    };
    let holder = match spec.holder_identity.as_deref() {
        None | Some("") => return Ok(None),
        Some(h) => text(h),
    };
    let latest = now.checked_add(MAX_CLOCK_SKEW).unwrap_or(Timestamp::MAX);
    let believed = spec
        .renew_time
        .as_ref()
        .or(spec.acquire_time.as_ref())
        .map(|t| t.0)
        .filter(|t| *t <= latest);
    let renewed = match believed {
        Some(t) => t,
        None => match &lease.metadata.creation_timestamp {
            Some(created) => created.0,
            None => Timestamp::MIN,
        },
    };
    let seconds = spec
        .lease_duration_seconds
        .unwrap_or(CLAIM_SECONDS)
        .clamp(0, CLAIM_SECONDS);
    let expires = renewed
        .min(now)
        .checked_add(SignedDuration::from_secs(i64::from(seconds)))
        .map_err(|_| "its renewTime is out of range".to_string())?;
    Ok(Some(plan::Claim {
        holder,
        operation: ann(names::CLAIM_OPERATION),
        actor: ann(names::ACTOR),
        expires,
        settling: ann(names::CLAIM_STATE) == names::CLAIM_SETTLING,
    }))
}

/// The claim as the plan sees it: readable, or why not.
pub(crate) fn claim_read(
    lease: Option<&Result<Lease, Unreadable>>,
    now: Timestamp,
) -> Option<plan::ClaimRead> {
    match lease? {
        Ok(l) => match claim_of(l, now) {
            Ok(claim) => claim.map(plan::ClaimRead::Readable),
            Err(why) => Some(plan::ClaimRead::Unreadable {
                lease: l.metadata.name.clone().unwrap_or_default(),
                why,
            }),
        },
        Err(u) => Some(plan::ClaimRead::Unreadable {
            lease: u.name(),
            why: u.why.clone(),
        }),
    }
}

/// Whole seconds from `now` to `until`, at least 1 and at most [`CLAIM_SECONDS`].
fn seconds_until(now: Timestamp, until: Timestamp) -> i32 {
    let secs = until.duration_since(now).as_secs().saturating_add(1);
    i32::try_from(secs.clamp(1, i64::from(CLAIM_SECONDS))).unwrap_or(CLAIM_SECONDS)
}

impl OperationService {
    /// The cluster's start claim (read field by field when it does not decode whole:
    /// [`lenient`]). A Review for someone who may not read it still shows the plan; a start
    /// needs it (and would be refused taking it anyway).
    pub(crate) async fn read_claim(
        &self,
        caller: &Caller,
        ns: &str,
        cluster: &str,
        needed: bool,
    ) -> Result<Option<Result<Lease, Unreadable>>, ApiError> {
        match self
            .get_tolerant::<Lease>(
                caller,
                ns,
                &claim_name(cluster),
                "reading the cluster's start claim",
            )
            .await
        {
            Ok(Some(Err(u))) => Ok(Some(lenient(&u).ok_or(u))),
            Ok(l) => Ok(l),
            Err(e) if !needed && e.code == Code::PermissionDenied => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub(super) fn too_slow(&self, since: Instant) -> Result<(), ApiError> {
        if since.elapsed() < CLAIM_WORK_LIMIT {
            return Ok(());
        }
        Err(ApiError::said(
            Code::DeadlineExceeded,
            Reason::DeadlinePassed,
            &[
                ("during", "claimed"),
                ("limit", &CLAIM_WORK_LIMIT.as_secs().to_string()),
            ],
        ))
    }

    /// Takes the cluster's start claim for `request_id`: creates the Lease, or replaces the one
    /// read (`read`, with its resourceVersion: a conflict means another start got there first).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn claim(
        &self,
        caller: &Caller,
        ns: &str,
        cluster: &str,
        read: Option<&Lease>,
        request_id: &str,
        operation: &str,
        actor: &str,
    ) -> Result<Lease, ApiError> {
        let api: Api<Lease> = self.api(caller, Some(ns));
        let now = MicroTime(Timestamp::now());
        let mut lease = read.cloned().unwrap_or_else(|| Lease {
            metadata: kube::api::ObjectMeta {
                name: Some(claim_name(cluster)),
                namespace: Some(ns.to_string()),
                ..Default::default()
            },
            spec: None,
        });
        let annotations = lease.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(names::CLAIM_OPERATION.to_string(), operation.to_string());
        annotations.insert(names::ACTOR.to_string(), actor.to_string());
        annotations.remove(names::CLAIM_STATE);
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(request_id) {
            spec.acquire_time = Some(now.clone());
            let transitions = spec.lease_transitions.unwrap_or(0).max(0);
            spec.lease_transitions = Some(transitions.saturating_add(1));
        }
        spec.holder_identity = Some(request_id.to_string());
        spec.renew_time = Some(now);
        spec.lease_duration_seconds = Some(CLAIM_SECONDS);
        let what = "claiming the cluster for this start";
        match read {
            None => {
                self.access
                    .call(what, api.create(&crate::manager::post(false), &lease))
                    .await
            }
            Some(_) => {
                let name = claim_name(cluster);
                self.access
                    .call(
                        what,
                        api.replace(&name, &crate::manager::post(false), &lease),
                    )
                    .await
            }
        }
    }

    /// Marks the held claim as settling an unanswered create, standing until `until` (the
    /// moment that create can no longer land). Returns the Lease as written.
    pub(super) async fn mark_settling(
        &self,
        caller: &Caller,
        ns: &str,
        held: &Lease,
        until: Timestamp,
    ) -> Result<Lease, ApiError> {
        let api: Api<Lease> = self.api(caller, Some(ns));
        let now = Timestamp::now();
        let mut lease = held.clone();
        lease
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(
                names::CLAIM_STATE.to_string(),
                names::CLAIM_SETTLING.to_string(),
            );
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.renew_time = Some(MicroTime(now));
        spec.lease_duration_seconds = Some(seconds_until(now, until));
        let name = lease.metadata.name.clone().unwrap_or_default();
        self.access
            .call(
                "marking the start claim as settling",
                api.replace(&name, &crate::manager::post(false), &lease),
            )
            .await
    }

    /// Gives the claim back once the start's outcome is known, so the next start is not kept
    /// waiting: the Lease stays, with no holder (as client-go's leader election releases one),
    /// written with the resourceVersion this start holds. Keeping the object is what makes the
    /// claim a version of the cluster's starts: a start that read the Lease before this one's
    /// whole claim–create–release conflicts when it tries to claim, and reads again. Best effort:
    /// a claim left behind lapses by itself.
    pub(crate) async fn release(&self, caller: &Caller, ns: &str, lease: &Lease) {
        let api: Api<Lease> = self.api(caller, Some(ns));
        let mut released = lease.clone();
        if let Some(a) = released.metadata.annotations.as_mut() {
            a.remove(names::CLAIM_STATE);
        }
        let spec = released.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = None;
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        let name = lease.metadata.name.clone().unwrap_or_default();
        if let Err(e) = self
            .access
            .call(
                "giving back the start claim",
                api.replace(&name, &crate::manager::post(false), &released),
            )
            .await
        {
            tracing::info!(error = %e.message, "the start claim was left to lapse");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lease(renew: Option<Timestamp>, seconds: Option<i32>, holder: Option<&str>) -> Lease {
        Lease {
            metadata: kube::api::ObjectMeta {
                name: Some("ichor-start-c1".into()),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: holder.map(String::from),
                renew_time: renew.map(MicroTime),
                lease_duration_seconds: seconds,
                ..Default::default()
            }),
        }
    }

    /// `l`, as the API server created it at `created`.
    fn created(mut l: Lease, created: Timestamp) -> Lease {
        l.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            created,
        ));
        l
    }

    #[test]
    fn a_claim_stands_at_most_a_minute_from_a_renew_time_not_in_the_future() {
        let now: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let secs = SignedDuration::from_secs;
        let near = now + secs(5);
        let c = claim_of(&lease(Some(near), Some(i32::MAX), Some("r")), now)
            .unwrap()
            .unwrap();
        assert_eq!(c.expires, now + secs(60), "a clock a little ahead: as now");
        let past = now - secs(30);
        let c = claim_of(&lease(Some(past), Some(i32::MAX), Some("r")), now)
            .unwrap()
            .unwrap();
        assert_eq!(c.expires, now + secs(30));
        let c = claim_of(&lease(Some(now), Some(-5), Some("r")), now)
            .unwrap()
            .unwrap();
        assert_eq!(c.expires, now, "a negative duration has lapsed");
        assert_eq!(
            claim_of(&lease(Some(now), Some(60), None), now).unwrap(),
            None
        );
    }

    #[test]
    fn a_renew_time_that_cannot_be_believed_counts_as_the_lease_s_creation() {
        let now: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let secs = SignedDuration::from_secs;
        let far: Timestamp = "9999-12-30T21:00:00Z".parse().unwrap();
        let ahead = now + MAX_CLOCK_SKEW + secs(1);
        for renew in [Some(far), Some(ahead), None] {
            let l = lease(renew, Some(i32::MAX), Some("r"));
            let c = claim_of(&created(l.clone(), now - secs(20)), now)
                .unwrap()
                .unwrap();
            assert_eq!(
                c.expires,
                now + secs(40),
                "{renew:?}: a minute from its creation"
            );
            let c = claim_of(&created(l.clone(), now - secs(3600)), now)
                .unwrap()
                .unwrap();
            assert!(c.expires < now, "{renew:?}: lapsed long ago");
            let c = claim_of(&l, now).unwrap().unwrap();
            assert!(c.expires < now, "{renew:?}: no creation: lapsed");
        }
    }

    /// `spec` as a Lease created a minute and a half before `now` would be read.
    fn read_raw(spec: serde_json::Value, now: Timestamp) -> Result<Lease, Unreadable> {
        let created = now - SignedDuration::from_secs(90);
        let raw = serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "ichor-start-c1", "creationTimestamp": created.to_string()},
            "spec": spec,
        });
        let u = super::super::super::tolerant::decode::<Lease>(raw).unwrap_err();
        lenient(&u).ok_or(u)
    }

    #[test]
    fn a_lease_is_read_field_by_field() {
        use serde_json::json;
        let now: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        for spec in [
            json!({"holderIdentity": "x", "renewTime": "9999-12-31T00:00:00Z"}),
            json!({"holderIdentity": "x", "renewTime": "9999-12-31T23:59:59Z", "leaseDurationSeconds": 60}),
            json!({"holderIdentity": "x", "renewTime": "bogus", "acquireTime": 5}),
            json!({"holderIdentity": "x", "leaseDurationSeconds": "sixty"}),
        ] {
            let l = read_raw(spec.clone(), now).expect("read field by field");
            let c = claim_of(&l, now).unwrap().unwrap();
            assert!(c.expires < now, "{spec}: created 90 s ago, lapsed");
            let mut freed = spec.clone();
            freed["holderIdentity"] = json!("");
            let l = read_raw(freed, now).expect("read field by field");
            assert_eq!(
                claim_of(&l, now).unwrap(),
                None,
                "{spec}: no holder, no claim"
            );
        }
        for spec in [json!("x"), json!({"holderIdentity": 5})] {
            assert!(read_raw(spec.clone(), now).is_err(), "{spec}: unreadable");
        }
    }

    fn timestamp() -> impl Strategy<Value = Timestamp> {
        (Timestamp::MIN.as_second()..=Timestamp::MAX.as_second())
            .prop_map(|s| Timestamp::from_second(s).unwrap_or(Timestamp::UNIX_EPOCH))
    }

    /// The plan of a CA rotation on a one-machine cluster, with the claim `lease` holds.
    fn plan_with(lease: &Lease, now: Timestamp) -> Result<ichor_model::Plan, ApiError> {
        use ichor_model::{OperationKind, OperationRequest};
        use ichor_resources::{Machine, MachineSpec, TalosCluster, TalosClusterSpec};
        let mut cluster = TalosCluster::new("c1", TalosClusterSpec::default());
        cluster.metadata.namespace = Some("default".into());
        let machine = Machine::new(
            "c1-cp",
            MachineSpec {
                cluster: "c1".into(),
                role: "controlplane".into(),
                approved: true,
            },
        );
        let machines = [machine];
        let req = OperationRequest::new("default", Some("c1"), OperationKind::CaRotation);
        let checked = plan::check_request(&req)?;
        let read = Some(Ok(lease.clone()));
        let inputs = plan::PlanInputs {
            clusters: &[],
            claim: claim_read(read.as_ref(), now),
            request_id: Some("mine"),
            now,
            namespace: "default",
            cluster: &cluster,
            machines: &machines,
            unreadable_machines: &[],
            installation: None,
            operations: &[],
            unreadable_operations: &[],
            tracking: None,
        };
        plan::compute(&checked, &inputs)
    }

    proptest! {
        /// The plan over arbitrary Lease fields: a plan, or a named refusal; never a panic.
        #[test]
        fn any_lease_plans_or_is_a_named_refusal(
            renew in proptest::option::of(timestamp()),
            seconds in proptest::option::of(any::<i32>()),
            holder in proptest::option::of("[a-z0-9\\-]{0,8}"),
            now in timestamp(),
        ) {
            let plan = plan_with(&lease(renew, seconds, holder.as_deref()), now);
            let plan = plan.map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            if let Some(refusal) = plan.blocked {
                prop_assert!(matches!(
                    refusal.reason,
                    Reason::StartInProgress | Reason::StartSettling | Reason::ClaimUnreadable
                ), "{refusal:?}");
            }
        }

        #[test]
        fn any_lease_decodes_or_is_named_unreadable(
            renew in proptest::option::of(timestamp()),
            acquire in proptest::option::of(timestamp()),
            seconds in proptest::option::of(any::<i32>()),
            holder in proptest::option::of("[a-z0-9\\-]{0,8}"),
            now in timestamp(),
            born in timestamp(),
        ) {
            let mut l = created(lease(renew, seconds, holder.as_deref()), born);
            if let Some(spec) = l.spec.as_mut() {
                spec.acquire_time = acquire.map(MicroTime);
            }
            if let Ok(Some(c)) = claim_of(&l, now) {
                let minute = SignedDuration::from_secs(i64::from(CLAIM_SECONDS));
                prop_assert!(now > Timestamp::MAX - minute - SignedDuration::from_secs(1)
                    || c.expires <= now + minute);
                let latest = now.checked_add(MAX_CLOCK_SKEW).unwrap_or(Timestamp::MAX);
                let believed = renew.or(acquire).is_some_and(|t| t <= latest);
                let lapses = born.checked_add(minute).unwrap_or(Timestamp::MAX);
                prop_assert!(believed || c.expires <= lapses, "a minute from its creation");
            }
        }
    }
}
