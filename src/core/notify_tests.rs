//! Each receiver's payload checked field by field against its service's documentation, and a
//! hostile error text through each of them.

use std::collections::BTreeMap;

use serde_json::Value;

use super::*;
use crate::api::healer_ticket::{Classification, FixableBy, HealerTicketSpec, Priority, TicketSource, TicketTarget};

const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

fn hostile() -> String {
    format!(
        "column \"severity\" does not exist <script>alert(1)</script> @channel @everyone <!here> **bold** [click](https://evil.example) & token={TOKEN}"
    )
}

fn ticket(error: &str) -> (HealerTicket, HealerTicketStatus) {
    let mut ticket = HealerTicket::new(
        "ht-0123456789abcdef",
        HealerTicketSpec {
            source: TicketSource::Runtime,
            target: TicketTarget {
                contract_fqn: Some("entity/helpdesk/incident".into()),
                ..TicketTarget::default()
            },
            error: error.into(),
            stacktrace: None,
            context: BTreeMap::new(),
            priority: None,
            decision: None,
        },
    );
    ticket.metadata.namespace = Some("shop".into());
    let status = HealerTicketStatus {
        phase: Some(TicketPhase::Failed),
        classification: Some(Classification {
            error_type: "runtime_500".into(),
            tier: 3,
            fixable_by: FixableBy::Generator,
            priority: Priority::Critical,
        }),
        resolution_note: Some("Not fixable by a contract change: a generator bug.".into()),
        ..HealerTicketStatus::default()
    };
    (ticket, status)
}

fn transition(error: &str) -> Transition {
    let (ticket, status) = ticket(error);
    let pages = Pages {
        base: "https://kubeheal.example/",
        home: "shop",
    };
    Transition::of(&ticket, &status, TicketEvent::Failed, Some(pages))
}

const LINK: &str = "https://kubeheal.example/healer/tickets/ht-0123456789abcdef/view";

/// Every string anywhere in `value`.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn all_text(value: &Value) -> String {
    let mut out = Vec::new();
    strings(value, &mut out);
    out.join("\n")
}

#[test]
fn the_transition_says_what_happened_with_the_error_and_the_link() {
    let t = transition("KeyError: 'resolution'\n  more lines");
    assert_eq!(t.event, TicketEvent::Failed);
    assert_eq!(t.ticket, "ht-0123456789abcdef");
    assert_eq!(t.namespace, "shop");
    assert_eq!(t.url.as_deref(), Some(LINK));
    assert_eq!(t.error_type.as_deref(), Some("runtime_500"));
    assert_eq!(t.priority.as_deref(), Some("critical"));
    assert_eq!(t.fixable_by.as_deref(), Some("generator"));
    assert_eq!(
        t.message,
        "Not fixable by a contract change: a generator bug. Error: KeyError: 'resolution'"
    );
    assert!(!t.message.contains('\n'));
    let (ticket, status) = ticket("x");
    assert_eq!(Transition::of(&ticket, &status, TicketEvent::Failed, None).url, None);
}

#[test]
fn each_event_is_announced_once() {
    let (_, mut status) = ticket("x");
    assert_eq!(to_announce(&status), Some(TicketEvent::Failed));
    status.notified = with_notified(&status.notified, TicketEvent::Failed);
    assert_eq!(status.notified, vec![TicketEvent::Failed]);
    assert_eq!(to_announce(&status), None);
    assert_eq!(with_notified(&status.notified, TicketEvent::Failed).len(), 1);
    status.phase = Some(TicketPhase::Queued);
    assert_eq!(to_announce(&status), None, "queued is not an event");
    status.phase = Some(TicketPhase::Proposed);
    assert_eq!(to_announce(&status), Some(TicketEvent::Proposed));
    let all = [
        TicketEvent::Rejected,
        TicketEvent::Applied,
        TicketEvent::Proposed,
        TicketEvent::Failed,
    ]
    .into_iter()
    .fold(Vec::new(), |n, e| with_notified(&n, e));
    assert_eq!(all.len(), 4, "bounded: each event once");
}

