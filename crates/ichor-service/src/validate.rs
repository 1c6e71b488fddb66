//! The service's edge: every argument of every public method is checked here before any call to
//! Kubernetes, on every path (in-process, impersonated, gRPC). A violation is InvalidArgument with
//! its own reason; its message and parameters quote at most a short, inert prefix of the input
//! ([`shown`]), so no request, however large or strange, comes back echoed.

use ichor_model::{ApiError, Code, Confirmed, OperationRequest, Reason};

/// A namespace is a DNS-1123 label: at most this many characters.
pub(crate) const MAX_NAMESPACE: usize = 63;
/// Operation and cluster names are DNS-1123 subdomains: at most this many characters.
pub(crate) const MAX_NAME: usize = 253;
/// The longest request id a start may carry.
pub(crate) const MAX_REQUEST_ID: usize = 64;
/// The longest plan fingerprint taken (ours are 32 hex characters).
pub(crate) const MAX_FINGERPRINT: usize = 128;
/// The longest confirmed uid taken (Kubernetes uids are 36 characters).
pub(crate) const MAX_UID: usize = 128;
/// The largest max unavailable taken before anything is read; the plan then also checks it
/// against the cluster's workers.
pub(crate) const MAX_MAX_UNAVAILABLE: i32 = 1000;
/// At most this many characters of an input are quoted back.
pub(crate) const SHOWN_CHARS: usize = 32;
/// … and at most this many bytes of them.
const SHOWN_BYTES: usize = 64;

/// A short, inert prefix of `input` for an error: control, format and bidi characters removed,
/// at most [`SHOWN_CHARS`] characters (and 64 bytes), `…` when cut.
pub(crate) fn shown(input: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    let mut cut = false;
    for c in input.chars() {
        if c.is_control()
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{061C}' | '\u{FEFF}')
        {
            continue;
        }
        if chars == SHOWN_CHARS || out.len() + c.len_utf8() > SHOWN_BYTES {
            cut = true;
            break;
        }
        out.push(c);
        chars += 1;
    }
    if cut {
        out.push('…');
    }
    out
}

