//! Notify, the last stage of seed 004's pipeline: what each receiver is sent when a HealerTicket
//! reaches one of the announced phases (proposed, applied, failed, rejected). Pure: the payloads
//! are built here, `operator::notify` posts them.
//!
//! Each receiver gets its own service's documented format:
//! - Slack incoming webhook: `text` (the notification fallback) and Block Kit `blocks`
//!   (<https://api.slack.com/messaging/webhooks>, <https://api.slack.com/reference/block-kit/blocks>);
//! - Discord webhook: `content` and `embeds` (<https://discord.com/developers/docs/resources/webhook#execute-webhook>);
//! - Microsoft Teams: the Workflows ("When a Teams webhook request is received") format, a
//!   `message` whose attachment is an Adaptive Card — the Office 365 connector MessageCard is
//!   retired and Workflows do not accept it
//!   (<https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using>);
//! - raw JSON: kubeheal's own stable object, for anything else.
//!
//! Error texts come from applications: untrusted. Every one is redacted (`core::redact`) and
//! escaped for the receiver's markup, and cut to the receiver's documented length limits (a
//! payload over a limit is refused whole, so the notification would be lost).

use serde_json::{Value, json};

use crate::api::healer_ticket::{HealerTicket, HealerTicketStatus, TicketEvent, TicketPhase};
use crate::api::shared::wire_name;
use crate::core::healer_ticket::headline;
use crate::core::redact::redact;

/// Where notifications go: the keys of the `--notify-secret` Secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Receiver {
    Slack,
    Discord,
    Teams,
    Json,
}

impl Receiver {
    pub const ALL: [Receiver; 4] = [Receiver::Slack, Receiver::Discord, Receiver::Teams, Receiver::Json];

    /// The Secret key holding its URL, and its name in logs (never the URL: it is the secret).
    pub fn key(self) -> &'static str {
        match self {
            Receiver::Slack => "slack",
            Receiver::Discord => "discord",
            Receiver::Teams => "teams",
            Receiver::Json => "json",
        }
    }
}

/// The event a phase announces, if it is one of seed 004's.
pub fn event_of(phase: TicketPhase) -> Option<TicketEvent> {
    match phase {
        TicketPhase::Proposed => Some(TicketEvent::Proposed),
        TicketPhase::Applied => Some(TicketEvent::Applied),
        TicketPhase::Failed => Some(TicketEvent::Failed),
        TicketPhase::Rejected => Some(TicketEvent::Rejected),
        TicketPhase::Queued | TicketPhase::Analyzing | TicketPhase::Approved => None,
    }
}

/// The event a status announces that was not announced yet: once per event, whatever the number
/// of reconciles, operators or restarts (the list lives in the ticket's status).
pub fn to_announce(status: &HealerTicketStatus) -> Option<TicketEvent> {
    let event = event_of(status.phase?)?;
    (!status.notified.contains(&event)).then_some(event)
}

/// `notified` with `event` added: sorted, each event once (so at most four entries).
pub fn with_notified(notified: &[TicketEvent], event: TicketEvent) -> Vec<TicketEvent> {
    let mut out = notified.to_vec();
    out.push(event);
    out.sort();
    out.dedup();
    out
}

/// Where the ticket pages are served, for the notifications' links.
#[derive(Clone, Copy, Debug)]
pub struct Pages<'a> {
    /// Their base URL (`--ticket-page-url`).
    pub base: &'a str,
    /// The ticket namespace: its tickets' addresses name no namespace.
    pub home: &'a str,
}

/// The page of ticket `id` of `namespace`: `{base}/healer/tickets/{id}/view` (seed 004's link
/// in notifications), with `?namespace=` when it is not the ticket namespace.
pub fn ticket_url(pages: Pages<'_>, namespace: &str, id: &str) -> String {
    format!(
        "{}/healer/tickets/{id}/view{}",
        pages.base.trim_end_matches('/'),
        crate::core::ticket_page::namespace_query(namespace, pages.home)
    )
}

/// One transition to announce: everything a payload says, application text already redacted.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub event: TicketEvent,
    pub ticket: String,
    pub namespace: String,
    pub phase: TicketPhase,
    /// The contract FQN or the path the error points at.
    pub contract_fqn: Option<String>,
    pub path: Option<String>,
    pub error_type: Option<String>,
    pub tier: Option<u8>,
    pub fixable_by: Option<String>,
    pub priority: Option<String>,
    /// One paragraph: what happened (the diagnostic or the resolution) and the error's headline,
    /// redacted, whitespace collapsed.
    pub message: String,
    /// The ticket page, when `--ticket-page-url` is set.
    pub url: Option<String>,
}

