//! Redaction, before anything leaves the executor: the exact values of every secret the run was
//! given, and the shapes of well-known credentials, become `[REDACTED:KIND]`.

use std::sync::LazyLock;

use regex::Regex;

/// (kind, pattern, group to replace — 0 for the whole match).
static PATTERNS: LazyLock<Vec<(&'static str, Regex, usize)>> = LazyLock::new(|| {
    let p = |kind, re: &str, group| (kind, Regex::new(re).expect("redaction regex"), group);
    vec![
        p(
            "PRIVATE_KEY",
            r"(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----",
            0,
        ),
        p("AWS_ACCESS_KEY", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0),
        p(
            "AWS_SECRET_KEY",
            r"(?i)aws_secret_access_key\s*[=:]\s*([A-Za-z0-9/+=]{40})",
            1,
        ),
        p(
            "GITHUB_TOKEN",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
            0,
        ),
        p("GITLAB_TOKEN", r"\bglpat-[A-Za-z0-9_-]{20,}\b", 0),
        p("SLACK_TOKEN", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", 0),
        p(
            "JWT",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b",
            0,
        ),
        p("BEARER_TOKEN", r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{12,}=*)", 1),
        p("URL_PASSWORD", r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@", 1),
        p(
            "PASSWORD",
            // No leading word boundary: `DB_PASSWORD=` must match too.
            r#"(?i)(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b["']?\s*[=:]\s*["']?([^\s"',;]{4,})"#,
            1,
        ),
    ]
});

/// Whether an environment variable's name says its value is a secret.
pub fn looks_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "CREDENTIAL",
        "PRIVATE_KEY",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// The values of `vars` whose names say they are secrets: what a process must never let out,
/// whichever way a build finds them (`/proc/<parent>/environ` included).
pub fn secret_values(vars: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    vars.into_iter()
        .filter(|(name, value)| looks_secret_name(name) && value.trim().len() >= 4)
        .map(|(_, value)| value)
        .collect()
}

/// Replaces every secret value (at least 4 characters) and every credential pattern in `text`.
/// Returns the text and how many replacements were made.
pub fn redact(text: &str, secret_values: &[String]) -> (String, usize) {
    let mut out = text.to_owned();
    let mut count = 0;
    // Exact values first, longest first, so that a value containing another is replaced whole.
    let mut values: Vec<&String> = secret_values.iter().filter(|v| v.trim().len() >= 4).collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    for value in values {
        let n = out.matches(value.as_str()).count();
        if n > 0 {
            out = out.replace(value.as_str(), "[REDACTED:SECRET]");
            count += n;
        }
    }
    for (kind, re, group) in PATTERNS.iter() {
        if !re.is_match(&out) {
            continue;
        }
        let mut result = String::with_capacity(out.len());
        let mut last = 0;
        for c in re.captures_iter(&out) {
            let Some(m) = c.get(*group) else { continue };
            if m.as_str().starts_with("[REDACTED:") {
                continue;
            }
            result.push_str(&out[last..m.start()]);
            result.push_str(&format!("[REDACTED:{kind}]"));
            last = m.end();
            count += 1;
        }
        result.push_str(&out[last..]);
        out = result;
    }
    (out, count)
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn secrets_and_credential_shapes_are_redacted() {
        let text = "\
token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB
AKIAABCDEFGHIJKLMNOP and aws_secret_access_key = abcdefghijklmnopqrstuvwxyz0123456789ABCD
glpat-abcdefghij0123456789 xoxb-1234567890-abcdef
Authorization: Bearer abc.def-ghi_jkl012
eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop
git clone https://deploy:hunter2secret@git.example.com/acme/repo.git
DB_PASSWORD=correcthorsebattery
-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEA
-----END RSA PRIVATE KEY-----
my value is s3cr3t-from-secretRef
";
        let (out, count) = redact(text, &["s3cr3t-from-secretRef".into()]);
        for leaked in [
            "ghp_abcdef",
            "AKIAABCD",
            "abcdefghijklmnopqrstuvwxyz0123456789ABCD",
            "glpat-",
            "xoxb-",
            "abc.def-ghi",
            "eyJhbGci",
            "hunter2secret",
            "correcthorsebattery",
            "MIIEowIBAAKCAQEA",
            "s3cr3t-from-secretRef",
        ] {
            assert!(!out.contains(leaked), "{leaked} leaked:\n{out}");
        }
        assert!(
            out.contains("https://deploy:[REDACTED:URL_PASSWORD]@git.example.com"),
            "{out}"
        );
        assert!(out.contains("DB_PASSWORD=[REDACTED:PASSWORD]"), "{out}");
        assert!(count >= 11, "{count}");
    }

    #[test]
    fn ordinary_output_is_left_alone() {
        let text = "collected 8 items\ntests/test_a.py::test_password_reset PASSED\nkey = value\n";
        assert_eq!(redact(text, &[]), (text.to_owned(), 0));
    }
}
