//! Versions as Talos, Kubernetes and ichor write them, and which upgrades the executors make in
//! one operation. Used by the plan (the service) and the new-operation form (the app) alike.

use super::{ApiError, Code, OperationKind, Reason, Refusal};

/// A version as Talos, Kubernetes and ichor write them: `v1.9.3`, `1.9.3`, `v1.10.0-beta.1`.
/// Semantic Versioning 2.0 (the `semver` crate) decides what parses and how versions order, so
/// pre-releases compare field by field: `v1.10.0-beta.2 < v1.10.0-beta.10 < v1.10.0`. Build
/// metadata (`+…`) is refused: no Talos, Kubernetes or ichor release carries it, and two
/// versions that differ only there would be neither equal nor ordered as a person expects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(semver::Version);

/// The longest version text taken (the longest real ones are about 20 characters).
const MAX_VERSION_LEN: usize = 64;

impl Version {
    /// Parses a version with or without the leading `v`.
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.trim();
        if s.len() > MAX_VERSION_LEN {
            return None;
        }
        let rest = s.strip_prefix('v').unwrap_or(s);
        let v = semver::Version::parse(rest).ok()?;
        v.build.is_empty().then_some(Version(v))
    }

    pub fn major(&self) -> u64 {
        self.0.major
    }

    pub fn minor(&self) -> u64 {
        self.0.minor
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// Whether a forward move from `current` to `target` is one the executor of `kind` supports:
/// Talos upgrades one minor version at a time, and Kubernetes does too (kubeadm's and Talos's
/// version skew); neither changes its major version. ichor refuses a major version change.
/// Downgrades are the Downgrade refusal's, not this one's; kinds without versions pass.
pub fn check_jump(kind: OperationKind, current: &Version, target: &Version) -> Option<Refusal> {
    let one_minor = matches!(kind, OperationKind::Talos | OperationKind::Kubernetes);
    if !one_minor && kind != OperationKind::Ichor {
        return None;
    }
    let (major, minor) = (current.major(), current.minor());
    let fits = if one_minor {
        target.major() == major && target.minor() <= minor.saturating_add(1)
    } else {
        target.major() == major
    };
    if fits || target < current {
        return None;
    }
    let allowed = if one_minor {
        format!("v{major}.{minor}.x, v{major}.{}.x", minor.saturating_add(1))
    } else {
        format!("v{major}.x")
    };
    let (current, target) = (current.to_string(), target.to_string());
    Some(Refusal::said(
        Reason::UnsupportedJump,
        &[
            ("kind", kind.as_str()),
            ("current", &current),
            ("target", &target),
            ("allowed", &allowed),
        ],
    ))
}

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
    Some(ApiError::said(
        Code::FailedPrecondition,
        Reason::VersionSkew,
        &[
            ("client", &cs),
            ("server", &ss),
            ("upgrade", upgrade),
            ("what", what),
        ],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(Version::parse("1.9.3").unwrap().to_string(), "v1.9.3");
        assert_eq!(
            Version::parse("v1.10.0-beta.1").unwrap().to_string(),
            "v1.10.0-beta.1"
        );
        for bad in [
            "",
            "v",
            "1.9",
            "1.9.3.4",
            "v1.09.3",
            "1.x.3",
            "v1.9.3-",
            "v1.9.3-b@d",
            "latest",
        ] {
            assert!(Version::parse(bad).is_none(), "{bad}");
        }
        let v = |s| Version::parse(s).unwrap();
        assert!(v("v1.10.0") > v("v1.9.9"));
        assert!(v("v1.10.0") > v("v1.10.0-rc.1"));
    }

    #[test]
    fn versions_follow_semver() {
        let v = |s| Version::parse(s).unwrap();
        // Pre-release fields compare as numbers where they are numbers.
        assert!(v("v1.10.0-beta.10") > v("v1.10.0-beta.2"));
        assert!(v("v1.10.0-rc.1") > v("v1.10.0-beta.10"));
        assert!(v("v1.10.0-alpha") < v("v1.10.0-alpha.1"));
        assert!(v("v1.10.0-beta.2") < v("v1.10.0"));
        // With or without the v, the same version, said with the v.
        assert_eq!(v("1.10.0-beta.2"), v("v1.10.0-beta.2"));
        assert_eq!(v(" 1.9.3 ").to_string(), "v1.9.3");
        assert_eq!(
            (
                v("v1.9.3").major(),
                v("v1.9.3").minor(),
                v("v1.9.3").0.patch
            ),
            (1, 9, 3)
        );
        assert_eq!(v("v1.10.0-beta.2").0.pre.as_str(), "beta.2");
        for bad in [
            "v1.9.3+build.5",
            "V1.9.3",
            "vv1.9.3",
            "v1.9.3-beta.01",
            "v99999999999999999999.0.0",
        ] {
            assert!(Version::parse(bad).is_none(), "{bad}");
        }
        assert!(Version::parse(&format!("v1.9.3-{}", "a".repeat(100))).is_none());
    }

    #[test]
    fn jumps_go_one_minor_version_at_a_time() {
        use OperationKind::*;
        let v = |s| Version::parse(s).unwrap();
        let jump = |kind, a, b| check_jump(kind, &v(a), &v(b));
        for kind in [Talos, Kubernetes] {
            for (a, b) in [
                ("v1.9.2", "v1.9.4"),
                ("v1.9.2", "v1.10.0"),
                ("v1.9.2", "v1.10.3"),
                ("v1.9.2", "v1.10.0-beta.1"),
                ("v1.10.0-beta.2", "v1.10.0-beta.10"),
                ("v1.9.2", "v1.9.2"),
                ("v1.9.2", "v1.8.0"),
            ] {
                assert_eq!(jump(kind, a, b), None, "{kind:?} {a} → {b}");
            }
            let r = jump(kind, "v1.9.2", "v1.33.1").expect("v1.9 → v1.33");
            assert_eq!(r.reason, Reason::UnsupportedJump);
            assert_eq!(r.params["kind"], kind.as_str());
            assert_eq!(r.params["current"], "v1.9.2");
            assert_eq!(r.params["target"], "v1.33.1");
            assert_eq!(r.params["allowed"], "v1.9.x, v1.10.x");
            assert!(jump(kind, "v1.9.2", "v1.11.0-alpha.1").is_some());
            assert!(jump(kind, "v1.9.2", "v2.0.0").is_some(), "a major change");
            assert!(jump(kind, "v1.33.0", "v2.0.0").is_some(), "a major change");
        }
        assert_eq!(
            jump(Ichor, "v0.14.2", "v0.20.0"),
            None,
            "ichor: minors at will"
        );
        // Said in the dashboard's English words (locales/en), on the wire too.
        assert_eq!(
            jump(Talos, "v1.9.2", "v1.33.1").map(|r| r.message),
            Some(
                "Talos cannot go from v1.9.2 to v1.33.1 in one operation: from v1.9.2 the supported targets are v1.9.x, v1.10.x."
                    .into()
            )
        );
        let r = jump(Ichor, "v0.14.2", "v1.0.0").expect("a major change");
        assert_eq!(r.params["allowed"], "v0.x");
        for kind in [Cni, Shutdown, CaRotation] {
            assert_eq!(jump(kind, "v1.0.0", "v9.0.0"), None, "{kind:?}");
        }
    }
}
