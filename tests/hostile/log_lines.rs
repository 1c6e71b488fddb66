//! The log stays bounded when an object cannot be read and requests are hostile.

use super::*;

/// A writer the log goes to, for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn an_unreadable_object_and_hostile_requests_leave_short_log_lines() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        // Plain `info`, not the default filter that leaves kube's body-logging line out: the
        // service's reads must not reach that line at all.
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let api = world();
    // Many operations, one of them with a status nothing can read and a long value in it.
    for i in 0..200 {
        let mut o = op(&format!("op-{i:03}"), "c1", "talos", 1);
        o.status = Some(TalosOperationStatus {
            phase: "Completed".into(),
            failure_reason: Some("z".repeat(300)),
            ..Default::default()
        });
        api.seed(&o).unwrap();
    }
    assert!(api.edit("talosoperations", "default", "op-100", |v| {
        v["status"] = serde_json::json!({"phase": 42, "failureReason": "q".repeat(100_000)});
    }));
    for path in [Path::InProcess, Path::Grpc] {
        let c = connect(path, &api, User::Admin).await;
        let ops = c.list_operations(Some("default")).await.unwrap();
        assert_eq!(ops.len(), 200, "{path:?}");
        assert_eq!(ops.iter().filter(|o| o.unreadable.is_some()).count(), 1);
        let _ = c.get_operation("default", "op-100").await.unwrap();
        let _ = c
            .plan_operation(&req(OperationKind::Shutdown))
            .await
            .unwrap();
        for (_, _, f) in table() {
            let _ = f(c.as_ref()).await;
        }
    }
    let log = String::from_utf8_lossy(&captured.0.lock().unwrap()).to_string();
    assert!(
        log.contains("operations that cannot be read are listed as such"),
        "{}",
        &log[..log.len().min(2000)]
    );
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    eprintln!(
        "log: {} lines, the longest {longest} bytes",
        log.lines().count()
    );
    assert!(
        longest < 1000,
        "a log line of {longest} bytes: {}",
        log.lines()
            .max_by_key(|l| l.len())
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect::<String>()
    );
    assert!(!log.contains("zzzzzzzzzz"), "no response body in the log");
}
