//! The frame around every screen: the status bar, the banner under it (the connection, else the
//! latest notice or the write waiting for its answer) and the footer of keys.

use super::route::{Detail, Reaches, reaches_text, route_text};
use super::style::Ctx;
use super::text::{fit, sanitize, width};
use super::widgets::lines::Lines;
use super::words::{action_id, duration_text, error_text, hhmm};
use ichor_app::state::{Conn, Notice, PendingWrite, State};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// The most lines the banner takes.
pub(crate) const BANNER_MAX: usize = 3;

/// One try at the status bar's words: how much of the route, the program's name, the
/// namespace (short or not), the user, and how much of the context and its API server.
type Step = (Option<Detail>, bool, Option<bool>, bool, Option<Reaches>);

/// The tries, widest first.
const STEPS: [Step; 8] = [
    (Some(Detail::All), true, Some(false), true, None),
    (Some(Detail::NoVersion), true, Some(false), true, None),
    (Some(Detail::NoVersion), true, Some(true), true, None),
    (Some(Detail::NoVersion), false, Some(true), true, None),
    (Some(Detail::Least), false, Some(true), true, None),
    (Some(Detail::Least), false, None, true, None),
    (Some(Detail::Least), false, None, false, None),
    (None, false, None, false, None),
];

/// The tries with the API server known: it stays longer than the route, the user and the
/// namespace (the context and the server are where a change lands), and the route, which they
/// tell more of, goes before the user.
#[rustfmt::skip]
const REACHING: [Step; 11] = [
    (Some(Detail::All), true, Some(false), true, Some(Reaches::All)),
    (Some(Detail::NoVersion), true, Some(false), true, Some(Reaches::All)),
    (Some(Detail::NoVersion), true, Some(true), true, Some(Reaches::Short)),
    (Some(Detail::NoVersion), false, Some(true), true, Some(Reaches::Short)),
    (Some(Detail::Least), false, Some(true), true, Some(Reaches::Short)),
    (None, false, Some(true), true, Some(Reaches::Short)),
    (None, false, Some(true), false, Some(Reaches::Short)),
    // The server whole before the namespace: two production servers are told apart.
    (None, false, None, false, Some(Reaches::Short)),
    (None, false, None, false, Some(Reaches::Cut)),
    (None, false, None, false, Some(Reaches::Least)),
    (None, false, None, false, None),
];

/// The status bar's words that fit in `room` columns.
fn status_text(state: &State, ctx: &Ctx<'_>, room: usize) -> String {
    let t = ctx.texts;
    let s = &state.session;
    let namespace = |short: bool| {
        Some(match (s.all_namespaces, short) {
            (true, false) => t.t("status-all-namespaces"),
            (true, true) => t.t("status-all-namespaces-short"),
            (false, false) => t.tr("status-namespace", &[("ns", &sanitize(&s.namespace))]),
            (false, true) => t.tr("status-namespace-short", &[("ns", &sanitize(&s.namespace))]),
        })
    };
    let user = s
        .user
        .as_ref()
        .map(|u| t.tr("status-user", &[("user", &sanitize(u))]));
    let fresh = freshness(state, ctx);
    // What gives way on a narrow terminal: the server's version, the namespace's long label,
    // the program's name, why the route fell back (the log says it too), the namespace, the
    // user, then the route itself; how fresh the data is stays.
    let route = |detail: Option<Detail>, named: bool| {
        let route = route_text(s, t, detail?);
        Some(match named {
            true => format!(" ichor-tui · {route}"),
            false => format!(" {route}"),
        })
    };
    let steps = match s.api_server {
        Some(_) => &REACHING[..],
        None => &STEPS[..],
    };
    let mut text = String::new();
    for &(detail, named, short_ns, with_user, reaches) in steps {
        let parts = [
            route(detail, named),
            reaches.and_then(|r| reaches_text(s, t, r)),
            short_ns.and_then(namespace),
            user.clone().filter(|_| with_user),
            Some(fresh.clone()),
        ];
        text = parts.into_iter().flatten().collect::<Vec<_>>().join(" │ ");
        if !text.starts_with(' ') {
            text.insert(0, ' ');
        }
        if width(&text) <= room {
            break;
        }
    }
    text
}

