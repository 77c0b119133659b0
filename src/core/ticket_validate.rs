//! A repository's own contract validator (`spec.target.validate`), its pure decisions: every
//! version of a contract the fixing half judges — the contract as committed, a tier-1
//! normalisation, each model answer, the re-check before commit — is validated by the command in
//! an executor Job over the repository with that version in place ([`job_name`] names the Job
//! after what it judges), and what the command left is read as errors ([`errors`]). The
//! operator's `ticket_fix::validate` runs the Jobs.

use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::api::healer_ticket::{DEFAULT_VALIDATE_TIMEOUT_SECONDS, Validate};
use crate::core::ticket_regenerate::{bounded, command_problem};
use crate::parse::clean::clean_line;

/// Most errors read from one validation: a validator that prints a whole report (progress, a
/// table of every contract) is still read in full up to this many lines.
pub const MAX_ERRORS: usize = 200;

/// The Job that validates `contract` (the text judged) at `commit` with `validate`: named after
/// all of them, so the same question is never asked twice — a restarted operator, or the re-check
/// before commit asking of the same text, finds the Job that answered it — and a changed
/// command or image is asked anew. `again` names the Job that asks once more when the first has
/// lost its Pod (and its answer) since. Within a Job name's 63 characters, as
/// [`crate::core::ticket_regenerate::job_name`].
pub fn job_name(ticket: &str, commit: &str, contract: &str, validate: &Validate, again: bool) -> String {
    let mut hash = Sha256::new();
    for part in [commit, &validate.image, &validate.command, contract] {
        hash.update(part.len().to_le_bytes());
        hash.update(part.as_bytes());
    }
    hash.update(validate.timeout_seconds.to_le_bytes());
    if again {
        hash.update(b"again");
    }
    let hex: String = hash.finalize().iter().take(5).map(|b| format!("{b:02x}")).collect();
    bounded(ticket, &format!("-validate-{hex}"), 63)
}

/// How long one validation may run: the Job's deadline and the operator's wait.
pub fn timeout(validate: &Validate) -> Duration {
    Duration::from_secs(u64::from(validate.timeout_seconds))
}

/// A problem with a `validate` setting that the API server's rules would have refused (the
/// operator's `--ticket-target` file is not checked by them).
pub fn problem(validate: &Validate) -> Option<String> {
    command_problem(
        "validate",
        (&validate.image, &validate.command, validate.timeout_seconds),
        DEFAULT_VALIDATE_TIMEOUT_SECONDS,
        "the command that validates the contracts",
    )
}

/// How a validation Job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// The command's exit code; `None` when it never ended by itself (its image could not be
    /// pulled, the Pod was lost).
    pub exit: Option<i32>,
    /// It ran past `timeoutSeconds` and was stopped.
    pub timed_out: bool,
    /// What the executor said of the Job when it failed.
    pub executor_said: Option<String>,
    /// What the command printed (its last lines, redacted).
    pub printed: String,
}

