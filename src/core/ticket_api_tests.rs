//! The pieces both doors of seed 004's API share: the same body gives the same ticket, the
//! filters and queue order, and the `/healer/status` numbers.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::healer_ticket::{Classification, FixableBy, HealerTicketStatus};

const SEED: &str = r#"{"source": "runtime", "contract_fqn": "entity/helpdesk/ticket", "error": "KeyError: 'resolution'",
  "stacktrace": "Traceback (most recent call last)...", "context": {"request_path": "/tickets/abc", "method": "PATCH", "status_code": 500}}"#;

/// A ticket created at second `created`, classified with `priority` and `tier`, in `phase`.
fn ticket(
    name: &str,
    created: i64,
    priority: Priority,
    tier: u8,
    phase: TicketPhase,
    occurrences: u32,
) -> HealerTicket {
    let mut t = HealerTicket::new(name, ingest_spec(SEED.as_bytes()).expect("the seed's example is valid"));
    t.metadata.creation_timestamp = Some(Time(Timestamp::from_second(created).expect("a time")));
    t.status = Some(HealerTicketStatus {
        phase: Some(phase),
        occurrences,
        classification: Some(Classification {
            error_type: format!("type_{tier}"),
            tier,
            fixable_by: FixableBy::Contract,
            priority,
        }),
        ..HealerTicketStatus::default()
    });
    t
}

#[test]
fn the_seeds_example_is_accepted_with_its_context_as_text() {
    let spec = ingest_spec(SEED.as_bytes()).expect("valid");
    assert_eq!(spec.source, TicketSource::Runtime);
    assert_eq!(spec.target.contract_fqn.as_deref(), Some("entity/helpdesk/ticket"));
    assert_eq!(spec.context["status_code"], "500");
}

