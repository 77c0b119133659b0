//! Seed 004's Regenerate step for a contract ticket, its pure decisions: after the fix is
//! committed and pushed, the repository's regenerate command runs in an executor Job (one per
//! ticket, [`job_name`]); what it changed is judged ([`judge`]) and committed as a second commit
//! ([`commit_message`]), or the fix is reverted ([`revert_message`]). The trailers name the ticket
//! and the fix's commit, so an operator interrupted after a push finds its commit instead of
//! making it again. The operator's `ticket_fix::regenerate` does the reading and writing.

use std::collections::BTreeMap;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::api::healer_ticket::{
    DEFAULT_REGENERATE_TIMEOUT_SECONDS, MAX_COMMAND_TIMEOUT_SECONDS as MAX_TIMEOUT_SECONDS, Regenerate,
};
use crate::core::format::short_commit;
use crate::core::ticket_fix::TICKET_TRAILER;

/// The trailer naming the fix's commit a regeneration commit follows.
pub const REGENERATED_FROM_TRAILER: &str = "Kubeheal-Regenerated-From";
/// The trailer naming the fix's commit a revert undoes.
pub const REVERTS_TRAILER: &str = "Kubeheal-Reverts";
/// Most bytes of the command's output quoted when it fails.
const MAX_QUOTED: usize = 2000;

/// The regeneration Job of `ticket`: from the ticket's name only, so a restarted operator finds
/// the Job it launched instead of launching a second one. A Job's name is also its Pods'
/// `job-name` label, at most 63 characters: a longer ticket name is cut and told apart by a
/// hash of the whole.
pub fn job_name(ticket: &str) -> String {
    bounded(ticket, "-regenerate", 63)
}

/// `name` + `suffix` within `max` bytes; when too long, `name` is cut and a hash of the whole
/// name keeps two long names that start alike apart.
pub fn bounded(name: &str, suffix: &str, max: usize) -> String {
    if name.len() + suffix.len() <= max {
        return format!("{name}{suffix}");
    }
    let hash: String = Sha256::digest(name.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    let room = max.saturating_sub(suffix.len() + hash.len() + 1);
    let cut = crate::parse::truncate_bytes(name, room).trim_end_matches(['-', '.']);
    format!("{cut}-{hash}{suffix}")
}

/// What `count` regenerated files are called in the status, the note and the notification.
pub fn regenerated(count: usize) -> String {
    match count {
        1 => "1 file regenerated".to_owned(),
        n => format!("{n} files regenerated"),
    }
}

/// How long the regenerate command may run: the Job's deadline and the operator's wait.
pub fn timeout(regenerate: &Regenerate) -> Duration {
    Duration::from_secs(u64::from(regenerate.timeout_seconds))
}

/// A problem with a `regenerate` setting that the API server's rules would have refused (the
/// operator's `--ticket-target` file is not checked by them).
pub fn problem(regenerate: &Regenerate) -> Option<String> {
    command_problem(
        "regenerate",
        (&regenerate.image, &regenerate.command, regenerate.timeout_seconds),
        DEFAULT_REGENERATE_TIMEOUT_SECONDS,
        "the command that regenerates the code",
    )
}

/// A problem with a repository command's setting (`field` is `regenerate` or `validate`): its
/// `image`, its `command` (`purpose` says what it is for) and its `timeoutSeconds`, whose
/// default is `default_timeout`; in the words of the API server's rules.
pub fn command_problem(
    field: &str,
    (image, command, timeout_seconds): (&str, &str, u32),
    default_timeout: u32,
    purpose: &str,
) -> Option<String> {
    if !(1..=MAX_TIMEOUT_SECONDS).contains(&timeout_seconds) {
        return Some(format!(
            "{field}.timeoutSeconds {timeout_seconds} must be from 1 to {MAX_TIMEOUT_SECONDS} (a day): the seconds {purpose} may run; leave it out for {default_timeout}"
        ));
    }
    if image.trim().is_empty() || image.chars().any(char::is_whitespace) {
        return Some(format!(
            "{field}.image {image:?} must be an image reference without spaces, e.g. ghcr.io/acme/forge:1.4"
        ));
    }
    if command.trim().is_empty() {
        return Some(format!("{field}.command must not be blank: give {purpose}"));
    }
    None
}

/// How the regeneration Job ended, as the operator read it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The exit code of the regenerate command's container, when it ran to an end.
    pub command_exit: Option<i32>,
    /// The exit code of the step that reports the changes (it runs only after the command
    /// succeeded).
    pub report_exit: Option<i32>,
    /// What the executor said about a Job that did not end well (deadline, image pull, …).
    pub executor_said: Option<String>,
    /// The files the command added or changed, or why kubeheal does not commit them.
    pub changes: Result<BTreeMap<String, String>, String>,
    /// The end of the command's output, already redacted.
    pub printed: String,
}

