//! `kubeheal ticket` (issue 14, item 8) against a real API server and the real operator: the CLI
//! talks to the Kubernetes API with a kubeconfig, not to the operator's port, and agrees with the
//! `/healer` HTTP API — the same ticket for the same error, counted by both, the same filters,
//! the same description and the same status numbers; bad input and a decision without a
//! proposal are refused saying why.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::heal_run::Heal;
use crate::healer_ticket::{get_json, intake, post, seed_error, wait_ticket};

/// `kubeheal ARGS -n <the test's namespace>` with the admin kubeconfig.
fn kubeheal(heal: &Heal, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(args)
        .args(["-n", heal.ns.name.as_str()])
        .env("KUBECONFIG", heal.plane.kubeconfig())
        .output()
        .expect("kubeheal runs")
}

/// Its stdout, after checking it succeeded.
fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "kubeheal failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json_of(out: &Output) -> Value {
    let text = ok(out);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_and_the_http_api_file_count_and_describe_the_same_tickets() {
    let (heal, base) = intake("ticket-cli").await;
    let seed = seed_error("abc");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let trace = dir.path().join("trace.txt");
    std::fs::write(&trace, seed["stacktrace"].as_str().expect("a stack trace")).expect("write the trace");

    // Seed 004's example error through the CLI's flags, then over HTTP: one ticket, counted twice.
    let answer = json_of(&kubeheal(
        &heal,
        &[
            "ticket",
            "ingest",
            "--source",
            "runtime",
            "--error",
            seed["error"].as_str().expect("an error"),
            "--contract-fqn",
            "entity/helpdesk/ticket",
            "--stacktrace-file",
            trace.to_str().expect("a UTF-8 path"),
            "--context",
            "request_path=/tickets/abc",
            "--context",
            "method=PATCH",
            "--context",
            "status_code=500",
        ],
    ));
    let id = answer["ticket_id"].as_str().expect("a ticket id").to_owned();
    assert!(id.starts_with("ht-"), "{answer}");
    assert_eq!(answer["status"], "queued");
    let (code, over_http) = post(&base, &seed_error("def-42")).await;
    assert_eq!(code, 202, "{over_http}");
    assert_eq!(
        over_http["ticket_id"],
        id.as_str(),
        "HTTP files the error under another ticket"
    );
    let ticket = wait_ticket(&heal, &id, "classified and counted twice", |t| {
        t.status
            .as_ref()
            .is_some_and(|s| s.classification.is_some() && s.occurrences == 2)
    })
    .await;
    let status = ticket.status.expect("a status");

    // The same error from a JSON file is the same ticket again (and counted).
    let file = dir.path().join("error.json");
    std::fs::write(&file, seed.to_string()).expect("write the error");
    let again = json_of(&kubeheal(
        &heal,
        &["ticket", "ingest", "--file", file.to_str().expect("UTF-8")],
    ));
    assert_eq!(again["ticket_id"], id.as_str());
    wait_ticket(&heal, &id, "counted three times", |t| {
        t.status.as_ref().is_some_and(|s| s.occurrences == 3)
    })
    .await;

    // Seed 004's filters.
    let critical = json_of(&kubeheal(
        &heal,
        &["ticket", "list", "--priority", "critical", "-o", "json"],
    ));
    assert!(
        critical
            .as_array()
            .is_some_and(|l| l.iter().any(|t| t["id"] == id.as_str())),
        "{critical}"
    );
    let low = json_of(&kubeheal(&heal, &["ticket", "list", "--priority", "low", "-o", "json"]));
    assert_eq!(low, Value::Array(vec![]));
    let table = ok(&kubeheal(
        &heal,
        &["ticket", "list", "--contract-fqn", "entity/helpdesk/ticket"],
    ));
    let header: Vec<&str> = table.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "ID", "SOURCE", "FQN", "TYPE", "TIER", "PRIORITY", "STATUS", "SEEN", "AGE"
        ]
    );
    let row = table
        .lines()
        .find(|l| l.starts_with(&id))
        .unwrap_or_else(|| panic!("{table}"));
    let row: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        row[..8],
        [
            id.as_str(),
            "runtime",
            "entity/helpdesk/ticket",
            "runtime_500",
            "3",
            "critical",
            "queued",
            "3"
        ]
    );

    // `show` has what the operator wrote, and says what /healer/tickets/{id} says.
    let shown = json_of(&kubeheal(&heal, &["ticket", "show", &id, "-o", "json"]));
    let c = status.classification.as_ref().expect("a classification");
    assert_eq!(shown["error_type"], c.error_type.as_str());
    assert_eq!(shown["tier"], c.tier);
    assert_eq!(shown["fixable_by"], "contract");
    assert_eq!(shown["priority"], "critical");
    assert_eq!(shown["occurrences"], 3);
    assert_eq!(
        shown["fingerprint"],
        status.fingerprint.as_deref().expect("a fingerprint")
    );
    let text = ok(&kubeheal(&heal, &["ticket", "show", &id]));
    assert!(
        text.contains("error_type: runtime_500") && text.contains("occurrences: 3"),
        "{text}"
    );

    // `status` agrees with GET /healer/status (once the operator's watch cache has caught up).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let from_cli = json_of(&kubeheal(&heal, &["ticket", "status"]));
        let over_http: Value = get_json(format!("{base}/status")).await;
        if from_cli == over_http {
            assert_eq!(from_cli["queue"]["queued"], 1, "{from_cli}");
            assert_eq!(from_cli["recurring"][0]["count"], 3, "{from_cli}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "kubeheal ticket status and /healer/status disagree:\n{from_cli:#}\n{over_http:#}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    // Bad input is refused naming the field, and nothing is created.
    let bad = kubeheal(&heal, &["ticket", "ingest", "--source", "cosmic", "--error", "boom"]);
    assert!(!bad.status.success());
    let why = String::from_utf8_lossy(&bad.stderr);
    assert!(why.contains("source \"cosmic\" is not one of"), "{why}");
    let all = json_of(&kubeheal(&heal, &["ticket", "list", "-o", "json"]));
    assert_eq!(all.as_array().map(Vec::len), Some(1), "{all}");

    // No proposal, no decision: refused saying why, nothing written.
    for verb in [
        &["approve", id.as_str()][..],
        &["reject", id.as_str(), "--reason", "wrong"][..],
    ] {
        let mut args = vec!["ticket"];
        args.extend_from_slice(verb);
        let refused = kubeheal(&heal, &args);
        assert!(!refused.status.success(), "{args:?} succeeded");
        let why = String::from_utf8_lossy(&refused.stderr);
        assert!(
            why.contains("has no proposed fix")
                && why.contains("--ticket-target")
                && why.contains("kubectl describe healerticket/"),
            "{why}"
        );
    }
    let after = crate::healer_ticket::tickets(&heal).get(&id).await.expect("the ticket");
    assert_eq!(after.spec.decision, None);
}
