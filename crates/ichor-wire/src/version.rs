//! The version handshake: every response names the server's version (the `ichor-version`
//! header); the dashboard shows it, and refuses writes to a server more than one minor version
//! away from its own (reads still work). A server that names no version is unknown: shown as
//! such, not refused.

use ichor_model::{ApiError, Code, Reason, Version};

/// The response header that names the server's version.
pub const HEADER: &str = "ichor-version";

/// The response header that names who the server took the caller for (its token's user), so a
/// dashboard's status bar can say whose permissions it shows. Absent for a caller with the
/// server's own identity, and for a name a header cannot carry as it is.
pub const CALLER_HEADER: &str = "ichor-caller";

/// This build's version.
pub const CLIENT: &str = env!("CARGO_PKG_VERSION");

/// The refusal of a write to `server` from `client`, when they are more than one minor version
/// apart (or of another major version); `None` when they may write to each other, or when a
/// version cannot be read.
pub fn skew_refusal(client: &str, server: &str, what: &str) -> Option<ApiError> {
    let (c, s) = (Version::parse(client)?, Version::parse(server)?);
    let apart = c.major() != s.major() || c.minor().abs_diff(s.minor()) > 1;
    if !apart {
        return None;
    }
    let upgrade = if (s.major(), s.minor()) > (c.major(), c.minor()) {
        "client"
    } else {
        "server"
    };
    let (cs, ss) = (c.to_string(), s.to_string());
    Some(ApiError::refused(
        Code::FailedPrecondition,
        Reason::VersionSkew,
        &[
            ("client", &cs),
            ("server", &ss),
            ("upgrade", upgrade),
            ("what", what),
        ],
        format!(
            "{what}: this ichor-tui is {cs} and the server is {ss}, more than one minor version apart: writes are refused (reads work); upgrade the {upgrade}"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_refused_beyond_one_minor_version() {
        assert!(skew_refusal("0.1.0", "0.1.7", "w").is_none());
        assert!(skew_refusal("0.1.0", "v0.2.3", "w").is_none());
        assert!(skew_refusal("0.3.0", "0.2.0", "w").is_none());
        let e = skew_refusal("0.1.0", "0.3.0", "starting").unwrap();
        assert_eq!(e.reason, Some(Reason::VersionSkew));
        assert_eq!(e.param("upgrade"), Some("client"));
        assert_eq!(e.param("server"), Some("v0.3.0"));
        let e = skew_refusal("0.5.0", "0.1.0", "w").unwrap();
        assert_eq!(e.param("upgrade"), Some("server"));
        assert!(
            skew_refusal("0.1.0", "1.1.0", "w").is_some(),
            "another major"
        );
        assert!(
            skew_refusal("0.1.0", "banana", "w").is_none(),
            "unreadable: not refused"
        );
    }
}