/// The files to commit after the regeneration, or why it failed (the fix is then reverted). A
/// regeneration fails when its command did not exit 0, when its changes did not come back whole
/// or are of a kind kubeheal does not commit, and when it rewrote the fixed contract itself:
/// code follows the contract, never the other way.
pub fn judge(ran: Ran, contract: &str) -> Result<BTreeMap<String, String>, String> {
    let printed = quote(&ran.printed);
    if let Some(code) = ran.command_exit.filter(|code| *code != 0) {
        return Err(format!("the regenerate command exited with code {code}{printed}"));
    }
    if ran.command_exit.is_none() || ran.report_exit != Some(0) {
        let how = ran
            .executor_said
            .unwrap_or_else(|| "its Job failed before the command ended".to_owned());
        return Err(format!("the regenerate command did not finish: {how}{printed}"));
    }
    let files = ran
        .changes
        .map_err(|why| format!("kubeheal does not commit what the regenerate command did: {why}"))?;
    if files.contains_key(contract) {
        return Err(format!(
            "the regenerate command changed the fixed contract {contract} itself; it must only write generated code"
        ));
    }
    Ok(files)
}

/// `; it printed: …` with the end of `printed`, or nothing when it printed nothing.
fn quote(printed: &str) -> String {
    let printed = printed.trim();
    if printed.is_empty() {
        return String::new();
    }
    let mut start = printed.len().saturating_sub(MAX_QUOTED);
    while !printed.is_char_boundary(start) {
        start += 1;
    }
    let cut = if start > 0 { "…" } else { "" };
    format!("; it printed: {cut}{}", &printed[start..])
}

/// The second commit on the ticket's branch: `regenerate(<fqn>): N files`, the files, and the
/// trailers naming the ticket and the fix's commit.
pub fn commit_message(ticket: &str, fqn: &str, fix: &str, files: &[&String]) -> String {
    let count = match files.len() {
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    };
    let body: String = files.iter().map(|f| format!("- {f}\n")).collect();
    format!(
        "regenerate({fqn}): {count}\n\nRegenerated after the contract fix {}.\n\n{body}\n{TICKET_TRAILER}: {ticket}\n{REGENERATED_FROM_TRAILER}: {fix}\n",
        short_commit(fix)
    )
}

