//! One watch: what it asks for, where it is in its resource's history, and the events it
//! sends, encoded as it asks (JSON objects, or kubectl's one-row Tables).

use super::history::{Change, ChangeType, Selectable, TooOld};
use super::{Hub, OpenGuard};
use crate::apiserver::events::to_events_v1;
use crate::apiserver::fields::FieldSelector;
use crate::apiserver::kinds::ResourceType;
use crate::apiserver::responses::{Failure, fail, status_body};
use crate::apiserver::routing::{Query, Target};
use crate::apiserver::selector::LabelSelector;
use crate::apiserver::table::{Include, watch_table};
use crate::apiserver::{ApiState, EmbeddedApi};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The annotation of the bookmark that ends a streaming list's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// How events' objects are sent.
enum Format {
    /// The objects themselves.
    Json,
    /// kubectl's Tables: one row each, the columns in the first.
    Table {
        include: Include,
        columns_sent: bool,
    },
}

/// Which objects a watch is about.
struct Filter {
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn matches(&self, s: &Selectable) -> bool {
        self.labels.matches_labels(&s.labels) && self.fields.matches(&s.fields)
    }

    /// The event this watch sees of `c`: a change into or out of its selectors is an
    /// addition or a deletion for it.
    fn event_type(&self, c: &Change) -> Option<ChangeType> {
        if self.namespace.as_ref().is_some_and(|ns| *ns != c.namespace) {
            return None;
        }
        let now = self.matches(&c.now);
        match (c.kind, c.before.as_ref().map(|b| self.matches(b))) {
            (ChangeType::Modified, Some(before)) => match (before, now) {
                (true, true) => Some(ChangeType::Modified),
                (false, true) => Some(ChangeType::Added),
                (true, false) => Some(ChangeType::Deleted),
                (false, false) => None,
            },
            (kind, _) => now.then_some(kind),
        }
    }
}

/// What a watch request asks, from its query.
struct Params {
    /// `None`: start with the objects as they are (resourceVersion unset or 0).
    after: Option<u64>,
    initial_events: bool,
    bookmarks: bool,
    timeout: Option<Duration>,
}

/// `true`, `1`, `t`…: a boolean query parameter as Go's `strconv.ParseBool` reads it.
pub(crate) fn query_bool(v: Option<&str>) -> bool {
    matches!(v, Some("1" | "t" | "T" | "true" | "TRUE" | "True"))
}

fn bad_request(message: String) -> Failure {
    fail(400, "BadRequest", message)
}

impl Params {
    fn parse(q: &Query) -> Result<Params, Failure> {
        let after = match q.get("resourceVersion").unwrap_or("") {
            "" | "0" => None,
            v => Some(
                v.parse::<u64>()
                    .map_err(|_| bad_request(format!("invalid resource version: {v:?}")))?,
            ),
        };
        let timeout = match q.get("timeoutSeconds").unwrap_or("") {
            "" | "0" => None,
            v => Some(Duration::from_secs(v.parse::<u64>().map_err(|_| {
                bad_request(format!("invalid timeoutSeconds: {v:?}"))
            })?)),
        };
        let p = Params {
            after,
            initial_events: query_bool(q.get("sendInitialEvents")),
            bookmarks: query_bool(q.get("allowWatchBookmarks")),
            timeout,
        };
        if p.initial_events && !p.bookmarks {
            return Err(fail(
                422,
                "Invalid",
                "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
            ));
        }
        Ok(p)
    }
}

/// An open watch.
pub(crate) struct Watch {
    api: EmbeddedApi,
    rt: ResourceType,
    filter: Filter,
    format: Format,
    /// Every change of the resource up to this version has been queued (or filtered out).
    last_rv: u64,
    queue: VecDeque<Bytes>,
    /// Nothing more after the queue: the watch ends.
    done: bool,
    wake: watch::Receiver<u64>,
    epoch: watch::Receiver<u64>,
    /// When the next bookmark is due, with the interval between them; `None`: none asked for.
    bookmarks: Option<(Instant, Duration)>,
    deadline: Option<Instant>,
    _open: OpenGuard,
}

/// Why a waiting watch woke.
enum Woke {
    Changed,
    Bookmark,
    End,
}

