//! HealerTicket intake end to end (seed 004): errors posted to the operator's `/healer` API
//! become classified, deduplicated tickets that `kubectl`, `/healer/tickets` and
//! `/healer/status` all show; a storm of one error is one ticket counted exactly; errors kubeheal
//! cannot fix by a contract fail at once with a diagnostic; bad input is refused saying why.

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, ListParams};
use kubeheal::api::healer_ticket::{FixableBy, HealerTicket, Priority, TicketPhase};
use serde_json::{Value, json};

use crate::heal_run::{Heal, free_port, logic_project};
use crate::support::http::client;
use crate::support::node::Hold;

/// An operator serving the /healer API on loopback without a token.
pub(crate) async fn intake(test: &str) -> (Heal, String) {
    intake_with(test, &[]).await
}

/// [`intake`] with more operator `flags`.
async fn intake_with(test: &str, flags: &[&str]) -> (Heal, String) {
    let mut heal = Heal::new(test, &logic_project(), Hold::default()).await;
    let base = serve_intake(&mut heal, flags).await;
    (heal, base)
}

/// Starts the test's operator serving the /healer API on loopback without a token, with more
/// `flags`; the API's base URL.
pub(crate) async fn serve_intake(heal: &mut Heal, flags: &[&str]) -> String {
    // A port picked free may be taken by another test's process before the operator binds it:
    // then the operator exits saying so, and starts again on another.
    for _ in 0..3 {
        let addr = free_port().to_string();
        let mut all = vec!["--healer-listen", &addr, "--ingest-allow-anonymous"];
        all.extend_from_slice(flags);
        heal.start_operator_with(&all);
        let base = format!("http://{addr}/healer");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if client().get(format!("{base}/health")).send().await.is_ok() {
                return base;
            }
            let operator = heal.operator.as_mut().expect("the operator");
            if let Some(exit) = operator.exited() {
                assert!(exit.contains("address already in use"), "the operator stopped: {exit}");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the /healer API never came up:\n{}",
                operator.log_tail(40)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    panic!("the operator lost its /healer port three times")
}

pub(crate) fn tickets(heal: &Heal) -> Api<HealerTicket> {
    Api::namespaced(heal.client.clone(), &heal.ns.name)
}

pub(crate) async fn post(base: &str, body: &Value) -> (u16, Value) {
    post_with(&client(), base, body).await
}

/// [`post`] on a client of the caller's (a storm reuses its connections, as an application does).
async fn post_with(client: &reqwest::Client, base: &str, body: &Value) -> (u16, Value) {
    let response = client
        .post(format!("{base}/ingest"))
        .json(body)
        .send()
        .await
        .expect("the ingest answers");
    let code = response.status().as_u16();
    (code, response.json().await.unwrap_or(Value::Null))
}

/// The JSON a GET of `url` answers.
pub(crate) async fn get_json(url: String) -> Value {
    client()
        .get(&url)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("GET {url} is not JSON: {e}"))
}

/// Waits until ticket `name` satisfies `done`.
pub(crate) async fn wait_ticket(
    heal: &Heal,
    name: &str,
    what: &str,
    done: impl Fn(&HealerTicket) -> bool,
) -> HealerTicket {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let ticket = tickets(heal).get_opt(name).await.ok().flatten();
        if let Some(ticket) = &ticket
            && done(ticket)
        {
            return ticket.clone();
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

pub(crate) fn seed_error(id: &str) -> Value {
    json!({
        "source": "runtime",
        "contract_fqn": "entity/helpdesk/ticket",
        "error": "KeyError: 'resolution'",
        "stacktrace": format!("Traceback (most recent call last):\n  File \"backend/routes/tickets.py\", line 88, in patch_ticket\n    ticket[\"resolution\"] = body[\"resolution\"]\nKeyError: 'resolution'\n"),
        "context": {"request_path": format!("/tickets/{id}"), "method": "PATCH", "status_code": 500}
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_004s_example_error_becomes_one_classified_ticket_that_every_view_shows() {
    let (heal, base) = intake("ticket-intake").await;
    let (code, answer) = post(&base, &seed_error("abc")).await;
    assert_eq!(code, 202, "{answer}");
    let id = answer["ticket_id"].as_str().expect("a ticket id").to_owned();
    assert_eq!(answer["status"], "queued");
    let ticket = wait_ticket(&heal, &id, "classified and counted", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.classification.is_some() && s.occurrences == 1)
    })
    .await;
    let status = ticket.status.expect("a status");
    let c = status.classification.expect("a classification");
    assert_eq!(c.error_type, "runtime_500");
    assert_eq!(c.tier, 3);
    assert_eq!(c.fixable_by, FixableBy::Contract);
    assert_eq!(c.priority, Priority::Critical);
    assert_eq!(status.phase, Some(TicketPhase::Queued));

    // The same error for another ticket id is the same ticket; another error is another one.
    let (_, again) = post(&base, &seed_error("def-42")).await;
    assert_eq!(again["ticket_id"], id.as_str());
    let mut other = seed_error("abc");
    other["error"] = json!("KeyError: 'assignee'");
    let (_, other) = post(&base, &other).await;
    assert_ne!(other["ticket_id"], id.as_str());
    wait_ticket(&heal, &id, "counted twice", |t| {
        t.status.as_ref().is_some_and(|s| s.occurrences == 2)
    })
    .await;

    // kubectl, /healer/tickets, /healer/tickets/{id} and /healer/status agree.
    let table = heal.plane.kubectl(["get", "ht", "-n", &heal.ns.name]);
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(
        table.contains(&id) && table.contains("Queued") && table.contains("critical"),
        "{table}"
    );
    let listed: Value = get_json(format!(
        "{base}/tickets?priority=critical&contract_fqn=entity/helpdesk/ticket"
    ))
    .await;
    let listed = listed.as_array().expect("an array");
    assert!(
        listed
            .iter()
            .any(|t| t["id"] == id.as_str() && t["error_type"] == "runtime_500"),
        "{listed:?}"
    );
    let none: Value = get_json(format!("{base}/tickets?priority=low")).await;
    assert_eq!(none, json!([]));
    let shown: Value = get_json(format!("{base}/tickets/{id}")).await;
    assert_eq!(shown["raw_error"], "KeyError: 'resolution'");
    assert_eq!(shown["occurrences"], 2);
    let stats: Value = get_json(format!("{base}/status")).await;
    assert_eq!(stats["queue"]["queued"], 2, "{stats}");
    assert!(
        stats["recurring"]
            .as_array()
            .is_some_and(|r| r.iter().any(|e| e["error_type"] == "runtime_500" && e["count"] == 3)),
        "{stats}"
    );
    let missing = client()
        .get(format!("{base}/tickets/ht-nope"))
        .send()
        .await
        .expect("show");
    assert_eq!(missing.status().as_u16(), 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_storm_of_one_error_is_one_ticket_counted_exactly() {
    let (heal, base) = intake("ticket-storm").await;
    const STORM: usize = 10_000;
    let started = Instant::now();
    let http = client();
    let answers: Vec<(u16, Value)> = futures::stream::iter(0..STORM)
        .map(|n| {
            let (base, http) = (base.clone(), http.clone());
            async move { post_with(&http, &base, &seed_error(&format!("t-{n}"))).await }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    let took = started.elapsed();
    assert!(answers.iter().all(|(code, _)| *code == 202), "every ingest is accepted");
    let id = answers[0].1["ticket_id"].as_str().expect("an id").to_owned();
    assert!(answers.iter().all(|(_, a)| a["ticket_id"] == id.as_str()), "one ticket");
    wait_ticket(&heal, &id, &format!("counted {STORM} times"), |t| {
        t.status.as_ref().is_some_and(|s| s.occurrences as usize == STORM)
    })
    .await;
    let all = tickets(&heal).list(&ListParams::default()).await.expect("list");
    assert_eq!(all.items.len(), 1);
    eprintln!("{STORM} ingests in {took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_no_contract_can_fix_fail_at_once_with_a_diagnostic_and_bad_input_is_refused() {
    let (heal, base) = intake("ticket-unfixable").await;
    let generator = json!({"source": "runtime", "contract_fqn": "entity/helpdesk/incident",
        "error": "column \"severity\" does not exist", "context": {"status_code": 500}});
    let (code, answer) = post(&base, &generator).await;
    assert_eq!(code, 202, "{answer}");
    let id = answer["ticket_id"].as_str().expect("an id").to_owned();
    let ticket = wait_ticket(&heal, &id, "Failed", |t| {
        t.status.as_ref().and_then(|s| s.phase) == Some(TicketPhase::Failed)
    })
    .await;
    let status = ticket.status.expect("a status");
    assert_eq!(
        status.classification.expect("classified").fixable_by,
        FixableBy::Generator
    );
    assert!(status.resolution_note.is_some_and(|n| !n.is_empty()));
    assert!(status.resolved_at.is_some());

    for (body, expected) in [
        ("not json".to_owned(), "not JSON"),
        (
            json!({"source": "cosmic", "error": "x"}).to_string(),
            "source \"cosmic\" is not one of",
        ),
        (json!({"source": "runtime"}).to_string(), "error is required"),
        (
            json!({"source": "runtime", "error": 5}).to_string(),
            "error must be a string",
        ),
        (
            json!({"source": "runtime", "error": "x", "extra": 1}).to_string(),
            "unknown field \"extra\"",
        ),
        (
            json!({"source": "runtime", "error": "x", "contract_fqn": "no slash"}).to_string(),
            "contract_fqn",
        ),
        (
            json!({"source": "runtime", "error": "x"}).to_string(),
            "contract_fqn is required",
        ),
    ] {
        let response = client()
            .post(format!("{base}/ingest"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("an answer");
        assert_eq!(response.status().as_u16(), 422, "{body}");
        let detail: Value = response.json().await.expect("JSON");
        assert!(
            detail["detail"].as_str().is_some_and(|d| d.contains(expected)),
            "{body}: {detail}"
        );
    }
    let huge = json!({"source": "runtime", "error": "x".repeat(300 * 1024)}).to_string();
    let response = client()
        .post(format!("{base}/ingest"))
        .body(huge)
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status().as_u16(), 413);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let all = tickets(&heal).list(&ListParams::default()).await.expect("list");
    assert_eq!(all.items.len(), 1, "nothing was created from bad input");

    // A ticket applied with kubectl is classified and counted like an ingested one.
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/healerticket.yaml");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &example.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ticket = wait_ticket(&heal, "helpdesk-ticket-keyerror-resolution", "classified", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.classification.is_some() && s.occurrences == 1)
    })
    .await;
    let c = ticket.status.and_then(|s| s.classification).expect("classified");
    assert_eq!((c.error_type.as_str(), c.priority), ("runtime_500", Priority::Critical));
}

#[tokio::test(flavor = "multi_thread")]
async fn one_caller_past_its_rate_is_told_when_to_retry_and_what_was_accepted_survives_a_sigterm() {
    // Two a second, so a burst of twenty.
    let (mut heal, base) = intake_with("ticket-rate", &["--ingest-rate-limit", "2"]).await;
    let http = client();
    let mut accepted = 0;
    let mut refusal = None;
    for n in 0..30 {
        let response = http
            .post(format!("{base}/ingest"))
            .json(&seed_error(&format!("r-{n}")))
            .send()
            .await
            .expect("an answer");
        match response.status().as_u16() {
            202 => accepted += 1,
            429 => {
                let retry = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
                let body: Value = response.json().await.expect("JSON");
                refusal = Some((retry, body));
            }
            other => panic!("ingest {n} answered {other}"),
        }
    }
    // The burst, and perhaps a token or two refilled while the thirty went out.
    assert!((20..=23).contains(&accepted), "{accepted} accepted");
    let (retry, body) = refusal.expect("the caller was held to its rate");
    assert!(retry.is_some_and(|s| (1..=2).contains(&s)), "Retry-After {retry:?}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("--ingest-rate-limit") && detail.contains("retry in"),
        "{detail}"
    );

    // SIGTERM at once, before the half-second flush: what was accepted is written on the way out.
    let stopped = heal
        .operator
        .as_mut()
        .expect("the operator")
        .terminate(Duration::from_secs(30));
    assert!(stopped, "the operator stopped on SIGTERM");
    let all = tickets(&heal).list(&ListParams::default()).await.expect("list");
    assert_eq!(all.items.len(), 1, "one ticket");
    let ticket = &all.items[0];
    let occurrences = ticket.status.as_ref().map(|s| s.occurrences).unwrap_or_default();
    assert_eq!(
        occurrences as usize, accepted,
        "every accepted ingest is counted, no refused one"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_back_after_its_fix_was_applied_opens_a_linked_recurrence_instead_of_counting_on_the_closed_ticket() {
    let (heal, base) = intake("ticket-recurs").await;
    let (code, answer) = post(&base, &seed_error("1")).await;
    assert_eq!(code, 202, "{answer}");
    let first = answer["ticket_id"].as_str().expect("an id").to_owned();
    wait_ticket(&heal, &first, "queued once", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.phase == Some(TicketPhase::Queued) && s.occurrences == 1)
    })
    .await;
    // Its fix is applied (as the fixing half of the pipeline records it).
    let applied = json!({"status": {"phase": "Applied", "resolvedAt": k8s_openapi::jiff::Timestamp::now().to_string(),
                                    "resolutionNote": "resolution made required"}});
    tickets(&heal)
        .patch_status(
            &first,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&applied),
        )
        .await
        .expect("the ticket is applied");
    wait_ticket(&heal, &first, "applied in the watch cache", |t| {
        t.status.as_ref().and_then(|s| s.phase) == Some(TicketPhase::Applied)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;

    // The same error again: filed as the ticket's recurrence, linked, and counted there.
    let recurrence = format!("{first}-r2");
    for n in 2..=4 {
        let (code, answer) = post(&base, &seed_error(&n.to_string())).await;
        assert_eq!(code, 202, "{answer}");
        if n > 2 {
            assert_eq!(answer["ticket_id"], recurrence.as_str(), "{answer}");
        }
    }
    let ticket = wait_ticket(&heal, &recurrence, "a queued recurrence counted three times", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.phase == Some(TicketPhase::Queued) && s.occurrences == 3)
    })
    .await;
    let status = ticket.status.expect("a status");
    assert_eq!(status.recurrence_of.as_deref(), Some(first.as_str()));
    let closed = tickets(&heal).get(&first).await.expect("the first ticket");
    let closed = closed.status.expect("a status");
    assert_eq!(
        (closed.phase, closed.occurrences),
        (Some(TicketPhase::Applied), 1),
        "the closed ticket is not counted"
    );
    let shown = get_json(format!("{base}/tickets/{recurrence}")).await;
    assert_eq!(shown["recurrence_of"], first.as_str(), "{shown}");
}

/// Debian's `chromium`, headless, with a profile of its own; its stdout. A machine without it
/// fails the test saying how to get it (`.ci/run` installs it).
fn chromium(profile: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("Debian's chromium runs (apt-get install chromium; .ci/run installs it)");
    assert!(
        out.status.success(),
        "chromium {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ticket_pages_open_in_a_real_headless_chromium_and_a_hostile_error_is_shown_not_run() {
    let (heal, base) = intake("ticket-page").await;
    let mut hostile = seed_error("1");
    hostile["error"] =
        json!("KeyError: '<script>document.title=\"pwned\"</script><img src=x onerror=\"document.title='img'\">'");
    let (code, answer) = post(&base, &hostile).await;
    assert_eq!(code, 202, "{answer}");
    let id = answer["ticket_id"].as_str().expect("an id").to_owned();
    wait_ticket(&heal, &id, "classified", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.classification.is_some() && s.occurrences == 1)
    })
    .await;
    let described = get_json(format!("{base}/tickets/{id}")).await;
    let error_type = described["error_type"].as_str().expect("an error type").to_owned();
    // The watch cache behind the pages may lag the API server by a moment.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let profile = heal.work.path().join("chromium");
    let page = format!("{base}/tickets/{id}/view");
    let dom = chromium(&profile, &["--dump-dom", &page]);
    assert!(
        dom.contains(&format!("<title>Ticket {id}</title>")),
        "the hostile error's script ran or the page is not the ticket's:\n{dom}"
    );
    assert!(dom.contains("&lt;script&gt;document.title="), "{dom}");
    assert!(
        !dom.contains("<script") && !dom.contains("<img"),
        "an element came from the error text:\n{dom}"
    );
    for shown in [
        error_type.as_str(),
        "Stack trace",
        "backend/routes/tickets.py",
        "1 times",
    ] {
        assert!(dom.contains(shown), "the page does not show {shown:?}:\n{dom}");
    }
    let shot = heal.work.path().join("ticket.png");
    chromium(
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=412,915",
            &page,
        ],
    );
    let png = std::fs::read(&shot).expect("the screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 4096, "{} bytes", png.len());

    let list = chromium(&profile, &["--dump-dom", &format!("{base}/view")]);
    assert!(list.contains(&format!(r#"href="tickets/{id}/view""#)), "{list}");
    assert!(list.contains("1 ticket,"), "{list}");
}

/// A body that trickles in is cut off at `--ingest-body-timeout`: answered 408 with seed 004's
/// `{"detail"}` naming why, its connection closed, nothing filed.
#[tokio::test(flavor = "multi_thread")]
async fn an_ingest_whose_body_does_not_arrive_in_time_is_answered_408_and_files_nothing() {
    let (heal, base) = intake_with("ticket-slow-body", &["--ingest-body-timeout", "1"]).await;
    let addr = base
        .trim_start_matches("http://")
        .trim_end_matches("/healer")
        .to_owned();
    let (mut reader, mut writer) = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("a connection")
        .into_split();
    let body = json!({"source": "runtime", "contract_fqn": "entity/helpdesk/ticket",
                      "error": "KeyError: 'resolution'"})
    .to_string();
    let head = format!(
        "POST /healer/ingest HTTP/1.1\r\nHost: kubeheal\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    tokio::io::AsyncWriteExt::write_all(&mut writer, head.as_bytes())
        .await
        .expect("the head is written");
    // One byte every 100 ms: the whole body would take several seconds.
    let sender = crate::support::http::trickle(writer, body.into_bytes(), Duration::from_millis(100));
    let answer = crate::support::http::read_until_closed(&mut reader, Duration::from_secs(10))
        .await
        .expect("the operator answers and closes before the body ends");
    sender.abort();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains(r#""detail":"the request body did not arrive in time""#),
        "{answer}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let all = tickets(&heal).list(&ListParams::default()).await.expect("list");
    assert!(
        all.items.is_empty(),
        "a ticket was filed from a body that never arrived"
    );
}
