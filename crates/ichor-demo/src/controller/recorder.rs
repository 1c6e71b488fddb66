//! Recording Events as client-go's recorder does: core `v1` Events named
//! `<object>.<hex nanoseconds>`, with `involvedObject`, reason, message, type, count,
//! first and last timestamps and `source.component` (`ichor-controller`, also the reporting
//! component); an Event identical to one recorded before (same object, type, reason and
//! message) bumps that Event's count and last timestamp instead of making a new one. Best
//! effort, as in client-go: a refused Event is logged, never an error of the controller.

use super::notes::{Note, Regarding, Severity};
use ichor_resources::{GROUP, Machine, TalosOperation, VERSION};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The component that records the Events.
pub const COMPONENT: &str = "ichor-controller";
/// The instance that records them (one controller in the demo).
const INSTANCE: &str = "ichor-controller-demo";
/// How many recorded Events are remembered for aggregation (client-go keeps 4,096).
const REMEMBERED: usize = 4096;
/// The longest message recorded, in bytes (events.k8s.io's limit for a note).
const MAX_MESSAGE: usize = 1024;

/// What makes two Events the same Event: namespace, involved object (kind, name, uid), type,
/// reason, message.
type Identity = (String, String, String, String, Severity, String, String);

/// Recorded Events by identity: the name and count of each, the oldest forgotten first.
#[derive(Default)]
struct Remembered {
    events: BTreeMap<Identity, (String, i32)>,
    order: VecDeque<Identity>,
}

impl Remembered {
    fn remember(&mut self, id: Identity, name: String, count: i32) {
        if self.events.insert(id.clone(), (name, count)).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.events.remove(&old);
            }
        }
    }
}

/// Records the controller's Events through its own client.
pub(crate) struct Recorder {
    client: kube::Client,
    remembered: Mutex<Remembered>,
    /// Added to the nanoseconds of a name, so two Events at one instant get two names.
    sequence: AtomicU64,
}

/// Text from the cluster as an Event carries it: no control characters (no terminal escape
/// can ride along), no bidi overrides, at most [`MAX_MESSAGE`] bytes.
pub(crate) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_MESSAGE));
    for c in text.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}');
        if c.is_control() || bidi {
            continue;
        }
        if out.len() + c.len_utf8() > MAX_MESSAGE {
            break;
        }
        out.push(c);
    }
    out
}

/// The name part of an Event's name: the object's name, kept to what a name may hold.
fn name_part(name: &str) -> String {
    let part: String = name
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '.')
        .take(200)
        .collect();
    let part = part.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if part.is_empty() {
        "event".to_string()
    } else {
        part.to_string()
    }
}

/// An Event's name as client-go makes it: `<object>.<hex nanoseconds>`, here plus `seq` so two
/// Events at one instant differ.
pub(crate) fn event_name(object: &str, at: Timestamp, seq: u64) -> String {
    let nanos = u64::try_from(at.as_nanosecond()).unwrap_or(0);
    format!("{}.{:x}", name_part(object), nanos.wrapping_add(seq))
}

fn reference(kind: &str, name: &str, namespace: &str, uid: Option<String>) -> ObjectReference {
    ObjectReference {
        api_version: Some(format!("{GROUP}/{VERSION}")),
        kind: Some(kind.into()),
        name: Some(name.into()),
        namespace: Some(namespace.into()),
        uid,
        ..Default::default()
    }
}

/// The Event `note` makes about `op` (or one of `machines`) at `now`, named `name`: what it
/// is about, and, for a machine, the operation as the related object.
pub(crate) fn event(
    note: &Note,
    op: &TalosOperation,
    machines: &[Machine],
    now: Timestamp,
    name: String,
) -> Event {
    let ns = op.metadata.namespace.clone().unwrap_or_default();
    let op_name = op.metadata.name.clone().unwrap_or_default();
    let op_ref = reference("TalosOperation", &op_name, &ns, op.metadata.uid.clone());
    let (involved, related) = match &note.regarding {
        Regarding::Operation => (op_ref, None),
        Regarding::Machine(m) => {
            let uid = machines
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(m))
                .and_then(|x| x.metadata.uid.clone());
            (reference("Machine", m, &ns, uid), Some(op_ref))
        }
    };
    event_about(note, involved, related, now, name)
}

