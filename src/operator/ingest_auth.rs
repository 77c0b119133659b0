//! Who may use seed 004's `/healer` API, and for which namespace: the part of
//! [`ingest`](super::ingest) that runs before a request is read.
//!
//! A request names the namespace its tickets live in with `?namespace=` (default: the ticket
//! namespace, `--ticket-namespace`). An operator bound to one namespace (`--namespace`) serves
//! only that one. Each namespace has its own bearer token: the key `token` of the Secret
//! `--ingest-token-secret` (default `kubeheal-ingest`) in that namespace — whoever may create
//! Secrets there decides who may file errors there, and a team's token opens no other team's
//! tickets. The ticket namespace also takes `KUBEHEAL_INGEST_TOKEN`, and, with
//! `--ingest-allow-anonymous`, no token at all; anonymity never reaches another namespace.
//!
//! What a Secret said is believed for [`BELIEVED_FOR`] (a rotated token works that much longer; a
//! Secret created just now takes that long to be seen when a request came before it), so a storm
//! of ingests costs no API call per request; the lookups themselves are rate-limited in total, so
//! requests naming one namespace after another cannot turn into a flood of reads.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

/// The Secret, in each namespace, whose key [`TOKEN_KEY`] is that namespace's ingest token.
pub const DEFAULT_TOKEN_SECRET: &str = "kubeheal-ingest";
/// The key of the token in that Secret.
pub const TOKEN_KEY: &str = "token";
/// How long what a namespace's Secret said (its token, or that it has none) is believed.
pub const BELIEVED_FOR: Duration = Duration::from_secs(30);
/// Most namespaces remembered at once.
const MAX_REMEMBERED: usize = 4096;
/// Most Secret lookups a second, all callers together (a burst of twice that).
const LOOKUPS_PER_SECOND: u32 = 20;

/// A request the API does not serve, as the HTTP status and a message that says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub status: StatusCode,
    pub message: String,
}

impl Denied {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

/// How callers are let in.
#[derive(Debug, Clone)]
pub struct AccessSettings {
    /// The namespace a request that names none is about (`--ticket-namespace`).
    pub home: String,
    /// The only namespace this operator serves (`--namespace`); `None`: every namespace.
    pub watched: Option<String>,
    /// The ticket namespace's token besides its Secret (`KUBEHEAL_INGEST_TOKEN`).
    pub home_token: Option<String>,
    /// The ticket namespace takes requests without a token (`--ingest-allow-anonymous`).
    pub allow_anonymous: bool,
    /// The Secret holding each namespace's token (`--ingest-token-secret`); `None`: only the
    /// ticket namespace's `KUBEHEAL_INGEST_TOKEN` lets callers in.
    pub token_secret: Option<String>,
}

/// What a namespace's Secret said, and when.
type Remembered = HashMap<String, (Instant, Option<String>)>;

/// The gate in front of every `/healer` endpoint.
pub struct Access {
    settings: AccessSettings,
    client: Client,
    remembered: Mutex<Remembered>,
    lookups: governor::DefaultDirectRateLimiter,
}

impl Access {
    pub fn new(settings: AccessSettings, client: Client) -> Self {
        let rate = NonZeroU32::new(LOOKUPS_PER_SECOND).expect("not zero");
        let burst = NonZeroU32::new(2 * LOOKUPS_PER_SECOND).expect("not zero");
        let quota = governor::Quota::per_second(rate).allow_burst(burst);
        Self {
            settings,
            client,
            remembered: Mutex::default(),
            lookups: governor::RateLimiter::direct(quota),
        }
    }

    pub fn settings(&self) -> &AccessSettings {
        &self.settings
    }

    /// The namespace a request is about: the one its `?namespace=` names, else the ticket
    /// namespace. Refused when it is not a namespace's name or not one this operator serves.
    pub fn namespace(&self, asked: Option<&str>) -> Result<String, Denied> {
        namespace_of(&self.settings, asked)
    }

