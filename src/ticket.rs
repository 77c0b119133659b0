//! `kubeheal ticket`: seed 004's `specora healer` commands over HealerTickets, talking to the
//! Kubernetes API with the current kubeconfig (as `cmctl` does), not to the operator's HTTP port.
//! Each does what the `/healer` API does, with the same code: an ingest is checked by the same
//! [`ingest_spec`], filed under the same fingerprint name and counted by the same conditional
//! write ([`record`]); `list`, `show` and `status` describe tickets with the same functions.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;
use kube::Api;
use serde_json::{Value, json};

use crate::api::healer_ticket::HealerTicket;
use crate::core::ticket_api::{Filters, describe, ingest_spec, listing, phase_name, summary, ticket_id};
use crate::decide::connect;
use crate::decision::{Verdict, decide_ticket};
use crate::intake::{Occurrences, record};

/// What to ingest: a JSON file in seed 004's IngestRequest shape, or its fields as flags.
#[derive(Debug, Clone, Default)]
pub struct Ingest {
    pub file: Option<String>,
    pub source: Option<String>,
    pub error: Option<String>,
    pub contract_fqn: Option<String>,
    pub stacktrace: Option<String>,
    pub context: Vec<(String, String)>,
}

/// The IngestRequest body the flags make (checked afterwards exactly as the HTTP body is).
pub fn ingest_body(fields: &Ingest) -> Result<Vec<u8>, String> {
    if let Some(file) = &fields.file {
        return std::fs::read(file).map_err(|e| format!("cannot read --file {file}: {e}"));
    }
    let mut body = serde_json::Map::new();
    for (key, value) in [
        ("source", &fields.source),
        ("error", &fields.error),
        ("contract_fqn", &fields.contract_fqn),
        ("stacktrace", &fields.stacktrace),
    ] {
        if let Some(value) = value {
            body.insert(key.into(), json!(value));
        }
    }
    if !fields.context.is_empty() {
        let context: BTreeMap<&str, &str> = fields.context.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        body.insert("context".into(), json!(context));
    }
    serde_json::to_vec(&Value::Object(body)).map_err(|e| e.to_string())
}

/// `kubeheal ticket ingest`: `{"ticket_id": ..., "status": ...}`, as `POST /healer/ingest` answers.
pub async fn ingest(namespace: Option<&str>, fields: &Ingest) -> Result<Value, String> {
    let spec = ingest_spec(&ingest_body(fields)?)?;
    let name = ticket_id(&spec);
    let (client, namespace) = connect(namespace).await?;
    let api: Api<HealerTicket> = Api::namespaced(client, &namespace);
    let written = record(&api, &name, &spec, Occurrences::once())
        .await
        .map_err(|e| format!("cannot record ticket {name} in namespace {namespace}: {e}"))?;
    let phase = written.status.as_ref().and_then(|s| s.phase);
    Ok(json!({
        "ticket_id": name,
        "status": phase.map_or_else(|| "queued".to_owned(), phase_name),
    }))
}

async fn tickets(namespace: Option<&str>) -> Result<(Api<HealerTicket>, String, Vec<HealerTicket>), String> {
    let (client, namespace) = connect(namespace).await?;
    let api: Api<HealerTicket> = Api::namespaced(client, &namespace);
    let all = api
        .list(&Default::default())
        .await
        .map_err(|e| format!("cannot list healertickets in namespace {namespace}: {e}"))?;
    Ok((api, namespace, all.items))
}

/// `kubeheal ticket list`: the tickets in queue order, filtered as `GET /healer/tickets` is.
pub async fn list(namespace: Option<&str>, filters: &Filters) -> Result<Vec<Value>, String> {
    let (_, _, mut all) = tickets(namespace).await?;
    Ok(listing(&mut all, filters))
}

/// `kubeheal ticket status`: what `GET /healer/status` answers.
pub async fn status(namespace: Option<&str>) -> Result<Value, String> {
    let (_, _, all) = tickets(namespace).await?;
    Ok(summary(&all))
}

