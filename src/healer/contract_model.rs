//! Tier 2 and 3 proposals (seed 004's LLM proposer): a model gets the contract, the error with
//! its stack trace and context, and the contract's recent changes, and answers with the whole
//! corrected contract. The caller checks the answer (seed 004: sanitised against the whitelist,
//! validated, not empty); a first answer that fails the check is asked for once more with a
//! simpler prompt that says what was wrong. Everything given here is already redacted.
//!
//! Two kinds of service answer: an OpenAI-compatible model (a chat), and a Code Healer API
//! service (seed 000, through the one client `code_healer_api`): the contract is the one file
//! to fix, the error and what the chat's prompt says are its bug report, and the fixed file in
//! its answer is the proposed contract ([`heal_request`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use super::openai::OpenAi;
use super::{ErrorContext, HealRequest, HealResponse, Healer, PreviousAttempt, validate};
use crate::api::heal_run::{DEFAULT_CYCLE_TIMEOUTS, HealerOutcome};
use crate::core::ticket_fix::{CONSTRAINT_KEYS, FIELD_PROPERTIES};

/// How long one answer may take.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// Largest contract a Code Healer API may answer with (a proposal keeps the contract in the
/// ticket's status, twice).
pub const MAX_CONTRACT_BYTES: usize = 64 * 1024;

/// Who proposes the fix.
pub enum Proposer<'a> {
    /// An OpenAI-compatible chat-completions endpoint.
    Model(&'a OpenAi),
    /// A service that speaks the Code Healer API (seed 000).
    CodeHealer(&'a dyn Healer),
}

impl Proposer<'_> {
    /// What it is called in the reasons given for a refused answer.
    fn called(&self) -> &'static str {
        match self {
            Proposer::Model(_) => "the model",
            Proposer::CodeHealer(_) => "the Code Healer API",
        }
    }
}