#[test]
fn a_bad_body_is_refused_naming_the_field() {
    for (body, says) in [
        ("[]", "JSON object"),
        (
            r#"{"source": "cosmic", "error": "x"}"#,
            "source \"cosmic\" is not one of",
        ),
        (r#"{"source": "runtime"}"#, "error is required"),
        (
            r#"{"source": "runtime", "error": 5}"#,
            "error must be a string, not a number",
        ),
        (
            r#"{"source": "runtime", "error": "x", "colour": "red"}"#,
            "unknown field \"colour\"",
        ),
        (
            r#"{"source": "runtime", "error": "x", "contract_fqn": "ticket"}"#,
            "contract_fqn \"ticket\"",
        ),
        (
            r#"{"source": "runtime", "error": "x", "contract_fqn": "entity/a/b", "context": {"a": []}}"#,
            "context.a must be",
        ),
        // A ticket must name what its error points at, or the API server would refuse it later.
        (r#"{"source": "runtime", "error": "x"}"#, "contract_fqn is required"),
    ] {
        let why = ingest_spec(body.as_bytes()).expect_err(body);
        assert!(why.contains(says), "{body}: {why}");
    }
}

#[test]
fn the_same_error_from_another_request_is_the_same_ticket() {
    let first = ingest_spec(SEED.as_bytes()).expect("valid");
    let again = ingest_spec(SEED.replace("/tickets/abc", "/tickets/def-42").as_bytes()).expect("valid");
    let other = ingest_spec(SEED.replace("'resolution'", "'assignee'").as_bytes()).expect("valid");
    assert_eq!(ticket_id(&first), ticket_id(&again));
    assert_ne!(ticket_id(&first), ticket_id(&other));
    assert!(ticket_id(&first).starts_with("ht-"));
}

#[test]
fn a_listing_is_in_queue_order_and_filtered() {
    let mut tickets = vec![
        ticket("ht-low", 1, Priority::Low, 1, TicketPhase::Queued, 1),
        ticket("ht-crit-new", 30, Priority::Critical, 3, TicketPhase::Queued, 1),
        ticket("ht-crit-old", 10, Priority::Critical, 3, TicketPhase::Failed, 1),
    ];
    let ids = |listed: &[Value]| {
        listed
            .iter()
            .map(|t| t["id"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&listing(&mut tickets, &Filters::default())),
        ["ht-crit-old", "ht-crit-new", "ht-low"]
    );
    let critical = Filters {
        priority: Some("critical".into()),
        ..Filters::default()
    };
    assert_eq!(ids(&listing(&mut tickets, &critical)), ["ht-crit-old", "ht-crit-new"]);
    let failed = Filters {
        status: Some("failed".into()),
        contract_fqn: Some("entity/helpdesk/ticket".into()),
        ..Filters::default()
    };
    assert_eq!(ids(&listing(&mut tickets, &failed)), ["ht-crit-old"]);
    let elsewhere = Filters {
        contract_fqn: Some("entity/helpdesk/other".into()),
        ..Filters::default()
    };
    assert!(listing(&mut tickets, &elsewhere).is_empty());
}

#[test]
fn a_ticket_not_classified_yet_is_described_as_queued_with_the_spec_priority() {
    let mut t = HealerTicket::new("ht-new", ingest_spec(SEED.as_bytes()).expect("valid"));
    t.spec.priority = Some(Priority::High);
    let d = describe(&t);
    assert_eq!(d["status"], "queued");
    assert_eq!(d["priority"], "high");
    assert_eq!(d["tier"], Value::Null);
    assert_eq!(d["occurrences"], 0);
}

#[test]
fn the_status_summary_counts_phases_rates_recurrences_and_the_newest() {
    let tickets = [
        ticket("ht-a", 1, Priority::Low, 1, TicketPhase::Applied, 1),
        ticket("ht-b", 2, Priority::Low, 1, TicketPhase::Failed, 1),
        ticket("ht-c", 3, Priority::Critical, 3, TicketPhase::Queued, 4),
        ticket("ht-d", 4, Priority::Critical, 3, TicketPhase::Rejected, 1),
    ];
    let s = summary(&tickets);
    assert_eq!(
        s["queue"],
        json!({"applied": 1, "failed": 1, "queued": 1, "rejected": 1})
    );
    assert_eq!(s["success_rate"], json!({"tier_1": 0.5, "tier_3": 0.0}));
    // type_1 twice once each, type_3 four times plus once.
    assert_eq!(
        s["recurring"],
        json!([
            {"contract_fqn": "entity/helpdesk/ticket", "error_type": "type_1", "count": 2},
            {"contract_fqn": "entity/helpdesk/ticket", "error_type": "type_3", "count": 5},
        ])
    );
    let recent: Vec<&str> = s["recent"]
        .as_array()
        .expect("recent")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(recent, ["ht-d", "ht-c", "ht-b", "ht-a"]);
    // The order the tickets come in (a cache, a list) does not change the numbers.
    let mut reversed = tickets.to_vec();
    reversed.reverse();
    assert_eq!(summary(&reversed), s);
    let many: Vec<HealerTicket> = (0..12)
        .map(|i| ticket(&format!("ht-{i:02}"), i, Priority::Medium, 2, TicketPhase::Queued, 1))
        .collect();
    assert_eq!(summary(&many)["recent"].as_array().map(Vec::len), Some(10));
}

#[test]
fn credentials_in_an_applications_error_are_redacted_before_anyone_reads_them_back() {
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
    let mut t = ticket("leaky", 1, Priority::High, 3, TicketPhase::Queued, 1);
    t.spec.error = format!("auth failed with token={token}");
    t.spec.context.insert("authorization".into(), format!("token {token}"));
    let described = describe(&t).to_string();
    assert!(!described.contains(token), "{described}");
    assert!(described.contains("auth failed"), "{described}");
}

#[test]
fn an_applied_ticket_is_described_with_its_commit_and_the_regenerated_code() {
    use crate::api::healer_ticket::{ApplyStatus, RegenerateStatus};
    let mut t = ticket("ht-done", 1, Priority::Critical, 3, TicketPhase::Applied, 1);
    let status = t.status.as_mut().expect("a status");
    status.apply = Some(ApplyStatus {
        branch: Some("kubeheal/ht-done".into()),
        commit: Some("f1".repeat(20)),
        rolled_back: false,
        error: None,
    });
    status.regenerate = Some(RegenerateStatus {
        job_name: Some("ht-done-regenerate".into()),
        result: Some("2 files regenerated".into()),
        files: Some(2),
        commit: Some("c2".repeat(20)),
        revert_commit: None,
    });
    let d = describe(&t);
    assert_eq!(
        d["apply"],
        json!({"branch": "kubeheal/ht-done", "commit": "f1".repeat(20), "rolled_back": false, "error": null})
    );
    assert_eq!(
        d["regenerate"],
        json!({"job_name": "ht-done-regenerate", "result": "2 files regenerated", "files": 2,
               "commit": "c2".repeat(20), "revert_commit": null, "error": null})
    );
    // Before an apply there is neither.
    let queued = describe(&ticket("ht-new", 1, Priority::Low, 1, TicketPhase::Queued, 1));
    assert_eq!((&queued["apply"], &queued["regenerate"]), (&Value::Null, &Value::Null));
}

#[test]
fn a_failed_regeneration_is_described_with_the_revert_and_why_redacted() {
    use crate::api::healer_ticket::{ApplyStatus, RegenerateStatus};
    let token = "ghp_R2x8kQ7vLw3mZp9TnB4cY6dHs1aFj0eUiKoX";
    let why = format!("the regenerate command exited with code 1; it printed: pushing with GITHUB_TOKEN={token}");
    let mut t = ticket("ht-reverted", 1, Priority::Low, 1, TicketPhase::Failed, 1);
    let status = t.status.as_mut().expect("a status");
    status.apply = Some(ApplyStatus {
        branch: Some("kubeheal/ht-reverted".into()),
        commit: Some("f1".repeat(20)),
        rolled_back: true,
        error: Some(why.clone()),
    });
    status.regenerate = Some(RegenerateStatus {
        job_name: Some("ht-reverted-regenerate".into()),
        result: Some("failed: the regenerate command exited with code 1".into()),
        files: None,
        commit: None,
        revert_commit: Some("d3".repeat(20)),
    });
    let d = describe(&t);
    let regenerate = &d["regenerate"];
    assert_eq!(regenerate["revert_commit"], "d3".repeat(20));
    assert_eq!(
        (&regenerate["commit"], &regenerate["files"]),
        (&Value::Null, &Value::Null)
    );
    let said = regenerate["error"].as_str().expect("why it failed");
    assert!(
        said.starts_with("the regenerate command exited with code 1") && said.contains("[REDACTED:"),
        "{said}"
    );
    assert_eq!(d["apply"]["rolled_back"], true);
    assert!(!d.to_string().contains(token), "{d}");
}

#[test]
fn a_proposal_is_described_in_the_api_s_names_with_its_texts_redacted() {
    use crate::api::healer_ticket::{ProposalMethod, TicketProposal};
    let token = "ghp_Q8w2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb";
    let mut t = ticket("ht-proposed", 1, Priority::High, 3, TicketPhase::Proposed, 1);
    let digest = format!("sha256:{}", "b".repeat(64));
    t.status.as_mut().expect("a status").proposal = Some(TicketProposal {
        method: ProposalMethod::LlmRuntime,
        confidence: 0.5,
        explanation: format!("the 500 quoted GITHUB_TOKEN={token}; add the field"),
        changes: vec!["added: spec.fields.resolution = {type: text}".into()],
        removed: vec![],
        contract_path: Some("domains/helpdesk/entities/ticket.contract.yaml".into()),
        base_commit: Some("e4".repeat(20)),
        before: Some("spec: {}\n".into()),
        after: Some(format!("spec: {{token: {token}}}\n")),
        patch_digest: digest.clone(),
    });
    let d = describe(&t);
    let proposal = &d["proposal"];
    // The digest a client reads is the one `POST /healer/approve/{id}` takes, by the same name.
    assert_eq!(proposal["patch_digest"], digest.as_str());
    assert_eq!(proposal["method"], "llm_runtime");
    assert_eq!(
        proposal["contract_path"],
        "domains/helpdesk/entities/ticket.contract.yaml"
    );
    assert_eq!(proposal["base_commit"], "e4".repeat(20));
    let keys: Vec<&String> = proposal.as_object().expect("an object").keys().collect();
    assert!(
        keys.iter().all(|k| !k.chars().any(|c| c.is_ascii_uppercase())),
        "{keys:?}"
    );
    assert!(!d.to_string().contains(token), "{d}");
    assert!(
        proposal["explanation"]
            .as_str()
            .is_some_and(|e| e.ends_with("add the field") && e.contains("[REDACTED:")),
        "{proposal}"
    );
}
