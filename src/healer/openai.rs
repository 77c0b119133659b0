//! The OpenAI-compatible adapter: any chat-completions endpoint (OpenAI, Azure OpenAI, vLLM,
//! Ollama, LiteLLM, ...) as a healer. The prompt holds the bug reports with their snippets, the
//! error context, what earlier cycles tried, and as many failing files as the token budget allows;
//! the model must answer in a strict format of full-file replacements, which is read robustly
//! (code fences, prose around them) and validated like every healer's answer.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{HealFuture, HealRequest, HealResponse, Healer, validate};
use crate::api::heal_run::HealerOutcome;
use crate::core::format::render;

const SYSTEM: &str = "You fix failing builds. Change as little as possible: only the reported lines and \
at most 3 lines around them; keep comments and formatting; never add dependencies; never weaken or delete \
tests. Answer in exactly this format and nothing else:\n\
SUMMARY: <one line saying what you changed>\n\
CONFIDENCE: <a number from 0 to 1>\n\
FILE: <repository-relative path>\n\
```\n<the complete new content of that file>\n```\n\
Repeat FILE blocks for each file you change. If you cannot fix it, answer NO_FIX: <why>.";

/// Characters per token used to keep the prompt within its budget (a conservative average).
const CHARS_PER_TOKEN: usize = 4;

/// A chat-completions endpoint used as a healer.
pub struct OpenAi {
    base_url: String,
    model: String,
    api_key: Option<String>,
    max_tokens: u32,
    /// Tokens the prompt may use.
    prompt_budget: usize,
    client: reqwest::Client,
}

impl OpenAi {
    pub fn new(base_url: &str, model: &str, api_key: Option<String>, max_tokens: u32) -> Result<Self, String> {
        let client = super::http_client()?;
        Ok(OpenAi {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            api_key,
            max_tokens,
            prompt_budget: 12_000,
            client,
        })
    }

    /// One chat completion: the `system` and `user` messages, the answer's text and the tokens it
    /// cost, or why there is none (as a healer outcome and a message for people).
    pub async fn chat(&self, system: &str, user: &str, timeout: Duration) -> Result<Chat, (HealerOutcome, String)> {
        let body = json!({
            "model": self.model,
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        });
        let url = format!("{}/chat/completions", self.base_url);
        let mut http = self.client.post(&url).timeout(timeout).json(&body);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = match http.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Err((
                    HealerOutcome::Timeout,
                    format!("the model did not answer within {} s", timeout.as_secs()),
                ));
            }
            Err(e) => {
                return Err((
                    HealerOutcome::Unreachable,
                    format!("cannot reach {}: {e}", self.base_url),
                ));
            }
        };
        let status = response.status();
        if status.is_redirection() {
            return Err((
                HealerOutcome::Error,
                format!("the endpoint {}", super::redirect_message(&url, &response)),
            ));
        }
        let text = match response.text().await {
            Ok(t) => t,
            Err(e) if e.is_timeout() => {
                return Err((
                    HealerOutcome::Timeout,
                    "the model's answer did not finish in time".into(),
                ));
            }
            Err(e) => return Err((HealerOutcome::Error, format!("the model's answer broke off: {e}"))),
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(_) => {
                let shown: String = text.chars().take(200).collect();
                return Err((
                    HealerOutcome::Error,
                    format!("the endpoint answered {status} with something that is not JSON: {shown}"),
                ));
            }
        };
        if !status.is_success() {
            let message = value["error"]["message"]
                .as_str()
                .or(value["error"].as_str())
                .unwrap_or("no message");
            let outcome = if status == reqwest::StatusCode::GATEWAY_TIMEOUT {
                HealerOutcome::Timeout
            } else {
                HealerOutcome::Error
            };
            return Err((outcome, format!("the endpoint answered {}: {message}", status.as_u16())));
        }
        let Some(content) = value["choices"][0]["message"]["content"].as_str() else {
            return Err((
                HealerOutcome::Error,
                "the endpoint's answer has no choices[0].message.content".into(),
            ));
        };
        Ok(Chat {
            content: content.to_owned(),
            tokens: value["usage"]["total_tokens"].as_u64(),
        })
    }

    async fn call(&self, request: &HealRequest) -> HealResponse {
        let started = Instant::now();
        let chat = self
            .chat(SYSTEM, &prompt(request, self.prompt_budget), request.timeout)
            .await;
        let elapsed = started.elapsed();
        let Chat { content, tokens } = match chat {
            Ok(chat) => chat,
            Err((outcome, reason)) => return HealResponse::failed(outcome, reason, elapsed),
        };
        match parse_reply(&content) {
            Ok(reply) => match validate::validate(&reply.files, &request.limits) {
                Ok(files) => HealResponse {
                    outcome: HealerOutcome::Healed,
                    reason: None,
                    modified_files: files,
                    changes_summary: reply.summary,
                    confidence: reply.confidence.unwrap_or(0.5),
                    duration: elapsed,
                    tokens_used: tokens,
                    answered_by: None,
                },
                Err(e) => HealResponse {
                    tokens_used: tokens,
                    ..HealResponse::failed(
                        HealerOutcome::Error,
                        format!("the model's answer was rejected: {e}"),
                        elapsed,
                    )
                },
            },
            Err(e) => HealResponse {
                tokens_used: tokens,
                ..HealResponse::failed(HealerOutcome::Error, e, elapsed)
            },
        }
    }
}