/// The status bar: program, backend, the context and its API server, namespace, user, the age
/// of the data, and badges.
pub(crate) fn status_bar(state: &State, ctx: &Ctx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.texts;
    let s = &state.session;
    let mut badges = Vec::new();
    if s.read_only {
        badges.push(format!("[{}]", t.t("badge-read-only")));
    }
    if state.stale() {
        badges.push(format!("[{}]", t.t("badge-stale")));
    }
    if state.live_off() {
        badges.push(format!("[{}]", t.t("badge-live-off")));
    }
    // An ichor-ui asked for by name and not reached: an alarm, kept at every width.
    if let ichor_app::state::Route::InProcess {
        why: Some(_),
        asked: true,
        ..
    } = &s.route
    {
        badges.push(format!("[{}]", t.t("badge-ichor-ui-not-reached")));
    }
    let badge = badges.join(" ");
    let production = super::production::label(state, ctx).map(|l| format!(" {l} "));
    let room = usize::from(area.width)
        .saturating_sub(width(&badge) + 1)
        .saturating_sub(production.as_deref().map_or(0, width));
    let (bar, badge_style) = if ctx.theme.color {
        (
            Style::default().fg(Color::Black).bg(Color::Cyan),
            Style::default()
                .fg(Color::White)
                .bg(Color::Red)
                .add_modifier(Modifier::BOLD),
        )
    } else {
        (
            Style::default().add_modifier(Modifier::REVERSED),
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        )
    };
    let first = production.map(|p| Span::styled(p, super::production::style(ctx)));
    let spans = first.into_iter().chain([
        Span::raw(format!("{} ", fit(&status_text(state, ctx, room), room))),
        Span::styled(badge, badge_style),
    ]);
    Line::from(spans.collect::<Vec<_>>())
        .style(bar)
        .render(area, buf);
}

/// How fresh the data on screen is. While it may be out of date (the side the dashboard reads
/// from does not answer, the screen's last load failed, its live updates broke and nothing was
/// read since), the clock time the data arrived (an age would read as fresh), and which side
/// does not answer; pushed, "live"; else how long ago it was updated: "just now" for the first
/// minute (no per-second repaint for it), then minutes and up.
fn freshness(state: &State, ctx: &Ctx<'_>) -> String {
    let t = ctx.texts;
    let down = state.conn != Conn::Ok;
    match state.last_ok {
        Some(at) if down => t.tr(
            "status-data-from-side",
            &[("time", &hhmm(state, at)), ("side", &side(state, t))],
        ),
        None if down => t.tr("status-no-data-side", &[("side", &side(state, t))]),
        Some(at) if state.stale() => t.tr("status-data-from", &[("time", &hhmm(state, at))]),
        // Pushed: the data is the latest there is, whatever its age.
        Some(_) if state.pushed() => t.t("status-live"),
        Some(at) => match state.now.duration_since(at) {
            d if d.as_secs() < 60 => t.t("status-updated-now"),
            d => t.tr("status-updated", &[("age", &duration_text(t, d))]),
        },
        None => t.t("status-never-updated"),
    }
}

/// The side the dashboard reads from, in words: Kubernetes in-process, ichor-ui through the
/// tunnel, or the server.
fn side(state: &State, t: &crate::i18n::Texts) -> String {
    use ichor_app::state::Route;
    t.t(match state.session.route {
        Route::Server { .. } => "side-server",
        Route::Tunnel { .. } => "side-tunnel",
        Route::InProcess { .. } => "side-kubernetes",
    })
}

/// The line(s) under the status bar: the connection banner, else the write waiting for its
/// answer, else the latest notice, wrapped to at most three lines.
pub(crate) fn banner(state: &State, ctx: &Ctx<'_>, w: usize) -> Lines {
    let mut lines = Lines::new(w).margin(2);
    let Some((text, style)) = banner_text(state, ctx) else {
        return lines;
    };
    let wrapped = super::text::wrap(&text, lines.wrap_width);
    let cut = wrapped.len() > BANNER_MAX;
    for (i, l) in wrapped.into_iter().take(BANNER_MAX).enumerate() {
        // A banner longer than its lines says so at its end.
        let l = if cut && i + 1 == BANNER_MAX {
            super::text::truncate(&format!("{l}…"), lines.wrap_width)
        } else {
            l
        };
        lines.push(format!(" {l}"), style);
    }
    lines
}

