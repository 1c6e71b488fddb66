//! The contract rows about where the API stands: a read from a resourceVersion it has not
//! reached (after a restart, or an etcd restored from a backup) and bookmarks. kube-apiserver's
//! answers are its watch cache's (k8s.io/apiserver `storage/cacher`: `blockTimeout` 3 s,
//! `NewTooLargeResourceVersionError` in `storage/errors.go`, `ErrorNegotiated`'s Retry-After).

use super::kube_checks::{common_op, status};
use super::{Check, KubeCheck, Kubectl};
use futures::StreamExt as _;
use ichor_demo::apiserver::EmbeddedApi;
use ichor_resources::TalosOperation;
use kube::Client;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use std::time::Duration;

const OPS: &str = "/apis/ichor.maesh.dev/v1alpha1/namespaces/default/talosoperations";

fn is<T: std::fmt::Debug + PartialEq>(what: &str, have: T, want: T) -> Check {
    if have == want {
        Ok(())
    } else {
        Err(format!("{what}: {have:?}, wanted {want:?}"))
    }
}

/// The resourceVersion the API is at (a list's).
async fn version_now(ops: &Api<TalosOperation>) -> Result<u64, String> {
    let list = ops
        .list(&ListParams::default())
        .await
        .map_err(|e| e.to_string())?;
    list.metadata
        .resource_version
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| "a list without a numeric resourceVersion".to_string())
}

/// The Status kube-apiserver answers a read from `wanted` at `current`.
fn too_large(s: &kube::core::Status, wanted: u64, current: u64) -> Check {
    is("code", s.code, 504)?;
    is("reason", s.reason.as_str(), "Timeout")?;
    is(
        "message",
        s.message.clone(),
        format!("Timeout: Too large resource version: {wanted}, current: {current}"),
    )?;
    let details = s.details.as_ref().ok_or("no details")?;
    is("retryAfterSeconds", details.retry_after_seconds, 1)?;
    let causes: Vec<(&str, &str)> = details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.message.as_str()))
        .collect();
    is(
        "causes",
        causes,
        vec![("ResourceVersionTooLarge", "Too large resource version")],
    )
}

/// A list from a version the API has not reached, which it does not reach within the wait:
/// 504 Timeout, the cause, the retry-after in the Status and in the header.
pub fn list_too_large(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client.clone(), "default");
        let current = version_now(&ops).await?;
        let wanted = current + 1000;
        let e = ops
            .list(&ListParams::default().at(&wanted.to_string()))
            .await
            .err()
            .ok_or("a list from a version not reached was answered")?;
        too_large(&status(e)?, wanted, current)?;
        let req = http::Request::get(format!("{OPS}?resourceVersion={wanted}"))
            .body(kube::client::Body::empty())
            .map_err(|e| e.to_string())?;
        let resp = client.send(req).await.map_err(|e| e.to_string())?;
        is("HTTP status", resp.status().as_u16(), 504)?;
        let retry = resp.headers().get(http::header::RETRY_AFTER).cloned();
        is(
            "Retry-After",
            retry,
            Some(http::HeaderValue::from_static("1")),
        )
    })
}

/// A list from a version the API reaches while the list waits is answered with it.
pub fn list_waits_for_the_version(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let wanted = version_now(&ops).await? + 1;
        let writer = ops.clone();
        let write = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            writer
                .create(&PostParams::default(), &common_op("op2"))
                .await
        });
        let list = ops
            .list(&ListParams::default().at(&wanted.to_string()))
            .await
            .map_err(|e| format!("the list did not wait for the version: {e}"))?;
        write
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let at: u64 = list
            .metadata
            .resource_version
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        is("at least the version asked for", at >= wanted, true)?;
        is("the write it waited for", list.items.len(), 2)
    })
}

/// A plain watch from a version the API has not reached is accepted and says nothing, no
/// bookmark either, until the API passes that version; then it sends the changes after it.
pub fn watch_ahead_is_silent(client: Client, api: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        // On tokio's paused clock: minutes of silence are waited for, not slept through.
        tokio::time::pause();
        let verdict = watch_ahead(client, api).await;
        tokio::time::resume();
        verdict
    })
}