/// The Event `note` makes about `involved` (in its namespace), related to `related` if any, at
/// `now`, named `name`.
fn event_about(
    note: &Note,
    involved: ObjectReference,
    related: Option<ObjectReference>,
    now: Timestamp,
    name: String,
) -> Event {
    let ns = involved.namespace.clone().unwrap_or_default();
    Event {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(ns),
            // The API server stamps its own on create; kept as it is for seeded Events.
            creation_timestamp: Some(Time(now)),
            ..Default::default()
        },
        involved_object: involved,
        related,
        reason: Some(note.reason.into()),
        message: Some(clean(&note.message)),
        type_: Some(note.severity.as_str().into()),
        action: Some(note.action.into()),
        count: Some(1),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        source: Some(EventSource {
            component: Some(COMPONENT.into()),
            host: None,
        }),
        reporting_component: Some(COMPONENT.into()),
        reporting_instance: Some(INSTANCE.into()),
        ..Default::default()
    }
}

fn identity(ev: &Event) -> Identity {
    let io = &ev.involved_object;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let severity = match ev.type_.as_deref() {
        Some("Warning") => Severity::Warning,
        _ => Severity::Normal,
    };
    (
        text(&ev.metadata.namespace),
        format!("{}/{}", text(&io.kind), text(&io.name)),
        text(&io.uid),
        text(&ev.reason),
        severity,
        text(&ev.message),
        text(&ev.source.as_ref().and_then(|s| s.component.clone())),
    )
}