/// A model's answer to one chat completion.
pub struct Chat {
    /// The text of `choices[0].message.content`.
    pub content: String,
    /// `usage.total_tokens`, when the endpoint says.
    pub tokens: Option<u64>,
}

impl Healer for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn heal<'a>(&'a self, request: &'a HealRequest) -> HealFuture<'a> {
        Box::pin(self.call(request))
    }
}

/// The user message: reports with snippets, the error context, history, then the files that fit.
pub fn prompt(request: &HealRequest, budget_tokens: usize) -> String {
    let mut p = String::new();
    let _ = writeln!(
        p,
        "Project {}, heal cycle {}.\n\nBug reports:",
        request.project_id, request.cycle
    );
    for r in &request.reports {
        let _ = writeln!(
            p,
            "- {}\n  {}",
            render(&r.report),
            r.report.message.lines().next().unwrap_or("")
        );
        if let Some(test) = &r.report.test_name {
            let _ = writeln!(p, "  failing test: {test}");
        }
        let _ = writeln!(p, "```\n{}\n```", r.snippet);
    }
    let e = &request.error_context;
    let _ = writeln!(
        p,
        "\nExit code {}, {} errors: {}",
        e.exit_code, e.error_count, e.error_summary
    );
    if !e.stderr.trim().is_empty() {
        let _ = writeln!(p, "stderr (end):\n```\n{}\n```", e.stderr.trim());
    }
    if !request.history.is_empty() {
        let _ = writeln!(p, "\nEarlier cycles tried (do not repeat them):");
        for h in &request.history {
            let _ = writeln!(
                p,
                "- cycle {}: {} {} {}",
                h.cycle,
                h.outcome,
                h.changes_summary.as_deref().unwrap_or(""),
                h.result.as_deref().unwrap_or("")
            );
        }
    }
    let budget = budget_tokens * CHARS_PER_TOKEN;
    let mut left_out = Vec::new();
    for (path, content) in &request.failed_files {
        if p.len() + content.len() + path.len() + 32 > budget {
            left_out.push(path.as_str());
            continue;
        }
        let _ = writeln!(p, "\nFILE: {path}\n```\n{content}\n```");
    }
    if !left_out.is_empty() {
        let _ = writeln!(
            p,
            "\n(Not shown, too large for this request: {}. Change only files shown above.)",
            left_out.join(", ")
        );
    }
    p
}

