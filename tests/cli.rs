//! The command line refuses what cannot work before anything starts: a healer URL that is not
//! one, an address that cannot be listened on. Each refusal says what to give instead, and exits
//! with 2 (a usage error). And where it has nothing to show, it says why.

use std::process::Command;

fn kubeheal(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(args)
        .env_remove("CODE_HEALER_URL")
        .output()
        .expect("kubeheal runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_healer_url_that_is_not_an_http_url_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("a folder");
    let folder = dir.path().display().to_string();
    for url in ["notaurl", "ftp://host/heal", "http://"] {
        let (code, stderr) = kubeheal(&["heal", &folder, "--healer-url", url]);
        assert_eq!(code, 2, "{url}: {stderr}");
        assert!(
            stderr.contains("--healer-url") && stderr.contains("http(s) URL"),
            "{stderr}"
        );
    }
    let (code, stderr) = kubeheal(&["heal", &folder, "--openai-base-url", "localhost:11434", "--model", "m"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--openai-base-url"), "{stderr}");
    // Nothing was started: the folder holds no state.
    assert!(!dir.path().join(".kubeheal").exists());
}

#[test]
fn a_time_limit_of_zero_is_refused() {
    let dir = tempfile::tempdir().expect("a folder");
    let folder = dir.path().display().to_string();
    for command in ["heal", "exec"] {
        let (code, stderr) = kubeheal(&[command, &folder, "--timeout", "0"]);
        assert_eq!(code, 2, "{command}: {stderr}");
        assert!(stderr.contains("--timeout") && stderr.contains("1..=86400"), "{stderr}");
    }
}

#[test]
fn a_listen_address_that_does_not_resolve_says_what_to_give() {
    let (code, stderr) = kubeheal(&["healer", "serve", "--listen", "no-such-host.invalid:3000"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("IP:PORT or HOST:PORT"), "{stderr}");
}

/// `kubeheal parse` says on standard error why it printed `[]`: the input held nothing, or the
/// log's places are in another folder than the workspace given (its reports stay seed 001's array
/// on standard output).
#[test]
fn parse_says_why_it_found_nothing() {
    let logs = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/logs");
    let dir = tempfile::tempdir().expect("a folder");
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").expect("an empty log");
    let folder = dir.path().display().to_string();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_kubeheal"))
            .args(args)
            .output()
            .expect("kubeheal runs");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        (
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (stdout, stderr) = run(&["parse", "--workspace", &folder, &empty.display().to_string()]);
    assert_eq!(stdout, "[]");
    assert!(stderr.contains("empty.log is empty"), "{stderr}");

    // pytest --tb=line names each failure by its absolute path under the folder it ran in.
    let log = format!("{logs}/py_logic_tb_line.log");
    let (stdout, stderr) = run(&["parse", "--workspace", &folder, &log]);
    assert_eq!(stdout, "[]");
    assert!(
        stderr.contains(&format!("outside the workspace {folder}"))
            && stderr.contains("/tmp/kubeheal-fixtures/py_logic/")
            && stderr.contains("--workspace"),
        "{stderr}"
    );
    let (stdout, stderr) = run(&["parse", "--workspace", "/tmp/kubeheal-fixtures/py_logic", &log]);
    assert!(stdout.contains("tests/test_discount.py"), "{stdout}");
    assert!(!stderr.contains("outside the workspace"), "{stderr}");
}
