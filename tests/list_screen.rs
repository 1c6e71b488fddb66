//! The Operations screen against a paged list, driven by Action sequences: each poll carries
//! the version held and an unchanged answer changes nothing; the next page is asked for as the
//! selection nears the end; the filter is applied at once and sent once typing settles.

use crate::common;

use common::fixtures::{self, now};
use ichor_app::action::{Action, Effect, Key, KeyCode};
use ichor_app::state::State;
use ichor_app::update::{start, update};
use ichor_model::{ListQuery, Operation, View};
use ichor_service::list::page;
use jiff::SignedDuration;

/// `n` finished operations, one a minute apart.
fn history(n: i64) -> Vec<Operation> {
    (0..n)
        .map(|i| {
            let mut o = fixtures::completed();
            o.name = format!("op-{i:04}");
            o.uid = format!("uid-{i}");
            o.resource_version = "1".into();
            o.created_at = Some(now() - SignedDuration::from_mins(1000 - i));
            o
        })
        .collect()
}

/// The list effect among `effects`: its query and whether it asks for more.
fn list_query(effects: &[Effect]) -> Option<(u64, ListQuery, bool)> {
    effects.iter().find_map(|e| match e {
        Effect::ListOperations { seq, query, more } => Some((*seq, query.clone(), *more)),
        _ => None,
    })
}

/// Answers a list effect from `ops` as the service would.
fn answer(s: &mut State, ops: &[Operation], effects: &[Effect]) -> Vec<Effect> {
    let (seq, query, more) = list_query(effects).expect("a list request");
    let result = page(ops.to_vec(), &query);
    update(s, Action::OperationsPage { seq, more, result })
}

fn tick_at(s: &mut State, at: jiff::Timestamp) -> Vec<Effect> {
    s.now = at;
    update(s, Action::Tick)
}

fn started(ops: &[Operation]) -> State {
    let mut s = fixtures::state();
    let e = start(&mut s);
    answer(&mut s, ops, &e);
    s
}

#[test]
fn the_list_asks_for_a_page_of_summaries_and_then_only_for_changes() {
    let mut ops = history(250);
    let mut s = fixtures::state();
    let e = start(&mut s);
    let (_, q, more) = list_query(&e).unwrap();
    assert_eq!(
        (q.view, q.page_size, q.page_token, q.known_version, more),
        (View::Summary, 100, None, None, false)
    );
    answer(&mut s, &ops, &e);
    let held = s.ops.all.data.clone().unwrap();
    assert_eq!(held.len(), 100);
    assert!(held.iter().all(|o| o.machines.is_empty()));
    assert_eq!(s.ops.paging.total, 250);
    // The poll names what it holds; the unchanged answer leaves every row as it was.
    let e = tick_at(&mut s, now() + SignedDuration::from_secs(10));
    let (_, q, _) = list_query(&e).unwrap();
    assert!(q.known_version.is_some());
    answer(&mut s, &ops, &e);
    assert_eq!(s.ops.all.data.as_ref().unwrap(), &held);
    assert_eq!(s.ops.all.error, None);
    // A change on the first page comes back whole.
    ops[249].phase = ichor_model::Phase::Failed;
    ops[249].resource_version = "2".into();
    let e = tick_at(&mut s, now() + SignedDuration::from_secs(20));
    answer(&mut s, &ops, &e);
    assert_eq!(
        s.ops.all.data.as_ref().unwrap()[0].phase,
        ichor_model::Phase::Failed
    );
}