async fn watch_ahead(client: Client, api: EmbeddedApi) -> Check {
    api.set_bookmark_interval(Duration::from_secs(1));
    let ops: Api<TalosOperation> = Api::namespaced(client, "default");
    let create = |name: &'static str| {
        let ops = ops.clone();
        async move {
            ops.create(&PostParams::default(), &common_op(name))
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    };
    let wanted = version_now(&ops).await? + 2;
    let w = ops
        .watch(&WatchParams::default(), &wanted.to_string())
        .await
        .map_err(|e| format!("the watch was refused: {e}"))?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        let mut w = w.boxed();
        while let Some(e) = w.next().await {
            if tx.send(e).is_err() {
                return;
            }
        }
    });
    // One version short of the one watched from: 280 bookmark intervals (short of kube's
    // 290 s watch timeout), and nothing, not a bookmark.
    create("op2").await?;
    if let Ok(got) = tokio::time::timeout(Duration::from_secs(280), rx.recv()).await {
        reader.abort();
        return Err(format!("a watch ahead of the API got {got:?}"));
    }
    // The API reaches the version, then passes it: the change after it comes (bookmarks at
    // the version reached may come first).
    create("op3").await?;
    create("op4").await?;
    let verdict = loop {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(Ok(WatchEvent::Bookmark(b))))
                if b.metadata.resource_version == wanted.to_string() => {}
            Ok(Some(Ok(WatchEvent::Added(o)))) => {
                break is(
                    "the change after the version",
                    o.metadata.name,
                    Some("op4".into()),
                );
            }
            other => {
                break Err(format!(
                    "wanted the change after the version, got {other:?}"
                ));
            }
        }
    };
    reader.abort();
    verdict
}

/// A streaming list (`sendInitialEvents`) from a version the API does not reach: after the
/// wait, one ERROR event with the Status of a list.
pub fn streaming_list_too_large(client: Client, _: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let current = version_now(&ops).await?;
        let wanted = current + 1000;
        let mut w = ops
            .watch(
                &WatchParams::default().initial_events(),
                &wanted.to_string(),
            )
            .await
            .map_err(|e| format!("the watch was refused: {e}"))?
            .boxed();
        match w.next().await {
            Some(Ok(WatchEvent::Error(s))) => too_large(&s, wanted, current)?,
            other => return Err(format!("wanted an ERROR event, got {other:?}")),
        }
        is("the stream ends after it", w.next().await.is_none(), true)
    })
}

/// `allowWatchBookmarks`: a BOOKMARK that carries only the resourceVersion, every interval
/// (a minute, as kube-apiserver's; shorter here); none without it.
pub fn bookmarks_when_asked(client: Client, api: EmbeddedApi) -> KubeCheck {
    Box::pin(async move {
        api.set_bookmark_interval(Duration::from_millis(20));
        let ops: Api<TalosOperation> = Api::namespaced(client, "default");
        let at = version_now(&ops).await?.to_string();
        let mut w = ops
            .watch(&WatchParams::default(), &at)
            .await
            .map_err(|e| e.to_string())?
            .boxed();
        for _ in 0..2 {
            match w.next().await {
                Some(Ok(WatchEvent::Bookmark(b))) => is(
                    "its version",
                    b.metadata.resource_version.as_str(),
                    at.as_str(),
                )?,
                other => return Err(format!("wanted a bookmark, got {other:?}")),
            }
        }
        // Without allowWatchBookmarks, the first thing it sends is the next change.
        let plain = WatchParams::default().disable_bookmarks();
        let mut quiet = ops
            .watch(&plain, &at)
            .await
            .map_err(|e| e.to_string())?
            .boxed();
        tokio::time::sleep(Duration::from_millis(60)).await;
        ops.create(&PostParams::default(), &common_op("op2"))
            .await
            .map_err(|e| e.to_string())?;
        match quiet.next().await {
            Some(Ok(WatchEvent::Added(o))) => is("the change", o.metadata.name, Some("op2".into())),
            other => Err(format!("wanted the change and no bookmark, got {other:?}")),
        }
    })
}

/// kubectl: a raw list from the next version, which a write reaches while the list waits.
pub fn list_waits_for_the_version_kubectl(k: &Kubectl) -> Check {
    let raw = k.ok(&["get", "--raw", OPS], None)?;
    let list: serde_json::Value = serde_json::from_str(&raw).map_err(|e| format!("{e}: {raw}"))?;
    let current: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no resourceVersion in {list}"))?;
    let path = format!("{OPS}?resourceVersion={}", current + 1);
    let writer = Kubectl {
        bin: k.bin.clone(),
        kubeconfig: k.kubeconfig.clone(),
    };
    let write = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        writer.ok(
            &["create", "-f", "-"],
            Some(super::kubectl_checks::OPERATION),
        )
    });
    let out = k.ok(&["get", "--raw", &path], None)?;
    write.join().map_err(|_| "the writer panicked")??;
    if out.contains("\"op2\"") {
        Ok(())
    } else {
        Err(format!(
            "the list does not hold the write it waited for: {out}"
        ))
    }
}