fn banner_text(state: &State, ctx: &Ctx<'_>) -> Option<(String, Style)> {
    let t = ctx.texts;
    Some(match &state.conn {
        Conn::Retrying { since, round, .. } => {
            let secs = state.conn.seconds_left(state.now).unwrap_or(0);
            let since = fluent_bundle::FluentValue::from(hhmm(state, *since));
            // Through a tunnel, what closed is the tunnel: it is opened again with each try.
            // The first countdown, a later one (numbered), or a try under way.
            let tunnel = matches!(state.session.route, ichor_app::state::Route::Tunnel { .. });
            let id = match (tunnel, *round > 1, secs > 0) {
                (false, _, false) => "banner-retrying-now",
                (false, false, true) => "banner-retrying",
                (false, true, true) => "banner-retrying-again",
                (true, _, false) => "banner-tunnel-retrying-now",
                (true, false, true) => "banner-tunnel-retrying",
                (true, true, true) => "banner-tunnel-retrying-again",
            };
            (
                t.tn(
                    id,
                    &[
                        ("n", fluent_bundle::FluentValue::from(secs)),
                        ("round", fluent_bundle::FluentValue::from(*round)),
                        ("since", since),
                        ("side", fluent_bundle::FluentValue::from(side(state, t))),
                    ],
                ),
                ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            )
        }
        Conn::GaveUp { since } => (
            t.tr(
                match state.session.route {
                    ichor_app::state::Route::Tunnel { .. } => "banner-tunnel-gave-up",
                    _ => "banner-gave-up",
                },
                &[("since", &hhmm(state, *since)), ("side", &side(state, t))],
            ),
            ctx.theme.alarm(),
        ),
        Conn::Ok => match (&state.pending, &state.notice, state.credentials_refused()) {
            (Some(p), Some(n @ Notice::ContextBusy), _) => {
                // Why `:ctx` did nothing, and the write it waits for.
                let (busy, style) = notice_text(n, state, ctx);
                (format!("{busy} {}", pending_text(p, ctx).0), style)
            }
            (Some(p), _, _) => pending_text(p, ctx),
            (None, _, Some(refused)) => credentials_text(refused, ctx),
            (None, Some(n), None) => notice_text(n, state, ctx),
            (None, None, None) => match &state.settling {
                Some(s) => settling_text(s, ctx),
                None => return None,
            },
        },
    })
}

/// The dashboard's own credentials were refused: after a CA rotation, that it replaced them
/// and what to run; else that they may have been, or expired.
fn credentials_text(
    refused: ichor_app::state::CredentialsRefused<'_>,
    ctx: &Ctx<'_>,
) -> (String, Style) {
    let t = ctx.texts;
    let text = match refused.rotation {
        Some(op) => t.tr(
            "banner-credentials-rotated",
            &[
                ("operation", &sanitize(&op.name)),
                ("cluster", &sanitize(&op.cluster)),
            ],
        ),
        None => t.t("banner-credentials-refused"),
    };
    (text, ctx.theme.alarm())
}

/// A write waiting for its answer, and how to stop waiting.
fn pending_text(p: &PendingWrite, ctx: &Ctx<'_>) -> (String, Style) {
    (
        ctx.texts.tr(
            &format!("pending-{}", action_id(p.action)),
            &[("name", &sanitize(&p.name))],
        ),
        ctx.theme.bold(),
    )
}

/// A start whose outcome is being settled: which, and until when it is looked for.
fn settling_text(s: &ichor_app::state::SettlingStart, ctx: &Ctx<'_>) -> (String, Style) {
    (
        ctx.texts.tr(
            "start-settling",
            &[
                ("cluster", &sanitize(&s.cluster)),
                ("until", &super::words::utc_clock(s.until)),
            ],
        ),
        ctx.theme.bold(),
    )
}

