//! A HealRun's incident (`spec.incident`): a runtime error the build does not show, as bug
//! reports the heal loop can hand a healer. Each stack frame in the project's own code becomes a
//! report at that file and line, innermost first, its path made repository-relative by finding
//! the repository's file it names (`/app/backend/routes/tickets.py` in the running container is
//! `backend/routes/tickets.py`), never by guessing: a frame whose file the repository does not
//! have is left out.

use crate::api::heal_run::{Incident, Observation};
use crate::api::shared::{BugReport, ErrorType};
use crate::core::healer_ticket::{headline, project_frames};
use crate::core::redact::redact;
use crate::parse::truncate;

/// Most reports an incident gives (the innermost frames matter; the rest is the framework's
/// way down to them).
const MAX_REPORTS: usize = 5;

/// The incident's frames in `files` (the repository's tracked files) as bug reports.
pub fn reports(incident: &Incident, files: &[String]) -> Vec<BugReport> {
    let Some(trace) = incident.stacktrace.as_deref() else {
        return Vec::new();
    };
    let what = headline(&incident.error);
    let message = truncate(&redact(what, &[]).0, 1000);
    let error_type = error_type(what);
    let mut reports: Vec<BugReport> = Vec::new();
    for frame in project_frames(trace) {
        let Some(path) = in_repository(&frame.file, files) else {
            continue;
        };
        let line = frame.line.max(1);
        if reports.iter().any(|r| r.file_path == path && r.line_number == line) {
            continue;
        }
        reports.push(BugReport {
            file_path: path.to_owned(),
            line_number: line,
            error_type,
            message: message.clone(),
            test_name: None,
            confidence_score: Some(if reports.is_empty() { 0.9 } else { 0.6 }),
        });
        if reports.len() == MAX_REPORTS {
            break;
        }
    }
    reports
}

/// Adds the incident's reports to the baseline's `observation` (`cycle` 0; later cycles verify
/// fixes with the build alone), after the build's own, within the observation's 20.
pub fn observe(observation: &mut Observation, cycle: u32, incident: Option<&Incident>, files: &[String]) {
    let Some(incident) = incident.filter(|_| cycle == 0) else {
        return;
    };
    for report in reports(incident, files) {
        let known = observation
            .bug_reports
            .iter()
            .any(|r| r.file_path == report.file_path && r.line_number == report.line_number);
        if !known && observation.bug_reports.len() < 20 {
            observation.bug_reports.push(report);
        }
    }
}

/// The repository file `path` (as the running application saw it) is: the longest tail of its
/// components that is a tracked file.
fn in_repository<'a>(path: &str, files: &'a [String]) -> Option<&'a str> {
    let path = path.strip_prefix("file://").unwrap_or(path).replace('\\', "/");
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    (0..parts.len()).find_map(|skip| {
        let tail = parts[skip..].join("/");
        files.iter().find(|f| **f == tail).map(String::as_str)
    })
}

/// The bug type an exception's name says (seed 001's six).
fn error_type(headline: &str) -> ErrorType {
    let name = headline.split([':', ' ']).next().unwrap_or_default();
    let name = name.rsplit('.').next().unwrap_or(name);
    match name {
        "TypeError" | "AttributeError" => ErrorType::TypeError,
        // The parser's reading too: a name that is not defined is most often a missing import.
        "ImportError" | "ModuleNotFoundError" | "ReferenceError" | "NameError" => ErrorType::Import,
        "IndentationError" | "TabError" => ErrorType::Indentation,
        "SyntaxError" => ErrorType::Syntax,
        _ => ErrorType::Logic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"Traceback (most recent call last):
  File "/usr/local/lib/python3.12/site-packages/starlette/routing.py", line 74, in app
    response = await func(request)
  File "/app/backend/routes/tickets.py", line 88, in patch_ticket
    ticket = close(ticket, body)
  File "/app/backend/tickets.py", line 5, in close
    ticket["resolution"] = body["resolution"]
  File "/app/vendor/gone.py", line 3, in helper
KeyError: 'resolution'
"#;

    fn incident(error: &str, trace: Option<&str>) -> Incident {
        Incident {
            error: error.into(),
            stacktrace: trace.map(Into::into),
            ticket: Some("ht-1".into()),
        }
    }

    #[test]
    fn project_frames_become_reports_at_the_repository_s_files_innermost_first() {
        let files = [
            "backend/tickets.py",
            "backend/routes/tickets.py",
            "tests/test_tickets.py",
        ]
        .map(String::from);
        let reports = reports(&incident("KeyError: 'resolution'", Some(TRACE)), &files);
        let at: Vec<(&str, u32)> = reports.iter().map(|r| (r.file_path.as_str(), r.line_number)).collect();
        // The vendored file is not in the repository, the library frame is not the project's.
        assert_eq!(at, [("backend/tickets.py", 5), ("backend/routes/tickets.py", 88)]);
        assert!(
            reports
                .iter()
                .all(|r| r.message == "KeyError: 'resolution'" && r.error_type == ErrorType::Logic)
        );
        assert_eq!(reports[0].confidence_score, Some(0.9));
    }

    #[test]
    fn the_exception_names_the_bug_type_and_nothing_is_guessed() {
        let files = ["app.js".to_owned()];
        let node = "TypeError: Cannot read properties of undefined (reading 'id')\n    at show (/srv/app.js:7:19)\n    at /srv/node_modules/express/lib/router/layer.js:95:5";
        let r = reports(
            &incident("TypeError: Cannot read properties of undefined", Some(node)),
            &files,
        );
        assert_eq!(
            (r[0].file_path.as_str(), r[0].line_number, r[0].error_type),
            ("app.js", 7, ErrorType::TypeError)
        );
        assert_eq!(
            error_type("ModuleNotFoundError: No module named 'x'"),
            ErrorType::Import
        );
        assert_eq!(error_type("app.errors.NotFound: ticket 3"), ErrorType::Logic);
        // No trace, or frames in files the repository does not have: nothing to point at.
        assert!(reports(&incident("KeyError: 'x'", None), &files).is_empty());
        assert!(reports(&incident("KeyError: 'x'", Some(TRACE)), &files).is_empty());
    }
}
