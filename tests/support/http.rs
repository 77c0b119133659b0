//! Real HTTP servers on loopback for the healer tests, and a plain client for their requests.

use std::net::SocketAddr;
use std::time::Duration;

/// A loopback address whose port was free a moment ago (a server started on it may still lose
/// it to another process).
pub fn free_port() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

/// Serves `app` on a free loopback port for the rest of the test.
pub async fn serve(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("the test server runs") });
    addr
}

/// Serves `app` on a free loopback port from a thread and runtime of its own: for a server that
/// the test node's containers call (the node runs them blocking its runtime's threads, so a
/// server on that runtime could not answer them).
pub fn serve_apart(app: axum::Router) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("an address");
    listener.set_nonblocking(true).expect("a non-blocking listener");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the server");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
            axum::serve(listener, app).await.expect("the test server runs");
        });
    });
    addr
}

/// A client for the tests' own requests.
pub fn client() -> reqwest::Client {
    kubeheal::healer::http_client().expect("an HTTP client")
}

/// A Code Healer API (seed 000) on loopback that keeps every request body it gets and answers
/// each with an error, so a heal loop goes on asking: for tests that check what reaches a healer.
pub async fn recording_healer() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::routing::post;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/api/heal",
        post(move |body: String| {
            let record = record.clone();
            async move {
                record.lock().expect("the record").push(body);
                (
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    axum::Json(serde_json::json!({"status": "error", "message": "no fix"})),
                )
            }
        }),
    );
    let addr = serve(app).await;
    (format!("http://{addr}/api/heal"), seen)
}

/// Reads until the server closes the connection (or resets it); `None` if it is still open after
/// `within`.
pub async fn read_until_closed(stream: &mut tokio::net::tcp::OwnedReadHalf, within: Duration) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match tokio::io::AsyncReadExt::read(stream, &mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(within, read).await.ok()?;
    Some(got)
}

/// Writes `bytes` one at a time, `every` apart, until done or the server has closed.
pub fn trickle(
    mut writer: tokio::net::tcp::OwnedWriteHalf,
    bytes: Vec<u8>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for byte in bytes {
            if tokio::io::AsyncWriteExt::write_all(&mut writer, &[byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(every).await;
        }
    })
}
