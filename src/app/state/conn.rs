//! The connection as the retrying client reports it, and the countdown the banner shows.
//!
//! Every read on screen retries on its own (the list, the page, its events, the permissions),
//! each with its own backoff, and each wait is reported. Shown as they come, the count would
//! jump about ("3 s", "0 s", "2 s", "7 s"): the banner instead counts down to the earliest
//! try it was told of and only ever goes down. Once it reaches zero a try is under way; the
//! next wait reported after that starts a new countdown, numbered, so the banner says it is
//! another one.

use ichor_model::RetryEvent;
use jiff::{SignedDuration, Timestamp};

/// The connection as the retrying client reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Conn {
    #[default]
    Ok,
    Retrying {
        /// When the countdown on screen ends: the next try.
        next_at: Timestamp,
        /// The outage's first failed try: the earliest a read reported, and never later than
        /// the dashboard heard of it.
        since: Timestamp,
        /// Which countdown of the outage this is (1, 2, …).
        round: u32,
    },
    GaveUp {
        since: Timestamp,
    },
}

impl Conn {
    /// The connection after `ev`, reported at `now`.
    pub(crate) fn after(&self, ev: RetryEvent, now: Timestamp) -> Conn {
        match ev {
            RetryEvent::Retrying { delay, since, .. } => {
                let at = now + SignedDuration::try_from(delay).unwrap_or(SignedDuration::ZERO);
                match self {
                    // Still counting down: never up, and down when a try comes sooner.
                    Conn::Retrying {
                        next_at,
                        since: first,
                        round,
                    } if *next_at > now => Conn::Retrying {
                        next_at: (*next_at).min(at),
                        since: (*first).min(since),
                        round: *round,
                    },
                    // The countdown ended and that try failed too: a new one.
                    Conn::Retrying {
                        since: first,
                        round,
                        ..
                    } => Conn::Retrying {
                        next_at: at,
                        since: (*first).min(since),
                        round: round.saturating_add(1),
                    },
                    // The outage began: at the read's first failed try, never later than the
                    // dashboard heard of it (on its clock, the one the status bar's times are on).
                    Conn::Ok | Conn::GaveUp { .. } => Conn::Retrying {
                        next_at: at,
                        since: since.min(now),
                        round: 1,
                    },
                }
            }
            RetryEvent::Recovered { .. } => Conn::Ok,
            RetryEvent::GaveUp { since: first, .. } => Conn::GaveUp {
                since: match self {
                    Conn::Retrying { since, .. } | Conn::GaveUp { since } => (*since).min(first),
                    Conn::Ok => first.min(now),
                },
            },
        }
    }

    /// The whole seconds left on the countdown at `now` (0: a try is under way).
    pub fn seconds_left(&self, now: Timestamp) -> Option<i64> {
        match self {
            Conn::Retrying { next_at, .. } => {
                // Rounded up, so "1 s" shows until the try, and "0" only once it is made.
                let ms = next_at.duration_since(now).as_millis().max(0);
                Some(((ms + 999) / 1000) as i64)
            }
            Conn::Ok | Conn::GaveUp { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_model::{ApiError, Code};
    use std::time::Duration;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    fn waits(delay_s: u64, since: Timestamp) -> RetryEvent {
        RetryEvent::Retrying {
            what: "a read".into(),
            attempt: 1,
            delay: Duration::from_secs(delay_s),
            since,
            error: ApiError::new(Code::Unavailable, "refused"),
        }
    }

    /// Each second from 0 to `to`: what the countdown says as the second begins, then after
    /// the waits reported in it (several reads retrying, each with its own backoff), and which
    /// countdown it is.
    fn shown(events: &[(i64, u64)], to: i64) -> Vec<(i64, i64, i64, u32)> {
        let mut conn = Conn::Ok;
        let mut out = Vec::new();
        for s in 0..=to {
            let before = conn.seconds_left(at(s)).unwrap_or(0);
            for (when, delay) in events.iter().filter(|(w, _)| *w == s) {
                conn = conn.after(waits(*delay, at(*when)), at(s));
            }
            let round = match conn {
                Conn::Retrying { round, .. } => round,
                _ => 0,
            };
            out.push((s, before, conn.seconds_left(at(s)).unwrap_or(0), round));
        }
        out
    }

    #[test]
    fn the_countdown_only_goes_down_and_a_new_wait_is_a_new_countdown() {
        // Four reads fail at once with waits of 3, 1, 2 and 7 s; the 1 s try fails again and
        // waits 2 s; then the 3 s one waits 8 s.
        let seen = shown(&[(0, 3), (0, 1), (0, 2), (0, 7), (1, 2), (3, 8)], 12);
        for pair in seen.windows(2) {
            let [(_, _, was, round_was), (s, before, now, round)] = [pair[0], pair[1]];
            assert!(before <= was, "at {s} s it went up: {seen:?}");
            match round == round_was {
                true => assert!(now <= was, "at {s} s it went up: {seen:?}"),
                false => {
                    assert_eq!(round, round_was + 1, "{seen:?}");
                    assert_eq!(before, 0, "a new countdown only once one ended: {seen:?}");
                }
            }
        }
        // The earliest try first (1 s), then a new countdown of 2 s, then of 8 s.
        assert_eq!(seen[0], (0, 0, 1, 1));
        assert_eq!(seen[1], (1, 0, 2, 2));
        assert_eq!(seen[3], (3, 0, 8, 3));
        assert_eq!(seen[11], (11, 0, 0, 3), "a try under way says 0");
    }

    #[test]
    fn since_is_the_first_failed_try_and_recovery_or_giving_up_ends_it() {
        // A try that failed later than it was heard of (another clock) counts from hearing it.
        let mut conn = Conn::Ok.after(waits(2, at(4)), at(0));
        assert!(matches!(conn, Conn::Retrying { since, .. } if since == at(0)));
        // Another read whose first try failed earlier: the outage is older than thought.
        conn = conn.after(waits(5, at(-3)), at(1));
        assert!(matches!(conn, Conn::Retrying { since, round: 1, .. } if since == at(-3)));
        let ok = conn.after(
            RetryEvent::Recovered {
                what: "a read".into(),
            },
            at(2),
        );
        assert_eq!(ok, Conn::Ok);
        let again = ok.after(waits(4, at(3)), at(3));
        assert!(
            matches!(again, Conn::Retrying { round: 1, .. }),
            "{again:?}"
        );
    }
}
