//! Real HTTP servers on loopback for the healer tests, and a plain client for their requests.

use std::net::SocketAddr;

/// Serves `app` on a free loopback port for the rest of the test.
pub async fn serve(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("the test server runs") });
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