impl Recorder {
    pub(crate) fn new(client: kube::Client) -> Recorder {
        Recorder {
            client,
            remembered: Mutex::new(Remembered::default()),
            sequence: AtomicU64::new(0),
        }
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.remembered.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A name for a new Event about `object` at `now`.
    fn name(&self, object: &str, now: Timestamp) -> String {
        event_name(object, now, self.sequence.fetch_add(1, Ordering::Relaxed))
    }

    /// Records what `notes` tell about `op` at `now`.
    pub(crate) async fn record(
        &self,
        notes: &[Note],
        op: &TalosOperation,
        machines: &[Machine],
        now: Timestamp,
    ) {
        for note in notes {
            let object = match &note.regarding {
                Regarding::Operation => op.metadata.name.clone().unwrap_or_default(),
                Regarding::Machine(m) => m.clone(),
            };
            let ev = event(note, op, machines, now, self.name(&object, now));
            if let Err(e) = self.record_event(ev, now).await {
                tracing::debug!(error = %format!("{e:#}"), reason = note.reason, "event not recorded");
            }
        }
    }

    /// Records `note` about `involved`, an object the controller names itself (one it could
    /// not read: `note.regarding` is not looked at).
    pub(crate) async fn record_on(&self, involved: ObjectReference, note: &Note, now: Timestamp) {
        let object = involved.name.clone().unwrap_or_default();
        let ev = event_about(note, involved, None, now, self.name(&object, now));
        if let Err(e) = self.record_event(ev, now).await {
            tracing::debug!(error = %format!("{e:#}"), reason = note.reason, "event not recorded");
        }
    }

    /// Bumps the count of the same Event recorded before, or creates it.
    async fn record_event(&self, ev: Event, now: Timestamp) -> anyhow::Result<()> {
        let ns = ev.metadata.namespace.clone().unwrap_or_default();
        let api: Api<Event> = Api::namespaced(self.client.clone(), &ns);
        let id = identity(&ev);
        let seen = self.remembered().events.get(&id).cloned();
        if let Some((name, count)) = seen {
            let patch = json!({"count": count + 1, "lastTimestamp": Time(now)});
            match api
                .patch(
                    &name,
                    &PatchParams {
                        field_manager: Some(COMPONENT.to_string()),
                        ..PatchParams::default()
                    },
                    &Patch::Merge(&patch),
                )
                .await
            {
                Ok(_) => {
                    self.remembered().remember(id, name, count + 1);
                    return Ok(());
                }
                // Gone (deleted, or expired): a new Event.
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
        let mut ev = ev;
        for _ in 0..3 {
            match api.create(&super::writes(), &ev).await {
                Ok(created) => {
                    let name = created.metadata.name.unwrap_or_default();
                    self.remembered().remember(id, name, 1);
                    return Ok(());
                }
                // Two Events at one instant: another name.
                Err(kube::Error::Api(s)) if s.code == 409 => {
                    let object = ev.involved_object.name.clone().unwrap_or_default();
                    ev.metadata.name = Some(self.name(&object, now));
                }
                Err(e) => return Err(e.into()),
            }
        }
        anyhow::bail!("no free name for the event")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::EmbeddedApi;
    use crate::apiserver::auth::users;
    use kube::api::ListParams;

    fn op() -> TalosOperation {
        let mut op = TalosOperation::new(
            "op",
            ichor_resources::TalosOperationSpec {
                cluster: "c1".into(),
                kind: "talos".into(),
                max_unavailable: 1,
                paused: false,
            },
        );
        op.metadata.namespace = Some("default".into());
        op.metadata.uid = Some("u-1".into());
        op
    }

    async fn events(api: &EmbeddedApi) -> Vec<Event> {
        Api::<Event>::namespaced(api.client(users::ADMIN_TOKEN), "default")
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn identical_events_bump_the_count_of_the_first() {
        let api = EmbeddedApi::default();
        let rec = Recorder::new(api.client(users::CONTROLLER_TOKEN));
        let t0: Timestamp = "2026-11-29T10:00:00Z".parse().unwrap_or_default();
        let t1: Timestamp = "2026-11-29T10:01:00Z".parse().unwrap_or_default();
        let lock = Note::waiting_for_lock("c1", "other");
        rec.record(&[lock.clone(), lock.clone()], &op(), &[], t0)
            .await;
        rec.record(std::slice::from_ref(&lock), &op(), &[], t1)
            .await;
        let evs = events(&api).await;
        assert_eq!(evs.len(), 1, "{evs:?}");
        assert_eq!(evs[0].count, Some(3));
        assert_eq!(evs[0].first_timestamp, Some(Time(t0)));
        assert_eq!(evs[0].last_timestamp, Some(Time(t1)));
        // Another message is another Event; so is one about another object.
        rec.record(&[Note::waiting_for_lock("c1", "third")], &op(), &[], t1)
            .await;
        rec.record(&[Note::step_started("op", "m1", "x")], &op(), &[], t1)
            .await;
        assert_eq!(events(&api).await.len(), 3);
        // A deleted Event is made again.
        let name = evs[0].metadata.name.clone().unwrap_or_default();
        let admin: Api<Event> = Api::namespaced(api.client(users::ADMIN_TOKEN), "default");
        assert!(admin.delete(&name, &Default::default()).await.is_ok());
        rec.record(&[lock], &op(), &[], t1).await;
        let again = events(&api).await;
        assert_eq!(again.len(), 3);
        assert!(again.iter().all(|e| e.count == Some(1)));
    }

    #[test]
    fn text_from_the_cluster_is_cleaned() {
        assert_eq!(clean("a\u{1b}[2Jb\u{202e}c\u{7}d\r\n"), "a[2Jbcd");
        assert_eq!(clean(&"é".repeat(600)).len(), 1024);
        assert_eq!(name_part("Hostile\u{1b}]0;x-w9"), "ostile0x-w9");
        assert_eq!(name_part("\u{1b}"), "event");
    }
}
