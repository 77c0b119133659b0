//! HealerTicket fixes end to end (issue 15): the real operator, a bare Git repository holding
//! Specora's own meta-schemas (from `specora-core` on PyPI) and a helpdesk contract, and an
//! OpenAI-compatible model on loopback. Tier 1 is applied from the messages Specora's own
//! validator gives; seed 004's live demo (`KeyError: 'resolution'`) is proposed, approved with
//! `kubeheal ticket approve` and committed; Specora's validator judges every committed contract.
//! A model that invents properties, answers broken YAML or an invalid contract, a stale approval
//! and a rejection commit nothing.

use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kubeheal::api::healer_ticket::{HealerTicket, ProposalMethod, TicketPhase};
use serde_json::{Value, json};

use crate::heal_run::{Heal, grant_approvers_of};
use crate::healer_ticket::{post, serve_intake, tickets, wait_ticket};
use crate::notify::{PAGES, Received, SECRET, grant_secret, link, receivers, secret};
use crate::support::git::git;
use crate::support::http::serve_apart;
use crate::support::node::Hold;
use crate::support::specora::specora;

const FQN: &str = "entity/helpdesk/ticket";
const CONTRACT: &str = "domains/helpdesk/entities/ticket.contract.yaml";

/// A helpdesk ticket entity that Specora's validator accepts.
const TICKET: &str = "apiVersion: specora.dev/v1
kind: Entity
metadata:
  name: ticket
  domain: helpdesk
  description: A helpdesk ticket
spec:
  number_prefix: TKT
  fields:
    title:
      type: string
      required: true
    status:
      type: string
      enum: [open, resolved]
";

/// [`TICKET`] with the `resolution` field seed 004's model proposes, and `extra` lines in it.
fn with_resolution(extra: &str) -> String {
    format!("{TICKET}    resolution:\n      type: text\n      description: Resolution notes\n{extra}")
}

/// A model's answer as seed 004's proposer asks for it.
fn answer(contract: &str, explanation: &str) -> String {
    format!("Here is the corrected contract.\n```yaml\n{contract}```\nEXPLANATION: {explanation}\n")
}

/// An OpenAI-compatible model on loopback. Each chat is answered by the first rule whose key
/// the prompt contains: its answers in turn, the last one again once they run out. Every prompt
/// is kept.
fn model(rules: Vec<(&'static str, Vec<String>)>) -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::routing::post;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let asked: Arc<Mutex<BTreeMap<&'static str, usize>>> = Arc::default();
    let (record, rules) = (seen.clone(), Arc::new(rules));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(body): axum::Json<Value>| {
            let (record, rules, asked) = (record.clone(), rules.clone(), asked.clone());
            async move {
                let prompt = body["messages"].to_string();
                record.lock().expect("the record").push(prompt.clone());
                let content = rules
                    .iter()
                    .find(|(key, _)| prompt.contains(key))
                    .map(|(key, answers)| {
                        let mut asked = asked.lock().expect("the counts");
                        let n = asked.entry(key).or_default();
                        *n += 1;
                        answers[(*n - 1).min(answers.len() - 1)].clone()
                    })
                    .unwrap_or_else(|| "NO_FIX: no rule for this prompt".to_owned());
                axum::Json(json!({
                    "choices": [{"message": {"role": "assistant", "content": content}}],
                    "usage": {"total_tokens": 321}
                }))
            }
        }),
    );
    let addr = serve_apart(app);
    (format!("http://{addr}/v1"), seen)
}

/// An operator serving /healer whose `--ticket-target` is the test's repository (holding
/// Specora's meta-schemas and `contract`), its schemas chosen by kind, and `model`.
async fn operator(test: &str, contract: &str, model: &str) -> (Heal, String) {
    let (heal, base, _) = operator_with(test, contract, model, Extra::default()).await;
    (heal, base)
}

/// What a test's repository and operator have besides the contract and the model.
#[derive(Default)]
struct Extra<'a> {
    /// More files in the repository.
    more: &'a [(&'a str, &'a str)],
    /// More YAML lines in the `--ticket-target`.
    more_target: &'a str,
    /// The Pods the test node leaves alone.
    hold: Hold,
    /// Announce ticket transitions to loopback Slack and JSON receivers.
    notify: bool,
    /// More operator flags.
    flags: &'a [&'a str],
    /// Leave `contractSchema` out of the `--ticket-target` (a `validate` in `more_target` is
    /// then all contracts are judged by).
    without_schema: bool,
}

/// [`operator`] with `extra`; what the notification receivers got (when `extra.notify`).
async fn operator_with(test: &str, contract: &str, model: &str, extra: Extra<'_>) -> (Heal, String, Received) {
    let Extra {
        more,
        more_target,
        hold,
        notify,
        flags: more_flags,
        without_schema,
    } = extra;
    let meta = specora().meta_files();
    let mut files: Vec<(&str, &str)> = meta.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    files.push((CONTRACT, contract));
    files.extend_from_slice(more);
    let mut heal = Heal::new(test, &files, hold).await;
    let target = heal.work.path().join("ticket-target.yaml");
    let schema = if without_schema {
        ""
    } else {
        "contractSchema: spec/meta/{kind}.meta.yaml\n"
    };
    let text = format!(
        "repository:\n  url: {}\n{schema}healer:\n  openAI:\n    baseUrl: {model}\n    model: helpdesk-fixer\n{more_target}",
        heal.url()
    );
    std::fs::write(&target, text).expect("write the ticket target");
    let mut flags = vec!["--ticket-target", target.to_str().expect("a UTF-8 path")];
    let received = Received::default();
    if notify {
        let url = receivers(received.clone()).await;
        grant_secret(&heal);
        let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(heal.client.clone(), &heal.ns.name);
        secrets
            .create(
                &Default::default(),
                &secret(&[("slack", format!("{url}/slack")), ("json", format!("{url}/json"))]),
            )
            .await
            .expect("create the notification Secret");
        flags.extend(["--notify-secret", SECRET, "--ticket-page-url", PAGES]);
    }
    flags.extend_from_slice(more_flags);
    let base = serve_intake(&mut heal, &flags).await;
    (heal, base, received)
}

/// A browser's session on the ticket pages: its cookie, and the CSRF token its page carries.
#[derive(Clone)]
struct Session {
    cookie: String,
    csrf: String,
    /// The patch the page showed, which its forms name.
    digest: String,
}

