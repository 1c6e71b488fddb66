//! The operations list as the screens ask for it: a query (scope, filters, a page) and a page
//! of answers, each operation whole or as a summary.

use super::{Cluster, MachinePhase, MachineProgress, Operation, OperationKind, Phase, StateWord};
use jiff::Timestamp;
use std::cmp::Ordering;

/// What the list's filters, orders, page tokens and versions read of an operation: an
/// [`Operation`], or a row a watch keeps in less memory.
pub trait ListRow {
    fn namespace(&self) -> &str;
    fn name(&self) -> &str;
    fn uid(&self) -> &str;
    fn resource_version(&self) -> &str;
    fn cluster(&self) -> &str;
    fn kind_raw(&self) -> &str;
    fn phase(&self) -> &Phase;
    fn actor(&self) -> Option<&str>;
    fn created_at(&self) -> Option<Timestamp>;
    fn kind(&self) -> Option<OperationKind>;
    /// The value before, and the target, as the start recorded them.
    fn current(&self) -> Option<&str>;
    fn target(&self) -> Option<&str>;
    /// What the STATE column says of it.
    fn state_word(&self) -> StateWord;

    /// Whether the row contains `needle_lower` (already lower case) in what a list row shows
    /// of it: its name, namespace, cluster, kind (as it is recorded and in words), where it
    /// goes, its state (the phase as recorded and the state's words) and its actor. The words
    /// are matched in every shipped language ([`crate::shown`]).
    fn matches(&self, needle_lower: &str) -> bool {
        if needle_lower.is_empty() {
            return true;
        }
        let raw = [
            self.name(),
            self.cluster(),
            self.kind_raw(),
            self.phase().as_str(),
            self.namespace(),
            self.actor().unwrap_or(""),
            self.current().unwrap_or(""),
            self.target().unwrap_or(""),
        ];
        raw.iter().any(|f| f.to_lowercase().contains(needle_lower))
            || self.state_word().matches(needle_lower)
            || self
                .kind()
                .is_some_and(|k| crate::shown::kind_matches(k, needle_lower))
    }
}

/// Implements [`ListRow`] for a type whose fields of those names deref to what it returns
/// (`String` or `Arc<str>` for the texts) and whose own `shown_state` says its state: the
/// operation here, the stores' compact row.
#[macro_export]
macro_rules! impl_list_row {
    ($t:ty) => {
        impl $crate::ListRow for $t {
            fn namespace(&self) -> &str {
                &self.namespace
            }
            fn name(&self) -> &str {
                &self.name
            }
            fn uid(&self) -> &str {
                &self.uid
            }
            fn resource_version(&self) -> &str {
                &self.resource_version
            }
            fn cluster(&self) -> &str {
                &self.cluster
            }
            fn kind_raw(&self) -> &str {
                &self.kind_raw
            }
            fn phase(&self) -> &$crate::Phase {
                &self.phase
            }
            fn actor(&self) -> Option<&str> {
                self.actor.as_deref()
            }
            fn created_at(&self) -> Option<::jiff::Timestamp> {
                self.created_at
            }
            fn kind(&self) -> Option<$crate::OperationKind> {
                self.kind
            }
            fn current(&self) -> Option<&str> {
                self.current.as_deref()
            }
            fn target(&self) -> Option<&str> {
                self.target.as_deref()
            }
            /// The type's own `shown_state`.
            fn state_word(&self) -> $crate::StateWord {
                self.shown_state()
            }
        }
    };
}

impl_list_row!(Operation);

/// The most operations one page holds; a larger page size is served as this.
pub const MAX_PAGE_SIZE: u32 = 1000;
/// The page a query without a page size gets (AIP-158 lets the server choose): an unpaged
/// list of a long history would be one message of megabytes (at 10,000 operations, 6 MB,
/// over grpcio's default 4 MB limit).
pub const DEFAULT_PAGE_SIZE: u32 = 100;
/// The longest text filter accepted.
pub const MAX_FILTER_CHARS: usize = 100;