async fn get(api: &Api<HealerTicket>, namespace: &str, id: &str) -> Result<HealerTicket, String> {
    api.get_opt(id)
        .await
        .map_err(|e| format!("cannot read healerticket/{id} in namespace {namespace}: {e}"))?
        .ok_or_else(|| {
            format!("healerticket/{id} does not exist in namespace {namespace} (kubeheal ticket list -n {namespace})")
        })
}

/// `kubeheal ticket show`: the ticket as `GET /healer/tickets/{id}` describes it.
pub async fn show(namespace: Option<&str>, id: &str) -> Result<Value, String> {
    let (client, namespace) = connect(namespace).await?;
    let api: Api<HealerTicket> = Api::namespaced(client, &namespace);
    Ok(describe(&get(&api, &namespace, id).await?))
}

/// `--digest`: a patch digest as `kubeheal ticket show` prints it, `sha256:` and 64 lower-case
/// hex digits. Checked before anything is read, so a digest mistyped or cut short is named as
/// such rather than taken for a proposal that changed.
pub fn parse_digest(value: &str) -> Result<String, String> {
    let hex = value.strip_prefix("sha256:").unwrap_or_default();
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Ok(value.to_owned());
    }
    Err(format!(
        "{value:?} is not a patch digest: give the proposal's patch_digest as `kubeheal ticket show ID` prints it, sha256: and 64 lower-case hex digits"
    ))
}

/// `kubeheal ticket approve|reject`: writes `spec.decision` as the current user, bound to the
/// proposal's digest — when there is a proposal; without one nothing is written. With `seen`
/// (`--digest`, the patch the person looked at) the decision is written only while that is
/// still the proposal: a proposal that changed since is not decided on blindly.
pub async fn decide(
    namespace: Option<&str>,
    id: &str,
    verdict: Verdict,
    reason: Option<&str>,
    seen: Option<&str>,
) -> Result<String, String> {
    let (client, namespace) = connect(namespace).await?;
    let decided = decide_ticket(&client, &namespace, id, verdict, reason, seen)
        .await
        .map_err(|r| r.message)?;
    Ok(format!(
        "healerticket/{id} {} by {} (patch {})",
        match verdict {
            Verdict::Approve => "approved",
            Verdict::Reject => "rejected",
        },
        decided.user,
        decided.patch_digest
    ))
}