/// A form's body as a browser sends it (`application/x-www-form-urlencoded`).
fn form(fields: &[(&str, &str)]) -> String {
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => (b as char).to_string(),
                b' ' => "+".to_owned(),
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The text of a page, with the session's cookie when there is one.
async fn page_text(url: &str, session: Option<&Session>) -> String {
    let mut request = crate::support::http::client().get(url);
    if let Some(session) = session {
        request = request.header("cookie", &session.cookie);
    }
    let response = request.send().await.expect("the page answers");
    response.text().await.expect("a page")
}

/// Signs in on the sign-in form with `token`, as a browser does, and reads the CSRF token from
/// the ticket's page.
async fn sign_in(base: &str, token: &str, id: &str) -> Session {
    // As a browser gets there: the ticket page's link, then the sign-in page's form.
    let page_url = reqwest::Url::parse(&format!("{base}/tickets/{id}/view")).expect("a URL");
    let page = page_text(page_url.as_str(), None).await;
    let href = regex::Regex::new(r#"href="([^"]*sign-in[^"]*)""#)
        .expect("a regex")
        .captures(&page)
        .map(|c| c[1].replace("&amp;", "&"))
        .unwrap_or_else(|| panic!("no sign-in link on the page:\n{page}"));
    let sign_in_url = page_url.join(&href).expect("the link resolves");
    let form_page = page_text(sign_in_url.as_str(), None).await;
    let action = regex::Regex::new(r#"<form method="post" action="([^"]+)""#)
        .expect("a regex")
        .captures(&form_page)
        .map(|c| c[1].to_owned())
        .unwrap_or_else(|| panic!("no sign-in form:\n{form_page}"));
    let next = regex::Regex::new(r#"name="next" value="([^"]+)""#)
        .expect("a regex")
        .captures(&form_page)
        .map(|c| c[1].to_owned())
        .expect("where to go back to");
    let response = crate::support::http::client()
        .post(sign_in_url.join(&action).expect("the action resolves"))
        .header("sec-fetch-site", "same-origin")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", token), ("next", &next)]))
        .send()
        .await
        .expect("the sign-in answers");
    assert_eq!(response.status().as_u16(), 303, "{:?}", response.text().await);
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("back to the page")
        .to_owned();
    assert_eq!(
        sign_in_url.join(&location).expect("resolves"),
        page_url,
        "back to the ticket's page"
    );
    let set = response
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .expect("a session cookie")
        .to_owned();
    assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"), "{set}");
    let cookie = set.split(';').next().expect("name=value").to_owned();
    let page = page_text(
        page_url.as_str(),
        Some(&Session {
            cookie: cookie.clone(),
            csrf: String::new(),
            digest: String::new(),
        }),
    )
    .await;
    let field = |name: &str| {
        regex::Regex::new(&format!(r#"name="{name}" value="([^"]+)""#))
            .expect("a regex")
            .captures(&page)
            .map(|c| c[1].to_owned())
            .unwrap_or_else(|| panic!("no approve form for the signed-in person:\n{page}"))
    };
    Session {
        cookie,
        csrf: field("csrf"),
        digest: field("patch_digest"),
    }
}

/// Posts the page's approve (or reject) form; the answer's status and `Location`.
async fn decide_on_page(base: &str, id: &str, session: &Session, verb: &str, origin: Option<&str>) -> (u16, String) {
    let mut request = crate::support::http::client()
        .post(format!("{base}/{verb}/{id}/action"))
        .header("cookie", &session.cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("csrf", session.csrf.as_str()),
            ("patch_digest", session.digest.as_str()),
            ("reason", ""),
        ]));
    request = match origin {
        Some(origin) => request.header("origin", origin).header("sec-fetch-site", "cross-site"),
        None => request.header("sec-fetch-site", "same-origin"),
    };
    let response = request.send().await.expect("the form answers");
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (response.status().as_u16(), location)
}

/// `kubeheal ticket ARGS -n <namespace>` as `user`.
fn kubeheal_as(heal: &Heal, user: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .arg("ticket")
        .args(args)
        .args(["-n", heal.ns.name.as_str()])
        .env("KUBECONFIG", heal.plane.kubeconfig_as(user))
        .output()
        .expect("kubeheal runs")
}

fn phase_is(phase: TicketPhase) -> impl Fn(&HealerTicket) -> bool {
    move |t| t.status.as_ref().and_then(|s| s.phase) == Some(phase)
}

/// Waits until the ticket `id` has a proposal; a ticket that fails instead fails the test with
/// its resolution note.
async fn wait_proposed(heal: &Heal, id: &str) -> HealerTicket {
    let ticket = wait_ticket(heal, id, "proposed", |t| {
        phase_is(TicketPhase::Proposed)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    assert!(phase_is(TicketPhase::Proposed)(&ticket), "{}", note(&ticket));
    ticket
}

fn note(ticket: &HealerTicket) -> String {
    ticket
        .status
        .as_ref()
        .and_then(|s| s.resolution_note.clone())
        .unwrap_or_default()
}

/// A runtime 500 of the helpdesk app, as its exception handler reports it.
fn runtime_error(error: &str, context: Value) -> Value {
    json!({
        "source": "runtime",
        "contract_fqn": FQN,
        "error": error,
        "stacktrace": format!("Traceback (most recent call last):\n  File \"backend/routes/tickets.py\", line 88, in patch_ticket\n    ticket[\"resolution\"] = body[\"resolution\"]\n{error}\n"),
        "context": context,
    })
}

async fn ingest(base: &str, body: &Value) -> String {
    let (code, answer) = post(base, body).await;
    assert_eq!(code, 202, "{answer}");
    answer["ticket_id"].as_str().expect("a ticket id").to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn tier_1_errors_from_specoras_own_validator_are_normalised_and_committed_one_ticket_one_fix() {
    let broken = TICKET.replace("number_prefix: TKT", "number_prefix: tkt").replace(
        "    status:\n",
        "    assignee:\n      type: uuid\n      references: {entity: entity/helpdesk/user, display: name, graph_edge: assigned_to}\n    status:\n",
    );
    let errors = specora().validate(&broken);
    assert_eq!(errors.len(), 2, "specora finds both: {errors:?}");
    let (model, asked) = model(vec![]);
    let (heal, base) = operator("ticket-tier1", &broken, &model).await;

    // Filed as Specora's `healer validate` files them: the message, the FQN, the path.
    let mut ids = Vec::new();
    for (path, message) in &errors {
        let body = json!({"source": "validation", "contract_fqn": FQN, "error": message,
                          "context": {"path": path, "source_path": CONTRACT}});
        ids.push((path.clone(), ingest(&base, &body).await));
    }
    for (path, id) in &ids {
        let ticket = wait_ticket(&heal, id, "applied", |t| {
            phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
        })
        .await;
        let status = ticket.status.clone().expect("a status");
        assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&ticket));
        let classification = status.classification.expect("classified");
        assert_eq!(classification.tier, 1, "{path}");
        let proposal = status.proposal.expect("a proposal");
        assert_eq!(proposal.method, ProposalMethod::Deterministic);
        assert_eq!(proposal.confidence, 1.0);
        let expected = if path == "spec.number_prefix" {
            "spec.number_prefix: tkt -> TKT"
        } else {
            "spec.fields.assignee.references.graph_edge: assigned_to -> ASSIGNED_TO"
        };
        assert_eq!(proposal.changes, [expected], "{path}");
        let apply = status.apply.expect("applied");
        let branch = apply.branch.expect("a branch");
        assert_eq!(branch, format!("kubeheal/{id}"));
        let commit = apply.commit.expect("a commit");
        assert_eq!(git(&heal.origin, &["rev-parse", &branch]), commit);
        let message = git(&heal.origin, &["log", "-1", "--format=%B", &branch]);
        assert!(
            message.starts_with(&format!("fix({FQN}): Deterministic normalization: {expected}"))
                && message.contains(&format!("Kubeheal-Ticket: {id}"))
                && message.contains(&format!("Kubeheal-Patch: {}", proposal.patch_digest)),
            "{message}"
        );
        // The commit changes that one line, the contract's layout kept.
        let stat = git(&heal.origin, &["diff", "--shortstat", "main", &branch]);
        assert_eq!(stat, "1 file changed, 1 insertion(+), 1 deletion(-)", "{branch}");
        // Specora's validator on the committed contract: this ticket's error is gone, the other
        // ticket's is still there (it has its own branch).
        let fixed = heal.file_on_branch(&branch, CONTRACT);
        let left = specora().validate(&fixed);
        assert_eq!(left.len(), 1, "{left:?}\n{fixed}");
        assert_ne!(&left[0].0, path, "{left:?}");
    }
    assert!(asked.lock().expect("the record").is_empty(), "tier 1 asks no model");
    let status = crate::healer_ticket::get_json(format!("{base}/status")).await;
    assert_eq!(status["success_rate"]["tier_1"], 1.0, "{status}");
    // The default branch is untouched.
    assert_eq!(heal.file_on_branch("main", CONTRACT), broken.trim_end());
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_004s_live_demo_is_proposed_with_invented_properties_removed_approved_by_a_person_and_committed() {
    let secret = "ghp_R2x8kQ7vLw3mZp9TnB4cY6dHs1aFj0eUiKoX";
    let proposed = with_resolution("      required_when: \"status == resolved\"\n");
    let (model, asked) = model(vec![(
        "KeyError: 'resolution'",
        vec![answer(
            &proposed,
            "Add 'resolution' field (type: text) to fix KeyError on PATCH.",
        )],
    )]);
    let (heal, base, received) = operator_with(
        "ticket-demo",
        TICKET,
        &model,
        Extra {
            notify: true,
            ..Extra::default()
        },
    )
    .await;
    grant_approvers_of(&heal, "healertickets");
    let id = ingest(
        &base,
        &runtime_error(
            "KeyError: 'resolution'",
            json!({"request_path": "/tickets/abc", "method": "PATCH", "status_code": 500,
                   "authorization": format!("token {secret}")}),
        ),
    )
    .await;
    let ticket = wait_proposed(&heal, &id).await;
    let status = ticket.status.clone().expect("a status");
    let classification = status.classification.expect("classified");
    assert_eq!(
        (classification.error_type.as_str(), classification.tier),
        ("runtime_500", 3)
    );
    let proposal = status.proposal.expect("a proposal");
    assert_eq!(
        (proposal.method, proposal.confidence),
        (ProposalMethod::LlmRuntime, 0.5)
    );
    assert_eq!(proposal.removed, ["spec.fields.resolution.required_when"]);
    assert_eq!(
        proposal.changes,
        ["added: spec.fields.resolution = {type: text, description: Resolution notes}"]
    );
    assert_eq!(proposal.before.as_deref(), Some(TICKET));
    assert!(
        !proposal.after.as_deref().unwrap_or_default().contains("required_when"),
        "{proposal:?}"
    );
    // What reached the model: the contract, the error, its trace and context — not the secret.
    let prompts = asked.lock().expect("the record").clone();
    assert_eq!(prompts.len(), 1, "one answer was enough: {prompts:?}");
    for part in [
        "number_prefix: TKT",
        "KeyError: 'resolution'",
        "patch_ticket",
        "request_path",
        "required_when or conditional_required",
    ] {
        assert!(prompts[0].contains(part), "{part} not in the prompt: {}", prompts[0]);
    }
    assert!(
        !prompts[0].contains(secret),
        "the secret reached the model: {}",
        prompts[0]
    );

    // Seed 004's walkthrough: the page the notification links to, signed in with a person's
    // own token. bob's approval is refused by the API server; alice's applies the fix.
    let page = format!("{base}/tickets/{id}/view");
    let anonymous = page_text(&page, None).await;
    assert!(
        anonymous.contains("Sign in") && !anonymous.contains("name=\"csrf\""),
        "{anonymous}"
    );
    let bob = sign_in(&base, "kubeheal-test-bob-token", &id).await;
    let (code, location) = decide_on_page(&base, &id, &bob, "approve", None).await;
    assert_eq!(code, 303);
    assert!(location.ends_with("?error=forbidden"), "{location}");
    assert_eq!(tickets(&heal).get(&id).await.expect("the ticket").spec.decision, None);
    let alice = sign_in(&base, "kubeheal-test-alice-token", &id).await;
    let signed_in = page_text(&page, Some(&alice)).await;
    assert!(signed_in.contains("Signed in as <strong>alice</strong>"), "{signed_in}");
    assert!(
        signed_in.contains(&proposal.patch_digest),
        "the page shows the patch approved"
    );
    assert!(
        signed_in.contains("+    resolution:"),
        "the page shows the diff: {signed_in}"
    );
    // A form without the page's CSRF token, or from another site, decides nothing.
    let forged = Session {
        csrf: "0".repeat(32),
        ..alice.clone()
    };
    let (code, _) = decide_on_page(&base, &id, &forged, "approve", None).await;
    assert_eq!(code, 403);
    // A form naming another patch than the proposal's (the page was stale) decides nothing.
    let stale = Session {
        digest: format!("sha256:{}", "1".repeat(64)),
        ..alice.clone()
    };
    let (code, location) = decide_on_page(&base, &id, &stale, "approve", None).await;
    assert_eq!((code, location.ends_with("?error=changed")), (303, true), "{location}");
    let flash = page_text(&format!("{page}?error=changed"), Some(&alice)).await;
    assert!(
        flash.contains("The proposal changed since this page was shown"),
        "{flash}"
    );
    let (code, _) = decide_on_page(&base, &id, &alice, "approve", Some("https://evil.example")).await;
    assert_eq!(code, 403);
    assert_eq!(tickets(&heal).get(&id).await.expect("the ticket").spec.decision, None);
    let (code, location) = decide_on_page(&base, &id, &alice, "approve", None).await;
    assert_eq!(
        (code, location.as_str()),
        (303, format!("../../tickets/{id}/view?done=approved").as_str())
    );
    let ticket = wait_ticket(&heal, &id, "applied", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = ticket.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&ticket));
    let apply = status.apply.expect("applied");
    let branch = apply.branch.expect("a branch");
    let fixed = heal.file_on_branch(&branch, CONTRACT);
    assert_eq!(Some(fixed.as_str()), proposal.after.as_deref().map(str::trim_end));
    assert_eq!(specora().validate(&fixed), Vec::<(String, String)>::new(), "{fixed}");
    let message = git(&heal.origin, &["log", "-1", "--format=%B", &branch]);
    assert!(
        message.starts_with(&format!(
            "fix({FQN}): Add 'resolution' field (type: text) to fix KeyError on PATCH."
        )) && message.contains("Approved-by: alice"),
        "{message}"
    );
    assert_eq!(heal.file_on_branch("main", CONTRACT).trim_end(), TICKET.trim_end());

    // Seed 004's notifications: the proposal and the apply, each once, linking to the page.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while received.about("json", &id).len() < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    received.assert_no_violation();
    let events: Vec<String> = received
        .about("json", &id)
        .iter()
        .map(|p| p["event"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(events, ["proposed", "applied"]);
    let proposed = &received.about("json", &id)[0];
    assert_eq!(proposed["url"], link(&id).as_str());
    assert!(
        proposed["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Add 'resolution' field"),
        "{proposed}"
    );
    let slack = received.about("slack", &id);
    assert!(
        slack
            .first()
            .and_then(|p| p["text"].as_str())
            .is_some_and(|t| t.starts_with("[proposed]")),
        "{slack:?}"
    );
    assert!(
        !received
            .payloads
            .lock()
            .expect("the record")
            .iter()
            .any(|(_, p)| p.to_string().contains(secret))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_answers_invalid_contracts_stale_approvals_and_rejections_commit_nothing() {
    let good = answer(&with_resolution(""), "Add resolution.");
    let (model, _) = model(vec![
        (
            "KeyError: 'broken'",
            vec![
                "```yaml\nkind: [Entity\n```".to_owned(),
                "I would rather not.".to_owned(),
            ],
        ),
        (
            "KeyError: 'badtype'",
            vec![answer(
                &TICKET.replace(
                    "type: string\n      required: true",
                    "type: texte\n      required: true",
                ),
                "Retype the title.",
            )],
        ),
        ("KeyError: 'stale'", vec![good.clone()]),
        ("KeyError: 'unwanted'", vec![good]),
    ]);
    let (heal, base) = operator("ticket-refused", TICKET, &model).await;
    grant_approvers_of(&heal, "healertickets");
    let context = json!({"status_code": 500});
    let broken = ingest(&base, &runtime_error("KeyError: 'broken'", context.clone())).await;
    let badtype = ingest(&base, &runtime_error("KeyError: 'badtype'", context.clone())).await;
    let stale = ingest(&base, &runtime_error("KeyError: 'stale'", context.clone())).await;
    let unwanted = ingest(&base, &runtime_error("KeyError: 'unwanted'", context)).await;

    let failed = wait_ticket(&heal, &broken, "failed", phase_is(TicketPhase::Failed)).await;
    let why = note(&failed);
    assert!(
        why.contains("not valid YAML") && why.contains("asked more simply") && why.contains("no YAML mapping"),
        "{why}"
    );
    let failed = wait_ticket(&heal, &badtype, "failed", phase_is(TicketPhase::Failed)).await;
    let why = note(&failed);
    assert!(why.contains("fails validation") && why.contains("texte"), "{why}");

    // An approval of another patch than the one proposed applies nothing.
    let proposed = wait_ticket(&heal, &stale, "proposed", phase_is(TicketPhase::Proposed)).await;
    let digest = proposed
        .status
        .and_then(|s| s.proposal)
        .expect("a proposal")
        .patch_digest;
    let other = format!("sha256:{}", "0".repeat(64));
    assert_ne!(digest, other);
    let decision = json!({"spec": {"decision": {"decision": "Approved", "approvedBy": "alice", "patchDigest": other}}});
    let out = heal.plane.kubectl_as(
        "alice",
        [
            "patch",
            "healerticket",
            &stale,
            "-n",
            &heal.ns.name,
            "--type=merge",
            "-p",
            &decision.to_string(),
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let failed = wait_ticket(&heal, &stale, "failed", phase_is(TicketPhase::Failed)).await;
    let why = note(&failed);
    assert!(
        why.contains(&format!("is for patch {other}")) && why.contains("nothing was applied"),
        "{why}"
    );

    // Over the /healer API a decision is taken as the person whose token the request carries:
    // none is refused, bob's is refused by the API server, alice's rejection ends it with the
    // reason.
    wait_ticket(&heal, &unwanted, "proposed", phase_is(TicketPhase::Proposed)).await;
    let http = crate::support::http::client();
    let decide = |verb: &str, token: Option<&str>, body: Value| {
        let mut request = http.post(format!("{base}/{verb}/{unwanted}")).json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.expect("the /healer API answers");
            let code = response.status().as_u16();
            (code, response.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let (code, answer) = decide("approve", None, json!({})).await;
    assert_eq!(code, 401, "{answer}");
    let challenge = http
        .post(format!("{base}/approve/{unwanted}"))
        .json(&json!({}))
        .send()
        .await
        .expect("the /healer API answers");
    assert_eq!(
        challenge
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer realm=\"kubeheal\""),
        "a 401 says how to authenticate"
    );
    assert!(
        answer["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("your Kubernetes token"),
        "{answer}"
    );
    let (code, answer) = decide("approve", Some("kubeheal-test-bob-token"), json!({})).await;
    assert_eq!(code, 403, "{answer}");
    assert!(
        answer["detail"].as_str().unwrap_or_default().contains("bob"),
        "{answer}"
    );
    let (code, answer) = decide("reject", Some("kubeheal-test-alice-token"), json!({})).await;
    assert_eq!(code, 422, "a rejection without a reason: {answer}");
    let (code, answer) = decide(
        "reject",
        Some("kubeheal-test-alice-token"),
        json!({"reason": "add a workflow guard instead"}),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(
        (answer["status"].as_str(), answer["approved_by"].as_str()),
        (Some("rejected"), Some("alice"))
    );
    let (code, answer) = decide("approve", Some("kubeheal-test-alice-token"), json!({})).await;
    assert_eq!(code, 409, "decided already: {answer}");
    let rejected = wait_ticket(&heal, &unwanted, "rejected", phase_is(TicketPhase::Rejected)).await;
    assert_eq!(note(&rejected), "Rejected by alice: add a workflow guard instead");

    // Nothing reached the repository.
    let branches = git(&heal.origin, &["branch", "--list", "kubeheal/*"]);
    assert_eq!(branches, "", "branches were pushed");
}

/// A small app whose tests pass, and the runtime error they do not cover.
const TICKETS_PY: &str = "def close(ticket, body):\n    ticket[\"status\"] = \"resolved\"\n    ticket[\"resolution\"] = body[\"resolution\"]\n    return ticket\n";
const TICKETS_FIXED: &str = "def close(ticket, body):\n    ticket[\"status\"] = \"resolved\"\n    ticket[\"resolution\"] = body.get(\"resolution\", \"\")\n    return ticket\n";
const TICKETS_TEST: &str = "from helpdesk.tickets import close\n\n\ndef test_close_records_the_resolution():\n    assert close({}, {\"resolution\": \"fixed\"})[\"resolution\"] == \"fixed\"\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_runtime_error_in_an_apps_own_code_becomes_a_heal_run_that_heals_it_and_the_ticket_ends_applied() {
    let files = [
        ("helpdesk/__init__.py", ""),
        ("helpdesk/tickets.py", TICKETS_PY),
        ("test_tickets.py", TICKETS_TEST),
    ];
    let (healer, calls) = crate::heal_run::counting_healer(json!({ "helpdesk/tickets.py": TICKETS_FIXED })).await;
    let mut heal = Heal::new("ticket-code", &files, Hold::default()).await;
    heal.start_operator();
    // The app's error handler reports the 500 with its trace (paths as the container saw them),
    // to a ticket whose fix is a HealRun of the app's repository.
    let trace = "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.12/site-packages/starlette/routing.py\", line 74, in app\n    response = await func(request)\n  File \"/srv/app/helpdesk/tickets.py\", line 3, in close\n    ticket[\"resolution\"] = body[\"resolution\"]\nKeyError: 'resolution'\n";
    let ticket: HealerTicket = serde_json::from_value(json!({
        "apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealerTicket",
        "metadata": {"name": "close-without-resolution"},
        "spec": {"source": "runtime", "error": "KeyError: 'resolution'", "stacktrace": trace,
                 "context": {"request_path": "/tickets/7/close", "method": "POST", "status_code": "500"},
                 "target": {"path": "helpdesk/tickets.py", "healRun": heal.spec(&healer, json!({}))}}
    }))
    .expect("a ticket");
    tickets(&heal)
        .create(&Default::default(), &ticket)
        .await
        .expect("the ticket is created");
    let id = "close-without-resolution";
    let done = wait_ticket(&heal, id, "applied", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = done.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&done));
    let classification = status.classification.expect("classified");
    assert_eq!(
        (classification.error_type.as_str(), wire(&classification.fixable_by)),
        ("runtime_500", "code".to_owned())
    );
    // The run it owns healed the incident: the healer was asked about the frame in the app's
    // code, and the fix is on the run's branch.
    let runs: kube::Api<kubeheal::api::heal_run::HealRun> = kube::Api::namespaced(heal.client.clone(), &heal.ns.name);
    let run = runs.get(&format!("{id}-heal")).await.expect("the ticket's HealRun");
    assert_eq!(
        run.metadata
            .owner_references
            .as_ref()
            .and_then(|o| o.first())
            .map(|o| o.name.as_str()),
        Some(id)
    );
    let run_status = run.status.expect("a run status");
    let baseline = run_status.baseline.expect("a baseline");
    let at: Vec<(&str, u32)> = baseline
        .bug_reports
        .iter()
        .map(|r| (r.file_path.as_str(), r.line_number))
        .collect();
    assert_eq!(at, [("helpdesk/tickets.py", 3)]);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    let apply = status.apply.expect("applied");
    let branch = apply.branch.expect("a branch");
    assert_eq!(
        heal.file_on_branch(&branch, "helpdesk/tickets.py"),
        TICKETS_FIXED.trim_end()
    );
    assert_eq!(apply.commit, run_status.result.and_then(|r| r.commit));
}

fn wire<T: serde::Serialize>(value: &T) -> String {
    kubeheal::api::shared::wire_name(value)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apply_interrupted_after_its_push_finds_its_commit_instead_of_committing_twice() {
    let (model, _) = model(vec![(
        "KeyError: 'resolution'",
        vec![answer(&with_resolution(""), "Add resolution.")],
    )]);
    let (mut heal, base) = operator("ticket-crash", TICKET, &model).await;
    grant_approvers_of(&heal, "healertickets");
    let id = ingest(
        &base,
        &runtime_error("KeyError: 'resolution'", json!({"status_code": 500})),
    )
    .await;
    let proposed = wait_ticket(&heal, &id, "proposed", phase_is(TicketPhase::Proposed)).await;
    let proposal = proposed.status.and_then(|s| s.proposal).expect("a proposal");

    // The operator stops; the state an apply killed between its push and its status write
    // leaves: the fix committed with its trailers and pushed, the ticket still Proposed.
    heal.kill_operator();
    let work = tempfile::tempdir().expect("a temp dir");
    git(work.path(), &["clone", "-q", &heal.url(), "w"]);
    let clone = work.path().join("w");
    let branch = format!("kubeheal/{id}");
    git(&clone, &["checkout", "-q", "-b", &branch]);
    std::fs::write(clone.join(CONTRACT), proposal.after.as_deref().expect("after")).expect("write");
    let message = format!(
        "fix({FQN}): Add resolution.\n\nKubeheal-Ticket: {id}\nKubeheal-Patch: {}\n",
        proposal.patch_digest
    );
    git(&clone, &["commit", "-qam", &message]);
    git(&clone, &["push", "-q", "origin", &branch]);
    let pushed = git(&clone, &["rev-parse", "HEAD"]);
    let approved = kubeheal_as(&heal, "alice", &["approve", &id]);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );

    // Started again, it finds that commit: the ticket is applied with it, and nothing more.
    let status = restarted_until_applied(&mut heal, &id).await;
    assert_eq!(status.apply.and_then(|a| a.commit), Some(pushed.clone()));
    assert_eq!(git(&heal.origin, &["rev-parse", &branch]), pushed);
    assert_eq!(
        git(&heal.origin, &["rev-list", "--count", &format!("main..{branch}")]),
        "1"
    );
}

/// A generator of the repository's own (run by the test node as a host process, so with the
/// host's `python3`): for every contract under `domains/`, `generated/<name>_model.py` with one
/// line per field. It reads the YAML by its lines (the host's python3 may
/// have no YAML library), which is enough for the contracts here.
const GENERATE_PY: &str = r#"import os, pathlib

print("regenerating after the fix of", os.environ["KUBEHEAL_CONTRACT_FQN"], "in", os.environ["KUBEHEAL_CONTRACT"])
for contract in sorted(pathlib.Path("domains").rglob("*.contract.yaml")):
    name = contract.name[: -len(".contract.yaml")]
    fields, base, indent = [], None, None
    for line in contract.read_text().splitlines():
        depth = len(line) - len(line.lstrip())
        if line.strip() == "fields:":
            base = depth
            continue
        if base is None or not line.strip():
            continue
        if depth <= base:
            base = None
            continue
        indent = indent or depth
        if depth == indent:
            fields.append(line.strip().split(":")[0])
    out = pathlib.Path("generated") / (name + "_model.py")
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join("%s = None\n" % f for f in fields))
"#;

/// What [`GENERATE_PY`] writes for `fields`.
fn generated(fields: &[&str]) -> String {
    fields.iter().map(|f| format!("{f} = None\n")).collect()
}

const MODEL: &str = "generated/ticket_model.py";

/// The regeneration's time limit the tests' targets give (not the default 600).
const REGENERATE_SECONDS: i64 = 900;

/// The `--ticket-target` lines that run `command` after each fix.
fn regenerate(command: &str) -> String {
    format!("regenerate:\n  image: python:3.12-slim\n  command: {command}\n  timeoutSeconds: {REGENERATE_SECONDS}\n")
}

/// Specora's validator's tier-1 ticket for `contract`'s `spec.number_prefix`, ingested.
async fn ingest_prefix_error(base: &str, contract: &str) -> String {
    let errors = specora().validate(contract);
    let (path, message) = errors
        .iter()
        .find(|(path, _)| path == "spec.number_prefix")
        .unwrap_or_else(|| panic!("specora finds the prefix: {errors:?}"));
    let body = json!({"source": "validation", "contract_fqn": FQN, "error": message,
                      "context": {"path": path, "source_path": CONTRACT}});
    ingest(base, &body).await
}

/// The regeneration Job of ticket `id`: named after it, owned by it, and stopped after the
/// target's `timeoutSeconds`.
async fn regeneration_job(heal: &Heal, id: &str) -> k8s_openapi::api::batch::v1::Job {
    let jobs: kube::Api<k8s_openapi::api::batch::v1::Job> = kube::Api::namespaced(heal.client.clone(), &heal.ns.name);
    let job = jobs
        .get(&format!("{id}-regenerate"))
        .await
        .expect("the ticket's regeneration Job");
    let owner = job.metadata.owner_references.clone().unwrap_or_default();
    assert_eq!(
        owner
            .iter()
            .map(|o| (o.kind.as_str(), o.name.as_str()))
            .collect::<Vec<_>>(),
        [("HealerTicket", id)]
    );
    assert_eq!(
        job.spec.as_ref().and_then(|s| s.active_deadline_seconds),
        Some(REGENERATE_SECONDS),
        "the target's regenerate.timeoutSeconds is the Job's deadline"
    );
    job
}

/// `kubeheal ticket ARGS` as alice (an approval), then waits until the ticket ends: its
/// status, once it is `Applied`.
async fn approved_until_applied(heal: &Heal, args: &[&str]) -> kubeheal::api::healer_ticket::HealerTicketStatus {
    let approved = kubeheal_as(heal, "alice", args);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    until_applied(heal, args.get(1).expect("the ticket's name")).await
}

/// Waits until ticket `id` ends: its status, once it is `Applied`.
async fn until_applied(heal: &Heal, id: &str) -> kubeheal::api::healer_ticket::HealerTicketStatus {
    let done = wait_ticket(heal, id, "applied", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = done.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&done));
    status
}

/// Starts the test's operator again, with the ticket target `operator_with` wrote, and waits
/// until ticket `id` ends: its status, once it is `Applied`.
async fn restarted_until_applied(heal: &mut Heal, id: &str) -> kubeheal::api::healer_ticket::HealerTicketStatus {
    let target = heal.work.path().join("ticket-target.yaml");
    serve_intake(heal, &["--ticket-target", target.to_str().expect("a UTF-8 path")]).await;
    until_applied(heal, id).await
}

/// An operator whose target regenerates code with `generate.py` after each fix, and seed 004's
/// live demo ingested and proposed (the contract has a tier-1 error too: its fix changes nothing
/// the generator writes): the test's operator, the /healer API, the ticket.
async fn live_demo_with_a_generator(test: &str) -> (Heal, String, String) {
    let contract = TICKET.replace("number_prefix: TKT", "number_prefix: tkt");
    let (model, _) = model(vec![(
        "KeyError: 'resolution'",
        vec![answer(
            &with_resolution("").replace("number_prefix: TKT", "number_prefix: tkt"),
            "Add 'resolution' field (type: text) to fix KeyError on PATCH.",
        )],
    )]);
    let (heal, base, _) = operator_with(
        test,
        &contract,
        &model,
        Extra {
            more: &[("generate.py", GENERATE_PY), (MODEL, &generated(&["title", "status"]))],
            more_target: &regenerate("python3 generate.py"),
            hold: Hold::default(),
            ..Extra::default()
        },
    )
    .await;
    grant_approvers_of(&heal, "healertickets");
    let id = ingest(
        &base,
        &runtime_error("KeyError: 'resolution'", json!({"status_code": 500})),
    )
    .await;
    wait_ticket(&heal, &id, "proposed", phase_is(TicketPhase::Proposed)).await;
    (heal, base, id)
}

/// Applies an admission policy that refuses, in the test's namespace, every status write that
/// records a regeneration's result — the write that follows the regeneration commit's push — and
/// waits until the API server enforces it. Returns the policy's name, for [`release_status`].
fn hold_regeneration_status(heal: &Heal) -> String {
    let name = format!("hold-regenerated-{}", heal.ns.name);
    let policy = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": ["kubeheal.dev"], "apiVersions": ["*"],
                "operations": ["UPDATE"], "resources": ["healertickets/status"]}]},
            "validations": [{"expression": "!(has(object.status.regenerate) && has(object.status.regenerate.result))",
                "message": "held by the test: the operator is stopped between its push and this write"}]
        }
    });
    let binding = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": heal.ns.name}}}}
    });
    for (kind, object) in [("policy", policy), ("binding", binding)] {
        let file = heal.work.path().join(format!("hold-{kind}.json"));
        std::fs::write(&file, object.to_string()).expect("write the manifest");
        let out = heal
            .plane
            .kubectl(["apply", "-f", file.to_str().expect("a UTF-8 path")]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    name
}

/// Whether the API server refuses now what [`hold_regeneration_status`] holds: a server-side dry
/// run of such a write to ticket `id`.
fn status_write_held(heal: &Heal, id: &str) -> bool {
    let out = heal.plane.kubectl([
        "patch",
        "healerticket",
        id,
        "-n",
        &heal.ns.name,
        "--subresource=status",
        "--type=merge",
        "--dry-run=server",
        "-p",
        r#"{"status":{"regenerate":{"result":"probe"}}}"#,
    ]);
    !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("held by the test")
}

fn release_status(heal: &Heal, name: &str) {
    for kind in ["validatingadmissionpolicybinding", "validatingadmissionpolicy"] {
        let out = heal.plane.kubectl(["delete", kind, name, "--wait=true"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_regeneration_killed_between_its_push_and_its_status_write_is_found_by_its_trailers_not_made_twice() {
    let (mut heal, _, id) = live_demo_with_a_generator("ticket-regen-crash").await;

    // The API server refuses the write that records the regeneration: the operator really
    // commits, pushes, and is killed before anything says so.
    let policy = hold_regeneration_status(&heal);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !status_write_held(&heal, &id) {
        assert!(
            Instant::now() < deadline,
            "the API server never enforced the test's policy"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let approved = kubeheal_as(&heal, "alice", &["approve", &id]);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let branch = format!("kubeheal/{id}");
    let deadline = Instant::now() + Duration::from_secs(120);
    // The branch appears with the fix, then the regeneration follows it.
    let commits_on_branch = || {
        Command::new("git")
            .args(["rev-list", "--count", &format!("main..refs/heads/{branch}"), "--"])
            .current_dir(&heal.origin)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    while commits_on_branch().as_deref() != Some("2") {
        assert!(
            Instant::now() < deadline,
            "the regeneration was never pushed:\n{}",
            heal.operator.as_ref().map(|p| p.log_tail(60)).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let pushed = git(&heal.origin, &["rev-parse", &branch]);
    // Its write refused at least once (it retries), the operator is killed.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !heal
        .operator
        .as_ref()
        .is_some_and(|p| p.log_tail(200).contains("held by the test"))
    {
        assert!(
            Instant::now() < deadline,
            "the operator never tried to record the regeneration"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    heal.kill_operator();
    let ticket = tickets(&heal).get(&id).await.expect("the ticket");
    let status = ticket.status.expect("a status");
    assert_ne!(status.phase, Some(TicketPhase::Applied));
    assert_eq!(
        status.regenerate.and_then(|r| r.commit),
        None,
        "nothing recorded the push"
    );

    // Started again, it finds the pushed commit by its trailers: the ticket is applied with it,
    // and the branch has no second regeneration.
    release_status(&heal, &policy);
    let status = restarted_until_applied(&mut heal, &id).await;
    let regenerate = status.regenerate.expect("the regeneration's status");
    assert_eq!(regenerate.commit.as_deref(), Some(pushed.as_str()));
    assert_eq!(regenerate.result.as_deref(), Some("1 file regenerated"));
    assert_eq!(git(&heal.origin, &["rev-parse", &branch]), pushed);
    assert_eq!(
        git(&heal.origin, &["rev-list", "--count", &format!("main..{branch}")]),
        "2",
        "the fix and one regeneration"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_fix_the_repositorys_generators_run_and_their_code_is_committed_after_it_with_the_count() {
    // Seed 004's live demo, approved by alice: the fix, then the code it changes.
    let (heal, base, id) = live_demo_with_a_generator("ticket-regen").await;
    let contract = TICKET.replace("number_prefix: TKT", "number_prefix: tkt");
    let before = generated(&["title", "status"]);
    let status = approved_until_applied(&heal, &["approve", &id]).await;
    let branch = format!("kubeheal/{id}");
    assert_eq!(
        git(&heal.origin, &["rev-list", "--count", &format!("main..{branch}")]),
        "2",
        "the fix and the regenerated code"
    );
    let tip = git(&heal.origin, &["rev-parse", &branch]);
    let fix = git(&heal.origin, &["rev-parse", &format!("{branch}~1")]);
    assert_eq!(status.apply.as_ref().and_then(|a| a.commit.clone()), Some(fix.clone()));
    let regenerate = status.regenerate.clone().expect("the regeneration's status");
    assert_eq!(regenerate.result.as_deref(), Some("1 file regenerated"));
    assert_eq!(regenerate.commit.as_deref(), Some(tip.as_str()));
    assert_eq!(regenerate.job_name, Some(format!("{id}-regenerate")));
    regeneration_job(&heal, &id).await;
    assert_eq!(
        heal.file_on_branch(&branch, MODEL),
        generated(&["title", "status", "resolution"]).trim_end()
    );
    let message = git(&heal.origin, &["log", "-1", "--format=%B", &branch]);
    assert!(
        message.starts_with(&format!("regenerate({FQN}): 1 file\n"))
            && message.contains(&format!("- {MODEL}"))
            && message.contains(&format!("Kubeheal-Ticket: {id}"))
            && message.contains(&format!("Kubeheal-Regenerated-From: {fix}")),
        "{message}"
    );
    assert_eq!(
        git(&heal.origin, &["diff", "--name-only", &fix, &branch]),
        MODEL,
        "the second commit holds the generated code only"
    );
    let why = status.resolution_note.clone().unwrap_or_default();
    assert!(why.contains("1 file regenerated"), "{why}");
    // Seed 004's ticket detail says so, over HTTP and in `kubeheal ticket show` alike, and the
    // ticket's page shows it.
    let described = described_as(&base, &id, "applied").await;
    assert_eq!(
        described["regenerate"],
        json!({"job_name": format!("{id}-regenerate"), "result": "1 file regenerated", "files": 1,
               "commit": tip, "revert_commit": null, "error": null}),
        "{described:#}"
    );
    assert_eq!(described["apply"]["commit"], fix.as_str());
    let shown: Value = serde_json::from_slice(&kubeheal_as(&heal, "alice", &["show", &id, "-o", "json"]).stdout)
        .expect("show -o json is JSON");
    assert_eq!(shown["regenerate"], described["regenerate"]);
    let page = page_text(&format!("{base}/tickets/{id}/view"), None).await;
    let section = page
        .split("Regenerated code")
        .nth(1)
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        section.contains(&format!("{id}-regenerate"))
            && section.contains("<th>Files regenerated</th><td>1</td>")
            && section.contains(&tip),
        "{section}"
    );

    // A fix that changes nothing the generator writes (the number prefix): applied with no
    // second commit.
    let prefix = ingest_prefix_error(&base, &contract).await;
    let done = wait_ticket(&heal, &prefix, "applied", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = done.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&done));
    let branch = format!("kubeheal/{prefix}");
    assert_eq!(
        git(&heal.origin, &["rev-list", "--count", &format!("main..{branch}")]),
        "1"
    );
    let regenerate = status.regenerate.expect("the regeneration's status");
    assert_eq!(
        (regenerate.result.as_deref(), regenerate.commit, regenerate.files),
        (Some("0 files regenerated"), None, Some(0))
    );
    assert_eq!(heal.file_on_branch(&branch, MODEL), before.trim_end());
    let described = described_as(&base, &prefix, "applied").await;
    assert_eq!(
        (&described["regenerate"]["files"], &described["regenerate"]["commit"]),
        (&json!(0), &Value::Null),
        "{described:#}"
    );
}

/// `GET /healer/tickets/{id}` once the operator's cache has the ticket in `status`.
async fn described_as(base: &str, id: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let described = crate::healer_ticket::get_json(format!("{base}/tickets/{id}")).await;
        if described["status"] == status {
            return described;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/healer/tickets/{id} is not {status}: {described:#}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// A generator that breaks on the fixed contract, printing a credential on its way out.
const BROKEN_GENERATE_PY: &str = r#"import os, sys

print("regenerating after the fix of", os.environ["KUBEHEAL_CONTRACT_FQN"])
print("pushing with GITHUB_TOKEN=ghp_R2x8kQ7vLw3mZp9TnB4cY6dHs1aFj0eUiKoX", file=sys.stderr)
raise SystemExit("generate.py: cannot generate number prefix TKT: no such sequence")
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_regeneration_reverts_the_fix_on_the_branch_and_the_ticket_fails_saying_why() {
    let contract = TICKET.replace("number_prefix: TKT", "number_prefix: tkt");
    let (model, _) = model(vec![]);
    let (heal, base, _) = operator_with(
        "ticket-regen-fails",
        &contract,
        &model,
        Extra {
            more: &[("generate.py", BROKEN_GENERATE_PY)],
            more_target: &regenerate("python3 generate.py"),
            hold: Hold::default(),
            ..Extra::default()
        },
    )
    .await;
    let id = ingest_prefix_error(&base, &contract).await;
    let done = wait_ticket(&heal, &id, "failed", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = done.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Failed), "{}", note(&done));
    let branch = format!("kubeheal/{id}");
    // The base, the fix, and its revert: the contract on the branch is as before.
    assert_eq!(
        git(&heal.origin, &["rev-list", "--count", &branch]),
        "3",
        "{}",
        git(&heal.origin, &["log", "--format=%s", &branch])
    );
    assert_eq!(heal.file_on_branch(&branch, CONTRACT), contract.trim_end());
    let tip = git(&heal.origin, &["rev-parse", &branch]);
    let fix = git(&heal.origin, &["rev-parse", &format!("{branch}~1")]);
    let apply = status.apply.clone().expect("applied, then reverted");
    assert_eq!(apply.commit.as_deref(), Some(fix.as_str()));
    assert!(apply.rolled_back, "{apply:?}");
    let regenerate = status.regenerate.clone().expect("the regeneration's status");
    assert_eq!(regenerate.revert_commit.as_deref(), Some(tip.as_str()));
    assert_eq!(regenerate.commit, None);
    assert!(
        regenerate.result.as_deref().unwrap_or_default().starts_with("failed: "),
        "{regenerate:?}"
    );
    regeneration_job(&heal, &id).await;
    let message = git(&heal.origin, &["log", "-1", "--format=%B", &branch]);
    assert!(
        message.contains(&format!("This reverts commit {fix}"))
            && message.contains(&format!("Kubeheal-Ticket: {id}"))
            && message.contains(&format!("Kubeheal-Reverts: {fix}")),
        "{message}"
    );
    // Why, with the end of what the command printed — the credential redacted everywhere.
    let why = note(&done);
    assert!(
        why.contains("exited with code 1")
            && why.contains("cannot generate number prefix TKT")
            && why.contains(&format!("the fix {} was reverted", &fix[..12])),
        "{why}"
    );
    // The ticket's detail and page show the revert and why.
    let described = described_as(&base, &id, "failed").await;
    let shown = &described["regenerate"];
    assert_eq!(shown["revert_commit"], tip.as_str(), "{described:#}");
    assert_eq!((&shown["commit"], &shown["files"]), (&Value::Null, &Value::Null));
    let said = shown["error"].as_str().unwrap_or_default();
    assert!(
        said.contains("exited with code 1") && said.contains("cannot generate number prefix TKT"),
        "{described:#}"
    );
    let page = page_text(&format!("{base}/tickets/{id}/view"), None).await;
    let section = page
        .split("Regenerated code")
        .nth(1)
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        section.contains(&format!("<th>Fix reverted by</th><td><code>{tip}</code>"))
            && section.contains("cannot generate number prefix TKT"),
        "{section}"
    );
    let everything = format!("{why}\n{apply:?}\n{regenerate:?}\n{message}\n{described}\n{page}");
    assert!(
        !everything.contains("ghp_R2x8kQ7vLw3mZp9TnB4cY6dHs1aFj0eUiKoX"),
        "the credential leaked: {everything}"
    );
    assert!(everything.contains("[REDACTED"), "{everything}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_restarted_while_the_regeneration_runs_finds_its_job_instead_of_launching_another() {
    let contract = TICKET.replace("number_prefix: TKT", "number_prefix: tkt");
    let (model, _) = model(vec![]);
    // The committed model is stale (it lacks `status`): any regeneration rewrites it.
    let hold = Hold::new(&["-regenerate"]);
    let (mut heal, base, _) = operator_with(
        "ticket-regen-restart",
        &contract,
        &model,
        Extra {
            more: &[("generate.py", GENERATE_PY), (MODEL, &generated(&["title"]))],
            more_target: &regenerate("python3 generate.py"),
            hold: hold.clone(),
            ..Extra::default()
        },
    )
    .await;
    let id = ingest_prefix_error(&base, &contract).await;
    // The fix is pushed and its regeneration launched; the node has not run it yet.
    let waiting = wait_ticket(&heal, &id, "regenerating", |t| {
        phase_is(TicketPhase::Approved)(t)
            && t.status.as_ref().is_some_and(|s| {
                s.conditions
                    .iter()
                    .any(|c| c.message.contains("regenerating the code in Job"))
            })
    })
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let jobs: kube::Api<k8s_openapi::api::batch::v1::Job> = kube::Api::namespaced(heal.client.clone(), &heal.ns.name);
    let launched = loop {
        if let Some(job) = jobs.get_opt(&format!("{id}-regenerate")).await.expect("the API server") {
            break job;
        }
        assert!(std::time::Instant::now() < deadline, "no regeneration Job: {waiting:?}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    heal.kill_operator();
    let target = heal.work.path().join("ticket-target.yaml");
    serve_intake(&mut heal, &["--ticket-target", target.to_str().expect("a UTF-8 path")]).await;
    hold.release("-regenerate");
    let done = wait_ticket(&heal, &id, "applied", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = done.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&done));
    let job = regeneration_job(&heal, &id).await;
    assert_eq!(
        job.metadata.uid, launched.metadata.uid,
        "the Job launched before the restart"
    );
    let branch = format!("kubeheal/{id}");
    assert_eq!(
        git(&heal.origin, &["rev-list", "--count", &format!("main..{branch}")]),
        "2"
    );
    assert_eq!(
        heal.file_on_branch(&branch, MODEL),
        generated(&["title", "status"]).trim_end()
    );
    assert_eq!(
        status.regenerate.and_then(|r| r.result).as_deref(),
        Some("1 file regenerated")
    );
}

/// A model on loopback that holds every answer until `open` is sent `true`, then answers each
/// chat after a short think with NO_FIX. It records which ticket each chat was about (the
/// `field_N` of its `KeyError`) and the most chats it ever had open at once.
struct GatedModel {
    url: String,
    asked: Arc<Mutex<Vec<usize>>>,
    most_at_once: Arc<std::sync::atomic::AtomicUsize>,
    open: tokio::sync::watch::Sender<bool>,
}

fn gated_model() -> GatedModel {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let asked: Arc<Mutex<Vec<usize>>> = Arc::default();
    let (open, opened) = tokio::sync::watch::channel(false);
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (record, most_seen) = (asked.clone(), most.clone());
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let (record, now, most, mut opened) = (record.clone(), now.clone(), most_seen.clone(), opened.clone());
            async move {
                // Counted out when the chat ends, answered or dropped (a killed operator hangs up).
                struct Open(Arc<AtomicUsize>);
                impl Drop for Open {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::SeqCst);
                    }
                }
                let open_now = now.fetch_add(1, Ordering::SeqCst) + 1;
                let _open = Open(now.clone());
                most.fetch_max(open_now, Ordering::SeqCst);
                let prompt = body["messages"].to_string();
                let field = prompt
                    .split("field_")
                    .nth(1)
                    .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse::<usize>().ok())
                    .expect("the prompt names the ticket's field");
                record.lock().expect("the record").push(field);
                let _ = opened.wait_for(|open| *open).await;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                axum::Json(json!({
                    "choices": [{"message": {"role": "assistant", "content": "NO_FIX: the test's model fixes nothing"}}],
                    "usage": {"total_tokens": 12}
                }))
            }
        }),
    );
    let addr = serve_apart(app);
    GatedModel {
        url: format!("http://{addr}/v1"),
        asked,
        most_at_once: most,
        open,
    }
}

/// Each ticket once, in the order it was first analysed.
fn first_asked(asked: &Mutex<Vec<usize>>) -> Vec<usize> {
    let mut seen = Vec::new();
    for n in asked.lock().expect("the record").iter() {
        if !seen.contains(n) {
            seen.push(*n);
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_tickets_are_analysed_one_at_a_time_critical_first_oldest_first_and_a_restart_keeps_the_order() {
    use kubeheal::api::healer_ticket::Priority;
    const COUNT: usize = 50;
    let model = gated_model();
    let (mut heal, _base, _) = operator_with(
        "ticket-queue",
        TICKET,
        &model.url,
        Extra {
            flags: &["--ticket-workers", "1"],
            ..Extra::default()
        },
    )
    .await;
    // Fifty runtime exceptions, each its own ticket, of priorities in no order; the first one
    // created takes the only worker and is held by the model while the others arrive.
    let priorities = [
        Priority::Low,
        Priority::Critical,
        Priority::Medium,
        Priority::High,
        Priority::Medium,
        Priority::Low,
        Priority::High,
    ];
    let api = tickets(&heal);
    for n in 0..COUNT {
        let ticket: HealerTicket = serde_json::from_value(json!({
            "apiVersion": "kubeheal.dev/v1alpha1",
            "kind": "HealerTicket",
            "metadata": {"name": format!("queued-{n:02}")},
            "spec": {
                "source": "runtime",
                "target": {"contractFqn": FQN},
                "error": format!("KeyError: 'field_{n}'"),
                "priority": priorities[(n * 5 + n / 7) % priorities.len()],
            },
        }))
        .expect("a ticket");
        api.create(&Default::default(), &ticket).await.expect("create a ticket");
        if n % 10 == 9 {
            // Creation times one second apart: FIFO within a priority is visible.
            tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let listed = api.list(&Default::default()).await.expect("list the tickets");
        let queued = listed
            .items
            .iter()
            .filter(|t| t.status.as_ref().is_some_and(|s| s.classification.is_some()))
            .count();
        if queued == COUNT {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {queued} tickets were classified"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    while first_asked(&model.asked).is_empty() {
        assert!(std::time::Instant::now() < deadline, "no ticket reached the model");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        first_asked(&model.asked).len(),
        1,
        "one worker: one ticket analysed while the others arrive"
    );
    // The order the queue must follow, from the objects as the API server has them: critical
    // first, oldest first within a priority, then by name.
    let rank = |p: Option<Priority>| match p {
        Some(Priority::Critical) => 0,
        Some(Priority::High) => 1,
        Some(Priority::Medium) => 2,
        _ => 3,
    };
    let mut expected: Vec<(u8, String, String, usize)> = api
        .list(&Default::default())
        .await
        .expect("list the tickets")
        .items
        .into_iter()
        .map(|t| {
            let created = t.metadata.creation_timestamp.clone().expect("created").0.to_string();
            let n = t
                .spec
                .error
                .trim_start_matches("KeyError: 'field_")
                .trim_end_matches('\'')
                .parse()
                .expect("a number");
            (
                rank(t.spec.priority),
                created,
                t.metadata.name.clone().expect("a name"),
                n,
            )
        })
        .collect();
    expected.sort();
    let first = first_asked(&model.asked)[0];
    let expected: Vec<usize> = std::iter::once(first)
        .chain(expected.into_iter().map(|e| e.3).filter(|n| *n != first))
        .collect();
    model.open.send(true).expect("open the model");
    // Halfway through, the operator is killed and started again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while first_asked(&model.asked).len() < COUNT / 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "analysed {:?}",
            first_asked(&model.asked)
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    heal.kill_operator();
    let before_restart = first_asked(&model.asked).len();
    let target = heal.work.path().join("ticket-target.yaml");
    serve_intake(
        &mut heal,
        &[
            "--ticket-target",
            target.to_str().expect("a UTF-8 path"),
            "--ticket-workers",
            "1",
        ],
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let listed = api.list(&Default::default()).await.expect("list the tickets");
        let ended = listed.items.iter().filter(|t| phase_is(TicketPhase::Failed)(t)).count();
        if ended == COUNT {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{ended} of {COUNT} tickets ended; analysed {:?}\n{}",
            first_asked(&model.asked),
            heal.operator.as_ref().map(|p| p.log_tail(40)).unwrap_or_default()
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert!(before_restart < COUNT, "the restart came mid-queue");
    assert_eq!(
        first_asked(&model.asked),
        expected,
        "analysed in queue order across the restart"
    );
    assert_eq!(
        model.most_at_once.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "never two tickets at the model at once"
    );
}

const INCIDENT_FQN: &str = "entity/helpdesk/incident";
const INCIDENT: &str = "domains/helpdesk/entities/incident.contract.yaml";

/// Seed 004's second scenario's entity: it has a priority, and no severity.
const INCIDENT_CONTRACT: &str = "apiVersion: specora.dev/v1
kind: Entity
metadata:
  name: incident
  domain: helpdesk
  description: An incident reported to the helpdesk
spec:
  number_prefix: INC
  fields:
    title:
      type: string
      required: true
    priority:
      type: string
      required: true
      enum: [critical, high, medium, low]
";

#[tokio::test(flavor = "multi_thread")]
async fn seed_004s_unresolved_severity_is_a_tier_2_proposal_that_a_person_approves_with_the_cli_and_is_committed() {
    // The model answers as seed 004 says: a severity field with the same enum as priority.
    let with_severity = format!(
        "{INCIDENT_CONTRACT}    severity:\n      type: string\n      required: true\n      enum: [critical, high, medium, low]\n      description: Incident severity level\n"
    );
    assert_eq!(
        specora().validate(&with_severity),
        Vec::<(String, String)>::new(),
        "the model's answer is a valid contract"
    );
    let (model, asked) = model(vec![(
        "Unresolved reference: 'severity'",
        vec![answer(
            &with_severity,
            "Add a severity field with the same enum as priority.",
        )],
    )]);
    let (heal, base, _) = operator_with(
        "ticket-severity",
        TICKET,
        &model,
        Extra {
            more: &[(INCIDENT, INCIDENT_CONTRACT)],
            ..Extra::default()
        },
    )
    .await;
    grant_approvers_of(&heal, "healertickets");
    let id = ingest(
        &base,
        &json!({
            "source": "compilation",
            "contract_fqn": INCIDENT_FQN,
            "error": format!("Unresolved reference: 'severity' in workflow guard for {INCIDENT_FQN}"),
        }),
    )
    .await;
    let ticket = wait_proposed(&heal, &id).await;
    let status = ticket.status.clone().expect("a status");
    let classification = status.classification.expect("classified");
    assert_eq!(
        (classification.error_type.as_str(), classification.tier),
        ("missing_reference", 2)
    );
    let proposal = status.proposal.expect("a proposal");
    assert_eq!(
        (proposal.method, proposal.confidence),
        (ProposalMethod::LlmStructural, 0.7)
    );
    assert_eq!(proposal.contract_path.as_deref(), Some(INCIDENT));
    assert!(
        proposal
            .changes
            .iter()
            .any(|c| c.starts_with("added: spec.fields.severity")),
        "{:?}",
        proposal.changes
    );
    let prompts = asked.lock().expect("the record").clone();
    assert!(
        prompts[0].contains("number_prefix: INC") && prompts[0].contains("Unresolved reference"),
        "the prompt carries the incident contract and the error: {}",
        prompts[0]
    );
    // bob may not approve; alice approves with the CLI, naming the patch she saw.
    let refused = kubeheal_as(&heal, "bob", &["approve", &id]);
    assert!(!refused.status.success());
    // A decision naming a patch that is not the proposal's (she looked at an older one) is
    // refused, saying what the proposal is now and where to look, and nothing is written.
    let stale = format!("sha256:{}", "0".repeat(64));
    assert_ne!(stale, proposal.patch_digest);
    for args in [
        &["approve", id.as_str(), "--digest", stale.as_str()][..],
        &[
            "reject",
            id.as_str(),
            "--reason",
            "not this",
            "--digest",
            stale.as_str(),
        ][..],
    ] {
        let refused = kubeheal_as(&heal, "alice", args);
        let why = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{args:?} succeeded: {why}");
        assert!(
            why.contains("proposal changed since you saw it")
                && why.contains(&format!("you saw patch {stale}"))
                && why.contains(&format!("the proposal is now patch {}", proposal.patch_digest))
                && why.contains(&format!("kubeheal ticket show {id} -n {}", heal.ns.name))
                && why.contains("Nothing was written"),
            "{why}"
        );
    }
    // A digest cut short is named as such, before anything is read.
    let cut = kubeheal_as(&heal, "alice", &["approve", &id, "--digest", "sha256:0123abcd"]);
    let why = String::from_utf8_lossy(&cut.stderr);
    assert!(!cut.status.success() && why.contains("is not a patch digest"), "{why}");
    let untouched = tickets(&heal).get(&id).await.expect("the ticket");
    assert_eq!(untouched.spec.decision, None, "a refused decision was written");
    assert_eq!(untouched.status.and_then(|s| s.phase), Some(TicketPhase::Proposed));
    // She looks again and approves the patch `show` gives her.
    let shown: Value = serde_json::from_slice(&kubeheal_as(&heal, "alice", &["show", &id, "-o", "json"]).stdout)
        .expect("show -o json is JSON");
    let digest = shown["proposal"]["patch_digest"]
        .as_str()
        .expect("the proposal's digest");
    assert_eq!(digest, proposal.patch_digest);
    let approved = kubeheal_as(&heal, "alice", &["approve", &id, "--digest", digest]);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&approved.stdout).trim(),
        format!("healerticket/{id} approved by alice (patch {digest})")
    );
    let done = wait_ticket(&heal, &id, "applied", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = done.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&done));
    assert_eq!(
        done.spec.decision.as_ref().and_then(|d| d.patch_digest.as_deref()),
        Some(proposal.patch_digest.as_str())
    );
    let branch = status.apply.and_then(|a| a.branch).expect("a branch");
    let fixed = heal.file_on_branch(&branch, INCIDENT);
    assert_eq!(fixed, with_severity.trim_end());
    assert_eq!(specora().validate(&fixed), Vec::<(String, String)>::new(), "{fixed}");
    let message = git(&heal.origin, &["log", "-1", "--format=%B", &branch]);
    assert!(
        message.starts_with(&format!(
            "fix({INCIDENT_FQN}): Add a severity field with the same enum as priority."
        )) && message.contains("Approved-by: alice"),
        "{message}"
    );
    // Only the incident contract changed, and main is as it was.
    assert_eq!(git(&heal.origin, &["diff", "--name-only", "main", &branch]), INCIDENT);
    assert_eq!(
        heal.file_on_branch("main", INCIDENT).trim_end(),
        INCIDENT_CONTRACT.trim_end()
    );
}

/// Follows `page`'s sign-in link, signs in with `token` and comes back to `page`.
async fn sign_in_from(browser: &crate::support::browser::Browser, page: &str, token: &str) {
    browser.click("a[href*='sign-in']").await;
    browser
        .wait_for_url("the sign-in", |u| u.contains("/healer/sign-in"))
        .await;
    browser.type_into("textarea[name=token]", token).await;
    browser.click("button[type=submit]").await;
    browser.wait_for_url("the ticket after signing in", |u| u == page).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_signs_in_and_approves_in_a_real_headless_chromium_and_the_fix_is_committed_as_them() {
    use crate::support::browser::Browser;
    let (model, _) = model(vec![(
        "KeyError: 'resolution'",
        vec![answer(&with_resolution(""), "Add a resolution field.")],
    )]);
    let (heal, base) = operator("ticket-browser", TICKET, &model).await;
    grant_approvers_of(&heal, "healertickets");
    let id = ingest(
        &base,
        &runtime_error("KeyError: 'resolution'", json!({"status_code": 500})),
    )
    .await;
    wait_proposed(&heal, &id).await;
    let browser = Browser::start().await;
    // The page the notification links to shows a stranger the proposal, no form, and a way
    // to sign in (this operator's /healer API is open to read).
    let page = format!("{base}/tickets/{id}/view");
    browser.go(&page).await;
    let stranger = browser.text().await;
    assert!(
        stranger.contains("+    resolution:") && !stranger.contains("Approve"),
        "{stranger}"
    );
    // bob signs in and clicks Approve: the API server refuses him, the page says so.
    sign_in_from(&browser, &page, "kubeheal-test-bob-token").await;
    browser
        .click(&format!("form[action='../../approve/{id}/action'] button"))
        .await;
    browser
        .wait_for_url("the refusal", |u| u.ends_with("?error=forbidden"))
        .await;
    let refused = browser.text().await;
    assert!(refused.contains("The API server refused your decision"), "{refused}");
    assert_eq!(tickets(&heal).get(&id).await.expect("the ticket").spec.decision, None);
    // He signs out; alice signs in and approves.
    browser.click("form[action$='sign-out'] button").await;
    browser
        .wait_for_url("the list after signing out", |u| u.ends_with("/healer/view"))
        .await;
    browser.go(&page).await;
    sign_in_from(&browser, &page, "kubeheal-test-alice-token").await;
    let signed_in = browser.text().await;
    assert!(signed_in.contains("Signed in as alice"), "{signed_in}");
    assert!(signed_in.contains("+    resolution:"), "the diff is shown: {signed_in}");
    browser
        .click(&format!("form[action='../../approve/{id}/action'] button"))
        .await;
    browser
        .wait_for_url("the approval", |u| u.ends_with("?done=approved"))
        .await;
    assert!(browser.text().await.contains("The proposal was approved."));
    browser.quit().await;
    let done = wait_ticket(&heal, &id, "applied", |t| {
        phase_is(TicketPhase::Applied)(t) || phase_is(TicketPhase::Failed)(t)
    })
    .await;
    let status = done.status.clone().expect("a status");
    assert_eq!(status.phase, Some(TicketPhase::Applied), "{}", note(&done));
    assert_eq!(
        done.spec.decision.as_ref().map(|d| d.approved_by.as_str()),
        Some("alice")
    );
    let branch = status.apply.and_then(|a| a.branch).expect("a branch");
    let message = git(&heal.origin, &["log", "-1", "--format=%B", &branch]);
    assert!(message.contains("Approved-by: alice"), "{message}");
}

/// The requests a loopback Code Healer API got: each one's `Authorization` header and body.
type HealRequests = Arc<Mutex<Vec<(Option<String>, Value)>>>;

/// A Code Healer API (seed 000) on loopback: each `POST /api/heal` is kept with its
/// `Authorization` header and answered with the next of `answers` (the last one again once
/// they run out), as `200` JSON.
fn seed_000_healer(answers: Vec<Value>) -> (String, HealRequests) {
    use axum::routing::post;
    let seen: HealRequests = Arc::default();
    let record = seen.clone();
    let answers = Arc::new(answers);
    let app = axum::Router::new().route(
        "/api/heal",
        post(
            move |headers: axum::http::HeaderMap, axum::Json(body): axum::Json<Value>| {
                let (record, answers) = (record.clone(), answers.clone());
                async move {
                    let authorization = headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let mut record = record.lock().expect("the record");
                    record.push((authorization, body));
                    axum::Json(answers[(record.len() - 1).min(answers.len() - 1)].clone())
                }
            },
        ),
    );
    let addr = serve_apart(app);
    (format!("http://{addr}/api/heal"), seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_code_healer_api_proposes_the_contract_fix_in_seed_000s_wire_format_checked_like_a_models_answer() {
    let leaked = "ghp_R2x8kQ7vLw3mZp9TnB4cY6dHs1aFj0eUiKoX";
    let token = "sam-bearer-5f0c2a9e7d1b";
    let summary = "Add 'resolution' field (type: text) to fix KeyError on PATCH.";
    // The first answer also rewrites a route (refused: only the contract may change); asked
    // again, it gives the contract with a property the whitelist does not allow.
    let (healer, requests) = seed_000_healer(vec![
        json!({"status": "healed", "changes_summary": summary, "modified_files": {
            CONTRACT: with_resolution(""),
            "backend/routes/tickets.py": "ticket['resolution'] = body.get('resolution')\n"}}),
        json!({"status": "healed", "changes_summary": summary, "modified_files": {
            CONTRACT: with_resolution("      required_when: \"status == resolved\"\n")}}),
    ]);
    // The operator's default is a model; the ticket names its Code Healer API, which wins.
    let (model, asked) = model(vec![]);
    let (heal, _base, _) = operator_with(
        "ticket-code-healer",
        TICKET,
        &model,
        Extra {
            flags: &["--allow-cluster-internal-healers"],
            ..Extra::default()
        },
    )
    .await;
    // The bearer token in a Secret of the ticket's namespace, which the operator may read.
    let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(heal.client.clone(), &heal.ns.name);
    let secret: k8s_openapi::api::core::v1::Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "code-healer"},
        "stringData": {"token": token},
    }))
    .expect("a Secret");
    secrets
        .create(&Default::default(), &secret)
        .await
        .expect("create the healer's Secret");
    let rbac = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "code-healer"},
         "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["code-healer"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "code-healer"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "code-healer"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeheal:operators"}]}
    ]});
    let file = heal.work.path().join("code-healer-rbac.json");
    std::fs::write(&file, rbac.to_string()).expect("write the RBAC");
    let out = heal
        .plane
        .kubectl(["apply", "-n", &heal.ns.name, "-f", &file.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Seed 004's live demo, filed with kubectl's API, its target naming the Code Healer API (the
    // API server's rules take it); the context carries a credential and the healer's own token.
    let id = "resolution-by-sam";
    let mut body = runtime_error(
        "KeyError: 'resolution'",
        json!({"request_path": "/tickets/abc", "method": "PATCH", "status_code": "500",
               "authorization": format!("token {leaked}"), "debug": format!("healer said {token}")}),
    );
    let ticket: HealerTicket = serde_json::from_value(json!({
        "apiVersion": "kubeheal.dev/v1alpha1", "kind": "HealerTicket", "metadata": {"name": id},
        "spec": {"source": "runtime", "error": body["error"].take(), "stacktrace": body["stacktrace"].take(),
                 "context": body["context"].take(),
                 "target": {"contractFqn": FQN, "healer": {"codeHealerApi": {
                     "url": healer, "secretRef": {"name": "code-healer", "key": "token"}}}}},
    }))
    .expect("a ticket");
    tickets(&heal)
        .create(&Default::default(), &ticket)
        .await
        .expect("the API server takes a codeHealerApi target");
    let proposed = wait_proposed(&heal, id).await;
    let status = proposed.status.clone().expect("a status");

    // Seed 004's proposal for tier 3, from the fixed file: the invented property removed.
    let proposal = status.proposal.expect("a proposal");
    assert_eq!(
        (proposal.method, proposal.confidence),
        (ProposalMethod::LlmRuntime, 0.5)
    );
    assert_eq!(proposal.explanation, summary);
    assert_eq!(proposal.removed, ["spec.fields.resolution.required_when"]);
    assert_eq!(
        proposal.changes,
        ["added: spec.fields.resolution = {type: text, description: Resolution notes}"]
    );
    assert_eq!(proposal.contract_path.as_deref(), Some(CONTRACT));
    assert_eq!(proposal.before.as_deref(), Some(TICKET));
    let after = proposal.after.clone().expect("the proposed contract");
    assert!(
        after.contains("resolution:") && !after.contains("required_when"),
        "{after}"
    );
    assert_eq!(specora().validate(&after), Vec::<(String, String)>::new(), "{after}");

    // What reached the Code Healer API: seed 000's request, twice (the first answer refused).
    let requests = requests.lock().expect("the record").clone();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    for (authorization, request) in &requests {
        assert_eq!(authorization.as_deref(), Some(format!("Bearer {token}").as_str()));
        assert_eq!(request["project_id"], id);
        assert_eq!(
            request["failed_files"],
            json!({ CONTRACT: TICKET }),
            "the contract is the one file to fix"
        );
        let errors = &request["pytest_errors"];
        assert_eq!((&errors["exit_code"], &errors["error_count"]), (&json!(1), &json!(1)));
        assert!(
            errors["stderr"]
                .as_str()
                .is_some_and(|e| e.contains("patch_ticket") && e.ends_with("KeyError: 'resolution'")),
            "{errors}"
        );
        let text = request.to_string();
        assert!(
            !text.contains(leaked) && !text.contains(token),
            "a secret reached the healer: {text}"
        );
    }
    let (first, second) = (&requests[0].1, &requests[1].1);
    assert_eq!(first["cycle"], 1);
    assert!(first.get("history").is_none(), "{first}");
    let task = first["pytest_errors"]["error_summary"].as_str().unwrap_or_default();
    for part in [
        FQN,
        CONTRACT,
        "KeyError: 'resolution'",
        "- request_path: /tickets/abc",
        "required_when or conditional_required",
        "[REDACTED",
    ] {
        assert!(task.contains(part), "{part} is not in the task: {task}");
    }
    assert_eq!(second["cycle"], 2);
    let refused = second["history"][0]["result"].as_str().unwrap_or_default();
    assert!(
        refused.contains("backend/routes/tickets.py is outside the allowed paths"),
        "{second}"
    );
    assert!(
        second["pytest_errors"]["error_summary"]
            .as_str()
            .is_some_and(|t| t.contains("previous answer was refused")),
        "{second}"
    );
    assert!(
        asked.lock().expect("the record").is_empty(),
        "the operator's default model was asked"
    );
    // A proposal only: nothing reached the repository.
    assert_eq!(git(&heal.origin, &["branch", "--list", "kubeheal/*"]), "");
}

/// Specora's compiler as a repository's validate command (run by the test node as a host
/// process, with the virtualenv's python): it loads and validates every contract under
/// `domains/` and resolves their `requires` — what no JSON Schema can check — printing each
/// error on a line of its own (wide enough not to wrap) and exiting 1.
fn specora_compile() -> String {
    let python = specora().python().display().to_string();
    let command = format!("COLUMNS=400 {python} -c 'from forge.cli.main import cli; cli()' forge compile domains");
    let yaml = serde_json::to_string(&command).expect("a JSON string is a YAML string");
    format!("validate:\n  image: ghcr.io/specora/forge:0.1.0\n  command: {yaml}\n")
}

/// An operator like [`operator`]'s whose contracts are judged by [`specora_compile`] alone (no
/// JSON Schema).
async fn operator_validated_by_specora(test: &str, contract: &str, model: &str) -> (Heal, String) {
    let target = specora_compile();
    let extra = Extra {
        more_target: &target,
        without_schema: true,
        ..Extra::default()
    };
    let (heal, base, _) = operator_with(test, contract, model, extra).await;
    (heal, base)
}

/// The jobs validating ticket `id`'s contract versions.
async fn validation_jobs(heal: &Heal, id: &str) -> Vec<String> {
    let jobs: kube::Api<k8s_openapi::api::batch::v1::Job> = kube::Api::namespaced(heal.client.clone(), &heal.ns.name);
    let listed = jobs
        .list(&kube::api::ListParams::default().labels(&format!("kubeheal.dev/healerticket={id}")))
        .await
        .expect("list the ticket's Jobs");
    let mut names: Vec<String> = listed
        .items
        .iter()
        .filter_map(|j| j.metadata.name.clone())
        .filter(|n| n.contains("-validate-"))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repositorys_own_validator_judges_each_answer_in_a_job_and_what_it_refuses_is_never_committed() {
    // Both answers pass Specora's meta-schema; only its compiler finds the first's dangling
    // `requires`.
    let dangling = format!("{}requires: [entity/helpdesk/customer]\n", with_resolution(""));
    assert_eq!(specora().validate(&dangling), Vec::<(String, String)>::new());
    let fixed = with_resolution("");
    let (model, asked) = model(vec![
        (
            "KeyError: 'resolution'",
            vec![
                answer(&dangling, "Add resolution, owned by a customer."),
                answer(&fixed, "Add 'resolution' field (type: text)."),
            ],
        ),
        ("KeyError: 'customer'", vec![answer(&dangling, "Add the customer.")]),
    ]);
    let (heal, base) = operator_validated_by_specora("ticket-validate", TICKET, &model).await;
    grant_approvers_of(&heal, "healertickets");
    let context = json!({"status_code": 500});
    let id = ingest(&base, &runtime_error("KeyError: 'resolution'", context.clone())).await;
    let refused = ingest(&base, &runtime_error("KeyError: 'customer'", context)).await;

    // The compiler refused the first answer, and the model was told why.
    let ticket = wait_proposed(&heal, &id).await;
    let prompts: Vec<String> = asked
        .lock()
        .expect("the record")
        .iter()
        .filter(|p| p.contains("KeyError: 'resolution'"))
        .cloned()
        .collect();
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(
        prompts[1].contains("requires 'entity/helpdesk/customer' which does not exist"),
        "the second prompt says what the validator found: {}",
        prompts[1]
    );
    let proposal = ticket.status.and_then(|s| s.proposal).expect("a proposal");
    assert_eq!(proposal.after.as_deref(), Some(fixed.as_str()));
    // The Job that judged the contract as committed loses its Pod (a cluster's Pod garbage
    // collector can do that while a proposal waits): the re-check before the commit asks again.
    let settings: kubeheal::api::healer_ticket::TicketTarget =
        serde_yaml_ng::from_str(&specora_compile()).expect("the validate setting");
    let validate = settings.validate.expect("a validate command");
    let commit = git(&heal.origin, &["rev-parse", "main"]);
    let committed_job = |again| kubeheal::core::ticket_validate::job_name(&id, &commit, TICKET, &validate, again);
    let before_approval = validation_jobs(&heal, &id).await;
    assert!(before_approval.contains(&committed_job(false)), "{before_approval:?}");
    let out = heal.plane.kubectl([
        "delete",
        "pods",
        "-n",
        &heal.ns.name,
        "-l",
        &format!("job-name={}", committed_job(false)),
        "--grace-period=0",
        "--force",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status = approved_until_applied(&heal, &["approve", &id, "--digest", &proposal.patch_digest]).await;
    let branch = status.apply.and_then(|a| a.branch).expect("a branch");
    assert_eq!(heal.file_on_branch(&branch, CONTRACT), fixed.trim_end());
    // One Job per version judged — the contract as committed and the two answers — each owned
    // by the ticket; the re-check before the commit asked the same questions and found them,
    // but for the one whose Pod was lost, asked again in a Job of another name.
    let jobs = validation_jobs(&heal, &id).await;
    assert_eq!(jobs.len(), 4, "{jobs:?}");
    assert!(jobs.contains(&committed_job(true)), "{jobs:?}");
    assert!(
        jobs.iter()
            .all(|j| j.starts_with(&format!("{id}-validate-")) && j.len() <= 63),
        "{jobs:?}"
    );

    // A model that gives nothing the compiler accepts: asked twice, the ticket fails with the
    // compiler's words, and nothing reaches the repository.
    let failed = wait_ticket(&heal, &refused, "failed", phase_is(TicketPhase::Failed)).await;
    let why = note(&failed);
    assert!(
        why.contains("fails validation")
            && why.contains("requires 'entity/helpdesk/customer' which does not exist")
            && why.contains("asked more simply"),
        "{why}"
    );
    assert_eq!(
        git(&heal.origin, &["branch", "--list", &format!("kubeheal/{refused}")]),
        "",
        "a refused answer was pushed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tier_1_fix_is_judged_by_the_repositorys_validator_alone_and_committed() {
    // Specora's compiler refuses the contract for its number prefix; the normalised one passes.
    let broken = TICKET.replace("number_prefix: TKT", "number_prefix: tkt");
    let (model, asked) = model(vec![]);
    let (heal, base) = operator_validated_by_specora("ticket-validate-tier1", &broken, &model).await;
    let id = ingest_prefix_error(&base, &broken).await;
    let status = until_applied(&heal, &id).await;
    let proposal = status.proposal.expect("a proposal");
    assert_eq!(proposal.method, ProposalMethod::Deterministic);
    assert_eq!(proposal.changes, ["spec.number_prefix: tkt -> TKT"]);
    let branch = status.apply.and_then(|a| a.branch).expect("a branch");
    assert_eq!(heal.file_on_branch(&branch, CONTRACT), TICKET.trim_end());
    // The contract as committed and the normalised one, each judged once.
    let jobs = validation_jobs(&heal, &id).await;
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(asked.lock().expect("the record").is_empty(), "tier 1 asks no model");
}
