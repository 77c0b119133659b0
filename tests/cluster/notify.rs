//! Notify end to end (seed 004): a ticket that fails is announced once to each receiver of the
//! `--notify-secret` Secret, in that service's own format, with the ticket page's link; a
//! receiver that hangs delays neither the others nor the ticket; a restarted operator announces
//! nothing twice.
//!
//! The receivers are loopback servers that check each payload's documented shape and record a
//! violation (failing the test) for a wrong one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::routing::post;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeheal::api::healer_ticket::{HealerTicket, TicketEvent, TicketPhase};
use serde_json::{Value, json};

use crate::heal_run::{Heal, free_port, logic_project};
use crate::support::http::{client, serve};
use crate::support::node::Hold;

pub(crate) const SECRET: &str = "kubeheal-notify";
pub(crate) const PAGES: &str = "http://kubeheal.example/";
const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

/// What the receivers got: (kind, payload), and what was wrong with any of them.
#[derive(Clone, Default)]
pub(crate) struct Received {
    pub(crate) payloads: Arc<Mutex<Vec<(String, Value)>>>,
    violations: Arc<Mutex<Vec<String>>>,
}

impl Received {
    /// The payloads `kind` got that are about `ticket`.
    pub(crate) fn about(&self, kind: &str, ticket: &str) -> Vec<Value> {
        self.payloads
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, p)| k == kind && p.to_string().contains(ticket))
            .map(|(_, p)| p.clone())
            .collect()
    }

    pub(crate) fn assert_no_violation(&self) {
        let violations = self.violations.lock().unwrap();
        assert!(
            violations.is_empty(),
            "payloads of the wrong shape:\n{}",
            violations.join("\n")
        );
    }
}

fn text_len(v: &Value) -> usize {
    v.as_str().map(|s| s.chars().count()).unwrap_or(usize::MAX)
}

/// Slack incoming webhook: `text` and Block Kit blocks within Slack's limits.
fn slack_shape(p: &Value) -> Result<(), String> {
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_owned()) };
    check(
        p["text"].as_str().is_some_and(|t| !t.is_empty()),
        "text (fallback) missing",
    )?;
    let blocks = p["blocks"].as_array().ok_or("blocks missing")?;
    check(blocks.len() <= 50, "more than 50 blocks")?;
    check(
        blocks[0]["type"] == "header"
            && blocks[0]["text"]["type"] == "plain_text"
            && text_len(&blocks[0]["text"]["text"]) <= 150,
        "the first block is not a plain_text header of at most 150 characters",
    )?;
    for block in blocks {
        match block["type"].as_str() {
            Some("section") => {
                if let Some(fields) = block["fields"].as_array() {
                    check(fields.len() <= 10, "more than 10 fields")?;
                    for f in fields {
                        check(
                            f["type"] == "mrkdwn" || f["type"] == "plain_text",
                            "a field without a text type",
                        )?;
                        check(text_len(&f["text"]) <= 2000, "a field over 2000 characters")?;
                    }
                } else {
                    check(
                        text_len(&block["text"]["text"]) <= 3000,
                        "a section text over 3000 characters",
                    )?;
                }
            }
            Some("actions") => {
                let button = &block["elements"][0];
                check(
                    button["type"] == "button" && button["text"]["type"] == "plain_text",
                    "an action that is not a button",
                )?;
                check(button["url"].as_str().is_some(), "a button without url")?;
            }
            Some("header") => {}
            other => return Err(format!("unexpected block type {other:?}")),
        }
    }
    for text in [
        p["text"].as_str().unwrap_or_default(),
        blocks[1]["text"]["text"].as_str().unwrap_or_default(),
    ] {
        check(
            !text.contains('<') && !text.contains('>'),
            "an unescaped < or > in Slack text",
        )?;
    }
    Ok(())
}

