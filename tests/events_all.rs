//! Older events, loaded on request (issue 25, item 4): the service says how many events there
//! are; the page and the events view say how many were loaded of how many; `a` in the view
//! loads all of them (at most [`MAX_EVENTS_ALL`]) and says so, and each refresh then reads all.

use crate::common;
use crate::help_screens::{flat, lay_out, snap3};

use common::fixtures::{self, ago_s, now};
use ichor_app::action::{Action, Effect, Key};
use ichor_app::state::State;
use ichor_app::update::update;
use ichor_model::{EventsWanted, MAX_EVENTS, MAX_EVENTS_ALL, OperationEvent, OperationEvents};
use ichor_views::i18n::Lang;

/// The newest `n` of a CA rotation's events (one a second, the newest first).
fn newest(n: usize) -> Vec<OperationEvent> {
    (0..n)
        .map(|i| OperationEvent {
            reason: "MachineStepFinished".into(),
            message: format!("step {i}"),
            object_kind: "Machine".into(),
            object_name: "prod-eu-cp1".into(),
            count: 1,
            last_at: Some(ago_s(i64::try_from(i).unwrap() + 1)),
            ..Default::default()
        })
        .collect()
}

fn answer(s: &mut State, events: Vec<OperationEvent>, total: Option<usize>) {
    let seq = s.seq;
    let d = s.detail.as_ref().unwrap();
    let (namespace, name) = (d.namespace.clone(), d.name.clone());
    let result = Ok(OperationEvents { events, total });
    update(
        s,
        Action::Events {
            seq,
            namespace,
            name,
            result,
        },
    );
    lay_out(s, s.size.0, s.size.1);
}

fn key(s: &mut State, k: Key) -> Vec<Effect> {
    let e = update(s, Action::Key(k));
    lay_out(s, s.size.0, s.size.1);
    e
}

fn wanted(effects: &[Effect]) -> Option<EventsWanted> {
    effects.iter().find_map(|e| match e {
        Effect::ListEvents { wanted, .. } => Some(*wanted),
        _ => None,
    })
}

/// A page whose service said 157 events and sent the newest 100.
fn cut_page() -> State {
    let mut s = fixtures::opened(fixtures::running_rollout());
    lay_out(&mut s, 80, 24);
    answer(&mut s, newest(MAX_EVENTS), Some(157));
    s
}

#[test]
fn the_counts_loaded_and_known_are_said_and_a_loads_all() {
    let mut s = cut_page();
    let page = flat(&s, Lang::En, 160, 48);
    assert!(
        page.contains("Events (100 of 157 loaded, older events not loaded; e: all)"),
        "{page}"
    );
    key(&mut s, Key::ch('e'));
    let said = flat(&s, Lang::En, 80, 24);
    assert!(
        said.contains("the newest 100 of 157 are shown. a: load all (at most 1000)."),
        "{said}"
    );
    snap3("events_older_known", &s);
    let e = key(&mut s, Key::ch('a'));
    assert_eq!(wanted(&e), Some(EventsWanted::All), "{e:?}");
    let said = flat(&s, Lang::En, 80, 24);
    assert!(
        said.contains("Loading all 157 events (at most 1000)"),
        "{said}"
    );
    crate::snap_all!("events_loading_all", &s);
    answer(&mut s, newest(157), Some(157));
    let said = flat(&s, Lang::En, 80, 24);
    assert!(said.contains("157 events, all loaded."), "{said}");
    // Loaded: `a` asks for nothing more, and each refresh reads all of them again.
    assert_eq!(wanted(&key(&mut s, Key::ch('a'))), None);
    s.now = now() + jiff::SignedDuration::from_secs(5);
    let e = update(&mut s, Action::Tick);
    assert_eq!(wanted(&e), Some(EventsWanted::All), "{e:?}");
}

#[test]
fn more_than_the_bound_says_the_bound() {
    let mut s = cut_page();
    key(&mut s, Key::ch('e'));
    key(&mut s, Key::ch('a'));
    answer(&mut s, newest(MAX_EVENTS_ALL), Some(MAX_EVENTS_ALL + 57));
    let said = flat(&s, Lang::En, 160, 48);
    assert!(
        said.contains("The newest 1000 of 1057 events are loaded: at most 1000 are loaded."),
        "{said}"
    );
    crate::snap_all!("events_all_capped", &s);
}

#[test]
fn with_everything_loaded_a_does_nothing() {
    let mut s = fixtures::opened(fixtures::running_rollout());
    lay_out(&mut s, 80, 24);
    answer(&mut s, newest(25), Some(25));
    key(&mut s, Key::ch('e'));
    let before = s.clone();
    assert!(key(&mut s, Key::ch('a')).is_empty());
    assert_eq!(s.detail, before.detail);
}

