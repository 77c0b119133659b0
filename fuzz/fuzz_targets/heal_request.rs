//! Fuzzes the healer request: whatever the files, the log and the reports hold, a secret value
//! never reaches the request.
//!
//!     cargo +nightly fuzz run heal_request -- -max_total_time=60

#![no_main]

use std::collections::BTreeMap;
use std::time::Duration;

use kubeheal::api::shared::{BugReport, ErrorType};
use kubeheal::healer::{HealRequest, RequestInputs};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The first line is the secret; the rest is the file, the log and the message.
    let (secret, rest) = text.split_once('\n').unwrap_or((&text, ""));
    if secret.trim().len() < 4 {
        return;
    }
    let files = BTreeMap::from([("app.py".to_owned(), rest.replace("SECRET", secret))]);
    let tracked: Vec<String> = files.keys().cloned().collect();
    let reports = vec![BugReport {
        file_path: "app.py".into(),
        line_number: 1,
        error_type: ErrorType::Syntax,
        message: rest.replace("SECRET", secret),
        test_name: None,
        confidence_score: None,
    }];
    let log = rest.replace("SECRET", secret);
    let secrets = vec![secret.to_owned()];
    let request = HealRequest::build(
        RequestInputs {
            task: "",
            project: "p",
            cycle: 1,
            reports: &reports,
            files: &tracked,
            secrets: &secrets,
            exit_code: 1,
            error_message: &log,
            log: &log,
            stderr: &log,
            history: Vec::new(),
            timeout: Duration::from_secs(30),
            allowed_paths: Vec::new(),
        },
        &|path: &str, _| files.get(path).cloned(),
    );
    let texts = request
        .failed_files
        .values()
        .chain(request.reports.iter().flat_map(|r| [&r.report.message, &r.snippet]))
        .chain([&request.error_context.stdout, &request.error_context.stderr, &request.error_context.error_summary]);
    for text in texts {
        assert!(!leaks(text, secret), "{text}");
    }
});

/// Whether `secret` occurs in `text` anywhere but wholly inside a `[REDACTED:…]` placeholder (a
/// secret such as `ACTED` is part of the placeholder itself, which is no leak).
fn leaks(text: &str, secret: &str) -> bool {
    let mut placeholders = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find("[REDACTED:").map(|i| from + i) {
        let end = text[start..].find(']').map_or(text.len(), |i| start + i + 1);
        placeholders.push(start..end);
        from = end;
    }
    text.match_indices(secret).any(|(at, found)| {
        !placeholders
            .iter()
            .any(|p| p.start <= at && at + found.len() <= p.end)
    })
}
