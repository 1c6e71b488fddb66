//! curl, the outside client of the serve tests: `None` (with a notice) where it is not
//! installed, unless `$CI` is set, when that fails the test.

use std::process::{Command, Stdio};
use tokio::io::AsyncWriteExt as _;

/// One message in the Connect protocol's streaming envelope: no flags, its length, itself.
pub fn enveloped(message: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8];
    b.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    b.extend_from_slice(message);
    b
}

pub fn present() -> bool {
    let found = Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "curl is missing but CI is set: .ci/run installs it"
        );
        eprintln!("skipping a curl check: curl is not installed");
    }
    found
}

/// `curl -sS -i ARGS`: the response's head and body as text.
pub async fn run(args: &[&str]) -> Option<String> {
    run_with_input(args, &[]).await
}

/// The same, with `input` on curl's standard input (for `--data-binary @-`).
pub async fn run_with_input(args: &[&str], input: &[u8]) -> Option<String> {
    if !present() {
        return None;
    }
    let out = curl(args, input).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() || answered_then_reset(out.status.code(), &stdout),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(stdout)
}

/// [`run_with_input`] for a call that reads or is refused (never a write): Debian 12's curl
/// 7.88 sometimes shows nothing at all of an answer followed by RST_STREAM(NO_ERROR) (exit 92,
/// nothing on stdout) although the server sent it whole; then the call is made again, at most
/// twice more. Any other failure, or a third such one, fails the test.
pub async fn run_read_with_input(args: &[&str], input: &[u8]) -> Option<String> {
    if !present() {
        return None;
    }
    for _ in 0..2 {
        let out = curl(args, input).await;
        if out.status.code() == Some(92) && out.stdout.is_empty() {
            continue;
        }
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success() || answered_then_reset(out.status.code(), &stdout),
            "curl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return Some(stdout);
    }
    run_with_input(args, input).await
}

async fn curl(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = tokio::process::Command::new("curl")
        .args(["-sS", "-i", "--max-time", "60"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

/// Whether curl failed only because the server, having sent a whole gRPC answer (its
/// `grpc-status` trailer) before curl had sent all of the request's body, then asked it to stop
/// sending with RST_STREAM(NO_ERROR), as RFC 9113 §8.1 lets a server do. Debian 12's curl 7.88
/// calls that error 92 ("Stream error in the HTTP/2 framing layer") though the answer is whole;
/// it happens when serve refuses a call on its headers faster than curl uploads the body (seen
/// under the full suite's load).
fn answered_then_reset(code: Option<i32>, stdout: &str) -> bool {
    code == Some(92) && stdout.to_ascii_lowercase().contains("grpc-status:")
}