/// How much of each operation a list answer carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// Everything, machines included (what clients before summaries asked for).
    #[default]
    Full,
    /// What a list row shows: no machine list, the machines counted instead.
    Summary,
}

/// What the list shows of an operation's machines, without the machines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Machines Completed.
    pub done: usize,
    /// Machines in this pass that are not skipped.
    pub total: usize,
    /// The first machine Running, if any.
    pub current: Option<String>,
    /// The first machine Failed, if any.
    pub failed: Option<String>,
}

impl Progress {
    pub(crate) fn of(machines: &[MachineProgress]) -> Progress {
        let first = |p: MachinePhase| {
            machines
                .iter()
                .find(|m| m.phase == p)
                .map(|m| m.name.clone())
        };
        Progress {
            done: machines
                .iter()
                .filter(|m| m.phase == MachinePhase::Completed)
                .count(),
            total: machines
                .iter()
                .filter(|m| m.phase != MachinePhase::Skipped)
                .count(),
            current: first(MachinePhase::Running),
            failed: first(MachinePhase::Failed),
        }
    }
}

/// One ListOperations call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// `None`: every namespace.
    pub namespace: Option<String>,
    pub view: View,
    /// At most this many operations; 0 is [`DEFAULT_PAGE_SIZE`].
    pub page_size: u32,
    /// Where the previous page ended, as its answer said; `None` is the first page.
    pub page_token: Option<String>,
    /// Only this cluster's operations.
    pub cluster: Option<String>,
    /// Only operations in one of these phases; empty is every phase.
    pub phases: Vec<Phase>,
    /// Case-insensitive text each shown operation contains (see [`Operation::matches`]).
    pub text: String,
    /// The version of this page the caller holds: an answer that would be the same comes
    /// back as unchanged, without its operations.
    pub known_version: Option<String>,
    /// The order of every page (the default: newest first).
    pub order: Order,
}

/// What the list is ordered by (k9s's Shift-letter sort of a column).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SortBy {
    /// Newest first.
    #[default]
    Age,
    /// By name, A to Z.
    Name,
    /// By state: running, paused, pending, failed, completed, then any other.
    State,
}

/// The list's order: a column, in its own direction or reversed. Ties are broken by the
/// default order (newest first, then name and namespace), so the order is total and a page
/// token can name where a page ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Order {
    pub by: SortBy,
    pub reversed: bool,
}

impl Order {
    /// The order as AIP-132's `order_by` says it (`""` is the default, newest first).
    pub fn to_order_by(self) -> &'static str {
        match (self.by, self.reversed) {
            (SortBy::Age, false) => "",
            (SortBy::Age, true) => "create_time",
            (SortBy::Name, false) => "name",
            (SortBy::Name, true) => "name desc",
            (SortBy::State, false) => "state",
            (SortBy::State, true) => "state desc",
        }
    }

    /// An `order_by` read back; `None` when it names no order this list has.
    pub fn from_order_by(text: &str) -> Option<Order> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let (field, desc) = match words.as_slice() {
            [] => return Some(Order::default()),
            [f] => (*f, false),
            [f, d] if d.eq_ignore_ascii_case("desc") => (*f, true),
            [f, a] if a.eq_ignore_ascii_case("asc") => (*f, false),
            _ => return None,
        };
        let (by, natural_desc) = match field {
            "create_time" => (SortBy::Age, true),
            "name" => (SortBy::Name, false),
            "state" => (SortBy::State, false),
            _ => return None,
        };
        Some(Order {
            by,
            reversed: desc != natural_desc,
        })
    }

    /// Compares two operations in this order.
    pub fn cmp<A: ListRow + ?Sized, B: ListRow + ?Sized>(self, a: &A, b: &B) -> Ordering {
        let primary = match self.by {
            SortBy::Age => b.created_at().cmp(&a.created_at()),
            SortBy::Name => a.name().cmp(b.name()),
            SortBy::State => state_rank(a.phase())
                .cmp(&state_rank(b.phase()))
                .then_with(|| a.phase().as_str().cmp(b.phase().as_str())),
        };
        let primary = if self.reversed {
            primary.reverse()
        } else {
            primary
        };
        primary.then_with(|| list_order(a, b))
    }
}