/// What the model is asked about (redacted by the caller).
pub struct Question<'a> {
    /// The ticket the fix is for: seed 000's `project_id`, as a HealRun's name is for its run.
    pub ticket: &'a str,
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
    let mut out = format!(
        "Contract {} ({}), which caused {}:\n```yaml\n{}\n```\n\nError:\n{}\n",
        q.fqn,
        q.contract_path,
        kind(q),
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

/// What kind of error the question is about.
fn kind(q: &Question<'_>) -> &'static str {
    if q.tier >= 3 {
        "a runtime error of the running application"
    } else {
        "a structural error (validation or compilation)"
    }
}

/// The task as a Code Healer API reads it (the contract itself is its file to fix).
fn header(q: &Question<'_>) -> String {
    format!(
        "Fix the contract {} of a contract-driven application (a YAML document from which its backend, database and frontend are generated): it caused {}:\n{}\nFind the change to the contract that prevents this error, and change nothing else.",
        q.fqn,
        kind(q),
        q.error
    )
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
    contract_answer(&contract, explanation)
}

/// `contract` as an answer, when it is a YAML mapping (as every contract is).
fn contract_answer(contract: &str, explanation: Option<String>) -> Result<Answer, String> {
    match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(contract) {
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

/// Seed 000's request for a contract question, `refused` saying why a first answer was not
/// taken (then it is cycle 2, with that answer in its history, and asks more simply). The
/// contract is the one file to fix and the only one the answer may change; the task — what
/// the first chat prompt says without the contract, then the whitelist — is the error summary
/// (seed 000's one free-text field, as a work order's task is); the stack trace ending in the
/// error is the stderr, the contract's recent changes the stdout (each cut to its end, as
/// seed 000 says). The exit code is 1, a failure: no test ran, the error is what failed. Each
/// cycle has seed 000's timeout (30 s, then 45 s).
pub fn heal_request(q: &Question<'_>, refused: Option<&str>) -> HealRequest {
    let task = match refused {
        None => {
            let mut task = format!(
                "{}\nThe contract is the file {}: return it whole, corrected, as the only file in modified_files, and say what you changed in changes_summary.",
                header(q),
                q.contract_path
            );
            if !q.context.is_empty() {
                task.push_str("\nContext:\n");
                for (key, value) in q.context {
                    let _ = writeln!(task, "- {key}: {value}");
                }
            }
            let _ = write!(task, "\n{}", rules());
            task
        }
        Some(why) => format!(
            "Return the contract {} whole, with the smallest change that fixes this error: {}\nYour previous answer was refused: {why}\n{}",
            q.contract_path,
            q.error.lines().next().unwrap_or(q.error),
            rules()
        ),
    };
    let stderr = match q.stacktrace.filter(|t| !t.trim().is_empty()) {
        Some(trace) if trace.contains(q.error) => trace.trim_end().to_owned(),
        Some(trace) => format!("{}\n{}", trace.trim_end(), q.error),
        None => q.error.to_owned(),
    };
    let cycle: u32 = if refused.is_some() { 2 } else { 1 };
    HealRequest {
        project_id: q.ticket.to_owned(),
        cycle,
        failed_files: BTreeMap::from([(q.contract_path.to_owned(), q.contract.to_owned())]),
        reports: Vec::new(),
        error_context: ErrorContext::new(1, 1, task, &stderr, q.recent_changes),
        history: refused
            .map(|why| {
                vec![PreviousAttempt {
                    cycle: 1,
                    outcome: "rejected".into(),
                    changes_summary: None,
                    files: vec![q.contract_path.to_owned()],
                    result: Some(why.to_owned()),
                }]
            })
            .unwrap_or_default(),
        timeout: Duration::from_secs(u64::from(DEFAULT_CYCLE_TIMEOUTS[cycle as usize - 1])),
        // The contract is the only path allowed, so an answer that changes any other file is
        // refused naming that file.
        limits: validate::Limits {
            allowed_paths: vec![q.contract_path.to_owned()],
            max_file_bytes: MAX_CONTRACT_BYTES,
            max_total_bytes: MAX_CONTRACT_BYTES,
            ..validate::Limits::default()
        },
    }
}

/// The contract a Code Healer API answered with: the fixed file, its `changes_summary` as the
/// explanation. The client already refused an answer that changes any other file.
pub fn healed_contract(response: &HealResponse, path: &str) -> Result<Answer, String> {
    if response.outcome != HealerOutcome::Healed {
        return Err(response
            .reason
            .clone()
            .unwrap_or_else(|| format!("it answered {:?} without a reason", response.outcome)));
    }
    let contract = response.modified_files.get(path).ok_or_else(|| {
        format!("its modified_files does not hold the contract {path}: return the corrected contract under that name")
    })?;
    contract_answer(contract, response.changes_summary.clone())
}

/// Why an answer was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal<U> {
    /// The answer is wrong: the proposer is asked once more, more simply, saying why.
    Refused(String),
    /// The answer could not be judged (a validator that could not run, or gave no verdict), as
    /// the checker says in `U`: asking again would pay for another answer that could not be
    /// judged either, so nothing more is asked.
    Undecided(U),
}

/// Asks `proposer` for a fix, checks each answer with `check` (which returns the accepted
/// proposal or why it is refused), and asks once more with a simpler prompt when the first is
/// refused. `Refused` says why neither answer was accepted; `Undecided` that an answer could not
/// be judged.
pub async fn propose<T, U, Checked>(
    proposer: Proposer<'_>,
    question: &Question<'_>,
    check: impl Fn(Answer) -> Checked,
) -> Result<T, Refusal<U>>
where
    Checked: Future<Output = Result<T, Refusal<U>>>,
{
    let first = match ask(&proposer, question, None).await {
        Ok(answer) => check(answer).await,
        Err(why) => Err(Refusal::Refused(why)),
    };
    let why = match first {
        Ok(accepted) => return Ok(accepted),
        Err(Refusal::Refused(why)) => why,
        Err(undecided) => return Err(undecided),
    };
    let again = match ask(&proposer, question, Some(&why)).await {
        Ok(answer) => check(answer).await,
        Err(again) => Err(Refusal::Refused(again)),
    };
    again.map_err(|again| match again {
        Refusal::Refused(again) => Refusal::Refused(format!(
            "{}'s answer was refused ({why}), and again when asked more simply ({again})",
            proposer.called()
        )),
        undecided => undecided,
    })
}

async fn ask(proposer: &Proposer<'_>, question: &Question<'_>, refused: Option<&str>) -> Result<Answer, String> {
    match proposer {
        Proposer::Model(model) => {
            let (system, user) = match refused {
                None => (system(), prompt(question)),
                Some(why) => (simple_system(), simple_prompt(question, why)),
            };
            let chat = model
                .chat(&system, &user, ANSWER_TIMEOUT)
                .await
                .map_err(|(_, why)| why)?;
            read_answer(&chat.content)
        }
        Proposer::CodeHealer(healer) => {
            let response = healer.heal(&heal_request(question, refused)).await;
            healed_contract(&response, question.contract_path)
        }
    }
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
            ticket: "ht-0123456789abcdef",
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

    const PATH: &str = "domains/helpdesk/entities/ticket.contract.yaml";

    fn question(context: &BTreeMap<String, String>) -> Question<'_> {
        Question {
            ticket: "ht-0123456789abcdef",
            fqn: "entity/helpdesk/ticket",
            contract_path: PATH,
            contract: "kind: Entity\nspec: {fields: {}}\n",
            error: "KeyError: 'resolution'",
            stacktrace: Some("Traceback (most recent call last):\n  File \"tickets.py\", line 88, in patch_ticket\n"),
            context,
            recent_changes: "commit abc\n-  resolution: {type: text}",
            tier: 3,
        }
    }

    #[test]
    fn a_code_healer_gets_the_contract_as_its_file_and_the_error_as_its_task_in_seed_000s_shape() {
        let context = BTreeMap::from([("request_path".to_owned(), "/tickets/abc".to_owned())]);
        let q = question(&context);
        let request = heal_request(&q, None);
        let wire =
            serde_json::to_value(super::super::code_healer_api::WireRequest::from_request(&request)).expect("JSON");
        let mut keys: Vec<&str> = wire
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["cycle", "failed_files", "project_id", "pytest_errors"], "{wire}");
        assert_eq!(wire["project_id"], "ht-0123456789abcdef");
        assert_eq!(wire["cycle"], 1);
        assert_eq!(wire["failed_files"], serde_json::json!({PATH: q.contract}));
        let errors = &wire["pytest_errors"];
        assert_eq!(
            (errors["exit_code"].as_i64(), errors["error_count"].as_i64()),
            (Some(1), Some(1))
        );
        let summary = errors["error_summary"].as_str().expect("a summary");
        for part in [
            "entity/helpdesk/ticket",
            "runtime error",
            "KeyError: 'resolution'",
            "- request_path: /tickets/abc",
            PATH,
            "required_when or conditional_required",
            "items_type",
        ] {
            assert!(summary.contains(part), "{part} is not in the task: {summary}");
        }
        assert!(
            !summary.contains("spec: {fields"),
            "the contract is the file, not the task"
        );
        // The trace, ending in the error (a trace without it gets it), and the recent changes.
        assert!(
            errors["stderr"]
                .as_str()
                .is_some_and(|e| e.contains("patch_ticket") && e.ends_with("KeyError: 'resolution'"))
        );
        assert_eq!(errors["stdout"], q.recent_changes);
        assert_eq!(request.timeout, Duration::from_secs(30));
        assert_eq!(request.limits.allowed_paths, [PATH]);
        let other = BTreeMap::from([("backend/routes/tickets.py".to_owned(), "x = 1\n".to_owned())]);
        let why = validate::validate(&other, &request.limits).unwrap_err();
        assert!(
            why.contains("backend/routes/tickets.py is outside the allowed paths"),
            "{why}"
        );
    }

    #[test]
    fn the_second_request_is_cycle_2_saying_why_the_first_answer_was_refused() {
        let context = BTreeMap::new();
        let request = heal_request(&question(&context), Some("it changes nothing in the contract"));
        assert_eq!((request.cycle, request.timeout), (2, Duration::from_secs(45)));
        assert_eq!(request.history.len(), 1);
        assert_eq!(
            request.history[0].result.as_deref(),
            Some("it changes nothing in the contract")
        );
        assert_eq!(request.history[0].files, [PATH]);
        let summary = &request.error_context.error_summary;
        assert!(
            summary.contains("previous answer was refused: it changes nothing in the contract")
                && summary.contains("maxLength"),
            "{summary}"
        );
        assert_eq!(request.failed_files.keys().collect::<Vec<_>>(), [PATH]);
    }

    fn healed(files: &[(&str, &str)]) -> HealResponse {
        HealResponse {
            outcome: HealerOutcome::Healed,
            reason: None,
            modified_files: files.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect(),
            changes_summary: Some("Add resolution.".into()),
            confidence: 0.9,
            duration: Duration::ZERO,
            tokens_used: None,
            answered_by: None,
        }
    }

    #[test]
    fn the_fixed_file_is_the_proposed_contract_and_anything_else_says_what_was_wrong() {
        let answer = healed_contract(&healed(&[(PATH, "kind: Entity\nspec: {}")]), PATH).expect("a contract");
        assert_eq!(
            answer,
            Answer {
                contract: "kind: Entity\nspec: {}\n".into(),
                explanation: Some("Add resolution.".into()),
            }
        );
        let why = healed_contract(&healed(&[("other.yaml", "kind: Entity\n")]), PATH).unwrap_err();
        assert!(why.contains(&format!("does not hold the contract {PATH}")), "{why}");
        let why = healed_contract(&healed(&[(PATH, "kind: [Entity")]), PATH).unwrap_err();
        assert!(why.contains("not valid YAML"), "{why}");
        let failed = HealResponse::failed(HealerOutcome::Error, "the healer answered 500: no fix", Duration::ZERO);
        assert_eq!(
            healed_contract(&failed, PATH),
            Err("the healer answered 500: no fix".into())
        );
    }

    /// A Code Healer API in memory: answers in turn, keeps the requests.
    struct Fake(std::sync::Mutex<(Vec<HealResponse>, Vec<HealRequest>)>);

    impl Healer for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }

        fn heal<'a>(&'a self, request: &'a HealRequest) -> super::super::HealFuture<'a> {
            let mut state = self.0.lock().expect("the fake");
            state.1.push(request.clone());
            let answer = state.0.remove(0);
            Box::pin(async move { answer })
        }
    }

    #[tokio::test]
    async fn a_code_healers_refused_answer_is_asked_for_once_more_and_then_it_fails_with_both_reasons() {
        let context = BTreeMap::new();
        let q = question(&context);
        let fake = Fake(std::sync::Mutex::new((
            vec![
                healed(&[(PATH, "kind: [Entity")]),
                healed(&[(PATH, "kind: Entity\nspec: {fields: {resolution: {type: text}}}\n")]),
            ],
            Vec::new(),
        )));
        let accepted = propose(Proposer::CodeHealer(&fake), &q, |a: Answer| async {
            Ok::<_, Refusal<()>>(a.contract)
        })
        .await;
        assert_eq!(
            accepted,
            Ok("kind: Entity\nspec: {fields: {resolution: {type: text}}}\n".to_owned())
        );
        let asked: Vec<u32> = fake.0.lock().expect("the fake").1.iter().map(|r| r.cycle).collect();
        assert_eq!(asked, [1, 2]);
        let never = Fake(std::sync::Mutex::new((
            vec![healed(&[(PATH, "kind: Entity\n")]), healed(&[(PATH, "kind: Entity\n")])],
            Vec::new(),
        )));
        let why = propose(Proposer::CodeHealer(&never), &q, |_: Answer| async {
            Err::<(), Refusal<()>>(Refusal::Refused("it changes nothing".to_owned()))
        })
        .await
        .unwrap_err();
        assert_eq!(
            why,
            Refusal::Refused(
                "the Code Healer API's answer was refused (it changes nothing), and again when asked more simply (it changes nothing)".to_owned()
            )
        );
    }

    #[tokio::test]
    async fn an_answer_that_could_not_be_judged_is_not_paid_for_twice() {
        let context = BTreeMap::new();
        let q = question(&context);
        let fake = Fake(std::sync::Mutex::new((
            vec![healed(&[(PATH, "kind: Entity\n")]), healed(&[(PATH, "kind: Entity\n")])],
            Vec::new(),
        )));
        let why = propose(Proposer::CodeHealer(&fake), &q, |_: Answer| async {
            Err::<(), _>(Refusal::Undecided("the validator could not run".to_owned()))
        })
        .await
        .unwrap_err();
        assert_eq!(why, Refusal::Undecided("the validator could not run".to_owned()));
        assert_eq!(fake.0.lock().expect("the fake").1.len(), 1, "asked once");
    }
}
