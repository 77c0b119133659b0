//! The ticket pages of seed 004's `/healer` API: `/healer/view` (every ticket, in queue order)
//! and `/healer/tickets/{id}/view` (one ticket: the error, its stack trace, the classification,
//! its occurrences, the proposed fix with its changes and diff, how it ended). Self-contained HTML with inline styles and no script, readable
//! on a phone. Error texts come from applications and are untrusted: maud escapes every value
//! it interpolates, and everything shown is redacted first (as in [`describe`]).

use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;

use kube::ResourceExt;

use crate::api::healer_ticket::HealerTicket;
use crate::api::shared::wire_name;
use crate::core::redact::redact;
use crate::core::ticket_api::describe;
use crate::core::ticket_fix::patch_digest;

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#1b1f24}\
h1{font-size:1.3rem;word-break:break-all}h2{font-size:1.05rem;margin-top:1.5rem}\
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}\
th{color:#57606a;font-weight:600;white-space:nowrap}pre{background:#f6f8fa;padding:.75rem;overflow-x:auto;white-space:pre-wrap;word-break:break-word}\
.phase{display:inline-block;padding:.1rem .5rem;border-radius:1rem;background:#ddf4ff;font-weight:600}\
.failed,.rejected{background:#ffebe9}.applied{background:#dafbe1}.critical{color:#cf222e;font-weight:600}\
.scroll{overflow-x:auto}a{color:#0969da}.flash{padding:.5rem .75rem;background:#ddf4ff;border-radius:.3rem}\
form{display:inline-block;margin-right:.5rem}button{font:inherit;padding:.3rem .9rem}";

fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
    .into_string()
}

/// A described field as text (`—` when absent).
fn text(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The sign-in page's address (relative to the `/healer` API) that comes back to `next`, a
/// page of the API such as `tickets/ht-1/view?namespace=team-a`.
pub fn sign_in_link(next: &str) -> String {
    format!("sign-in?next={}", next.replace('?', "%3F").replace('=', "%3D"))
}

/// How a page's address names its namespace: not at all for the ticket namespace `home` (seed
/// 004's own addresses), `?namespace=` for any other. Every link and form of a page carries it.
pub fn namespace_query(namespace: &str, home: &str) -> String {
    if namespace == home {
        String::new()
    } else {
        format!("?namespace={namespace}")
    }
}

/// The list page of `namespace` (its links carry `query`, see [`namespace_query`]): one row per
/// ticket of `described` (as [`describe`] gives them, in queue order).
pub fn list_page(described: &[Value], namespace: &str, query: &str) -> String {
    let body = html! {
        h1 { "Error tickets in " (namespace) }
        p {
            (described.len()) @if described.len() == 1 { " ticket" } @else { " tickets" }
            ", most urgent first. " a href={ "status" (query) } { "Summary (JSON)" }
        }
        div.scroll {
            table {
                tr { th { "Ticket" } th { "Status" } th { "Priority" } th { "Error type" } th { "Contract" } th { "Seen" } th { "Last seen" } }
                @for ticket in described {
                    @let id = text(&ticket["id"]);
                    @let priority = text(&ticket["priority"]);
                    tr {
                        td { a href={ "tickets/" (id) "/view" (query) } { (id) } }
                        td { span class={ "phase " (text(&ticket["status"])) } { (text(&ticket["status"])) } }
                        td class=(priority) { (priority) }
                        td { (text(&ticket["error_type"])) }
                        td { (text(&ticket["contract_fqn"])) }
                        td { (text(&ticket["occurrences"])) }
                        td { (text(&ticket["last_seen"])) }
                    }
                }
            }
        }
    };
    page("Error tickets", body)
}

/// The person a page is shown to, once signed in: their name, and the CSRF token the page's
/// forms carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    pub user: String,
    pub csrf: String,
}

/// The sign-in page: a Kubernetes token pasted in, then back to `next` (a page of the API).
pub fn sign_in_html(next: &str, error: Option<&str>) -> String {
    let body = html! {
        h1 { "Sign in" }
        @if let Some(error) = error {
            p.flash.failed { (error) }
        }
        p {
            "Decisions on tickets are taken as you: paste a Kubernetes token of yours (from "
            code { "kubectl create token" } " for a ServiceAccount, or your OIDC id-token). The API server says who you are, and decides what you may approve. The token stays in this browser's session cookie."
        }
        form method="post" action="sign-in" {
            input type="hidden" name="next" value=(next);
            p { textarea name="token" rows="4" cols="60" required autocomplete="off" placeholder="eyJhbGciOi…" {} }
            p { button type="submit" { "Sign in" } }
        }
    };
    page("Sign in", body)
}

/// The page of one ticket, for `viewer` when a person signed in (the approve and reject forms),
/// with `flash` saying how the last decision went.
/// A ticket's page, its links carrying `query` (see [`namespace_query`]).
pub fn ticket_page(ticket: &HealerTicket, viewer: Option<&Viewer>, flash: Option<&str>, query: &str) -> String {
    let d = describe(ticket);
    let id = text(&d["id"]);
    let stacktrace = ticket.spec.stacktrace.as_deref().map(|s| redact(s, &[]).0);
    let status = text(&d["status"]);
    let namespace = ticket.namespace().unwrap_or_default();
    let body = html! {
        p { a href={ "../../view" (query) } { "← all tickets" } }
        h1 { "Ticket " (id) }
        @if let Some(flash) = flash {
            p.flash { (flash) }
        }
        p { span class={ "phase " (status) } { (status) } " " (text(&d["resolution_note"])) }
        h2 { "Error" }
        pre { (text(&d["raw_error"])) }
        @if let Some(trace) = &stacktrace {
            h2 { "Stack trace" }
            pre { (trace) }
        }
        h2 { "Classification" }
        table {
            tr { th { "Error type" } td { (text(&d["error_type"])) } }
            tr { th { "Tier" } td { (text(&d["tier"])) } }
            tr { th { "Fixable by" } td { (text(&d["fixable_by"])) } }
            tr { th { "Priority" } td class=(text(&d["priority"])) { (text(&d["priority"])) } }
            tr { th { "Source" } td { (text(&d["source"])) } }
            tr { th { "Contract" } td { (text(&d["contract_fqn"])) } }
            tr { th { "Fingerprint" } td { code { (text(&d["fingerprint"])) } } }
        }
        h2 { "Occurrences" }
        table {
            tr { th { "Seen" } td { (text(&d["occurrences"])) " times" } }
            tr { th { "First" } td { (text(&d["first_seen"])) } }
            tr { th { "Last" } td { (text(&d["last_seen"])) } }
            @if let Some(previous) = d["recurrence_of"].as_str() {
                tr { th { "Recurrence of" } td { a href={ "../" (previous) "/view" (query) } { (previous) } } }
            }
        }
        @if let Some(context) = d["context"].as_object().filter(|c| !c.is_empty()) {
            h2 { "Context" }
            table {
                @for (key, value) in context {
                    tr { th { (key) } td { (text(value)) } }
                }
            }
        }
        h2 { "Proposal" }
        @if let Some(proposal) = ticket.status.as_ref().and_then(|s| s.proposal.as_ref()) {
            table {
                tr { th { "Fix" } td { (redact(&proposal.explanation, &[]).0) } }
                tr { th { "Method" } td { (wire_name(&proposal.method)) } }
                tr { th { "Confidence" } td { (proposal.confidence) } }
                @if let Some(path) = &proposal.contract_path {
                    tr { th { "Contract file" } td { code { (path) } } }
                }
                tr { th { "Patch" } td { code { (proposal.patch_digest) } } }
            }
            @if !proposal.changes.is_empty() {
                h2 { "Changes" }
                ul { @for change in &proposal.changes { li { code { (redact(change, &[]).0) } } } }
            }
            @if !proposal.removed.is_empty() {
                p { "Removed from the model's answer (not allowed in a contract field):" }
                ul { @for key in &proposal.removed { li { code { (key) } } } }
            }
            @if let (Some(path), Some(before), Some(after)) = (&proposal.contract_path, &proposal.before, &proposal.after) {
                h2 { "Diff" }
                pre { (redact(&patch_digest(path, before, after).0, &[]).0) }
            }
            @if let Some(apply) = ticket.status.as_ref().and_then(|s| s.apply.as_ref()) {
                p {
                    "Applied as commit " code { (text(&serde_json::json!(apply.commit))) }
                    " on branch " code { (text(&serde_json::json!(apply.branch))) }
                    @if apply.rolled_back { ", then undone (below)." } @else { "." }
                }
            } @else if status == "proposed" && ticket.spec.decision.is_none() {
                h2 { "Decision" }
                @if let Some(viewer) = viewer {
                    p { "Signed in as " strong { (viewer.user) } ". Approving applies exactly patch " code { (proposal.patch_digest) } "." }
                    form method="post" action={ "../../approve/" (id) "/action" (query) } {
                        input type="hidden" name="csrf" value=(viewer.csrf);
                        input type="hidden" name="patch_digest" value=(proposal.patch_digest);
                        button type="submit" { "Approve" }
                    }
                    form method="post" action={ "../../reject/" (id) "/action" (query) } {
                        input type="hidden" name="csrf" value=(viewer.csrf);
                        input type="hidden" name="patch_digest" value=(proposal.patch_digest);
                        p { textarea name="reason" rows="2" cols="60" required placeholder="Why not (the people who proposed it read this)" {} }
                        button type="submit" { "Reject" }
                    }
                    form method="post" action="../../sign-out" { button type="submit" { "Sign out" } }
                } @else {
                    p {
                        a href={ "../../" (sign_in_link(&format!("tickets/{id}/view{query}"))) } { "Sign in" }
                        " to approve or reject as yourself, or: "
                        code { "kubeheal ticket approve " (id) " -n " (namespace) }
                    }
                }
            }
        } @else {
            p { "No fix has been proposed for this ticket." }
        }
        @if let Some(regenerate) = d["regenerate"].as_object() {
            // Seed 004's Regenerate step, from the description (redacted there).
            h2 { "Regenerated code" }
            table {
                tr { th { "Job" } td { code { (text(&regenerate["job_name"])) } } }
                tr {
                    th { "Result" }
                    td {
                        @if regenerate["result"].is_null() && status == "approved" { "running" }
                        @else { (text(&regenerate["result"])) }
                    }
                }
                @if !regenerate["files"].is_null() {
                    tr { th { "Files regenerated" } td { (text(&regenerate["files"])) } }
                }
                @if !regenerate["commit"].is_null() {
                    tr { th { "Commit" } td { code { (text(&regenerate["commit"])) } } }
                }
                @if !regenerate["revert_commit"].is_null() {
                    tr { th { "Fix reverted by" } td { code { (text(&regenerate["revert_commit"])) } } }
                }
            }
            @if let Some(why) = regenerate["error"].as_str() {
                p { "The regeneration failed, so the fix was reverted:" }
                pre { (why) }
            }
        }
    };
    page(&format!("Ticket {id}"), body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::healer_ticket::{ApplyStatus, HealerTicketSpec, HealerTicketStatus, RegenerateStatus, TicketPhase};

    fn hostile() -> HealerTicket {
        let spec: HealerTicketSpec = serde_json::from_value(serde_json::json!({
            "source": "runtime",
            "target": {"contractFqn": "entity/helpdesk/<b>ticket</b>"},
            "error": "KeyError: '<script>alert(1)</script>' token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
            "stacktrace": "File \"app.py\", line 3\n<img src=x onerror=alert(2)>",
            "context": {"<i>path</i>": "/tickets/\"><svg onload=alert(3)>"}
        }))
        .expect("a spec");
        let mut ticket = HealerTicket::new("ht-0123456789abcdef", spec);
        ticket.metadata.namespace = Some("team-a".into());
        ticket.status = Some(HealerTicketStatus {
            phase: Some(TicketPhase::Queued),
            occurrences: 3,
            recurrence_of: Some("ht-0123456789abcdef".into()),
            ..HealerTicketStatus::default()
        });
        ticket
    }

    #[test]
    fn what_an_application_sent_is_text_on_the_page_and_its_secrets_are_redacted() {
        let page = ticket_page(&hostile(), None, Some("<b>flash</b>"), "?namespace=team-a");
        for raw in ["<script>", "<img", "<svg", "<b>", "<i>"] {
            assert!(!page.contains(raw), "{raw} reached the page unescaped:\n{page}");
        }
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{page}");
        assert!(page.contains("&lt;img src=x onerror=alert(2)&gt;"), "{page}");
        assert!(!page.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"));
        assert!(page.contains("[REDACTED:"));
        assert!(page.contains("3 times"));
        assert!(page.contains(r#"href="../ht-0123456789abcdef/view?namespace=team-a""#));
        assert!(page.contains("&lt;b&gt;flash&lt;/b&gt;"), "the flash is text too");
    }

    fn proposed() -> HealerTicket {
        let mut ticket = hostile();
        let status = ticket.status.as_mut().expect("a status");
        status.phase = Some(TicketPhase::Proposed);
        status.proposal = Some(crate::api::healer_ticket::TicketProposal {
            method: crate::api::healer_ticket::ProposalMethod::LlmRuntime,
            confidence: 0.5,
            explanation: "Add resolution".into(),
            changes: vec!["added: spec.fields.resolution = {type: text}".into()],
            removed: vec!["spec.fields.resolution.required_when".into()],
            contract_path: Some("c.yaml".into()),
            base_commit: None,
            before: Some("spec: {}\n".into()),
            after: Some("spec: {fields: {resolution: {type: text}}}\n".into()),
            patch_digest: format!("sha256:{}", "a".repeat(64)),
        });
        ticket
    }

    #[test]
    fn a_signed_in_person_gets_the_forms_with_the_session_s_csrf_token_and_others_a_sign_in_link() {
        let viewer = Viewer {
            user: "alice".into(),
            csrf: "c5rf".into(),
        };
        let page = ticket_page(&proposed(), Some(&viewer), None, "?namespace=team-a");
        assert!(
            page.contains(r#"action="../../approve/ht-0123456789abcdef/action?namespace=team-a""#),
            "{page}"
        );
        assert!(
            page.contains(r#"action="../../reject/ht-0123456789abcdef/action?namespace=team-a""#),
            "{page}"
        );
        assert_eq!(page.matches(r#"name="csrf" value="c5rf""#).count(), 2, "{page}");
        let digest = format!(r#"name="patch_digest" value="sha256:{}""#, "a".repeat(64));
        assert_eq!(
            page.matches(&digest).count(),
            2,
            "the forms name the patch shown: {page}"
        );
        assert!(
            page.contains("+spec: {fields: {resolution: {type: text}}}"),
            "the diff: {page}"
        );
        assert!(
            page.contains("spec.fields.resolution.required_when"),
            "what was removed"
        );
        let anonymous = ticket_page(&proposed(), None, None, "?namespace=team-a");
        assert!(!anonymous.contains("name=\"csrf\""), "{anonymous}");
        assert!(
            anonymous.contains(r#"href="../../sign-in?next=tickets/ht-0123456789abcdef/view%3Fnamespace%3Dteam-a""#)
        );
        // Decided: nothing more to decide.
        let mut decided = proposed();
        decided.spec.decision = Some(crate::api::shared::Decision {
            decision: crate::api::shared::Verdict::Approved,
            reason: None,
            approved_by: "alice".into(),
            patch_digest: None,
        });
        assert!(!ticket_page(&decided, Some(&viewer), None, "").contains("name=\"csrf\""));
    }

    /// [`proposed`], applied as `fix`, and regenerated as `regenerate` says.
    fn regenerated(regenerate: RegenerateStatus, apply_error: Option<&str>) -> HealerTicket {
        let mut ticket = proposed();
        let status = ticket.status.as_mut().expect("a status");
        status.phase = Some(if apply_error.is_some() {
            TicketPhase::Failed
        } else {
            TicketPhase::Applied
        });
        status.apply = Some(ApplyStatus {
            branch: Some("kubeheal/ht-0123456789abcdef".into()),
            commit: Some("f1".repeat(20)),
            rolled_back: apply_error.is_some(),
            error: apply_error.map(str::to_owned),
        });
        status.regenerate = Some(regenerate);
        ticket
    }

    #[test]
    fn the_page_shows_the_regeneration_its_job_count_and_commit() {
        let page = ticket_page(
            &regenerated(
                RegenerateStatus {
                    job_name: Some("ht-0123456789abcdef-regenerate".into()),
                    result: Some("3 files regenerated".into()),
                    files: Some(3),
                    commit: Some("c2".repeat(20)),
                    revert_commit: None,
                },
                None,
            ),
            None,
            None,
            "",
        );
        let section = page.split("<h2>Regenerated code</h2>").nth(1).expect("the section");
        for shown in [
            "<code>ht-0123456789abcdef-regenerate</code>",
            "3 files regenerated",
            "<th>Files regenerated</th><td>3</td>",
            &format!("<code>{}</code>", "c2".repeat(20)),
        ] {
            assert!(section.contains(shown), "{shown} is not shown:\n{section}");
        }
        assert!(!section.contains("reverted"), "{section}");
        assert!(page.contains(&format!("{}</code> on branch", "f1".repeat(20))));
    }

    #[test]
    fn a_failed_regeneration_shows_the_revert_and_why_escaped_and_redacted() {
        let why = "the regenerate command exited with code 1; it printed: <script>alert(4)</script> GITHUB_TOKEN=ghp_R2x8kQ7vLw3mZp9TnB4cY6dHs1aFj0eUiKoX";
        let page = ticket_page(
            &regenerated(
                RegenerateStatus {
                    job_name: Some("ht-0123456789abcdef-regenerate".into()),
                    result: Some("failed: <b>exited</b>".into()),
                    files: None,
                    commit: None,
                    revert_commit: Some("d3".repeat(20)),
                },
                Some(why),
            ),
            None,
            None,
            "",
        );
        let section = page.split("<h2>Regenerated code</h2>").nth(1).expect("the section");
        assert!(
            section.contains(&format!("<th>Fix reverted by</th><td><code>{}</code>", "d3".repeat(20))),
            "{section}"
        );
        assert!(section.contains("the fix was reverted"), "{section}");
        assert!(section.contains("exited with code 1"), "{section}");
        assert!(
            section.contains("&lt;script&gt;alert(4)&lt;/script&gt;") && section.contains("&lt;b&gt;exited"),
            "{section}"
        );
        assert!(!page.contains("<script>") && !page.contains("<b>"), "{page}");
        assert!(!page.contains("ghp_R2x8kQ7vLw3mZp9TnB4cY6dHs1aFj0eUiKoX"), "{page}");
        assert!(section.contains("[REDACTED:"), "{section}");
        assert!(
            !section.contains("Files regenerated"),
            "nothing was committed: {section}"
        );
        assert!(page.contains("then undone (below)"), "{page}");
    }

    #[test]
    fn a_regeneration_under_way_is_shown_running_and_a_ticket_without_one_shows_no_section() {
        let mut running = regenerated(
            RegenerateStatus {
                job_name: Some("ht-0123456789abcdef-regenerate".into()),
                ..RegenerateStatus::default()
            },
            None,
        );
        running.status.as_mut().expect("a status").phase = Some(TicketPhase::Approved);
        let page = ticket_page(&running, None, None, "");
        assert!(page.contains("<th>Result</th><td>running</td>"), "{page}");
        assert!(!ticket_page(&proposed(), None, None, "").contains("Regenerated code"));
    }

    #[test]
    fn the_sign_in_page_posts_the_token_and_escapes_what_it_is_told() {
        let page = sign_in_html("tickets/ht-1/view", Some("<b>expired</b>"));
        assert!(page.contains(r#"<form method="post" action="sign-in">"#), "{page}");
        assert!(
            page.contains(r#"value="tickets/ht-1/view""#) && page.contains("&lt;b&gt;expired"),
            "{page}"
        );
    }

    #[test]
    fn the_list_links_every_ticket_to_its_page() {
        let described = vec![describe(&hostile())];
        let page = list_page(&described, "team-a", "?namespace=team-a");
        assert!(
            page.contains(r#"href="tickets/ht-0123456789abcdef/view?namespace=team-a""#),
            "{page}"
        );
        assert!(page.contains(r#"href="status?namespace=team-a""#), "{page}");
        assert!(page.contains("1 ticket,") && !page.contains("<b>"), "{page}");
        let home = list_page(&described, "tickets", "");
        assert!(home.contains(r#"href="tickets/ht-0123456789abcdef/view""#), "{home}");
    }

    #[test]
    fn only_a_namespace_other_than_the_ticket_namespace_is_named_in_addresses() {
        assert_eq!(namespace_query("tickets", "tickets"), "");
        assert_eq!(namespace_query("team-a", "tickets"), "?namespace=team-a");
        assert_eq!(
            sign_in_link("tickets/ht-1/view?namespace=team-a"),
            "sign-in?next=tickets/ht-1/view%3Fnamespace%3Dteam-a"
        );
    }
}