/// Where a phase sorts by state: what needs attention first.
fn state_rank(p: &Phase) -> u8 {
    match p {
        Phase::Running => 0,
        Phase::Paused => 1,
        Phase::Pending => 2,
        Phase::Failed => 3,
        Phase::Completed => 4,
        _ => 5,
    }
}

impl ListQuery {
    /// The first of the largest pages of every operation in `namespace`, whole; the next
    /// ones by [`ListQuery::after`] each answer's token.
    pub fn everything(namespace: Option<&str>) -> ListQuery {
        ListQuery {
            namespace: namespace.map(str::to_string),
            page_size: MAX_PAGE_SIZE,
            ..ListQuery::default()
        }
    }

    /// The same query for the page after the one that ended at `token`.
    pub fn after(&self, token: String) -> ListQuery {
        ListQuery {
            page_token: Some(token),
            known_version: None,
            ..self.clone()
        }
    }
}

/// One page of the list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OperationPage {
    /// Newest first ([`list_order`]); empty when `unchanged`.
    pub operations: Vec<Operation>,
    /// Where the next page starts; `None` on the last page.
    pub next_page_token: Option<String>,
    /// How many operations match the query, over every page.
    pub total: usize,
    /// Names this answer: the same query over the same operations has the same version.
    pub version: String,
    /// The page is the one the caller holds (`known_version`): no operations are sent.
    pub unchanged: bool,
}

/// The list's order: newest first, then by name and namespace (stable across calls, so a page
/// token can name where a page ended).
pub fn list_order<A: ListRow + ?Sized, B: ListRow + ?Sized>(a: &A, b: &B) -> Ordering {
    b.created_at()
        .cmp(&a.created_at())
        .then_with(|| a.name().cmp(b.name()))
        .then_with(|| a.namespace().cmp(b.namespace()))
}

impl Operation {
    /// Whether the operation contains `needle_lower` (already lower case) in what its list
    /// row shows ([`ListRow::matches`]).
    pub fn matches(&self, needle_lower: &str) -> bool {
        ListRow::matches(self, needle_lower)
    }

    /// The operation as a list row carries it: its machines counted, not listed; an
    /// unfinished one keeps its machines' phases and times (without their messages), which
    /// its pace, its slow machines and its estimate are read from.
    pub fn summarized(mut self) -> Operation {
        if self.summary.is_none() {
            self.summary = Some(Progress::of(&self.machines));
        }
        if self.phase.is_finished() || self.unreadable.is_some() {
            self.machines = Vec::new();
        } else {
            for m in &mut self.machines {
                m.message = String::new();
            }
        }
        self
    }
}

impl Cluster {
    /// Whether the cluster contains `needle_lower` (already lower case) in its name, namespace,
    /// versions, kube-proxy mode, tracking or unfinished operation. (The Clusters list is
    /// filtered where it is held: it is short.)
    pub fn matches(&self, needle_lower: &str) -> bool {
        if needle_lower.is_empty() {
            return true;
        }
        let tracking = self.tracking.iter().flat_map(|t| [&t.tool, &t.object]);
        let active = self
            .active_operation
            .iter()
            .flat_map(|a| [&a.name, &a.kind]);
        [
            &self.name,
            &self.namespace,
            &self.talos_version,
            &self.kubernetes_version,
            &self.kube_proxy,
        ]
        .into_iter()
        .chain(self.ichor_version.iter())
        .chain(tracking)
        .chain(active)
        .any(|f| f.to_lowercase().contains(needle_lower))
    }
}