#[test]
fn slack_gets_a_fallback_text_and_block_kit_blocks() {
    let p = payload(Receiver::Slack, &transition("column \"severity\" does not exist"));
    let text = p["text"].as_str().expect("text: the notification fallback");
    assert!(
        text.starts_with("[failed] HealerTicket shop/ht-0123456789abcdef: "),
        "{text}"
    );
    let blocks = p["blocks"].as_array().expect("blocks");
    assert_eq!(blocks[0]["type"], "header");
    assert_eq!(
        blocks[0]["text"]["type"], "plain_text",
        "a header takes plain_text only"
    );
    assert!(blocks[0]["text"]["text"].as_str().unwrap().chars().count() <= 150);
    assert_eq!(blocks[1]["type"], "section");
    assert_eq!(blocks[1]["text"]["type"], "mrkdwn");
    assert_eq!(blocks[1]["text"]["verbatim"], true);
    let fields = blocks[2]["fields"].as_array().expect("section fields");
    assert!(!fields.is_empty() && fields.len() <= 10);
    for field in fields {
        assert_eq!(field["type"], "mrkdwn");
        assert!(field["text"].as_str().unwrap().chars().count() <= 2000);
    }
    assert!(fields.iter().any(|f| f["text"] == "*Error type*\nruntime_500"));
    assert!(fields.iter().any(|f| f["text"] == "*Priority*\ncritical"));
    assert!(fields.iter().any(|f| f["text"] == "*Tier*\n3"));
    assert!(fields.iter().any(|f| f["text"] == "*Target*\nentity/helpdesk/incident"));
    assert_eq!(blocks[3]["type"], "actions");
    let button = &blocks[3]["elements"][0];
    assert_eq!(button["type"], "button");
    assert_eq!(button["text"]["type"], "plain_text");
    assert_eq!(button["url"], LINK);
    // No link configured: no button.
    let mut t = transition("x");
    t.url = None;
    let p = payload(Receiver::Slack, &t);
    assert!(p["blocks"].as_array().unwrap().iter().all(|b| b["type"] != "actions"));
}

#[test]
fn discord_gets_content_and_an_embed_within_its_limits() {
    let p = payload(Receiver::Discord, &transition("column \"severity\" does not exist"));
    assert!(p["content"].as_str().unwrap().chars().count() <= 2000);
    assert_eq!(p["allowed_mentions"]["parse"], serde_json::json!([]));
    let embeds = p["embeds"].as_array().expect("embeds");
    assert_eq!(embeds.len(), 1);
    let e = &embeds[0];
    assert_eq!(e["title"], "[failed] HealerTicket shop/ht-0123456789abcdef");
    assert_eq!(e["url"], LINK);
    assert_eq!(e["color"], 0xE74C3C, "red for failed");
    assert!(
        e["description"]
            .as_str()
            .unwrap()
            .starts_with("Not fixable by a contract change")
    );
    let fields = e["fields"].as_array().unwrap();
    assert!(fields.len() <= 25);
    assert!(
        fields
            .iter()
            .any(|f| f["name"] == "Error type" && f["value"] == "runtime\\_500" && f["inline"] == true)
    );
    assert!(
        fields
            .iter()
            .any(|f| f["name"] == "Priority" && f["value"] == "critical")
    );
    // Embed limits hold even for the longest error.
    let p = payload(Receiver::Discord, &transition(&"x".repeat(8000)));
    let e = &p["embeds"][0];
    let description = e["description"].as_str().unwrap().chars().count();
    assert!(description <= 4096);
    let total = e["title"].as_str().unwrap().chars().count()
        + description
        + e["footer"]["text"].as_str().unwrap().chars().count()
        + e["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().chars().count() + f["value"].as_str().unwrap().chars().count())
            .sum::<usize>();
    assert!(total <= 6000, "{total}");
    assert!(e["description"].as_str().unwrap().ends_with('…'));
}

#[test]
fn teams_gets_a_workflows_message_with_an_adaptive_card() {
    let p = payload(Receiver::Teams, &transition("column \"severity\" does not exist"));
    assert_eq!(p["type"], "message");
    let attachments = p["attachments"].as_array().expect("attachments");
    assert_eq!(attachments.len(), 1);
    assert_eq!(attachments[0]["contentType"], "application/vnd.microsoft.card.adaptive");
    let card = &attachments[0]["content"];
    assert_eq!(card["type"], "AdaptiveCard");
    assert!(card["version"] == "1.4" || card["version"] == "1.5");
    assert!(
        p.get("@type").is_none() && p.get("sections").is_none(),
        "not a MessageCard"
    );
    let body = card["body"].as_array().unwrap();
    assert_eq!(body[0]["type"], "TextBlock");
    assert_eq!(body[0]["text"], "[failed] HealerTicket shop/ht-0123456789abcdef");
    assert_eq!(body[1]["type"], "RichTextBlock");
    assert_eq!(body[1]["inlines"][0]["type"], "TextRun");
    let facts = body.iter().find(|b| b["type"] == "FactSet").expect("a FactSet")["facts"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        facts
            .iter()
            .any(|f| f["title"] == "Priority" && f["value"] == "critical")
    );
    assert!(facts.iter().any(|f| f["title"] == "Tier" && f["value"] == "3"));
    assert_eq!(card["actions"][0]["type"], "Action.OpenUrl");
    assert_eq!(card["actions"][0]["url"], LINK);
    let long = payload(Receiver::Teams, &transition(&"é".repeat(50_000)));
    assert!(long.to_string().len() < 28 * 1024, "under Teams' 28 KB message limit");
}

#[test]
fn raw_json_is_kubeheals_own_stable_object() {
    let p = payload(Receiver::Json, &transition("column \"severity\" does not exist"));
    assert_eq!(p["event"], "failed");
    assert_eq!(p["ticket"], "ht-0123456789abcdef");
    assert_eq!(p["namespace"], "shop");
    assert_eq!(p["phase"], "Failed");
    assert_eq!(p["classification"]["error_type"], "runtime_500");
    assert_eq!(p["classification"]["tier"], 3);
    assert_eq!(p["classification"]["fixable_by"], "generator");
    assert_eq!(p["classification"]["priority"], "critical");
    assert_eq!(p["target"]["contract_fqn"], "entity/helpdesk/incident");
    assert_eq!(p["url"], LINK);
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("column \"severity\" does not exist")
    );
}

