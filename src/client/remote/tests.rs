use super::*;
use ichor_model::Reason;

#[test]
fn the_token_comes_from_the_file_before_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "from-file\n").unwrap();
    assert_eq!(
        load_token(Some(&file), Some("from-env".into())).unwrap(),
        Some("from-file".into())
    );
    assert_eq!(
        load_token(None, Some(" from-env ".into())).unwrap(),
        Some("from-env".into())
    );
    assert_eq!(load_token(None, None).unwrap(), None);
    std::fs::write(&file, "\n").unwrap();
    let e = load_token(Some(&file), None).unwrap_err();
    assert!(format!("{e:#}").contains("is empty"), "{e:#}");
    let e = load_token(Some(&dir.path().join("missing")), None).unwrap_err();
    assert!(format!("{e:#}").contains("reading the token file"), "{e:#}");
}

#[tokio::test]
async fn bad_urls_are_refused_at_start() {
    for url in ["ftp://x:1", "localhost:50051", "not a url"] {
        assert!(RemoteClient::new(RemoteOptions::new(url)).is_err(), "{url}");
    }
    let mut o = RemoteOptions::new("http://127.0.0.1:1");
    o.ca_pem = Some(b"x".to_vec());
    assert!(RemoteClient::new(o).is_err());
}

#[tokio::test]
async fn tokens_never_show_in_debug_output() {
    let mut o = RemoteOptions::new("http://127.0.0.1:1");
    o.token = Some("s3cret".into());
    assert!(!format!("{o:?}").contains("s3cret"));
    let c = RemoteClient::new(o).unwrap();
    assert!(!format!("{c:?}").contains("s3cret"));
}

#[tokio::test]
async fn a_token_never_goes_over_plain_http_beyond_loopback() {
    let with_token = |url: &str| {
        let mut o = RemoteOptions::new(url);
        o.token = Some("s3cret".into());
        o
    };
    for url in [
        "http://10.0.0.7:50051",
        "http://ichor.example:80",
        "http://[2001:db8::1]:1",
    ] {
        let e = RemoteClient::new(with_token(url)).unwrap_err().to_string();
        assert!(
            e.contains("plain HTTP") && e.contains("https://"),
            "{url}: {e}"
        );
        assert!(e.contains("--insecure-send-token-over-http"), "{url}: {e}");
        assert!(!e.contains("s3cret"), "{e}");
        let mut o = with_token(url);
        o.insecure_send_token_over_http = true;
        assert!(RemoteClient::new(o).is_ok(), "{url}: the explicit opt-out");
        assert!(
            RemoteClient::new(RemoteOptions::new(url)).is_ok(),
            "{url}: no token to send"
        );
    }
    for url in [
        "http://127.0.0.1:1",
        "http://127.0.3.4:1",
        "http://localhost:1",
        "http://[::1]:1",
        "https://ichor.example:443",
    ] {
        assert!(RemoteClient::new(with_token(url)).is_ok(), "{url}");
    }
}

#[tokio::test]
async fn read_only_refuses_writes_without_a_call() {
    // Nothing listens on port 1: a call would fail Unavailable, not ReadOnly.
    let o = RemoteOptions::new("http://127.0.0.1:1");
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let c = crate::retry::Retrying::new(RemoteClient::new(o).unwrap(), tx).read_only(true);
    let e = c.delete_operation("default", "x", None).await.unwrap_err();
    assert_eq!(e.reason, Some(Reason::ReadOnly));
    let e = c.inner().list_operations(None).await.unwrap_err();
    assert_eq!(e.code, Code::Unavailable);
}

/// The stream a caller that takes pages whole reads: each delta applied to the page last
/// received; one that does not apply ends the stream (UNAVAILABLE: subscribe again).
#[tokio::test]
async fn deltas_are_applied_to_the_page_last_received() {
    use futures::StreamExt as _;
    use ichor_model::{Operation, OperationPage, PageDelta, WatchUpdate};
    let op = |name: &str| Operation {
        namespace: "default".into(),
        name: name.into(),
        ..Operation::default()
    };
    let page = |version: &str, names: &[&str]| OperationPage {
        operations: names.iter().map(|n| op(n)).collect(),
        total: names.len(),
        version: version.into(),
        ..OperationPage::default()
    };
    let (v1, v2, v3) = (
        page("v1", &["b"]),
        page("v2", &["a", "b"]),
        page("v3", &["a"]),
    );
    let delta = |from: &OperationPage, to: &OperationPage| WatchUpdate {
        delta: PageDelta::between(from, to),
        ..WatchUpdate::default()
    };
    let sent = vec![
        Ok(WatchUpdate {
            page: Some(v1.clone()),
            ..WatchUpdate::default()
        }),
        Ok(delta(&v1, &v2)),
        Ok(WatchUpdate {
            heartbeat: true,
            ..WatchUpdate::default()
        }),
        Ok(delta(&v2, &v3)),
        // Against a page this stream never held.
        Ok(delta(&v1, &v3)),
        Ok(delta(&v3, &v1)),
    ];
    let mut got = stream::whole_pages(Box::pin(futures::stream::iter(sent)));
    let mut pages = Vec::new();
    let ended = loop {
        match got.next().await.expect("the stream ends with its error") {
            Ok(u) => {
                assert!(u.delta.is_none(), "handed on whole");
                pages.extend(u.page);
            }
            Err(e) => break e,
        }
    };
    assert_eq!(pages, [v1, v2, v3]);
    assert_eq!(ended.code, Code::Unavailable, "{ended:?}");
    assert!(got.next().await.is_none(), "nothing after the error");
}