impl Transition {
    /// The transition `ticket` makes to `event` with `status` (the status being written).
    pub fn of(
        ticket: &HealerTicket,
        status: &HealerTicketStatus,
        event: TicketEvent,
        pages: Option<Pages<'_>>,
    ) -> Self {
        let name = ticket.metadata.name.clone().unwrap_or_default();
        let namespace = ticket.metadata.namespace.clone().unwrap_or_default();
        let class = status.classification.as_ref();
        let what = status
            .resolution_note
            .clone()
            .or_else(|| status.proposal.as_ref().map(|p| p.explanation.clone()))
            .unwrap_or_default();
        let error = headline(&ticket.spec.error);
        Transition {
            event,
            url: pages.map(|pages| ticket_url(pages, &namespace, &name)),
            namespace,
            phase: status.phase.unwrap_or(TicketPhase::Failed),
            contract_fqn: ticket.spec.target.contract_fqn.clone(),
            path: ticket.spec.target.path.clone(),
            error_type: class.map(|c| c.error_type.clone()),
            tier: class.map(|c| c.tier),
            fixable_by: class.map(|c| wire_name(&c.fixable_by)),
            priority: class.map(|c| wire_name(&c.priority)),
            message: paragraph(&format!("{what} Error: {error}")),
            ticket: name,
        }
    }

    fn target(&self) -> &str {
        self.contract_fqn.as_deref().or(self.path.as_deref()).unwrap_or("-")
    }

    fn title(&self) -> String {
        format!(
            "[{}] HealerTicket {}/{}",
            wire_name(&self.event),
            self.namespace,
            self.ticket
        )
    }
}

/// Application text as one redacted paragraph: secrets become `[REDACTED:KIND]`, every run of
/// whitespace (newlines too) one space.
pub fn paragraph(text: &str) -> String {
    let redacted = redact(text, &[]).0;
    redacted.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` escaped unit by unit with `escape`, cut so that the result has at most `limit`
/// characters (an ellipsis included): an escape is never cut in half.
fn fit(text: &str, limit: usize, escape: impl Fn(char, &mut String)) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut unit = String::new();
    let total: usize = text
        .chars()
        .map(|c| {
            unit.clear();
            escape(c, &mut unit);
            unit.chars().count()
        })
        .sum();
    let budget = if total <= limit { limit } else { limit.saturating_sub(1) };
    for c in text.chars() {
        unit.clear();
        escape(c, &mut unit);
        let n = unit.chars().count();
        if count + n > budget {
            out.push('…');
            return out;
        }
        out.push_str(&unit);
        count += n;
    }
    out
}

fn plain(c: char, out: &mut String) {
    out.push(c);
}

/// Slack's three control characters (`&`, `<`, `>`) as the entities its formatting guide asks
/// for: `<!channel>`, `<@U…>` and `<url|label>` cannot be formed from application text.
fn slack_escape(c: char, out: &mut String) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        c => out.push(c),
    }
}

/// Discord markdown: a backslash before any markdown character shows it as itself (mentions are
/// also switched off by `allowed_mentions`).
fn discord_escape(c: char, out: &mut String) {
    if matches!(
        c,
        '\\' | '*' | '_' | '~' | '`' | '|' | '>' | '<' | '[' | ']' | '(' | ')' | '#' | '-' | '@' | ':'
    ) {
        out.push('\\');
    }
    out.push(c);
}

/// Slack documented limits: header text 150, section text 3000, a field 2000 (at most 10),
/// button text 75, button url 3000.
mod slack_limits {
    pub const HEADER: usize = 150;
    pub const SECTION: usize = 3000;
    pub const FIELD: usize = 2000;
    pub const FALLBACK: usize = 3000;
    pub const URL: usize = 3000;
}

/// Discord documented limits: content 2000; embed title 256, description 4096, field name 256,
/// value 1024, at most 25 fields, 6000 characters over the whole embed. The description gets
/// less than its own limit so that the sum stays under 6000.
mod discord_limits {
    pub const CONTENT: usize = 2000;
    pub const TITLE: usize = 256;
    pub const DESCRIPTION: usize = 3500;
    pub const FIELD_VALUE: usize = 400;
}

/// Teams: a webhook message is at most about 28 KB; the card's texts are kept well under it.
const TEAMS_TEXT: usize = 3000;
const TEAMS_FACT: usize = 500;

/// The payload `receiver` is sent for `t`.
pub fn payload(receiver: Receiver, t: &Transition) -> Value {
    match receiver {
        Receiver::Slack => slack(t),
        Receiver::Discord => discord(t),
        Receiver::Teams => teams(t),
        Receiver::Json => raw(t),
    }
}

fn facts(t: &Transition) -> Vec<(&'static str, String)> {
    vec![
        ("Target", t.target().to_owned()),
        ("Error type", t.error_type.clone().unwrap_or_else(|| "-".into())),
        ("Tier", t.tier.map(|n| n.to_string()).unwrap_or_else(|| "-".into())),
        ("Priority", t.priority.clone().unwrap_or_else(|| "-".into())),
        ("Fixable by", t.fixable_by.clone().unwrap_or_else(|| "-".into())),
    ]
}

