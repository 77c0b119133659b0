//! A person on the `/healer` pages: signed in with their own Kubernetes token (as the Kubernetes
//! Dashboard's token sign-in), which the browser keeps in an `HttpOnly`, `SameSite=Strict`
//! cookie and the operator forwards to the API server instead of its own credentials — so the
//! API server says who they are, RBAC says what they may read, and the approval policy says what
//! they may decide. Nothing is kept on the operator (every replica serves every person), and the
//! token is never logged.
//!
//! A form that decides carries the digest of the patch the page showed, and a CSRF token derived
//! from the session token (a one-way hash, so
//! the page that shows it does not give the session away), and a cross-site request is refused
//! by its `Sec-Fetch-Site` or `Origin` besides.
//!
//! What the API server said of a token (who, and whether they may read the tickets) is
//! remembered for a minute by the token's hash ([`Remembered`]): a person reading page after
//! page costs one client and one or two API calls a minute, not per page. Decisions never use
//! it: each goes to the API server with the token.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use k8s_openapi::api::authorization::v1::{ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec};
use kube::Client;
use kube::api::{Api, PostParams};
use sha2::{Digest, Sha256};

/// The session cookie's name.
pub const COOKIE: &str = "kubeheal_session";
/// How long a sign-in lasts (the token's own expiry may come first).
pub const MAX_AGE_SECONDS: u32 = 8 * 3600;

/// How long what the API server said of a session's token is believed for page views (a token
/// revoked meanwhile still reads the pages this long, and decides nothing).
pub const REMEMBERED_FOR: Duration = Duration::from_secs(60);
/// Most tokens remembered at once.
const MAX_REMEMBERED: usize = 4096;

/// A signed-in reader as the API server described them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    pub user: String,
    /// Whether they may list the tickets; `None` when the pages did not need to ask.
    pub may_read: Option<bool>,
}

/// Readers the API server described lately, by their token's hash and the namespace they read
/// (the token is not kept).
#[derive(Default)]
pub struct Remembered(Mutex<HashMap<[u8; 32], (Instant, Reader)>>);

/// The key a reader is remembered by: what they may read depends on the namespace.
fn token_hash(token: &str, namespace: &str) -> [u8; 32] {
    Sha256::digest(format!("{namespace}\0{token}").as_bytes()).into()
}

impl Remembered {
    /// The reader `token` stands for, if the API server said so less than [`REMEMBERED_FOR`]
    /// before `now`.
    pub fn get(&self, token: &str, namespace: &str, now: Instant) -> Option<Reader> {
        let known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        known
            .get(&token_hash(token, namespace))
            .filter(|(said, _)| now.saturating_duration_since(*said) < REMEMBERED_FOR)
            .map(|(_, reader)| reader.clone())
    }

    /// Remembers what the API server said of `token` at `now`; the expired go first, and when
    /// every slot is fresh the oldest one.
    pub fn keep(&self, token: &str, namespace: &str, reader: Reader, now: Instant) {
        let mut known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if known.len() >= MAX_REMEMBERED {
            known.retain(|_, (said, _)| now.saturating_duration_since(*said) < REMEMBERED_FOR);
        }
        if known.len() >= MAX_REMEMBERED
            && let Some(oldest) = known.iter().min_by_key(|(_, (said, _))| *said).map(|(k, _)| *k)
        {
            known.remove(&oldest);
        }
        known.insert(token_hash(token, namespace), (now, reader));
    }
}

/// The session cookie's token, if the request has one.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim().to_owned())
        .filter(|t| !t.is_empty())
}

