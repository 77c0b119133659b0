//! Seed 003's own `validateRunEnvelope`, run by node over the envelopes kubeheal prints, plus the
//! rules of the seed's tables that the function does not check (error fields by status, content
//! fields by content type, artifact limits).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The seed's TypeScript with its annotations taken out: node 20 runs JavaScript only, and the
/// annotation is the function's one line of TypeScript.
fn validator_js() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed003/validateRunEnvelope.ts");
    let ts = std::fs::read_to_string(&path).expect("the seed's validator");
    let signature = "function validateRunEnvelope(envelope: any): envelope is RunEnvelope {";
    assert_eq!(
        ts.matches(signature).count(),
        1,
        "the seed's signature in {}",
        path.display()
    );
    let js = ts.replace(signature, "function validateRunEnvelope(envelope) {");
    assert!(
        !js.contains(": any") && !js.contains(" is RunEnvelope"),
        "TypeScript left in:\n{js}"
    );
    js
}

/// What the seed's validator says of each envelope.
pub fn validate_run_envelopes(envelopes: &[Value]) -> Vec<bool> {
    let script = format!(
        "{}\nconst input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n\
         process.stdout.write(JSON.stringify(input.map((e) => validateRunEnvelope(e) === true)));\n",
        validator_js()
    );
    let mut child = Command::new("node")
        .arg("-e")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (the seed's validator is TypeScript)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(Value::Array(envelopes.to_vec()).to_string().as_bytes())
        .expect("write the envelopes");
    let out = child.wait_with_output().expect("node ends");
    assert!(out.status.success(), "node: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("node's answer")
}

/// Every envelope passes the seed's validator and the rules of its tables.
pub fn assert_seed_envelopes(envelopes: &[Value]) {
    assert!(!envelopes.is_empty(), "no envelopes to check");
    let verdicts = validate_run_envelopes(envelopes);
    for (envelope, valid) in envelopes.iter().zip(verdicts) {
        assert!(valid, "validateRunEnvelope refuses:\n{envelope:#}");
        let status = envelope["status"].as_str().expect("a status");
        if status != "success" {
            assert!(envelope["error_class"].is_string(), "no error_class:\n{envelope:#}");
            assert!(envelope["error_message"].is_string(), "no error_message:\n{envelope:#}");
        }
        if status == "error" {
            assert!(envelope["suggested_fix"].is_string(), "no suggested_fix:\n{envelope:#}");
        }
        if status == "timeout" {
            assert_eq!(envelope["error_class"], "TIMEOUT", "{envelope:#}");
        }
        let content_type = envelope["content_type"].as_str().expect("a content type");
        let is_json = content_type == "application/json" || content_type.ends_with("+json");
        assert_eq!(
            envelope.get("json").is_some(),
            is_json && envelope.get("text_preview").is_none(),
            "json only for JSON content:\n{envelope:#}"
        );
        if let Some(preview) = envelope.get("text_preview") {
            assert!(content_type.starts_with("text/") || is_json, "{envelope:#}");
            assert!(preview.as_str().expect("a string").len() <= 10 * 1024, "{envelope:#}");
        }
        let artifacts = envelope["artifacts"].as_array().expect("artifacts");
        assert!(artifacts.len() <= 50);
        for artifact in artifacts {
            assert!(artifact["name"].is_string() && artifact["size"].is_u64(), "{artifact}");
            assert!(
                artifact["mime"].is_string() && artifact["url"].is_string(),
                "{artifact}"
            );
        }
        assert!(
            envelope
                .as_object()
                .expect("an object")
                .keys()
                .all(|k| !k.chars().any(|c| c.is_ascii_uppercase())),
            "seed 003's names are snake_case:\n{envelope:#}"
        );
    }
}