/// The commit that undoes the fix after its regeneration failed: why, and the trailers naming
/// the ticket and the fix's commit.
pub fn revert_message(ticket: &str, fqn: &str, fix: &str, why: &str) -> String {
    let why = crate::parse::truncate(why, 4000);
    format!(
        "revert(fix({fqn})): the code regeneration failed\n\nThis reverts commit {fix}: the repository's regenerate command failed after it.\n\n{why}\n\n{TICKET_TRAILER}: {ticket}\n{REVERTS_TRAILER}: {fix}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = "0123456789abcdef0123456789abcdef01234567";

    fn ran(command_exit: Option<i32>, changes: Result<Vec<(&str, &str)>, &str>) -> Ran {
        Ran {
            command_exit,
            report_exit: command_exit.map(|_| 0),
            executor_said: None,
            changes: changes
                .map(|files| files.into_iter().map(|(p, t)| (p.to_owned(), t.to_owned())).collect())
                .map_err(str::to_owned),
            printed: String::new(),
        }
    }

    #[test]
    fn a_job_name_comes_from_the_ticket_alone_and_fits_a_label() {
        assert_eq!(job_name("ht-0123456789abcdef"), "ht-0123456789abcdef-regenerate");
        let long = "a".repeat(80);
        let other = format!("{}b", "a".repeat(79));
        let (one, two) = (job_name(&long), job_name(&other));
        assert!(one.len() <= 63 && two.len() <= 63, "{one} {two}");
        assert_ne!(one, two, "two long names that start alike");
        assert_eq!(one, job_name(&long), "the same ticket, the same Job");
        assert!(one.ends_with("-regenerate"));
        assert!(
            !bounded("x----------", "-r", 8).contains("--"),
            "{}",
            bounded("x----------", "-r", 8)
        );
    }

    #[test]
    fn the_timeout_is_the_targets_and_600_seconds_when_it_does_not_say() {
        let given: Regenerate =
            serde_yaml_ng::from_str("{image: forge, command: make generate, timeoutSeconds: 1800}").expect("valid");
        assert_eq!(timeout(&given), Duration::from_secs(1800));
        let unsaid: Regenerate = serde_yaml_ng::from_str("{image: forge, command: make generate}").expect("valid");
        assert_eq!(unsaid.timeout_seconds, 600);
        assert_eq!(timeout(&unsaid), Duration::from_secs(600));
    }

    #[test]
    fn the_count_is_said_in_words_people_read() {
        assert_eq!(regenerated(0), "0 files regenerated");
        assert_eq!(regenerated(1), "1 file regenerated");
        assert_eq!(regenerated(42), "42 files regenerated");
    }

    #[test]
    fn a_successful_command_gives_its_files_and_no_change_is_fine() {
        let files = judge(ran(Some(0), Ok(vec![("generated/ticket_model.py", "x\n")])), "c.yaml").unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["generated/ticket_model.py"]);
        assert_eq!(judge(ran(Some(0), Ok(vec![])), "c.yaml"), Ok(BTreeMap::new()));
    }

    #[test]
    fn a_failing_command_fails_with_its_exit_code_and_the_end_of_what_it_printed() {
        let mut failed = ran(Some(3), Err("the tool's Job reported no changes"));
        failed.report_exit = None;
        failed.printed = format!("{}\nKeyError: 'fields'\n", "x".repeat(5000));
        let why = judge(failed, "c.yaml").unwrap_err();
        assert!(
            why.starts_with("the regenerate command exited with code 3; it printed: …"),
            "{why}"
        );
        assert!(why.ends_with("KeyError: 'fields'"), "{why}");
        assert!(why.len() < 2200, "only the end is quoted: {}", why.len());
    }

    #[test]
    fn a_job_that_never_ran_the_command_to_its_end_fails_saying_what_the_executor_saw() {
        let mut timed_out = ran(None, Err("no report"));
        timed_out.executor_said = Some("the build ran longer than its 600 s limit and was stopped".into());
        let why = judge(timed_out, "c.yaml").unwrap_err();
        assert!(why.contains("did not finish") && why.contains("600 s"), "{why}");
        let mut report_failed = ran(Some(0), Ok(vec![("a.py", "")]));
        report_failed.report_exit = Some(1);
        assert!(judge(report_failed, "c.yaml").unwrap_err().contains("did not finish"));
    }

    #[test]
    fn changes_kubeheal_does_not_commit_fail_the_regeneration() {
        let why = judge(ran(Some(0), Err("the tool deleted gen/old.py")), "c.yaml").unwrap_err();
        assert!(
            why.contains("does not commit") && why.contains("deleted gen/old.py"),
            "{why}"
        );
        let why = judge(ran(Some(0), Ok(vec![("c.yaml", "kind: Entity\n")])), "c.yaml").unwrap_err();
        assert!(why.contains("changed the fixed contract c.yaml"), "{why}");
    }

    #[test]
    fn the_commits_carry_the_trailers_an_interrupted_operator_finds_them_by() {
        let a = "generated/ticket_model.py".to_owned();
        let message = commit_message("ht-1", "entity/helpdesk/ticket", FIX, &[&a]);
        assert!(
            message.starts_with("regenerate(entity/helpdesk/ticket): 1 file\n"),
            "{message}"
        );
        assert!(message.contains("- generated/ticket_model.py\n"));
        assert!(message.contains(&format!("{TICKET_TRAILER}: ht-1\n{REGENERATED_FROM_TRAILER}: {FIX}\n")));
        let revert = revert_message("ht-1", "entity/helpdesk/ticket", FIX, "exited with code 3");
        assert!(revert.starts_with("revert(fix(entity/helpdesk/ticket)): the code regeneration failed"));
        assert!(revert.contains(&format!("This reverts commit {FIX}")) && revert.contains("exited with code 3"));
        assert!(revert.contains(&format!("{TICKET_TRAILER}: ht-1\n{REVERTS_TRAILER}: {FIX}\n")));
    }

    #[test]
    fn settings_the_api_server_would_refuse_are_named() {
        let ok = Regenerate {
            image: "ghcr.io/acme/forge:1.4".into(),
            command: "python3 generate.py".into(),
            timeout_seconds: 600,
        };
        assert_eq!(problem(&ok), None);
        for seconds in [0, MAX_TIMEOUT_SECONDS + 1] {
            let why = problem(&Regenerate {
                timeout_seconds: seconds,
                ..ok.clone()
            })
            .expect("refused");
            assert!(
                why.contains(&format!("regenerate.timeoutSeconds {seconds} must be from 1 to 86400")),
                "{why}"
            );
        }
        let spaced = Regenerate {
            image: "ghcr.io/acme/forge 1.4".into(),
            ..ok.clone()
        };
        assert!(problem(&spaced).unwrap().contains("without spaces"));
        let blank = Regenerate {
            command: "  ".into(),
            ..ok
        };
        assert!(problem(&blank).unwrap().contains("must not be blank"));
    }
}
