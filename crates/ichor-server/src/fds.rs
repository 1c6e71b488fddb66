//! The file descriptors serve needs: one for each connection it holds open
//! ([`crate::Bounds::connections`]), and a few of its own (the listener, the Kubernetes API's
//! connections, the log). A process starts with a soft limit (often 1,024) under its hard limit;
//! serve raises the soft one as far as the connections need and the hard one allows, as Go's
//! runtime does for every Go server, and says when that is not enough.

/// What serve keeps open beside its callers' connections.
pub const OWN_FILES: u64 = 256;

/// The open-files limit (soft, hard), when it can be read.
pub fn open_files_limit() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the struct it is given, which lives here.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (read == 0).then_some((limit.rlim_cur, limit.rlim_max))
}

/// Raises the soft open-files limit so that `connections` and [`OWN_FILES`] fit, up to the hard
/// limit. The soft limit after it (or `None` when it cannot be read).
pub fn make_room(connections: usize) -> Option<u64> {
    let (soft, hard) = open_files_limit()?;
    let wanted = u64::try_from(connections)
        .unwrap_or(u64::MAX)
        .saturating_add(OWN_FILES);
    if soft >= wanted {
        return Some(soft);
    }
    let raised = libc::rlimit {
        rlim_cur: wanted.min(hard),
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the struct it is given; a soft limit up to the hard one is allowed.
    let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
    let now = open_files_limit().map_or(soft, |(soft, _)| soft);
    if set != 0 || now < wanted {
        tracing::warn!(
            connections,
            open_files = now,
            "the open-files limit (ulimit -n) is under what --max-connections needs: connections past it are refused by the system, not queued"
        );
    }
    Some(now)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_soft_limit_is_raised_within_the_hard_one() {
        let (soft, hard) = super::open_files_limit().unwrap();
        let now = super::make_room(0).unwrap();
        assert_eq!(now, soft, "nothing to raise for no connections");
        let wanted = soft.min(hard.saturating_sub(super::OWN_FILES));
        let now = super::make_room(usize::try_from(wanted).unwrap()).unwrap();
        assert!(now >= soft && now <= hard, "{soft} <= {now} <= {hard}");
    }
}