/// The `Set-Cookie` that signs in with `token` (`secure`: the page is served over HTTPS), or
/// signs out when `token` is `None`.
pub fn set_cookie(token: Option<&str>, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    match token {
        Some(token) => {
            format!("{COOKIE}={token}; Path=/healer; HttpOnly; SameSite=Strict; Max-Age={MAX_AGE_SECONDS}{secure}")
        }
        None => format!("{COOKIE}=; Path=/healer; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    }
}

/// Whether the session cookie must be `Secure`: always, but for a page reached on a loopback
/// address (`kubectl port-forward`), where browsers keep a `Secure` cookie over plain HTTP
/// anyway and no network sees it. Elsewhere the pages belong behind TLS (an Ingress).
pub fn secure_cookie(headers: &HeaderMap) -> bool {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    !(name == "localhost" || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()))
}

/// The CSRF token of a session: a one-way hash of its token.
pub fn csrf(token: &str) -> String {
    let hash = Sha256::digest(format!("kubeheal-csrf\0{token}").as_bytes());
    hash.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Why a form post is refused as cross-site, or `None` when it came from the page itself.
pub fn cross_site(headers: &HeaderMap) -> Option<&'static str> {
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = value("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Some("the form was sent from another site");
    }
    // `Origin: null` is what a page with `Referrer-Policy: no-referrer` sends: not a mismatch.
    if let (Some(origin), Some(host)) = (value("origin"), value("host"))
        && origin != "null"
        && origin.split_once("://").map(|(_, rest)| rest) != Some(host)
    {
        return Some("the form was sent from another origin");
    }
    None
}

/// Where to go after signing in: a page of the `/healer` API (relative to it), with at most a
/// `?namespace=`, never elsewhere.
pub fn after_sign_in(next: Option<&str>) -> String {
    let Some(next) = next else {
        return "view".to_owned();
    };
    let (path, query) = next.split_once('?').unwrap_or((next, ""));
    let page = (path == "view" || path.starts_with("tickets/"))
        && !path.split('/').any(|part| part == "..")
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '.' | '_'));
    let query = query.is_empty()
        || query
            .strip_prefix("namespace=")
            .is_some_and(super::ingest_auth::is_namespace_name);
    if page && query {
        next.to_owned()
    } else {
        "view".to_owned()
    }
}

/// A client acting as the person whose `token` it is, at the operator's own API server.
pub fn client_as(config: &kube::Config, token: &str) -> Result<Client, String> {
    let mut config = config.clone();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.to_owned().into()),
        ..kube::config::AuthInfo::default()
    };
    Client::try_from(config).map_err(|e| format!("cannot make a client for the caller: {e}"))
}

/// Who the API server says the token's holder is; `Err` with its words when it refuses the token.
pub async fn who(client: &Client) -> Result<String, String> {
    crate::decision::whoami(client).await.map_err(|r| r.message)
}