/// A server from before the count sends the newest 100 and no total: older events may be left
/// out, as before, and `a` asks for all (such a server sends the 100 again).
#[test]
fn a_server_that_does_not_count_is_read_as_before() {
    let mut s = fixtures::opened(fixtures::running_rollout());
    lay_out(&mut s, 80, 24);
    answer(&mut s, newest(MAX_EVENTS), None);
    key(&mut s, Key::ch('e'));
    let said = flat(&s, Lang::En, 80, 24);
    assert!(
        said.contains("Older events not loaded: the newest 100"),
        "{said}"
    );
    assert_eq!(wanted(&key(&mut s, Key::ch('a'))), Some(EventsWanted::All));
}

/// The key's words name the bound the model keeps.
#[test]
fn the_keys_words_name_the_bound() {
    for lang in [Lang::En, Lang::Ja] {
        let t = ichor_views::i18n::Texts::new(lang);
        let hint = t.t("key-load-all-events");
        assert!(hint.contains(&MAX_EVENTS_ALL.to_string()), "{hint}");
    }
}

/// A push carries the newest events: with all of them held, they are read again whole instead
/// of the held ones being cut back to the newest hundred.
#[test]
fn a_push_with_all_held_reads_all_again() {
    let mut s = cut_page();
    key(&mut s, Key::ch('e'));
    key(&mut s, Key::ch('a'));
    answer(&mut s, newest(157), Some(157));
    let d = s.detail.as_ref().unwrap();
    s.live.sub = 7;
    s.live.request = Some(ichor_model::WatchRequest {
        list: Default::default(),
        follow: Some((d.namespace.clone(), d.name.clone())),
        page_deltas: false,
    });
    let pushed = ichor_model::WatchUpdate {
        events: Some(Ok(OperationEvents {
            events: newest(MAX_EVENTS),
            total: Some(158),
        })),
        ..Default::default()
    };
    let e = update(
        &mut s,
        Action::Pushed {
            sub: 7,
            update: Box::new(pushed),
        },
    );
    assert_eq!(wanted(&e), Some(EventsWanted::All), "{e:?}");
    let held = s.detail.as_ref().unwrap().events_held();
    assert_eq!((held.events.len(), held.total), (157, Some(157)));
}

/// The footer of `state` drawn at `w`×`h` in `lang`, trimmed.
fn footer(s: &State, lang: Lang, w: u16, h: u16) -> String {
    let rows = crate::help_screens::rows_of(s, lang, w, h);
    rows.last()
        .map(|r| r.trim().to_string())
        .unwrap_or_default()
}

/// The events view's footer says the keys that do something there now: the scroll keys while
/// the events do not all fit, `a` while older events are not loaded, Esc; at 40 columns the
/// ones that matter least give way, and nothing is cut without `…`.
#[test]
fn the_events_footer_says_the_keys_that_work_now() {
    let mut s = cut_page();
    key(&mut s, Key::ch('e'));
    for (lang, w, h, want) in [
        (
            Lang::En,
            80,
            24,
            "↑↓ scroll · g/Home first · G/End last · a load all · Esc close · ? help",
        ),
        (
            Lang::Ja,
            80,
            24,
            "↑↓ スクロール · g/Home 先頭 · G/End 末尾 · a すべて読み込む · Esc 閉じる",
        ),
        (Lang::En, 40, 12, "↑↓ scroll · a load all · Esc close"),
        (Lang::Ja, 40, 12, "a すべて読み込む · Esc 閉じる"),
    ] {
        assert_eq!(footer(&s, lang, w, h), want, "{lang:?} {w}x{h}");
    }
    // All asked for: `a` does nothing more, and is not offered.
    key(&mut s, Key::ch('a'));
    answer(&mut s, newest(157), Some(157));
    let said = footer(&s, Lang::En, 80, 24);
    assert!(!said.contains("a load all"), "{said}");
    assert!(said.contains("↑↓ scroll"), "{said}");
    // Three events fit: nothing scrolls, nothing more to load.
    let mut s = fixtures::opened(fixtures::running_rollout());
    lay_out(&mut s, 80, 24);
    answer(&mut s, newest(3), Some(3));
    key(&mut s, Key::ch('e'));
    for (lang, want) in [
        (Lang::En, "Esc close · ? help"),
        (Lang::Ja, "Esc 閉じる · ? ヘルプ"),
    ] {
        for (w, h) in [(80, 24), (40, 12), (160, 48)] {
            assert_eq!(footer(&s, lang, w, h), want, "{lang:?} {w}x{h}");
        }
    }
    snap3("events_footer_all_fit", &s);
}
