//! The version handshake: every response names the server's version (the `ichor-version`
//! header); the dashboard shows it, and refuses writes to a server more than one minor version
//! away from its own (reads still work). A server that names no version is unknown: shown as
//! such, not refused.

/// The response header that names the server's version.
pub const HEADER: &str = "ichor-version";

/// The response header that names who the server took the caller for (its token's user), so a
/// dashboard's status bar can say whose permissions it shows. Absent for a caller with the
/// server's own identity, and for a name a header cannot carry as it is.
pub const CALLER_HEADER: &str = "ichor-caller";

/// This build's version.
pub const CLIENT: &str = env!("CARGO_PKG_VERSION");

pub use ichor_model::skew_refusal;

#[cfg(test)]
mod tests {
    use super::*;
    use ichor_model::Reason;

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