/// Whether the person may list HealerTickets in `namespace` (what the pages show).
pub async fn may_read_tickets(client: &Client, namespace: &str) -> Result<bool, String> {
    let reviews: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                group: Some("kubeheal.dev".into()),
                resource: Some("healertickets".into()),
                verb: Some("list".into()),
                namespace: Some(namespace.to_owned()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    let answer = reviews
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| format!("cannot ask the API server what you may read: {e}"))?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).expect("a header"));
        }
        h
    }

    fn alice() -> Reader {
        Reader {
            user: "alice".into(),
            may_read: Some(true),
        }
    }

    #[test]
    fn a_reader_is_remembered_for_a_minute_by_their_token_and_namespace_only() {
        let remembered = Remembered::default();
        let now = Instant::now();
        remembered.keep("alice-token", "team-a", alice(), now);
        assert_eq!(
            remembered.get("alice-token", "team-a", now + Duration::from_secs(59)),
            Some(alice())
        );
        assert_eq!(remembered.get("alice-token", "team-a", now + REMEMBERED_FOR), None);
        assert_eq!(remembered.get("bob-token", "team-a", now), None);
        assert_eq!(
            remembered.get("alice-token", "team-b", now),
            None,
            "what alice may read in team-a says nothing of team-b"
        );
    }

    #[test]
    fn remembered_readers_are_bounded_and_the_oldest_goes_first() {
        let remembered = Remembered::default();
        let start = Instant::now();
        for n in 0..MAX_REMEMBERED + 10 {
            remembered.keep(
                &format!("token-{n}"),
                "ns",
                alice(),
                start + Duration::from_millis(n as u64),
            );
        }
        let now = start + Duration::from_millis((MAX_REMEMBERED + 10) as u64);
        assert!(remembered.0.lock().expect("the map").len() <= MAX_REMEMBERED);
        assert_eq!(remembered.get("token-0", "ns", now), None, "the oldest made room");
        assert_eq!(
            remembered.get(&format!("token-{}", MAX_REMEMBERED + 9), "ns", now),
            Some(alice())
        );
    }

    #[test]
    fn the_token_comes_from_the_session_cookie_only() {
        assert_eq!(
            session_token(&headers(&[("cookie", "theme=dark; kubeheal_session=def; x=1")])),
            Some("def".into())
        );
        assert_eq!(session_token(&headers(&[("authorization", "Bearer abc")])), None);
        assert_eq!(session_token(&headers(&[("cookie", "kubeheal_session=")])), None);
    }

    #[test]
    fn the_cookie_is_secure_but_on_loopback() {
        assert!(secure_cookie(&headers(&[("host", "kubeheal.example.com")])));
        assert!(secure_cookie(&headers(&[("host", "10.0.0.7:8083")])));
        assert!(!secure_cookie(&headers(&[("host", "127.0.0.1:8083")])));
        assert!(!secure_cookie(&headers(&[("host", "localhost:8083")])));
        assert!(!secure_cookie(&headers(&[("host", "[::1]:8083")])));
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_over_https() {
        let set = set_cookie(Some("tok"), true);
        for part in [
            "kubeheal_session=tok",
            "HttpOnly",
            "SameSite=Strict",
            "Path=/healer",
            "Secure",
        ] {
            assert!(set.contains(part), "{set}");
        }
        assert!(!set_cookie(Some("tok"), false).contains("Secure"));
        assert!(set_cookie(None, false).contains("Max-Age=0"));
    }

    #[test]
    fn the_csrf_token_is_the_session_s_and_does_not_reveal_it() {
        assert_eq!(csrf("a"), csrf("a"));
        assert_ne!(csrf("a"), csrf("b"));
        assert!(!csrf("secret-token").contains("secret"));
        assert_eq!(csrf("a").len(), 32);
    }

    #[test]
    fn cross_site_posts_are_told_apart_from_the_page_s_own() {
        assert_eq!(cross_site(&headers(&[("sec-fetch-site", "same-origin")])), None);
        assert!(cross_site(&headers(&[("sec-fetch-site", "cross-site")])).is_some());
        assert_eq!(
            cross_site(&headers(&[("origin", "http://ops:8083"), ("host", "ops:8083")])),
            None
        );
        assert_eq!(cross_site(&headers(&[("origin", "null"), ("host", "ops:8083")])), None);
        assert!(cross_site(&headers(&[("origin", "https://evil.example"), ("host", "ops:8083")])).is_some());
    }

    #[test]
    fn sign_in_goes_back_only_to_a_page_of_the_api() {
        assert_eq!(after_sign_in(Some("tickets/ht-1/view")), "tickets/ht-1/view");
        assert_eq!(after_sign_in(Some("view")), "view");
        assert_eq!(
            after_sign_in(Some("tickets/ht-1/view?namespace=team-a")),
            "tickets/ht-1/view?namespace=team-a"
        );
        assert_eq!(after_sign_in(Some("view?namespace=team-a")), "view?namespace=team-a");
        for elsewhere in [
            "https://evil.example",
            "//evil.example",
            "../../x",
            "tickets/../../x",
            "tickets/x?y=<",
            "tickets/x?namespace=",
            "tickets/x?namespace=a&next=//evil.example",
            "view?namespace=A/../x",
            "",
        ] {
            assert_eq!(after_sign_in(Some(elsewhere)), "view", "{elsewhere}");
        }
        assert_eq!(after_sign_in(None), "view");
    }
}