/// Seed 004's list as a table: ID, SOURCE, FQN, TYPE, TIER, PRIORITY, STATUS, SEEN, AGE.
pub fn table(tickets: &[Value], now: Timestamp) -> String {
    let text = |v: &Value| match v {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut rows = vec![
        [
            "ID", "SOURCE", "FQN", "TYPE", "TIER", "PRIORITY", "STATUS", "SEEN", "AGE",
        ]
        .map(str::to_owned),
    ];
    for t in tickets {
        let age = t["created_at"]
            .as_str()
            .and_then(|c| c.parse::<Timestamp>().ok())
            .map_or_else(|| "-".to_owned(), |c| age(now.duration_since(c).as_secs()));
        rows.push([
            text(&t["id"]),
            text(&t["source"]),
            text(&t["contract_fqn"]),
            text(&t["error_type"]),
            text(&t["tier"]),
            text(&t["priority"]),
            text(&t["status"]),
            text(&t["occurrences"]),
            age,
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            line.join("   ").trim_end().to_owned() + "\n"
        })
        .collect()
}

/// An age as `kubectl get` shows it: `45s`, `12m`, `5h`, `3d`.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// A described ticket as `key: value` lines, nested values indented (`-o text`).
pub fn text(ticket: &Value) -> String {
    fn lines(value: &Value, indent: usize, out: &mut String) {
        if let Value::Object(map) = value {
            for (key, value) in map {
                match value {
                    Value::Null => {}
                    Value::Object(inner) if inner.is_empty() => {}
                    Value::Object(_) => {
                        out.push_str(&format!("{:indent$}{key}:\n", ""));
                        lines(value, indent + 2, out);
                    }
                    Value::Array(items) => {
                        out.push_str(&format!("{:indent$}{key}:\n", ""));
                        for item in items {
                            let item = item.as_str().map_or_else(|| item.to_string(), str::to_owned);
                            out.push_str(&format!("{:indent$}  - {item}\n", ""));
                        }
                    }
                    Value::String(s) if s.contains('\n') => {
                        out.push_str(&format!("{:indent$}{key}: |\n", ""));
                        for line in s.lines() {
                            out.push_str(&format!("{:indent$}  {line}\n", ""));
                        }
                    }
                    Value::String(s) => out.push_str(&format!("{:indent$}{key}: {s}\n", "")),
                    other => out.push_str(&format!("{:indent$}{key}: {other}\n", "")),
                }
            }
        }
    }
    let mut out = String::new();
    lines(ticket, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_make_the_body_the_http_ingest_takes() {
        let fields = Ingest {
            source: Some("runtime".into()),
            error: Some("KeyError: 'resolution'".into()),
            contract_fqn: Some("entity/helpdesk/ticket".into()),
            context: vec![("status_code".into(), "500".into())],
            ..Ingest::default()
        };
        let from_flags = ingest_spec(&ingest_body(&fields).expect("a body")).expect("valid");
        let over_http = ingest_spec(
            br#"{"source":"runtime","contract_fqn":"entity/helpdesk/ticket","error":"KeyError: 'resolution'","context":{"status_code":500}}"#,
        )
        .expect("valid");
        assert_eq!(from_flags, over_http);
        assert_eq!(ticket_id(&from_flags), ticket_id(&over_http));
    }

    #[test]
    fn a_bad_flag_is_refused_naming_the_field() {
        let fields = Ingest {
            source: Some("cosmic".into()),
            error: Some("boom".into()),
            ..Ingest::default()
        };
        let why = ingest_spec(&ingest_body(&fields).expect("a body")).expect_err("refused");
        assert!(why.contains("source \"cosmic\""), "{why}");
        let why = ingest_spec(&ingest_body(&Ingest::default()).expect("a body")).expect_err("refused");
        assert!(why.contains("source is required"), "{why}");
    }

    #[test]
    fn the_table_has_seed_004s_columns_and_kubectl_ages() {
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().expect("a time");
        let rows = [
            json!({"id": "ht-1", "source": "runtime", "contract_fqn": "entity/a/b", "error_type": "runtime_500",
            "tier": 3, "priority": "critical", "status": "queued", "occurrences": 2, "created_at": "2026-01-01T00:00:00Z"}),
        ];
        let table = table(&rows, now);
        let mut lines = table.lines();
        assert_eq!(
            lines.next().map(|l| l.split_whitespace().collect::<Vec<_>>()),
            Some(vec![
                "ID", "SOURCE", "FQN", "TYPE", "TIER", "PRIORITY", "STATUS", "SEEN", "AGE"
            ])
        );
        assert_eq!(
            lines.next().map(|l| l.split_whitespace().collect::<Vec<_>>()),
            Some(vec![
                "ht-1",
                "runtime",
                "entity/a/b",
                "runtime_500",
                "3",
                "critical",
                "queued",
                "2",
                "1h"
            ])
        );
        assert_eq!([age(5), age(125), age(7200), age(200_000)], ["5s", "2m", "2h", "2d"]);
    }

    #[test]
    fn a_digest_must_be_a_whole_sha256_digest() {
        let digest = format!("sha256:{}", "0a".repeat(32));
        assert_eq!(parse_digest(&digest), Ok(digest.clone()));
        for bad in [
            "0a".repeat(32),
            format!("sha256:{}", "0a".repeat(31)),
            format!("sha256:{}", "0A".repeat(32)),
            format!("sha1:{}", "0a".repeat(32)),
            String::new(),
        ] {
            let why = parse_digest(&bad).expect_err(&bad);
            assert!(
                why.contains("is not a patch digest") && why.contains("kubeheal ticket show"),
                "{why}"
            );
        }
    }

    #[test]
    fn text_shows_nested_fields_and_skips_empty_ones() {
        let shown = text(&json!({"id": "ht-1", "proposal": null, "context": {"method": "PATCH"}, "raw_error": "a\nb"}));
        assert_eq!(shown, "context:\n  method: PATCH\nid: ht-1\nraw_error: |\n  a\n  b\n");
    }
}