impl Watch {
    /// Opens a watch of `target` (RBAC already decided), as of the state `st` holds now.
    pub(in crate::apiserver) fn open(
        api: &EmbeddedApi,
        st: &mut ApiState,
        target: &Target,
        query: &Query,
        table: bool,
    ) -> Result<Watch, Failure> {
        let params = Params::parse(query)?;
        let rt = target.rt;
        let filter = Filter {
            namespace: target.namespace.clone(),
            labels: LabelSelector::parse(query.get("labelSelector").unwrap_or(""))
                .map_err(bad_request)?,
            fields: FieldSelector::parse(&rt, query.get("fieldSelector").unwrap_or(""))
                .map_err(bad_request)?,
        };
        let format = if table {
            let include = Include::parse(query.get("includeObject")).map_err(bad_request)?;
            Format::Table {
                include,
                columns_sent: false,
            }
        } else {
            Format::Json
        };
        let hub: &mut Hub = &mut st.watches;
        let mut w = Watch {
            api: api.clone(),
            rt,
            filter,
            format,
            last_rv: 0,
            queue: VecDeque::new(),
            done: false,
            wake: hub.history.subscribe(rt.plural),
            epoch: hub.epoch.subscribe(),
            bookmarks: None,
            deadline: params.timeout.map(|t| Instant::now() + t),
            _open: OpenGuard::new(&hub.open),
        };
        if params.bookmarks {
            w.schedule_bookmark(hub.bookmark_interval);
        }
        match params.after {
            // A streaming list from a version not reached (it waited for it before it got
            // here): the error, as an event.
            Some(rv) if params.initial_events && rv > st.resource_version => {
                let status = super::too_large_status(rv, st.resource_version);
                w.queue.push_back(event_line("ERROR", &status));
                w.done = true;
            }
            Some(rv) if !params.initial_events => {
                w.last_rv = rv;
                w.catch_up(st);
            }
            _ => w.initial_events(st, params.initial_events),
        }
        Ok(w)
    }

    /// A synthetic ADDED for each object as it is now; with `end_bookmark` (a streaming
    /// list), then the bookmark that says so.
    fn initial_events(&mut self, st: &ApiState, end_bookmark: bool) {
        let target = Target {
            rt: self.rt,
            namespace: self.filter.namespace.clone(),
            name: None,
            status: false,
        };
        let items = st.list_items(&target, &self.filter.labels);
        for obj in items {
            if self.filter.fields.matches_object(self.rt.plural, obj) {
                let line = self.line(ChangeType::Added.as_str(), obj);
                self.queue.push_back(line);
            }
        }
        self.last_rv = st.resource_version;
        if end_bookmark {
            self.queue_bookmark(true);
        }
    }

    /// Queues every change after `last_rv` that this watch sees; too old: the 410 error, and
    /// the end.
    fn catch_up(&mut self, st: &ApiState) {
        match st.watches.history.since(self.rt.plural, self.last_rv) {
            Ok(changes) => {
                for c in changes {
                    if let Some(kind) = self.filter.event_type(&c) {
                        let line = self.change_line(kind, &c);
                        self.queue.push_back(line);
                    }
                }
                self.last_rv = self.last_rv.max(st.resource_version);
            }
            Err(TooOld { oldest }) => {
                let message = format!("too old resource version: {} ({oldest})", self.last_rv);
                let status = status_body(410, "Expired", &message, None);
                self.queue.push_back(event_line("ERROR", &status));
                self.done = true;
            }
        }
    }