fn notice_text(n: &Notice, state: &State, ctx: &Ctx<'_>) -> (String, Style) {
    let t = ctx.texts;
    let said = |prefix: &str, a: &ichor_app::state::WriteAction, name: &str| {
        t.tr(
            &format!("{prefix}-{}", action_id(*a)),
            &[("name", &sanitize(name))],
        )
    };
    match n {
        Notice::Abandoned(a, name) => (
            said("abandoned", a, name),
            ctx.theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
        Notice::Done(a, name) => (said("done", a, name), ctx.theme.fg(Color::Green)),
        Notice::Failed(e) => (error_text(t, e), ctx.theme.alarm()),
        Notice::ResumeNotOffered(name) => (
            t.tr("resume-not-offered", &[("name", &sanitize(name))]),
            ctx.theme.alarm(),
        ),
        Notice::Unavailable(why) => (t.t(why.message_id()), ctx.theme.fg(Color::Yellow)),
        Notice::NotPermitted(write, namespace) => (
            t.tr(write.message_id(), &[("namespace", &sanitize(namespace))]),
            ctx.theme.fg(Color::Yellow),
        ),
        Notice::Started(created) => started_text(created, ctx),
        Notice::StartNotCreated(cluster) => (
            t.tr("start-not-created", &[("cluster", &sanitize(cluster))]),
            ctx.theme.fg(Color::Yellow),
        ),
        Notice::NamespaceUsage => {
            let said = match state.session.all_namespaces {
                false => t.tr(
                    "namespace-usage",
                    &[("ns", &sanitize(&state.session.namespace))],
                ),
                true => t.t("namespace-usage-all"),
            };
            (said, ctx.theme.fg(Color::Yellow))
        }
        Notice::BadNamespace(text) => (
            t.tr(
                "namespace-invalid",
                &[("value", &super::text::truncate(&sanitize(text), 32))],
            ),
            ctx.theme.fg(Color::Yellow),
        ),
        Notice::Refreshed => (t.t("refreshed"), ctx.theme.fg(Color::Green)),
        Notice::ContextUsage(_)
        | Notice::NoContexts
        | Notice::ContextBusy
        | Notice::ContextSwitching(_)
        | Notice::ContextSwitched(_)
        | Notice::ContextFailed(..) => super::contexts::notice_text(n, state, ctx),
        Notice::ReportSaved(..) | Notice::ReportFailed(..) | Notice::NameNotTyped(_) => {
            super::pace::notice_text(n, ctx)
        }
        Notice::UnknownCommand(text) => (
            t.tr(
                "unknown-command",
                &[("command", &super::text::truncate(&sanitize(text), 32))],
            ),
            ctx.theme.fg(Color::Yellow),
        ),
    }
}

/// An operation started: its name, the spec field written first, and any warning, first.
fn started_text(created: &ichor_model::Created, ctx: &Ctx<'_>) -> (String, Style) {
    let t = ctx.texts;
    let mut text = t.tr("started", &[("name", &sanitize(&created.operation.name))]);
    if let Some(c) = &created.spec_written {
        // The message brings its own space where its language puts one.
        text.push_str(&t.tr(
            "started-spec-written",
            &[
                ("field", &sanitize(&c.field)),
                ("from", &sanitize(&c.from)),
                ("to", &sanitize(&c.to)),
            ],
        ));
    }
    if created.operation.kind == Some(ichor_model::OperationKind::CaRotation) {
        // ADR 0068 Decision 7: the reminder after the start, as the CLI prints it (its own
        // space too).
        let name = sanitize(&created.operation.cluster);
        text.push_str(&t.tr("started-ca-bundle", &[("name", &name)]));
    }
    if created.warnings.is_empty() {
        return (text, ctx.theme.fg(Color::Green));
    }
    // A warning must not be missed: it comes first, in bold red.
    let warnings: Vec<String> = created
        .warnings
        .iter()
        .map(|w| {
            let e = ichor_model::ApiError {
                code: ichor_model::Code::Internal,
                reason: Some(w.reason),
                params: w.params.clone(),
                message: w.message.clone(),
            };
            format!("⚠ {}", error_text(t, &e))
        })
        .collect();
    (format!("{} {text}", warnings.join(" ")), ctx.theme.alarm())
}