    /// Whether a caller with `headers` may use the API for `namespace` without a person's
    /// sign-in: `Ok` when its bearer token is that namespace's (or the ticket namespace takes
    /// anyone), else why not.
    pub async fn admit(&self, namespace: &str, headers: &HeaderMap) -> Result<(), Denied> {
        let given = bearer(headers);
        match before_lookup(&self.settings, namespace, given)? {
            None => Ok(()),
            Some((given, secret)) => {
                let found = self.namespace_token(namespace, secret).await?;
                after_lookup(&self.settings, namespace, given, secret, found.as_deref())
            }
        }
    }

    /// The token in `namespace`'s Secret `secret`, from memory when it was read lately.
    async fn namespace_token(&self, namespace: &str, secret: &str) -> Result<Option<String>, Denied> {
        let now = Instant::now();
        if let Some((_, token)) = self
            .remembered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(namespace)
            .filter(|(said, _)| now.saturating_duration_since(*said) < BELIEVED_FOR)
        {
            return Ok(token.clone());
        }
        if self.lookups.check().is_err() {
            return Err(Denied::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many namespaces' tokens are being looked up at once; retry in a second",
            ));
        }
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        let token = match secrets.get_opt(secret).await {
            Ok(found) => found.and_then(|s| token_in(&s)),
            // A namespace that does not exist, or whose Secrets the operator may not read, has no
            // token it could check: the same answer as no Secret.
            Err(kube::Error::Api(status)) if status.code == 403 || status.code == 404 => None,
            Err(error) => {
                return Err(Denied::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "cannot read namespace {namespace}'s ingest token from the API server ({error}); retry later"
                    ),
                ));
            }
        };
        remember(
            &mut self.remembered.lock().unwrap_or_else(|e| e.into_inner()),
            namespace,
            token.clone(),
            now,
        );
        Ok(token)
    }
}

/// What can be said of a caller presenting `given` for `namespace` without reading a Secret:
/// `Ok(None)` let in (the ticket namespace's own token, or anonymity there), `Err` refused, or
/// `Ok(Some((given, secret)))` when it depends on the namespace's Secret `secret`.
fn before_lookup<'a>(
    settings: &'a AccessSettings,
    namespace: &str,
    given: Option<&'a str>,
) -> Result<Option<(&'a str, &'a str)>, Denied> {
    let home = namespace == settings.home;
    if home && settings.allow_anonymous {
        return Ok(None);
    }
    if home
        && let (Some(given), Some(token)) = (given, &settings.home_token)
        && same_secret(given, token)
    {
        return Ok(None);
    }
    let Some(secret) = settings.token_secret.as_deref() else {
        return Err(if home && settings.home_token.is_none() {
            Denied::new(
                StatusCode::UNAUTHORIZED,
                "this operator has no ingest token: set KUBEHEAL_INGEST_TOKEN (from a Secret), or start it with --ingest-allow-anonymous",
            )
        } else {
            wrong_token(namespace, None)
        });
    };
    match given {
        Some(given) => Ok(Some((given, secret))),
        None => {
            let expected = (!home || settings.home_token.is_none()).then_some(secret);
            Err(wrong_token(namespace, expected))
        }
    }
}

/// The answer for a caller presenting `given` for `namespace` once its Secret `secret` said
/// `found` (its token, or `None`: no such Secret or key).
fn after_lookup(
    settings: &AccessSettings,
    namespace: &str,
    given: &str,
    secret: &str,
    found: Option<&str>,
) -> Result<(), Denied> {
    let home = namespace == settings.home;
    match found {
        Some(token) if same_secret(given, token) => Ok(()),
        Some(_) => Err(wrong_token(namespace, Some(secret))),
        None if home && settings.home_token.is_some() => Err(wrong_token(namespace, None)),
        None => {
            let otherwise = if home {
                ", or give the operator KUBEHEAL_INGEST_TOKEN or --ingest-allow-anonymous"
            } else {
                ""
            };
            Err(Denied::new(
                StatusCode::UNAUTHORIZED,
                format!(
                    "namespace {namespace} takes no ingests: it has no Secret {secret} with a key {TOKEN_KEY} (create one there: kubectl -n {namespace} create secret generic {secret} --from-literal={TOKEN_KEY}=<a long random token>, and send Authorization: Bearer <that token>{otherwise})"
                ),
            ))
        }
    }
}

