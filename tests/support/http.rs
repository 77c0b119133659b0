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
