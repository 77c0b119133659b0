//! Throwaway Git repositories for tests: `git` with a fixed identity and default branch, and a
//! forge that serves them over smart HTTP only to the holder of a token.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

/// The token [`forge`] demands.
pub const FORGE_TOKEN: &str = "kubeheal-test-push-token";
/// `Basic base64("x-access-token:kubeheal-test-push-token")`.
const AUTHORIZATION: &str = "Basic eC1hY2Nlc3MtdG9rZW46a3ViZWhlYWwtdGVzdC1wdXNoLXRva2Vu";

/// Runs `git args` in `dir`, asserts it succeeded, and returns its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Smart HTTP by `git http-backend` (CGI) for the repositories under `root`, behind Basic
/// authentication with [`FORGE_TOKEN`]; counts the requests it refused.
#[derive(Clone)]
struct Forge {
    root: PathBuf,
    refused: Arc<AtomicUsize>,
}

async fn backend(State(forge): State<Forge>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if parts.headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(AUTHORIZATION) {
        forge.refused.fetch_add(1, Ordering::SeqCst);
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header("WWW-Authenticate", "Basic realm=\"forge\"")
            .body(Body::empty())
            .expect("a response");
    }
    let body: Bytes = axum::body::to_bytes(body, 64 * 1024 * 1024).await.expect("a body");
    let header = |headers: &HeaderMap, name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let mut child = tokio::process::Command::new("git")
        .arg("http-backend")
        .env("GIT_PROJECT_ROOT", &forge.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("PATH_INFO", parts.uri.path())
        .env("QUERY_STRING", parts.uri.query().unwrap_or_default())
        .env("REQUEST_METHOD", parts.method.as_str())
        .env("CONTENT_TYPE", header(&parts.headers, "content-type"))
        .env("HTTP_CONTENT_ENCODING", header(&parts.headers, "content-encoding"))
        .env("GIT_PROTOCOL", header(&parts.headers, "git-protocol"))
        .env("REMOTE_USER", "x-access-token")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("git http-backend starts");
    let mut stdin = child.stdin.take().expect("stdin");
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let _ = stdin.write_all(&body).await;
    });
    let out = child.wait_with_output().await.expect("git http-backend runs");
    // CGI: headers, a blank line, the body.
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| out.stdout.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)))
        .expect("CGI headers");
    let head = String::from_utf8_lossy(&out.stdout[..split.0]).into_owned();
    let mut response = Response::builder();
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.eq_ignore_ascii_case("status") {
            let code: u16 = value.trim().split(' ').next().unwrap_or("200").parse().unwrap_or(200);
            response = response.status(code);
        } else {
            response = response.header(name.trim(), value.trim());
        }
    }
    response
        .body(Body::from(out.stdout[split.0 + split.1..].to_vec()))
        .expect("a response")
}

/// Serves the bare repositories under `root` on loopback behind Basic authentication with
/// [`FORGE_TOKEN`]; returns the URL of `origin.git` there and the count of refused requests.
pub async fn forge(root: &Path) -> (String, Arc<AtomicUsize>) {
    let forge = Forge {
        root: root.to_owned(),
        refused: Arc::new(AtomicUsize::new(0)),
    };
    let refused = forge.refused.clone();
    let app = Router::new().fallback(backend).with_state(forge);
    let addr = super::http::serve_apart(app);
    (format!("http://{addr}/origin.git"), refused)
}