/// What the model answered, read from its reply text.
#[derive(Debug, PartialEq)]
pub struct Reply {
    pub files: BTreeMap<String, String>,
    pub summary: Option<String>,
    pub confidence: Option<f64>,
}

/// Reads `SUMMARY:`, `CONFIDENCE:` and `FILE:` blocks, tolerating markdown around them
/// (`**FILE:**`, `### FILE:`, backticks around the path, prose between blocks).
pub fn parse_reply(content: &str) -> Result<Reply, String> {
    if let Some(reason) = content.lines().find_map(|l| l.trim().strip_prefix("NO_FIX")) {
        let reason = reason.trim_start_matches(':').trim();
        return Err(if reason.is_empty() {
            "the model found no fix".into()
        } else {
            format!("the model found no fix: {}", crate::parse::truncate(reason, 300))
        });
    }
    let mut files = BTreeMap::new();
    let mut summary = None;
    let mut confidence = None;
    let mut lines = content.lines().peekable();
    while let Some(line) = lines.next() {
        let bare = line.trim().trim_start_matches(['#', '*', ' ']).trim_end_matches('*');
        if let Some(s) = strip_label(bare, "SUMMARY") {
            summary = Some(s.to_owned());
        } else if let Some(c) = strip_label(bare, "CONFIDENCE") {
            confidence = c.parse::<f64>().ok().filter(|c| (0.0..=1.0).contains(c));
        } else if let Some(path) = strip_label(bare, "FILE") {
            let path = path.trim_matches(['`', '*', '"', '\'', ' ']).to_owned();
            // The next fence opens the content; the next line that is only a fence closes it.
            let mut opened = false;
            for l in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    opened = true;
                    break;
                }
                if !l.trim().is_empty() {
                    return Err(format!("the content of {path} is not in a code block"));
                }
            }
            if !opened {
                return Err(format!("the content of {path} is missing"));
            }
            let mut body = Vec::new();
            let mut closed = false;
            for l in lines.by_ref() {
                if l.trim() == "```" {
                    closed = true;
                    break;
                }
                body.push(l);
            }
            if !closed {
                return Err(format!(
                    "the code block of {path} is not closed (the reply was cut off?)"
                ));
            }
            let mut text = body.join("\n");
            text.push('\n');
            files.insert(path, text);
        }
    }
    if files.is_empty() {
        return Err("the model's reply holds no FILE block".into());
    }
    Ok(Reply {
        files,
        summary,
        confidence,
    })
}

fn strip_label<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(label)?;
    let rest = rest.trim_start_matches('*').strip_prefix(':')?;
    Some(rest.trim_start_matches('*').trim())
}

#[cfg(test)]
mod tests {
    use super::parse_reply;

    #[test]
    fn a_reply_with_prose_and_fences_is_read() {
        let reply = "Sure! Here is the fix.\n\n**SUMMARY:** add the colon\nCONFIDENCE: 0.9\n### FILE: `logic.py`\n```python\ndef add(a, b):\n  return a + b\n```\nHope this helps.";
        let r = parse_reply(reply).expect("readable");
        assert_eq!(r.files["logic.py"], "def add(a, b):\n  return a + b\n");
        assert_eq!(r.summary.as_deref(), Some("add the colon"));
        assert_eq!(r.confidence, Some(0.9));
    }

    #[test]
    fn malformed_replies_are_errors() {
        assert!(
            parse_reply("I think you should add a colon.")
                .unwrap_err()
                .contains("no FILE block")
        );
        assert!(
            parse_reply("FILE: a.py\n```\ncut off")
                .unwrap_err()
                .contains("not closed")
        );
        assert!(
            parse_reply("FILE: a.py\nprint(1)\n")
                .unwrap_err()
                .contains("not in a code block")
        );
        assert!(
            parse_reply("NO_FIX: the test is wrong")
                .unwrap_err()
                .contains("the test is wrong")
        );
    }
}
