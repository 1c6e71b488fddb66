//! The screens while their data may be out of date: the time of the data beside the
//! operation's state, nothing counting on, and a later countdown of the outage said as one.

use crate::common;

use common::fixtures::{self, now};
use ichor_app::action::Action;
use ichor_app::state::{Conn, State};
use ichor_app::update::update;
use ichor_model::{ApiError, Code, RetryEvent};
use jiff::SignedDuration;
use std::time::Duration;

fn waits(delay_s: u64, since: jiff::Timestamp) -> Action {
    Action::Retry(RetryEvent::Retrying {
        what: "reading the operation".into(),
        attempt: 1,
        delay: Duration::from_secs(delay_s),
        since,
        error: ApiError::new(Code::Unavailable, "connection refused"),
    })
}

/// The page of a running operation, read at 12:00, then the API stops answering: its first
/// countdown ends and a second begins 9 s later.
fn stale_page() -> State {
    let mut s = fixtures::page(fixtures::running_rollout());
    update(&mut s, waits(8, now()));
    s.now = now() + SignedDuration::from_secs(9);
    update(&mut s, waits(16, now() + SignedDuration::from_secs(8)));
    // Four minutes on: the countdown is 4 s from its end.
    s.now = now() + SignedDuration::from_secs(4 * 60);
    if let Conn::Retrying { next_at, .. } = &mut s.conn {
        *next_at = s.now + SignedDuration::from_secs(4);
    }
    s
}

#[test]
fn a_stale_operation_page_says_the_time_of_its_data_and_counts_nothing_on() {
    let s = stale_page();
    assert!(
        matches!(s.conn, Conn::Retrying { round: 2, .. }),
        "{:?}",
        s.conn
    );
    assert_eq!(s.data_time(), Some(now()));
    crate::snap_every_size!("operation_stale", &s);
}

/// Four minutes later still, nothing on the page has moved (Elapsed, the machines' times).
#[test]
fn nothing_on_a_stale_page_counts_on() {
    use common::snap::draw;
    use ichor_views::i18n::Lang;
    use ichor_views::widgets::Theme;
    let s = stale_page();
    let mut later = s.clone();
    later.now = s.now + SignedDuration::from_secs(4 * 60);
    if let Conn::Retrying { next_at, .. } = &mut later.conn {
        *next_at = later.now + SignedDuration::from_secs(4);
    }
    let page = |s: &State| {
        let term = draw(s, Lang::En, 80, 24, Theme::default());
        let buf = term.backend().buffer().clone();
        // Below the status bar and the banner.
        (3..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(page(&s), page(&later));
    assert!(page(&s).contains("(data from 12:00)"), "{}", page(&s));
}