/// The namespace a request is about under `settings`; see [`Access::namespace`].
fn namespace_of(settings: &AccessSettings, asked: Option<&str>) -> Result<String, Denied> {
    let Some(asked) = asked.filter(|a| !a.is_empty()) else {
        return Ok(settings.home.clone());
    };
    if !is_namespace_name(asked) {
        return Err(Denied::new(
            StatusCode::BAD_REQUEST,
            format!(
                "namespace={:?} is not a namespace's name (lower-case letters, digits and '-', at most 63)",
                crate::parse::truncate_bytes(asked, 80)
            ),
        ));
    }
    match &settings.watched {
        Some(watched) if watched != asked => Err(Denied::new(
            StatusCode::FORBIDDEN,
            format!(
                "this operator serves only namespace {watched} (--namespace); ask the operator that watches {asked}"
            ),
        )),
        _ => Ok(asked.to_owned()),
    }
}

/// A DNS-1123 label, as namespaces are named.
pub fn is_namespace_name(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

fn wrong_token(namespace: &str, secret: Option<&str>) -> Denied {
    let whose = match secret {
        Some(secret) => format!("the token in namespace {namespace}'s Secret {secret} (key {TOKEN_KEY})"),
        None => "the ingest token (KUBEHEAL_INGEST_TOKEN)".to_owned(),
    };
    Denied::new(
        StatusCode::UNAUTHORIZED,
        format!("missing or wrong bearer token for namespace {namespace}: send Authorization: Bearer <{whose}>"),
    )
}

/// The token a Secret holds under [`TOKEN_KEY`], if it holds a non-empty one.
fn token_in(secret: &Secret) -> Option<String> {
    let bytes = secret.data.as_ref()?.get(TOKEN_KEY)?;
    let token = String::from_utf8(bytes.0.clone()).ok()?;
    let token = token.trim();
    (!token.is_empty()).then(|| token.to_owned())
}

fn remember(known: &mut Remembered, namespace: &str, token: Option<String>, now: Instant) {
    if known.len() >= MAX_REMEMBERED {
        known.retain(|_, (said, _)| now.saturating_duration_since(*said) < BELIEVED_FOR);
    }
    if known.len() >= MAX_REMEMBERED
        && let Some(oldest) = known.iter().min_by_key(|(_, (said, _))| *said).map(|(k, _)| k.clone())
    {
        known.remove(&oldest);
    }
    known.insert(namespace.to_owned(), (now, token));
}

/// The request's bearer token, if it has one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// Whether two secrets are the same, compared in constant time: the comparison must not tell
/// how much of a guess was right.
pub fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(watched: Option<&str>) -> AccessSettings {
        AccessSettings {
            home: "tickets".into(),
            watched: watched.map(str::to_owned),
            home_token: None,
            allow_anonymous: false,
            token_secret: Some(DEFAULT_TOKEN_SECRET.into()),
        }
    }

    #[test]
    fn a_request_without_a_namespace_is_about_the_ticket_namespace() {
        assert_eq!(namespace_of(&settings(None), None).unwrap(), "tickets");
        assert_eq!(namespace_of(&settings(None), Some("")).unwrap(), "tickets");
        assert_eq!(namespace_of(&settings(None), Some("team-a")).unwrap(), "team-a");
    }

    #[test]
    fn a_namespace_this_operator_does_not_serve_is_refused_naming_the_one_it_does() {
        let denied = namespace_of(&settings(Some("tickets")), Some("team-a")).unwrap_err();
        assert_eq!(denied.status, StatusCode::FORBIDDEN);
        assert!(denied.message.contains("only namespace tickets"), "{}", denied.message);
        assert_eq!(
            namespace_of(&settings(Some("tickets")), Some("tickets")).unwrap(),
            "tickets"
        );
    }

    #[test]
    fn what_is_not_a_namespace_name_is_refused_as_bad_input() {
        for bad in ["Team", "-a", "a-", "a/b", "a.b", "../x", &"a".repeat(64), "a b", "é"] {
            let denied = namespace_of(&settings(None), Some(bad)).unwrap_err();
            assert_eq!(denied.status, StatusCode::BAD_REQUEST, "{bad}");
        }
        assert!(is_namespace_name(&"a".repeat(63)));
        assert!(is_namespace_name("0-team"));
    }

    #[test]
    fn the_ticket_namespace_takes_its_own_token_or_anyone_when_open_and_never_reaches_beyond() {
        let mut settings = settings(None);
        settings.home_token = Some("home-token".into());
        // Its own token lets a caller in without reading a Secret.
        assert_eq!(before_lookup(&settings, "tickets", Some("home-token")), Ok(None));
        // Another token may still be the namespace's Secret's; no token at all may not.
        assert_eq!(
            before_lookup(&settings, "tickets", Some("other")),
            Ok(Some(("other", DEFAULT_TOKEN_SECRET)))
        );
        let denied = before_lookup(&settings, "tickets", None).unwrap_err();
        assert_eq!(denied.status, StatusCode::UNAUTHORIZED);
        assert!(denied.message.contains("KUBEHEAL_INGEST_TOKEN"), "{}", denied.message);
        // The ticket namespace's token is not another namespace's.
        assert_eq!(
            before_lookup(&settings, "team-a", Some("home-token")),
            Ok(Some(("home-token", DEFAULT_TOKEN_SECRET)))
        );
        assert!(after_lookup(&settings, "team-a", "home-token", DEFAULT_TOKEN_SECRET, None).is_err());
        assert!(
            after_lookup(
                &settings,
                "team-a",
                "home-token",
                DEFAULT_TOKEN_SECRET,
                Some("team-token")
            )
            .is_err()
        );
        assert_eq!(
            after_lookup(
                &settings,
                "team-a",
                "team-token",
                DEFAULT_TOKEN_SECRET,
                Some("team-token")
            ),
            Ok(())
        );
        // Open to anyone: the ticket namespace only.
        settings.allow_anonymous = true;
        assert_eq!(before_lookup(&settings, "tickets", None), Ok(None));
        assert!(before_lookup(&settings, "team-a", None).is_err());
    }

    #[test]
    fn without_namespace_tokens_only_the_ticket_namespace_is_reachable_and_says_how() {
        let mut settings = settings(None);
        settings.token_secret = None;
        let denied = before_lookup(&settings, "tickets", Some("x")).unwrap_err();
        assert!(
            denied.message.contains("KUBEHEAL_INGEST_TOKEN") && denied.message.contains("--ingest-allow-anonymous"),
            "{}",
            denied.message
        );
        assert!(before_lookup(&settings, "team-a", Some("x")).is_err());
        // A namespace with no Secret says how to make one (and, at home, the other ways in).
        let denied = after_lookup(&self::settings(None), "tickets", "x", DEFAULT_TOKEN_SECRET, None).unwrap_err();
        assert!(
            denied.message.contains("create secret generic kubeheal-ingest")
                && denied.message.contains("--ingest-allow-anonymous"),
            "{}",
            denied.message
        );
    }

    #[test]
    fn secrets_compare_equal_only_when_equal() {
        assert!(same_secret("s3cret", "s3cret"));
        assert!(!same_secret("s3cret", "s3cres"));
        assert!(!same_secret("s3cret", "s3cret!"));
        assert!(!same_secret("", "x"));
    }

    #[test]
    fn a_secret_holds_a_token_only_under_its_key_and_not_blank() {
        let secret = |key: &str, value: &str| -> Secret {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "kubeheal-ingest"},
                "data": {key: base64_of(value)},
            }))
            .unwrap()
        };
        assert_eq!(token_in(&secret("token", "abc\n")).as_deref(), Some("abc"));
        assert_eq!(token_in(&secret("token", "  ")), None);
        assert_eq!(token_in(&secret("password", "abc")), None);
    }

    fn base64_of(text: &str) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    #[test]
    fn memory_of_namespaces_stays_bounded_and_forgets_the_oldest() {
        let mut known = Remembered::new();
        let start = Instant::now();
        for n in 0..MAX_REMEMBERED + 10 {
            remember(
                &mut known,
                &format!("ns-{n}"),
                None,
                start + Duration::from_millis(n as u64),
            );
        }
        assert_eq!(known.len(), MAX_REMEMBERED);
        assert!(!known.contains_key("ns-0"));
        assert!(known.contains_key(&format!("ns-{}", MAX_REMEMBERED + 9)));
    }
}