/// Discord webhook: content and embeds within Discord's limits, mentions off.
fn discord_shape(p: &Value) -> Result<(), String> {
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_owned()) };
    check(text_len(&p["content"]) <= 2000, "content missing or over 2000")?;
    check(
        p["allowed_mentions"]["parse"] == json!([]),
        "mentions are not switched off",
    )?;
    let embeds = p["embeds"].as_array().ok_or("embeds missing")?;
    check(!embeds.is_empty() && embeds.len() <= 10, "not 1 to 10 embeds")?;
    for e in embeds {
        check(text_len(&e["title"]) <= 256, "title over 256")?;
        check(text_len(&e["description"]) <= 4096, "description over 4096")?;
        check(e["color"].is_u64(), "color is not an integer")?;
        let fields = e["fields"].as_array().ok_or("fields missing")?;
        check(fields.len() <= 25, "more than 25 fields")?;
        for f in fields {
            check(
                text_len(&f["name"]) <= 256 && text_len(&f["value"]) <= 1024,
                "a field over its limits",
            )?;
        }
    }
    Ok(())
}

/// Teams Workflows: a message with one Adaptive Card attachment (not a MessageCard).
fn teams_shape(p: &Value) -> Result<(), String> {
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_owned()) };
    check(p["type"] == "message", "type is not message")?;
    check(p.get("@type").is_none(), "a retired MessageCard")?;
    let attachment = &p["attachments"][0];
    check(
        attachment["contentType"] == "application/vnd.microsoft.card.adaptive",
        "the attachment is not an Adaptive Card",
    )?;
    let card = &attachment["content"];
    check(card["type"] == "AdaptiveCard", "content is not an AdaptiveCard")?;
    check(
        card["version"] == "1.4" || card["version"] == "1.5",
        "version is not 1.4 or 1.5",
    )?;
    let body = card["body"].as_array().ok_or("body missing")?;
    check(body.iter().any(|b| b["type"] == "TextBlock"), "no TextBlock")?;
    check(body.iter().any(|b| b["type"] == "FactSet"), "no FactSet")?;
    check(card["actions"][0]["type"] == "Action.OpenUrl", "no Action.OpenUrl")?;
    check(p.to_string().len() <= 28 * 1024, "over 28 KB")?;
    Ok(())
}

/// kubeheal's raw JSON.
fn json_shape(p: &Value) -> Result<(), String> {
    for key in ["event", "ticket", "namespace", "phase", "message"] {
        if !p[key].is_string() {
            return Err(format!("{key} is not a string"));
        }
    }
    if !p["classification"].is_object() {
        return Err("classification is not an object".into());
    }
    if !(p["url"].is_string() || p["url"].is_null()) {
        return Err("url is neither a string nor null".into());
    }
    Ok(())
}

/// The four receivers on one loopback server: `http://{addr}/{kind}`.
pub(crate) async fn receivers(received: Received) -> String {
    let mut app = axum::Router::new();
    for (kind, shape) in [
        ("slack", slack_shape as fn(&Value) -> Result<(), String>),
        ("discord", discord_shape),
        ("teams", teams_shape),
        ("json", json_shape),
    ] {
        let received = received.clone();
        app = app.route(
            &format!("/{kind}"),
            post(move |headers: axum::http::HeaderMap, body: String| {
                let received = received.clone();
                async move {
                    let json_type = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|v| v.starts_with("application/json"));
                    let verdict = match serde_json::from_str::<Value>(&body) {
                        Ok(_) if !json_type => Err("not sent as application/json".to_owned()),
                        Ok(payload) => shape(&payload).map(|()| payload),
                        Err(e) => Err(format!("not JSON: {e}")),
                    };
                    match verdict {
                        Ok(payload) => {
                            received.payloads.lock().unwrap().push((kind.to_owned(), payload));
                            axum::http::StatusCode::OK
                        }
                        Err(why) => {
                            received
                                .violations
                                .lock()
                                .unwrap()
                                .push(format!("{kind}: {why}: {body}"));
                            axum::http::StatusCode::BAD_REQUEST
                        }
                    }
                }
            }),
        );
    }
    format!("http://{}", serve(app).await)
}

/// A receiver that accepts connections and never answers; counts them.
async fn hanging_receiver() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            held.push(socket);
        }
    });
    (format!("http://{addr}/hook"), accepted)
}

pub(crate) fn secret(urls: &[(&str, String)]) -> Secret {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": SECRET},
        "stringData": urls.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
    }))
    .expect("a Secret")
}

