//! How the status bar names the route (ichor-ui through a tunnel, a server, or the service
//! in-process and why), and the banner when a tunnel closes: snapshots in English and
//! Japanese at 80×24 and 160×48.

use crate::common;

use common::fixtures::{self, now};
use ichor_app::action::Action;
use ichor_app::state::{Conn, Route, State};
use ichor_app::update::update;
use ichor_model::{ApiError, Code, Fallback, ServerVersion};

fn snap(name: &str, state: &State) {
    crate::snap_all!(name, state);
}

/// The fallbacks' status bars, at 40×12 too.
fn snap_fallback(name: &str, state: &State) {
    crate::snap_every_size!(name, state);
}

/// The list, reached by `route`, not the demo.
fn listed_via(route: Route) -> State {
    let mut s = fixtures::listed(fixtures::list());
    s.session.demo = false;
    s.session.route = route;
    s
}

fn in_process(why: Fallback) -> Route {
    Route::InProcess {
        context: "prod-admin".into(),
        why: Some(why),
        asked: false,
    }
}

#[test]
fn through_a_tunnel_with_the_servers_version() {
    let mut s = listed_via(Route::Tunnel {
        service: "ichor-system/ichor-ui".into(),
    });
    s.session.server_version = ServerVersion::Known("0.1.0".into());
    snap("route_tunnel", &s);
}

#[test]
fn in_process_because_ichor_ui_was_not_found() {
    snap_fallback(
        "route_not_found",
        &listed_via(in_process(Fallback::NotFound)),
    );
}

#[test]
fn in_process_because_there_is_no_token_to_forward() {
    snap_fallback(
        "route_no_token",
        &listed_via(in_process(Fallback::NoToken { how: "exec" })),
    );
}

#[test]
fn in_process_because_ichor_ui_did_not_answer() {
    snap_fallback(
        "route_not_answering",
        &listed_via(in_process(Fallback::NotAnswering {
            detail: "no answer within 3 s".into(),
        })),
    );
}

/// An ichor-ui asked for by name (`--ichor-ui`) that did not answer: what went wrong, where
/// the usual fallback above says what is true here.
#[test]
fn in_process_because_an_ichor_ui_asked_for_did_not_answer() {
    let route = Route::InProcess {
        context: "prod-admin".into(),
        why: Some(Fallback::NotAnswering {
            detail: "no answer within 3 s".into(),
        }),
        asked: true,
    };
    snap_fallback("route_asked_not_answering", &listed_via(route));
}

#[test]
fn a_server_named_by_its_url() {
    let mut s = listed_via(Route::Server {
        url: "https://ichor-ui.example.com:8443".into(),
    });
    s.session.server_version = ServerVersion::Unknown;
    snap("route_server", &s);
}

#[test]
fn a_tunnel_that_closed_is_being_reopened() {
    let mut s = listed_via(Route::Tunnel {
        service: "ichor-system/ichor-ui".into(),
    });
    s.last_ok = Some(fixtures::ago(2));
    update(
        &mut s,
        Action::Retry(ichor_model::RetryEvent::Retrying {
            what: "listing operations".into(),
            attempt: 2,
            delay: std::time::Duration::from_secs(4),
            since: fixtures::ago(1),
            error: ApiError::new(Code::Unavailable, "the tunnel closed"),
        }),
    );
    assert!(matches!(s.conn, Conn::Retrying { .. }));
    snap("route_tunnel_reopening", &s);
    s.conn = Conn::GaveUp {
        since: now() - jiff::SignedDuration::from_mins(1),
    };
    snap("route_tunnel_gave_up", &s);
}

/// On a narrow terminal the status bar gives way in order, and says how fresh the data is at
/// every width: the server's version first, then the namespace's long label, the program's
/// name, why the route fell back, the namespace, and at last the route itself.
#[test]
fn a_narrow_status_bar_keeps_how_fresh_the_data_is() {
    use common::snap::draw;
    use ichor_views::i18n::Lang;
    use ichor_views::widgets::Theme;
    let mut s = listed_via(Route::Tunnel {
        service: "ichor-system/ichor-ui".into(),
    });
    s.session.server_version = ServerVersion::Known("0.1.0".into());
    let bar = |s: &State, w: u16| {
        let term = draw(s, Lang::En, w, 12, Theme::default());
        let buf = term.backend().buffer();
        (0..w)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect::<String>()
            .trim_end()
            .to_string()
    };
    let cases: [(u16, &str); 5] = [
        (
            120,
            " ichor-tui · via ichor-ui (tunnel) · server 0.1.0 │ namespace default │ updated just now",
        ),
        (
            80,
            " ichor-tui · via ichor-ui (tunnel) │ namespace default │ updated just now",
        ),
        (60, " via ichor-ui (tunnel) │ ns default │ updated just now"),
        (44, " via ichor-ui (tunnel) │ updated just now"),
        (40, " updated just now"),
    ];
    for (w, want) in cases {
        assert_eq!(bar(&s, w), want, "at {w} columns");
    }
    // The usual fallback says what is true here; narrower, the route alone.
    let s = listed_via(in_process(Fallback::NotFound));
    assert_eq!(
        bar(&s, 100),
        " ichor-tui · in-process (prod-admin): ichor-ui is not deployed here │ ns default │ updated just now"
    );
    assert_eq!(
        bar(&s, 80),
        " in-process (prod-admin) │ ns default │ updated just now"
    );
}
