//! Tier 2 and 3 proposals (seed 004's LLM proposer): a model gets the contract, the error with
//! its stack trace and context, and the contract's recent changes, and answers with the whole
//! corrected contract. The caller checks the answer (seed 004: sanitised against the whitelist,
//! validated, not empty); a first answer that fails the check is asked for once more with a
//! simpler prompt that says what was wrong. Everything given here is already redacted.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use super::openai::OpenAi;
use crate::core::ticket_fix::{CONSTRAINT_KEYS, FIELD_PROPERTIES};

/// How long one answer may take.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// What the model is asked about (redacted by the caller).
pub struct Question<'a> {
    pub fqn: &'a str,
    pub contract_path: &'a str,
    pub contract: &'a str,
    pub error: &'a str,
    pub stacktrace: Option<&'a str>,
    pub context: &'a BTreeMap<String, String>,
    /// `git log -p` of the contract's last changes (may be empty).
    pub recent_changes: &'a str,
    /// 2 (structural) or 3 (runtime).
    pub tier: u8,
}

/// What a model answered: the corrected contract and, if it said, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub contract: String,
    pub explanation: Option<String>,
}

fn rules() -> String {
    format!(
        "A field may only have these properties: {}. A field's constraints may only have these keys: {}. \
Never use required_when or conditional_required.",
        FIELD_PROPERTIES.join(", "),
        CONSTRAINT_KEYS.join(", ")
    )
}

fn system() -> String {
    format!(
        "You fix the contracts of a contract-driven application: YAML documents from which its backend, \
database and frontend are generated. An error was reported; find the change to the contract that \
prevents it, and change nothing else. {}\n\
Answer with the complete corrected contract as one YAML document inside a ```yaml fence, then one line \
EXPLANATION: <one sentence saying what you changed and why>.",
        rules()
    )
}

fn simple_system() -> String {
    format!(
        "Return the complete corrected contract as one YAML document inside a ```yaml fence, and nothing \
else. Make the smallest change that fixes the error. {}",
        rules()
    )
}

/// The first question: everything seed 004's proposer gives the model.
pub fn prompt(q: &Question<'_>) -> String {
    let kind = if q.tier >= 3 {
        "a runtime error of the running application"
    } else {
        "a structural error (validation or compilation)"
    };
    let mut out = format!(
        "Contract {} ({}), which caused {kind}:\n```yaml\n{}\n```\n\nError:\n{}\n",
        q.fqn,
        q.contract_path,
        q.contract.trim_end(),
        q.error
    );
    if let Some(trace) = q.stacktrace.filter(|t| !t.trim().is_empty()) {
        let _ = write!(out, "\nStack trace:\n{}\n", tail(trace, 6000));
    }
    if !q.context.is_empty() {
        out.push_str("\nContext:\n");
        for (key, value) in q.context {
            let _ = writeln!(out, "- {key}: {value}");
        }
    }
    if !q.recent_changes.trim().is_empty() {
        let _ = write!(
            out,
            "\nRecent changes to this contract:\n{}\n",
            tail(q.recent_changes, 6000)
        );
    }
    out
}

/// The second question, after `why` the first answer was refused.
pub fn simple_prompt(q: &Question<'_>, why: &str) -> String {
    format!(
        "Contract:\n```yaml\n{}\n```\nError: {}\nYour previous answer was refused: {why}",
        q.contract.trim_end(),
        q.error.lines().next().unwrap_or(q.error)
    )
}

/// The last `max` bytes of `text` (a trace's end is where the error is).
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

static FENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```[ \t]*(?:ya?ml)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```").expect("regex"));
static EXPLANATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?mi)^\s*EXPLANATION:\s*(.+?)\s*$").expect("regex"));

/// The contract and explanation in a model's answer: the first fenced block (or, without a
/// fence, the whole answer when it is a YAML mapping), and the `EXPLANATION:` line.
pub fn read_answer(content: &str) -> Result<Answer, String> {
    let explanation = EXPLANATION.captures(content).map(|c| c[1].to_owned());
    let contract = match FENCE.captures(content) {
        Some(c) => c[1].to_owned(),
        None => EXPLANATION.replace_all(content, "").trim().to_owned(),
    };
    match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&contract) {
        Ok(serde_yaml_ng::Value::Mapping(_)) => Ok(Answer {
            contract: format!("{}\n", contract.trim_end()),
            explanation,
        }),
        Ok(_) => {
            Err("the answer holds no YAML mapping: a contract is a YAML document with apiVersion, kind and spec".into())
        }
        Err(e) => Err(format!("the answer's contract is not valid YAML: {e}")),
    }
}

/// Asks `model` for a fix, checks each answer with `check` (which returns the accepted
/// proposal or why it is refused), and asks once more with a simpler prompt when the first is
/// refused. `Err` says why neither answer was accepted.
pub async fn propose<T>(
    model: &OpenAi,
    question: &Question<'_>,
    check: impl Fn(Answer) -> Result<T, String>,
) -> Result<T, String> {
    let first = ask(model, &system(), &prompt(question)).await.and_then(&check);
    let why = match first {
        Ok(accepted) => return Ok(accepted),
        Err(why) => why,
    };
    ask(model, &simple_system(), &simple_prompt(question, &why))
        .await
        .and_then(&check)
        .map_err(|again| format!("the model's answer was refused ({why}), and again when asked more simply ({again})"))
}

async fn ask(model: &OpenAi, system: &str, user: &str) -> Result<Answer, String> {
    let chat = model.chat(system, user, ANSWER_TIMEOUT).await.map_err(|(_, why)| why)?;
    read_answer(&chat.content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_is_read_from_a_fence_or_the_whole_answer() {
        let fenced = "Sure! Here it is:\n```yaml\nkind: Entity\nspec: {fields: {resolution: {type: text}}}\n```\nEXPLANATION: Add resolution.\n";
        assert_eq!(
            read_answer(fenced),
            Ok(Answer {
                contract: "kind: Entity\nspec: {fields: {resolution: {type: text}}}\n".into(),
                explanation: Some("Add resolution.".into()),
            })
        );
        let bare = "kind: Entity\nspec: {}\nEXPLANATION: nothing";
        assert_eq!(read_answer(bare).expect("read").contract, "kind: Entity\nspec: {}\n");
        let why = read_answer("```yaml\nkind: [Entity\n```").expect_err("broken");
        assert!(why.contains("not valid YAML"), "{why}");
        let why = read_answer("I cannot help with that.").expect_err("prose");
        assert!(why.contains("no YAML mapping"), "{why}");
    }

    #[test]
    fn the_prompt_carries_what_seed_004_gives_the_model_and_the_whitelist() {
        let context = BTreeMap::from([("status_code".to_owned(), "500".to_owned())]);
        let q = Question {
            fqn: "entity/helpdesk/ticket",
            contract_path: "domains/helpdesk/entities/ticket.contract.yaml",
            contract: "kind: Entity\n",
            error: "KeyError: 'resolution'",
            stacktrace: Some("Traceback ...\nKeyError: 'resolution'"),
            context: &context,
            recent_changes: "commit abc\n-  resolution: {type: text}",
            tier: 3,
        };
        let user = prompt(&q);
        for part in [
            "entity/helpdesk/ticket",
            "KeyError: 'resolution'",
            "Stack trace:",
            "- status_code: 500",
            "Recent changes",
            "runtime error",
        ] {
            assert!(user.contains(part), "{part} missing from:\n{user}");
        }
        assert!(system().contains("items_type") && system().contains("maxLength"));
        assert!(simple_prompt(&q, "it changed nothing").ends_with("refused: it changed nothing"));
    }
}