    /// The next event to send; `None` when the watch is over.
    pub(crate) async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(line) = self.queue.pop_front() {
                return Some(line);
            }
            if self.done {
                return None;
            }
            let woke = tokio::select! {
                r = self.wake.changed() => if r.is_ok() { Woke::Changed } else { Woke::End },
                _ = self.epoch.changed() => Woke::End,
                () = until(self.bookmarks.map(|(at, _)| at)) => Woke::Bookmark,
                () = until(self.deadline) => Woke::End,
            };
            match woke {
                Woke::End => return None,
                Woke::Changed => {
                    let api = self.api.clone();
                    self.catch_up(&api.lock());
                }
                Woke::Bookmark => {
                    if let Some((_, every)) = self.bookmarks {
                        self.schedule_bookmark(every);
                    }
                    let api = self.api.clone();
                    let st = api.lock();
                    self.catch_up(&st);
                    // Ahead of the API (it restarted, or was restored): nothing to say.
                    if !self.done && st.resource_version >= self.last_rv {
                        self.queue_bookmark(false);
                    }
                }
            }
        }
    }

    /// The next bookmark, as kube-apiserver's watch cache schedules it: one interval away, or
    /// two seconds before the watch's deadline when that comes first (so a client that
    /// watches again at the deadline has heard from it lately).
    fn schedule_bookmark(&mut self, every: Duration) {
        let now = Instant::now();
        let mut at = now + every;
        if let Some(before_end) = self
            .deadline
            .and_then(|d| d.checked_sub(Duration::from_secs(2)))
            .filter(|t| *t > now && *t < at)
        {
            at = before_end;
        }
        self.bookmarks = Some((at, every));
    }

    /// A bookmark at `last_rv`.
    fn queue_bookmark(&mut self, initial_events_end: bool) {
        let mut meta = json!({"resourceVersion": self.last_rv.to_string()});
        if initial_events_end {
            meta["annotations"] = json!({INITIAL_EVENTS_END: "true"});
        }
        let line = match &self.format {
            Format::Json => event_line(
                "BOOKMARK",
                &json!({"kind": self.rt.kind, "apiVersion": self.rt.api_version(), "metadata": meta}),
            ),
            Format::Table { include, .. } => {
                let rv = self.last_rv.to_string();
                let table =
                    watch_table(&self.rt, None, &rv, jiff::Timestamp::now(), *include, false);
                event_line("BOOKMARK", &table)
            }
        };
        self.queue.push_back(line);
    }

    /// The line of a recorded change, sent as `kind`.
    fn change_line(&mut self, kind: ChangeType, c: &Change) -> Bytes {
        if matches!(self.format, Format::Json) && self.rt.group != "events.k8s.io" {
            // The recorded JSON as it is: no decoding, no encoding.
            let mut out = Vec::with_capacity(c.object.len() + 32);
            out.extend_from_slice(br#"{"type":""#);
            out.extend_from_slice(kind.as_str().as_bytes());
            out.extend_from_slice(br#"","object":"#);
            out.extend_from_slice(&c.object);
            out.extend_from_slice(b"}\n");
            return Bytes::from(out);
        }
        match serde_json::from_slice::<Value>(&c.object) {
            Ok(obj) => self.line(kind.as_str(), &obj),
            Err(e) => {
                let status = status_body(
                    500,
                    "InternalError",
                    &format!("decoding a change: {e}"),
                    None,
                );
                event_line("ERROR", &status)
            }
        }
    }

    /// The line of an event about `obj`, encoded as the watch asks.
    fn line(&mut self, kind: &str, obj: &Value) -> Bytes {
        match &mut self.format {
            Format::Json if self.rt.group == "events.k8s.io" => {
                event_line(kind, &to_events_v1(obj))
            }
            Format::Json => event_line(kind, obj),
            Format::Table {
                include,
                columns_sent,
            } => {
                let rv = obj
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let table = watch_table(
                    &self.rt,
                    Some(obj),
                    rv,
                    jiff::Timestamp::now(),
                    *include,
                    !*columns_sent,
                );
                *columns_sent = true;
                event_line(kind, &table)
            }
        }
    }
}

/// `{"type": …, "object": …}` and a newline.
fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut out = serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    out.push(b'\n');
    Bytes::from(out)
}

/// The deadline; never without one.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::fields::fields_of;

    fn selectable(labels: &[(&str, &str)]) -> Selectable {
        Selectable {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            fields: fields_of(
                "machines",
                &json!({"metadata": {"name": "m", "namespace": "ns"}}),
            ),
        }
    }

    fn change(kind: ChangeType, before: Option<&[(&str, &str)]>, now: &[(&str, &str)]) -> Change {
        Change {
            rv: 1,
            kind,
            namespace: "ns".into(),
            object: Bytes::new(),
            now: selectable(now),
            before: before.map(selectable),
            name: String::new(),
            prior: None,
            prior_shared: false,
        }
    }

    #[test]
    fn changes_across_a_selector_are_additions_and_deletions() {
        let filter = Filter {
            namespace: Some("ns".into()),
            labels: LabelSelector::parse("app=x").unwrap_or_default(),
            fields: FieldSelector::default(),
        };
        let x: &[(&str, &str)] = &[("app", "x")];
        let y: &[(&str, &str)] = &[("app", "y")];
        use ChangeType::*;
        assert_eq!(filter.event_type(&change(Added, None, x)), Some(Added));
        assert_eq!(filter.event_type(&change(Added, None, y)), None);
        assert_eq!(
            filter.event_type(&change(Modified, Some(x), x)),
            Some(Modified)
        );
        assert_eq!(
            filter.event_type(&change(Modified, Some(y), x)),
            Some(Added)
        );
        assert_eq!(
            filter.event_type(&change(Modified, Some(x), y)),
            Some(Deleted)
        );
        assert_eq!(filter.event_type(&change(Modified, Some(y), y)), None);
        assert_eq!(
            filter.event_type(&change(Deleted, Some(x), x)),
            Some(Deleted)
        );
        let elsewhere = Filter {
            namespace: Some("other".into()),
            ..filter
        };
        assert_eq!(elsewhere.event_type(&change(Added, None, x)), None);
    }

    #[test]
    fn booleans_as_go_reads_them() {
        for (v, want) in [
            ("1", true),
            ("true", true),
            ("True", true),
            ("0", false),
            ("yes", false),
        ] {
            assert_eq!(query_bool(Some(v)), want, "{v}");
        }
        assert!(!query_bool(None));
    }
}