#[test]
fn the_next_page_is_asked_for_as_the_selection_nears_the_end() {
    let ops = history(250);
    let mut s = started(&ops);
    // Well before the end: nothing more is asked.
    let e = update(&mut s, Action::Key(Key::plain(KeyCode::Down)));
    assert_eq!(list_query(&e), None);
    // Near the end of the 100 held: the next page, after the last row held.
    let mut asked = None;
    for _ in 0..99 {
        let e = update(&mut s, Action::Key(Key::plain(KeyCode::Down)));
        if list_query(&e).is_some() {
            assert!(asked.is_none(), "asked once, not per key");
            asked = Some(e);
        }
    }
    let e = asked.expect("the next page was asked for");
    let (_, q, more) = list_query(&e).unwrap();
    assert!(more);
    assert!(q.page_token.is_some());
    answer(&mut s, &ops, &e);
    let names: Vec<String> = s
        .ops
        .all
        .data
        .as_ref()
        .unwrap()
        .iter()
        .map(|o| o.name.clone())
        .collect();
    let expected: Vec<String> = (50..250).rev().map(|i| format!("op-{i:04}")).collect();
    assert_eq!(names, expected);
    // The selection stayed on its row; the next poll asks for both pages again.
    assert_eq!(s.ops.selected().unwrap().name, "op-0150");
    let e = tick_at(&mut s, now() + SignedDuration::from_secs(10));
    let (_, q, more) = list_query(&e).unwrap();
    assert_eq!((q.page_size, q.page_token, more), (200, None, false));
    answer(&mut s, &ops, &e);
    assert_eq!(s.ops.all.data.as_ref().unwrap().len(), 200);
    assert_eq!(s.ops.selected().unwrap().name, "op-0150");
}

#[test]
fn the_filter_applies_at_once_and_is_sent_when_typing_settles() {
    let ops = history(250);
    let mut s = started(&ops);
    update(&mut s, Action::Key(Key::ch('/')));
    for c in "0042".chars() {
        let e = update(&mut s, Action::Key(Key::ch(c)));
        assert_eq!(list_query(&e), None, "not a request per key");
    }
    // The rows held are filtered at once (op-0042 is not among the 100 newest).
    assert!(s.ops.visible.is_empty());
    // The server is asked once the typing settles, and finds it.
    assert!(tick_at(&mut s, now() + SignedDuration::from_millis(100)).is_empty());
    let e = tick_at(&mut s, now() + SignedDuration::from_millis(250));
    let (_, q, _) = list_query(&e).unwrap();
    assert_eq!((q.text.as_str(), q.known_version), ("0042", None));
    answer(&mut s, &ops, &e);
    assert_eq!(s.ops.selected().unwrap().name, "op-0042");
    assert_eq!(s.ops.paging.total, 1);
}

#[test]
fn a_paged_list_counts_what_the_server_holds() {
    let ops = history(250);
    let s = started(&ops);
    crate::snap_all!("list_paged", &s);
    // Filtered by the server: the count is the server's.
    let mut s = started(&ops);
    update(&mut s, Action::Key(Key::ch('/')));
    for c in "op-01".chars() {
        update(&mut s, Action::Key(Key::ch(c)));
    }
    let e = tick_at(&mut s, now() + SignedDuration::from_millis(250));
    answer(&mut s, &ops, &e);
    update(&mut s, Action::Key(Key::plain(KeyCode::Enter)));
    assert_eq!(s.ops.paging.total, 100);
    crate::snap_all!("list_paged_filtered", &s);
}

/// A filter the server finds nothing for says that nothing matched, not that the namespace is
/// empty.
#[test]
fn a_filter_that_matches_nothing_on_the_server_says_so() {
    let ops = history(250);
    let mut s = started(&ops);
    update(&mut s, Action::Key(Key::ch('/')));
    for c in "zz".chars() {
        update(&mut s, Action::Key(Key::ch(c)));
    }
    let e = tick_at(&mut s, now() + SignedDuration::from_millis(250));
    answer(&mut s, &ops, &e);
    assert_eq!(s.ops.paging.total, 0);
    crate::snap_all!("list_filter_matches_nothing", &s);
}

/// `G` pressed while a poll is in flight: no second request then, and the next page is asked
/// for as soon as the poll's answer arrives (it used to wait for the next key).
#[test]
fn the_end_reached_during_a_poll_asks_for_more_when_the_poll_answers() {
    let ops = history(250);
    let mut s = started(&ops);
    let poll = tick_at(&mut s, now() + SignedDuration::from_secs(10));
    let (_, q, more) = list_query(&poll).expect("a poll");
    assert!(!more && q.page_token.is_none());
    let e = update(&mut s, Action::Key(Key::ch('G')));
    assert_eq!(list_query(&e), None, "one request at a time");
    let after = answer(&mut s, &ops, &poll);
    let (_, q, more) = list_query(&after).expect("the next page, at once");
    assert!(more && q.page_token.is_some(), "{q:?}");
    answer(&mut s, &ops, &after);
    assert_eq!(s.ops.all.data.as_ref().unwrap().len(), 200);
}