/// Slack incoming webhook: `text` is the notification fallback; the blocks are a header
/// (plain_text), the message (mrkdwn, `verbatim` so that nothing in it is auto-linked or parsed
/// as a mention), the facts as mrkdwn fields, and a button to the ticket page.
fn slack(t: &Transition) -> Value {
    let mut blocks = vec![
        json!({"type": "header", "text": {"type": "plain_text", "text": fit(&t.title(), slack_limits::HEADER, plain), "emoji": false}}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": fit(&t.message, slack_limits::SECTION, slack_escape), "verbatim": true}}),
        json!({"type": "section", "fields": facts(t).into_iter().map(|(name, value)| json!({
            "type": "mrkdwn",
            "text": format!("*{name}*\n{}", fit(&value, slack_limits::FIELD - name.len() - 3, slack_escape)),
            "verbatim": true,
        })).collect::<Vec<_>>()}),
    ];
    if let Some(url) = t.url.as_deref().filter(|u| u.len() <= slack_limits::URL) {
        blocks.push(json!({"type": "actions", "elements": [{
            "type": "button",
            "text": {"type": "plain_text", "text": "Open ticket", "emoji": false},
            "url": url,
        }]}));
    }
    let fallback = format!("{}: {}", t.title(), t.message);
    json!({"text": fit(&fallback, slack_limits::FALLBACK, slack_escape), "blocks": blocks})
}

/// A colour per event, for the embed's side bar: yellow, green, red, grey.
fn color(event: TicketEvent) -> u32 {
    match event {
        TicketEvent::Proposed => 0xF1C40F,
        TicketEvent::Applied => 0x2ECC71,
        TicketEvent::Failed => 0xE74C3C,
        TicketEvent::Rejected => 0x95A5A6,
    }
}

/// Discord webhook: `content` one line, one embed (title linking to the ticket page, description,
/// colour, inline fields), and `allowed_mentions` empty: nothing in the text pings anyone.
fn discord(t: &Transition) -> Value {
    let mut embed = json!({
        "title": fit(&t.title(), discord_limits::TITLE, plain),
        "description": fit(&t.message, discord_limits::DESCRIPTION, discord_escape),
        "color": color(t.event),
        "fields": facts(t).into_iter().map(|(name, value)| json!({
            "name": name,
            "value": fit(&value, discord_limits::FIELD_VALUE, discord_escape),
            "inline": name != "Target",
        })).collect::<Vec<_>>(),
        "footer": {"text": "kubeheal"},
    });
    if let Some(url) = &t.url {
        embed["url"] = json!(url);
    }
    json!({
        "content": fit(&t.title(), discord_limits::CONTENT, discord_escape),
        "embeds": [embed],
        "allowed_mentions": {"parse": []},
    })
}

/// Teams Workflows webhook: a `message` with one Adaptive Card attachment. Application text goes
/// in `TextRun`s, which Adaptive Cards never read as markdown (a `TextBlock` would); the facts
/// are kubeheal's own values.
fn teams(t: &Transition) -> Value {
    let run = |text: &str, limit: usize| json!({"type": "TextRun", "text": fit(text, limit, plain)});
    let mut card = json!({
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": t.title(), "weight": "Bolder", "size": "Medium", "wrap": true},
            {"type": "RichTextBlock", "inlines": [run(&t.message, TEAMS_TEXT)]},
            {"type": "FactSet", "facts": facts(t).into_iter().filter(|(name, _)| *name != "Target").map(|(name, value)| json!({
                "title": name,
                "value": fit(&value, TEAMS_FACT, plain),
            })).collect::<Vec<_>>()},
            {"type": "RichTextBlock", "inlines": [
                {"type": "TextRun", "text": "Target: ", "weight": "Bolder"},
                run(t.target(), TEAMS_FACT),
            ]},
        ],
    });
    if let Some(url) = &t.url {
        card["actions"] = json!([{"type": "Action.OpenUrl", "title": "Open ticket", "url": url}]);
    }
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": card,
        }],
    })
}

/// kubeheal's own object: stable field names, nothing escaped (it is JSON, not markup).
fn raw(t: &Transition) -> Value {
    json!({
        "event": wire_name(&t.event),
        "ticket": t.ticket,
        "namespace": t.namespace,
        "phase": wire_name(&t.phase),
        "classification": {
            "error_type": t.error_type,
            "tier": t.tier,
            "fixable_by": t.fixable_by,
            "priority": t.priority,
        },
        "target": {"contract_fqn": t.contract_fqn, "path": t.path},
        "message": fit(&t.message, 8192, plain),
        "url": t.url,
    })
}

#[cfg(test)]
#[path = "notify_tests.rs"]
mod tests;
