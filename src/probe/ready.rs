//! Waiting for a service that was just started: its port accepts a connection, or the time is
//! up. Only the connection is tried (no request is sent), so a probe's calls are the first
//! requests the service sees.

use std::time::Duration;

use reqwest::Url;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// How often the port is tried.
const EVERY: Duration = Duration::from_millis(100);

/// Waits until `base`'s host and port accept a TCP connection, at most `limit`; returns whether
/// they did.
pub async fn wait(base: &Url, limit: Duration) -> bool {
    let (Some(host), Some(port)) = (base.host_str(), base.port_or_known_default()) else {
        return false;
    };
    // An IPv6 literal keeps its brackets in the URL; the socket address wants it bare.
    let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let attempt = tokio::time::timeout(
            left.min(Duration::from_secs(2)),
            TcpStream::connect((host.as_str(), port)),
        );
        if let Ok(Ok(_)) = attempt.await {
            return true;
        }
        tokio::time::sleep(EVERY.min(deadline.saturating_duration_since(Instant::now()))).await;
    }
}

/// How waiting for a service ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waited {
    Ready,
    /// The time was up.
    TimedOut,
    /// The service gave up first (it exited with an error): why. Nothing will listen now, so
    /// waiting on would only cost the rest of the time.
    GaveUp(String),
}

/// [`wait`], ended early by `gave_up` (the service's end, with why).
pub async fn wait_unless(base: &Url, limit: Duration, gave_up: impl Future<Output = String>) -> Waited {
    tokio::select! {
        ready = wait(base, limit) => if ready { Waited::Ready } else { Waited::TimedOut },
        why = gave_up => Waited::GaveUp(why),
    }
}

/// Whether something accepts a connection at `base`'s host and port now.
pub async fn answers(base: &Url) -> bool {
    wait(base, Duration::from_millis(300)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_port_that_opens_late_is_waited_for_and_a_closed_one_gives_up_at_the_limit() {
        // A port that was free a moment ago: nothing listens there yet.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("a free port")
            .local_addr()
            .expect("its address")
            .port();
        let base = Url::parse(&format!("http://127.0.0.1:{port}/api")).expect("a URL");
        let started = std::time::Instant::now();
        assert!(!wait(&base, Duration::from_millis(300)).await, "nothing listens");
        assert!(started.elapsed() >= Duration::from_millis(300));

        let opener = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind")
        });
        assert!(
            wait(&base, Duration::from_secs(10)).await,
            "the port opened after 300 ms"
        );
        drop(opener.await);
    }

    #[tokio::test]
    async fn a_service_that_gives_up_ends_the_wait_with_why() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("a free port")
            .local_addr()
            .expect("its address")
            .port();
        let base = Url::parse(&format!("http://127.0.0.1:{port}/")).expect("a URL");
        let gave_up = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            "exited with code 3".to_owned()
        };
        assert_eq!(
            wait_unless(&base, Duration::from_secs(3600), gave_up).await,
            Waited::GaveUp("exited with code 3".into())
        );
        let never = std::future::pending::<String>();
        assert_eq!(
            wait_unless(&base, Duration::from_millis(200), never).await,
            Waited::TimedOut
        );
    }
}