/// The operator may read that one Secret (what the chart grants it).
pub(crate) fn grant_secret(heal: &Heal) {
    let rbac = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "kubeheal-notify"},
         "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": [SECRET], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "kubeheal-notify"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kubeheal-notify"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeheal:operators"}]}
    ]});
    let file = heal.work.path().join("notify-rbac.json");
    std::fs::write(&file, rbac.to_string()).expect("write the RBAC");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Starts the operator with the /healer API on `addr` and notifications; waits for the API.
async fn start(heal: &mut Heal, addr: &str) {
    heal.start_operator_with(&[
        "--healer-listen",
        addr,
        "--ingest-allow-anonymous",
        "--notify-secret",
        SECRET,
        "--ticket-page-url",
        PAGES,
    ]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while client()
        .get(format!("http://{addr}/healer/health"))
        .send()
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "the /healer API never came up");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn ingest(addr: &str, body: &Value) -> String {
    let response = client()
        .post(format!("http://{addr}/healer/ingest"))
        .json(body)
        .send()
        .await
        .expect("the ingest answers");
    assert_eq!(response.status().as_u16(), 202);
    let answer: Value = response.json().await.expect("JSON");
    answer["ticket_id"].as_str().expect("a ticket id").to_owned()
}

async fn wait(heal: &Heal, what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        if Instant::now() > deadline {
            panic!(
                "never: {what}\noperator log:\n{}",
                heal.operator.as_ref().map(|p| p.log_tail(60)).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn wait_ticket(heal: &Heal, name: &str, what: &str, done: impl Fn(&HealerTicket) -> bool) {
    let tickets: Api<HealerTicket> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let ticket = tickets.get_opt(name).await.ok().flatten();
        if ticket.as_ref().is_some_and(&done) {
            return;
        }
        if Instant::now() > deadline {
            panic!(
                "ticket {name} never became {what}: {}\noperator log:\n{}",
                serde_json::to_string_pretty(&ticket.and_then(|t| t.status)).unwrap_or_default(),
                heal.operator.as_ref().map(|p| p.log_tail(60)).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub(crate) fn link(ticket: &str) -> String {
    format!("http://kubeheal.example/healer/tickets/{ticket}/view")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_ticket_is_announced_once_to_each_receiver_in_its_own_format() {
    let mut heal = Heal::new("ticket-notify", &logic_project(), Hold::default()).await;
    let received = Received::default();
    let good = receivers(received.clone()).await;
    let (hanging, accepted) = hanging_receiver().await;
    grant_secret(&heal);
    let secrets: Api<Secret> = Api::namespaced(heal.client.clone(), &heal.ns.name);
    secrets
        .create(
            &PostParams::default(),
            &secret(&[
                ("slack", format!("{good}/slack")),
                ("discord", format!("{good}/discord")),
                ("teams", hanging.clone()),
                ("json", format!("{good}/json")),
            ]),
        )
        .await
        .expect("create the Secret");
    let addr = free_port().to_string();
    start(&mut heal, &addr).await;

    // A generator bug, with hostile text in it: Failed at once, announced.
    let a = ingest(
        &addr,
        &json!({"source": "runtime", "contract_fqn": "entity/helpdesk/incident",
                "error": format!("column \"severity\" does not exist <script>alert(1)</script> @channel **bold** token={TOKEN}"),
                "context": {"status_code": 500}}),
    )
    .await;
    wait_ticket(&heal, &a, "Failed and announced", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.phase == Some(TicketPhase::Failed) && s.notified == vec![TicketEvent::Failed])
    })
    .await;
    let failed_at = Instant::now();
    // The hanging Teams receiver holds its POST for the whole timeout (10 s); the others are not
    // behind it.
    wait(&heal, "slack, discord and json announced ticket A", 30, || {
        ["slack", "discord", "json"]
            .iter()
            .all(|kind| !received.about(kind, &a).is_empty())
    })
    .await;
    assert!(
        failed_at.elapsed() < Duration::from_secs(8),
        "the working receivers waited for the hanging one: {:?}",
        failed_at.elapsed()
    );
    wait(&heal, "the hanging receiver was called", 30, || {
        accepted.load(Ordering::SeqCst) > 0
    })
    .await;
    received.assert_no_violation();
    let slack = &received.about("slack", &a)[0];
    let button = slack["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "actions")
        .expect("a button");
    assert_eq!(button["elements"][0]["url"], link(&a).as_str());
    assert!(slack["text"].as_str().unwrap().starts_with("[failed] HealerTicket"));
    let discord = &received.about("discord", &a)[0];
    assert_eq!(discord["embeds"][0]["url"], link(&a).as_str());
    assert_eq!(discord["embeds"][0]["color"], 0xE74C3C);
    let raw = &received.about("json", &a)[0];
    assert_eq!(raw["event"], "failed");
    assert_eq!(raw["phase"], "Failed");
    assert_eq!(raw["ticket"], a.as_str());
    assert_eq!(raw["namespace"], heal.ns.name.as_str());
    assert_eq!(raw["classification"]["fixable_by"], "generator");
    assert_eq!(raw["url"], link(&a).as_str());
    for (kind, payload) in received.payloads.lock().unwrap().iter() {
        let text = payload.to_string();
        assert!(!text.contains(TOKEN), "{kind} got the token: {text}");
    }
    let section = slack["blocks"][1]["text"]["text"].as_str().unwrap();
    assert!(section.contains("&lt;script&gt;"), "{section}");
    // The URLs are credentials: the log names receivers by kind only.
    let log = || heal.operator.as_ref().expect("the operator").log_tail(2000);
    wait(&heal, "the hanging receiver's timeout logged", 40, || {
        log()
            .lines()
            .any(|l| l.contains("teams") && l.contains("could not be sent"))
    })
    .await;
    let log = log();
    assert!(
        !log.contains(&good) && !log.contains(&hanging),
        "a webhook URL in the log:\n{log}"
    );

    // A restart, with Teams repaired: ticket A is not announced again (even when it recurs and
    // is reconciled again); a new failure is announced to all four, once.
    heal.kill_operator();
    secrets
        .patch(
            SECRET,
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"teams": format!("{good}/teams")}})),
        )
        .await
        .expect("repair Teams");
    start(&mut heal, &addr).await;
    let again = ingest(
        &addr,
        &json!({"source": "runtime", "contract_fqn": "entity/helpdesk/incident",
                "error": format!("column \"severity\" does not exist <script>alert(1)</script> @channel **bold** token={TOKEN}"),
                "context": {"status_code": 500}}),
    )
    .await;
    assert_eq!(again, a);
    wait_ticket(&heal, &a, "counted twice", |t| {
        t.status.as_ref().is_some_and(|s| s.occurrences == 2)
    })
    .await;
    let b = ingest(
        &addr,
        &json!({"source": "runtime", "contract_fqn": "entity/helpdesk/user",
                "error": "duplicate key value violates unique constraint \"users_email_key\"",
                "context": {"status_code": 500}}),
    )
    .await;
    assert_ne!(b, a);
    wait(&heal, "all four receivers announced ticket B", 30, || {
        ["slack", "discord", "teams", "json"]
            .iter()
            .all(|kind| !received.about(kind, &b).is_empty())
    })
    .await;
    let teams = &received.about("teams", &b)[0];
    assert_eq!(
        teams["attachments"][0]["content"]["actions"][0]["url"],
        link(&b).as_str()
    );
    // Time for any second announcement to arrive; none may.
    tokio::time::sleep(Duration::from_secs(3)).await;
    received.assert_no_violation();
    for kind in ["slack", "discord", "json"] {
        assert_eq!(received.about(kind, &a).len(), 1, "{kind} got ticket A more than once");
    }
    assert_eq!(
        received.about("teams", &a).len(),
        0,
        "ticket A was announced again after the restart"
    );
    for kind in ["slack", "discord", "teams", "json"] {
        assert_eq!(
            received.about(kind, &b).len(),
            1,
            "{kind} did not get ticket B exactly once"
        );
    }
    wait_ticket(&heal, &b, "Failed and announced", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.notified == vec![TicketEvent::Failed])
    })
    .await;
}