/// The errors the command found in the contract it judged: none when it exited with 0, else
/// each line it printed (colours and CI decoration taken off, blank lines and repeats left
/// out), or one saying it printed nothing. `Err` when it gave no verdict — it was stopped or
/// never ran — which no fix can be judged by.
/// `job` is the Job that ran it, named in the advice when there is no verdict.
pub fn errors(validate: &Validate, job: &str, ran: &Validated) -> Result<Vec<String>, String> {
    let command = &validate.command;
    let shown = crate::parse::truncate(command.lines().next().unwrap_or(command), 120);
    let code = match ran.exit {
        _ if ran.timed_out => {
            return Err(format!(
                "the validate command `{shown}` ran past validate.timeoutSeconds ({} s) and was stopped, with no verdict: raise the limit or make it faster (if it never started, `kubectl describe job {job}` says why its Pod did not run)",
                validate.timeout_seconds
            ));
        }
        Some(code) => code,
        None => {
            return Err(format!(
                "the validate command `{shown}` gave no verdict: {}; check validate.image {} (can the node pull it?) and `kubectl describe job {job}`",
                ran.executor_said
                    .as_deref()
                    .unwrap_or("its Job ended before the command did"),
                validate.image
            ));
        }
    };
    if code == 0 {
        return Ok(Vec::new());
    }
    let mut found: Vec<String> = Vec::new();
    for line in ran.printed.lines() {
        let line = clean_line(line);
        let line = line.trim();
        if !line.is_empty() && !found.iter().any(|f| f == line) {
            found.push(line.to_owned());
        }
    }
    if found.len() > MAX_ERRORS {
        found.drain(..found.len() - MAX_ERRORS);
    }
    if found.is_empty() {
        found.push(format!(
            "the validate command `{shown}` exited with {code} and printed nothing"
        ));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(command: &str) -> Validate {
        Validate {
            image: "forge:1.4".into(),
            command: command.into(),
            timeout_seconds: DEFAULT_VALIDATE_TIMEOUT_SECONDS,
        }
    }

    fn exited(code: i32, printed: &str) -> Validated {
        Validated {
            exit: Some(code),
            timed_out: false,
            executor_said: None,
            printed: printed.into(),
        }
    }

    #[test]
    fn a_job_is_named_after_what_it_judges_and_fits_a_job_name() {
        let check = validate("specora-core forge validate domains");
        let name = job_name("ht-0123456789abcdef", "c0ffee", "kind: Entity\n", &check, false);
        assert!(name.starts_with("ht-0123456789abcdef-validate-"), "{name}");
        assert_eq!(
            name,
            job_name("ht-0123456789abcdef", "c0ffee", "kind: Entity\n", &check, false)
        );
        for other in [
            job_name("ht-0123456789abcdef", "c0ffee", "kind: Entity\n ", &check, false),
            job_name("ht-0123456789abcdef", "decade", "kind: Entity\n", &check, false),
            job_name(
                "ht-0123456789abcdef",
                "c0ffee",
                "kind: Entity\n",
                &validate("make check"),
                false,
            ),
            job_name("ht-0123456789abcdef", "c0ffee", "kind: Entity\n", &check, true),
            job_name("ht-0123456789abcdeg", "c0ffee", "kind: Entity\n", &check, false),
        ] {
            assert_ne!(name, other);
        }
        let long = job_name(&"t".repeat(200), "c0ffee", "x", &check, false);
        assert_ne!(
            job_name("ht-1", "c0ffee", "x", &check, true),
            job_name("ht-1", "c0ffee", "x", &check, false),
            "asking again is another Job"
        );
        assert!(long.len() <= 63 && long.contains("-validate-"), "{long}");
    }

    #[test]
    fn exit_0_is_valid_whatever_it_printed_and_other_codes_give_the_lines_printed() {
        assert_eq!(
            errors(
                &validate("v"),
                "j",
                &exited(0, "warning: x\nAll 9 contracts are valid\n")
            ),
            Ok(vec![])
        );
        let report = "\n\x1b[1mentity/helpdesk/ticket\x1b[0m\n  x spec.fields.Status.type: 'strin' is not one of ['string']\n\n  x spec.fields.Status.type: 'strin' is not one of ['string']\n1 error(s), 0 warning(s)\n";
        assert_eq!(
            errors(&validate("v"), "j", &exited(1, report)),
            Ok(vec![
                "entity/helpdesk/ticket".to_owned(),
                "x spec.fields.Status.type: 'strin' is not one of ['string']".to_owned(),
                "1 error(s), 0 warning(s)".to_owned(),
            ])
        );
        let silent = errors(&validate("make check"), "j", &exited(2, "\n")).expect("a verdict");
        assert_eq!(
            silent,
            ["the validate command `make check` exited with 2 and printed nothing"]
        );
        let many: String = (0..500).map(|i| format!("error {i}\n")).collect();
        let kept = errors(&validate("v"), "j", &exited(1, &many)).expect("a verdict");
        assert_eq!(kept.len(), MAX_ERRORS);
        assert_eq!(
            kept.last().map(String::as_str),
            Some("error 499"),
            "the end, where a summary is"
        );
    }

    #[test]
    fn a_command_that_gave_no_verdict_judges_nothing() {
        let stopped = Validated {
            timed_out: true,
            ..exited(137, "still checking\n")
        };
        let why = errors(&validate("v"), "t-validate-1", &stopped).expect_err("no verdict");
        assert!(
            why.contains("validate.timeoutSeconds (300 s)") && why.contains("kubectl describe job t-validate-1"),
            "{why}"
        );
        let unpulled = Validated {
            exit: None,
            timed_out: false,
            executor_said: Some("the image forge:1.4 could not be pulled".into()),
            printed: String::new(),
        };
        let why = errors(&validate("v"), "t-validate-1", &unpulled).expect_err("no verdict");
        assert!(
            why.contains("could not be pulled") && why.contains("check validate.image forge:1.4"),
            "{why}"
        );
    }

    #[test]
    fn settings_the_api_server_would_refuse_are_refused_with_the_fix() {
        assert_eq!(problem(&validate("make check")), None);
        let zero = Validate {
            timeout_seconds: 0,
            ..validate("make check")
        };
        assert!(problem(&zero).is_some_and(|w| w.contains("from 1 to 86400")));
        assert!(problem(&validate("  ")).is_some_and(|w| w.contains("must not be blank")));
        let spaced = Validate {
            image: "forge 1.4".into(),
            ..validate("make check")
        };
        assert!(problem(&spaced).is_some_and(|w| w.contains("without spaces")));
    }
}
