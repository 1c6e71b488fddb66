//! A browser calls serve from a page of another origin: Debian's headless Chromium loads a page
//! (tests/browser/page.html, served here on a port of its own, so another origin than serve's)
//! whose ES modules are connect-web, connect and protobuf-es straight from node_modules, with
//! an import map made from their package.json exports (no bundler). With the viewer's token it
//! lists the clusters over the Connect protocol and over gRPC-Web, and without one is refused
//! Unauthenticated on each: the CORS preflight, the answers' allowed origin and the exposed
//! gRPC-Web status headers, all through the browser's own rules. The page writes what it got
//! into its DOM, which Chromium prints (`--dump-dom`, once the page's fetches are done and its
//! virtual time budget has run). The page's deadlines count virtual time, which can run ahead of
//! a server slowed by a loaded machine (a full suite on 2 cores once saw a 15 s deadline pass), so
//! they and the budget are far above what a call takes; the wall clock bounds the run (90 s).
//!
//! Needs `chromium` on PATH and `$ICHOR_NODE_MODULES` with @connectrpc/connect-web (`.ci/run`
//! installs both); skipped with a notice without them, unless `$CI` is set, when it fails.

use crate::common;
use crate::connect_peers::{INTEROP, descriptors, node_modules};
use common::process::Process;
use ichor_demo::apiserver::auth::users;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Chromium's flags: headless, no sandbox (CI runs as root), nothing it would fetch or start
/// on its own, no QUIC.
const CHROMIUM_FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The packages the page imports, as the import map names them.
const PACKAGES: [&str; 3] = [
    "@connectrpc/connect",
    "@connectrpc/connect-web",
    "@bufbuild/protobuf",
];

fn chromium() -> Option<&'static str> {
    let found = Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is missing but CI is set: .ci/run installs it"
        );
        eprintln!("skipping the browser test: chromium is not installed");
    }
    found.then_some("chromium")
}

/// The import map of `PACKAGES`: each export's ES module, under `/m/PACKAGE/`.
fn import_map(modules: &Path) -> serde_json::Value {
    let mut imports = serde_json::Map::new();
    for package in PACKAGES {
        let manifest = std::fs::read_to_string(modules.join(package).join("package.json"))
            .unwrap_or_else(|e| panic!("{package}'s package.json: {e}"));
        let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
        let Some(exports) = manifest["exports"].as_object() else {
            panic!("{package} has no exports map");
        };
        for (sub, target) in exports {
            let esm = target["import"]
                .as_str()
                .or_else(|| target["import"]["default"].as_str());
            let (Some(esm), Some(sub)) = (esm, sub.strip_prefix('.')) else {
                continue;
            };
            let url = format!("/m/{package}/{}", esm.trim_start_matches("./"));
            imports.insert(format!("{package}{sub}"), serde_json::Value::String(url));
        }
    }
    serde_json::json!({ "imports": imports })
}

/// What the page server answers for `path`: (content type, bytes), or `None` (404).
fn page_file(path: &str, root: &Path, modules: &Path) -> Option<(&'static str, Vec<u8>)> {
    if path.contains("..") {
        return None;
    }
    if let Some(rest) = path.strip_prefix("/m/") {
        let allowed = PACKAGES.iter().any(|p| rest.starts_with(&format!("{p}/")));
        let file = modules.join(rest);
        return (allowed && rest.ends_with(".js"))
            .then(|| std::fs::read(file).ok())?
            .map(|b| ("text/javascript", b));
    }
    match path {
        "/page.html" => Some(("text/html", std::fs::read(root.join("page.html")).ok()?)),
        "/ichor.binpb" => Some((
            "application/octet-stream",
            std::fs::read(root.join("ichor.binpb")).ok()?,
        )),
        _ => None,
    }
}

/// Serves the page and its modules, one request a connection, on `listener`'s thread.
fn serve_page(listener: TcpListener, root: PathBuf, modules: PathBuf) {
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (root, modules) = (root.clone(), modules.clone());
            std::thread::spawn(move || answer_page(stream, &root, &modules));
        }
    });
}

fn answer_page(stream: TcpStream, root: &Path, modules: &Path) {
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    // The rest of the head, unread otherwise.
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        header.clear();
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    let (status, content_type, body) = match page_file(path, root, modules) {
        Some((ct, body)) => ("200 OK", ct, body),
        None => ("404 Not Found", "text/plain", b"not found".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let mut stream = &stream;
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

#[test]
fn a_page_of_another_origin_calls_serve_with_connect_web() {
    let (Some(browser), Some(modules)) = (chromium(), node_modules()) else {
        return;
    };
    let modules = PathBuf::from(modules);
    let dir = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(format!("{INTEROP}/browser_page.html")).unwrap();
    let page = page.replace("IMPORT_MAP", &import_map(&modules).to_string());
    std::fs::write(dir.path().join("page.html"), page).unwrap();
    std::fs::rename(descriptors(dir.path()), dir.path().join("ichor.binpb")).unwrap();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let page_origin = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    serve_page(listener, dir.path().to_path_buf(), modules);
    let log = dir.path().join("serve.log");
    let (server, first) = Process::start(
        &[
            "serve",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--cors-origin",
            &page_origin,
        ],
        &log,
    );
    let addr = first.strip_prefix("serving on ").unwrap().to_string();

    let url = format!(
        "{page_origin}/page.html?serve=http://{addr}&token={}",
        users::VIEWER_TOKEN
    );
    let profile = tempfile::tempdir().unwrap();
    let chromium_log = dir.path().join("chromium.log");
    let mut child = std::process::Command::new(browser)
        .args(CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--virtual-time-budget=120000", "--dump-dom", &url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&chromium_log).unwrap())
        .spawn()
        .unwrap();
    let waited = wait_or_kill(&mut child, Duration::from_secs(90));
    let out = child.wait_with_output().unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let stderr = std::fs::read_to_string(&chromium_log).unwrap_or_default();
    assert!(
        waited,
        "chromium did not finish within 90 s: {dom}\n{stderr}"
    );
    let said = dom
        .split("<pre id=\"out\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or("")
        .to_string();
    assert!(
        said.starts_with("DONE"),
        "the page said {said:?}\n{dom}\n{stderr}"
    );
    let clusters = |transport: &str| -> usize {
        said.trim_start_matches("DONE ")
            .split("; ")
            .find_map(|p| p.strip_prefix(&format!("{transport}: ")))
            .and_then(|p| p.strip_suffix(" clusters"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    assert!(clusters("connect") > 0, "{said}");
    assert_eq!(clusters("grpc-web"), clusters("connect"), "{said}");
    for want in [
        "connect: refused Unauthenticated",
        "grpc-web: refused Unauthenticated",
    ] {
        assert!(said.contains(want), "{want} not in {said}");
    }
    let status = server.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status after SIGTERM: {status}");
}

/// Waits for `child` up to `limit`; kills it past that. Whether it ended by itself.
fn wait_or_kill(child: &mut std::process::Child, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    false
}