#[test]
fn a_hostile_error_is_redacted_and_escaped_for_every_receiver() {
    let t = transition(&hostile());
    assert!(!t.message.contains(TOKEN), "{}", t.message);
    assert!(t.message.contains("[REDACTED:"), "{}", t.message);
    for receiver in Receiver::ALL {
        let text = all_text(&payload(receiver, &t));
        assert!(!text.contains(TOKEN), "{receiver:?}: {text}");
    }
    // Slack: no control character of its own survives, so no <!here>, no <url|label>.
    let slack = payload(Receiver::Slack, &t);
    let section = slack["blocks"][1]["text"]["text"].as_str().unwrap();
    assert!(section.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{section}");
    assert!(
        section.contains("&lt;!here&gt;") && section.contains(" &amp; "),
        "{section}"
    );
    for text in [section, slack["text"].as_str().unwrap()] {
        assert!(!text.contains('<') && !text.contains('>'), "{text}");
    }
    // Discord: markdown and mentions escaped, and mentions switched off.
    let discord = payload(Receiver::Discord, &t);
    let description = discord["embeds"][0]["description"].as_str().unwrap();
    assert!(description.contains("\\<script\\>"), "{description}");
    assert!(
        description.contains("\\@channel") && description.contains("\\@everyone"),
        "{description}"
    );
    assert!(description.contains("\\*\\*bold\\*\\*"), "{description}");
    assert!(description.contains("\\[click\\]\\(https\\:"), "{description}");
    assert_eq!(discord["allowed_mentions"]["parse"], serde_json::json!([]));
    // Teams: the error is a TextRun (never markdown), given as it is.
    let teams = payload(Receiver::Teams, &t);
    let run = &teams["attachments"][0]["content"]["body"][1]["inlines"][0];
    assert_eq!(run["type"], "TextRun");
    assert!(run["text"].as_str().unwrap().contains("<script>alert(1)</script>"));
    let card_text = teams["attachments"][0]["content"]["body"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "TextBlock")
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect::<String>();
    assert!(
        !card_text.contains("script"),
        "application text never goes in a markdown TextBlock"
    );
}

#[test]
fn an_escape_is_never_cut_in_half() {
    let cut = fit(&"<".repeat(100), 10, slack_escape);
    assert_eq!(cut, "&lt;&lt;…");
    assert_eq!(fit("abc", 3, plain), "abc");
    assert_eq!(fit("abcd", 3, plain), "ab…");
    let cut = fit(&"*".repeat(100), 10, discord_escape);
    assert_eq!(cut, "\\*\\*\\*\\*…");
}

#[test]
fn the_ticket_page_link_has_one_slash_and_names_a_namespace_other_than_the_ticket_namespace() {
    let pages = |base| Pages { base, home: "shop" };
    assert_eq!(
        ticket_url(pages("https://h.example"), "shop", "ht-1"),
        "https://h.example/healer/tickets/ht-1/view"
    );
    assert_eq!(
        ticket_url(pages("https://h.example//"), "shop", "ht-1"),
        "https://h.example/healer/tickets/ht-1/view"
    );
    assert_eq!(
        ticket_url(pages("https://h.example"), "team-a", "ht-1"),
        "https://h.example/healer/tickets/ht-1/view?namespace=team-a"
    );
}