fn refused(reason: Reason, params: &[(&str, &str)]) -> ApiError {
    ApiError::said(Code::InvalidArgument, reason, params)
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` without a length limit.
fn is_label_text(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-';
    let end = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty() && b.iter().all(inner) && b.first().is_some_and(end) && b.last().is_some_and(end)
}

/// A DNS-1123 label (RFC 1123): what Kubernetes takes as a namespace.
pub(crate) fn is_dns_label(s: &str) -> bool {
    s.len() <= MAX_NAMESPACE && is_label_text(s)
}

/// A DNS-1123 subdomain: what Kubernetes takes as the name of most objects.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= MAX_NAME && s.split('.').all(is_label_text)
}

/// A namespace the request names.
pub(crate) fn namespace(ns: &str) -> Result<(), ApiError> {
    if is_dns_label(ns) {
        return Ok(());
    }
    let value = shown(ns);
    Err(refused(Reason::InvalidNamespace, &[("value", &value)]))
}

/// A namespace a list names; `None` is every namespace.
pub(crate) fn list_scope(ns: Option<&str>) -> Result<(), ApiError> {
    ns.map_or(Ok(()), namespace)
}

/// What a name names, for the refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameOf {
    Operation,
    Cluster,
}

impl NameOf {
    fn as_str(self) -> &'static str {
        match self {
            NameOf::Operation => "operation",
            NameOf::Cluster => "cluster",
        }
    }
}

/// The name of an operation or a cluster.
pub(crate) fn name(what: NameOf, name: &str) -> Result<(), ApiError> {
    if is_dns_subdomain(name) {
        return Ok(());
    }
    let value = shown(name);
    let what = what.as_str();
    Err(refused(
        Reason::InvalidName,
        &[("what", what), ("value", &value)],
    ))
}

/// A request id as a client sends it: short, printable, no spaces.
pub(crate) fn request_id(id: &str) -> Result<(), ApiError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_REQUEST_ID
        && id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if ok {
        return Ok(());
    }
    let value = shown(id);
    Err(refused(Reason::InvalidRequestId, &[("value", &value)]))
}

/// The fingerprint of a reviewed plan: hex, bounded.
pub(crate) fn fingerprint(f: &str) -> Result<(), ApiError> {
    if !f.is_empty() && f.len() <= MAX_FINGERPRINT && f.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Ok(());
    }
    let value = shown(f);
    Err(refused(Reason::InvalidFingerprint, &[("value", &value)]))
}

/// What a pause, resume or delete was confirmed against: a uid as Kubernetes writes them.
pub(crate) fn confirmed(c: Option<&Confirmed>) -> Result<(), ApiError> {
    let Some(c) = c else {
        return Ok(());
    };
    let uid_ok = !c.uid.is_empty()
        && c.uid.len() <= MAX_UID
        && c.uid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if uid_ok && c.generation >= 0 {
        return Ok(());
    }
    let (field, value) = if uid_ok {
        ("generation", c.generation.to_string())
    } else {
        ("uid", shown(&c.uid))
    };
    Err(refused(
        Reason::InvalidConfirmation,
        &[("field", field), ("value", &value)],
    ))
}

/// Max unavailable before anything is read: 1 to [`MAX_MAX_UNAVAILABLE`].
pub(crate) fn max_unavailable(v: i32) -> Result<(), ApiError> {
    if (1..=MAX_MAX_UNAVAILABLE).contains(&v) {
        return Ok(());
    }
    let value = v.to_string();
    let max = MAX_MAX_UNAVAILABLE.to_string();
    Err(refused(
        Reason::InvalidMaxUnavailable,
        &[("value", &value), ("max", &max)],
    ))
}

/// Everything of a plan or start request that can be checked without reading: the namespace,
/// the cluster's name, max unavailable, the request id and the reviewed plan's fingerprint.
/// (The target is checked with the kind, in [`super::plan::check_request`].)
pub(crate) fn request(req: &OperationRequest) -> Result<(), ApiError> {
    namespace(&req.namespace)?;
    if let Some(c) = &req.cluster {
        name(NameOf::Cluster, c)?;
    }
    if let Some(m) = req.max_unavailable {
        max_unavailable(m)?;
    }
    if let Some(id) = &req.request_id {
        request_id(id)?;
    }
    if let Some(f) = &req.confirmed_plan {
        fingerprint(f)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal of input quotes at most 67 bytes of it, and says the rest in the dashboard's
    /// English: the whole message stays under 200 bytes (what grpc-message carries to every
    /// client, the Python and Node ones too).
    #[test]
    fn a_refusal_of_the_longest_input_is_said_in_under_200_bytes() {
        let long = "𝒮".repeat(100);
        let what = Confirmed {
            uid: long.clone(),
            generation: 0,
            finished: false,
            paused: false,
        };
        for e in [
            namespace(&long).unwrap_err(),
            name(NameOf::Operation, &long).unwrap_err(),
            name(NameOf::Cluster, &long).unwrap_err(),
            request_id(&long).unwrap_err(),
            fingerprint(&long).unwrap_err(),
            confirmed(Some(&what)).unwrap_err(),
        ] {
            assert_eq!(e.code, Code::InvalidArgument);
            assert!(
                e.message.len() < 200,
                "{} bytes: {}",
                e.message.len(),
                e.message
            );
            assert!(e.message.contains('…'), "{}", e.message);
        }
    }

    #[test]
    fn names_follow_dns_1123() {
        for ok in ["a", "default", "kube-system", "a1", &"a".repeat(63)] {
            assert!(is_dns_label(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "a_b",
            "a.b",
            "../kube-system",
            "a/b",
            "a b",
            "ä",
            &"a".repeat(64),
        ] {
            assert!(!is_dns_label(bad), "{bad}");
        }
        for ok in ["c1", "prod.eu", "c1-talos-x2k9m", &"a".repeat(253)] {
            assert!(is_dns_subdomain(ok), "{ok}");
        }
        for bad in [
            "",
            ".",
            "a..b",
            ".a",
            "a.",
            "staging/../x",
            "a/b",
            "x\n",
            &"a".repeat(254),
        ] {
            assert!(!is_dns_subdomain(bad), "{bad:?}");
        }
    }

    #[test]
    fn refusals_quote_a_short_inert_prefix() {
        assert_eq!(shown("abc"), "abc");
        assert_eq!(shown("\x1b[2J\nx"), "[2Jx");
        assert_eq!(shown(&"x".repeat(5000)), format!("{}…", "x".repeat(32)));
        assert!(shown(&"日".repeat(100)).len() <= SHOWN_BYTES + 3);
        let e = namespace(&format!("\x1b[2J{}", "n".repeat(1 << 20))).unwrap_err();
        assert_eq!(
            (e.code, e.reason),
            (Code::InvalidArgument, Some(Reason::InvalidNamespace))
        );
        assert!(e.message.len() < 200, "{}", e.message);
        assert!(!e.message.contains('\x1b'));
        assert!(e.param("value").is_some_and(|v| v.chars().count() <= 33));
        for e in [
            name(NameOf::Operation, "").unwrap_err(),
            name(NameOf::Cluster, &"é".repeat(10_000)).unwrap_err(),
            request_id(&"r".repeat(65)).unwrap_err(),
            fingerprint("xyz").unwrap_err(),
            fingerprint(&"f".repeat(129)).unwrap_err(),
            max_unavailable(-1).unwrap_err(),
            max_unavailable(i32::MAX).unwrap_err(),
            confirmed(Some(&Confirmed {
                uid: "u\n".repeat(100),
                generation: 1,
                finished: false,
                paused: false,
            }))
            .unwrap_err(),
        ] {
            assert_eq!(e.code, Code::InvalidArgument, "{e:?}");
            assert!(e.message.len() < 200, "{}", e.message);
        }
        assert!(request_id("0123abcd-_.").is_ok());
        assert!(fingerprint(&"0f".repeat(16)).is_ok());
        assert!(max_unavailable(1).is_ok() && max_unavailable(1000).is_ok());
    }
}
