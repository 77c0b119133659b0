//! Repositories crafted by an attacker, healed by the real `kubeheal` binary as a user runs it:
//! nothing outside the workspace is read or written on the repository's say-so, and no secret
//! kubeheal holds reaches a log, `status.json` or the healer (a real Code Healer API server on
//! loopback that records every request it gets).

#[path = "support/mod.rs"]
mod support;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use kubeheal::api::heal_run::ProjectType;
use kubeheal::executor::ExecutionRequest;
use kubeheal::executor::local::LocalExecutor;
use support::git::git;

/// Secrets in kubeheal's own environment, as a user or the operator's Deployment would set them.
const SECRETS: [(&str, &str); 3] = [
    ("CODE_HEALER_TOKEN", "healer-token-9f8e7d6c5b4a"),
    ("OPENAI_API_KEY", "openai-key-5f6e7d8c9b0a"),
    ("DB_PASSWORD", "db-password-0a1b2c3d4e5f"),
];
const OUTSIDE_MARKER: &str = "outside-file-content-5d1e";

/// `kubeheal heal dir args…` with the secrets in its environment and `tmp` as its TMPDIR.
fn kubeheal(dir: &Path, tmp: &Path, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"));
    command
        .arg("heal")
        .arg(dir)
        .args(args)
        .env("TMPDIR", tmp)
        .envs(SECRETS)
        .env_remove("CODE_HEALER_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

fn commit_all(dir: &Path) {
    git(dir, &["init", "--quiet"]);
    git(dir, &["add", "--all"]);
    git(dir, &["commit", "--quiet", "-m", "hostile"]);
}

/// Every file under `dir` as text, for searching.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                out.push_str(&all_text(&entry.path()));
            } else if kind.is_file() {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    out
}

#[tokio::test]
async fn links_out_of_the_repository_and_secrets_in_the_environment_never_reach_the_healer_or_the_state() {
    let base = tempfile::tempdir().unwrap();
    let outside = base.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(
        outside.join("secret.py"),
        format!("def broken(:\n    VALUE = '{OUTSIDE_MARKER}'\n"),
    )
    .unwrap();
    let dir = base.path().join("victim");
    std::fs::create_dir(&dir).unwrap();
    symlink("/proc/self/environ", dir.join("leak.py")).unwrap();
    symlink(outside.join("secret.py"), dir.join("other.py")).unwrap();
    std::fs::write(
        dir.join("test_hostile.py"),
        "import os\n\n\ndef kubeheal_pid():\n    sh = os.getppid()\n    with open(f'/proc/{sh}/stat') as f:\n        return int(f.read().rsplit(')', 1)[1].split()[1])\n\n\ndef test_environment_is_printed():\n    print('BUILD ENV', dict(os.environ))\n    with open(f'/proc/{kubeheal_pid()}/environ', 'rb') as f:\n        print('PARENT ENV', f.read().decode(errors='replace'))\n    assert False\n\n\ndef test_leak():\n    import leak  # noqa: F401\n\n\ndef test_other():\n    import other  # noqa: F401\n",
    )
    .unwrap();
    commit_all(&dir);
    let (url, seen) = support::http::recording_healer().await;
    let tmp = base.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = kubeheal(
        &dir,
        &tmp,
        &["--healer-url", &url, "--max-cycles", "2", "--timeout", "60"],
    )
    .output()
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let requests = seen.lock().unwrap().clone();
    assert!(!requests.is_empty(), "the healer was asked: {stderr}");
    // The baseline's log: `<run>-c0-<key>.log`.
    let baseline = std::fs::read_dir(dir.join(".kubeheal"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("-c0-") && p.extension().is_some_and(|x| x == "log"))
        .expect("the baseline's log is kept");
    let log = std::fs::read_to_string(baseline).unwrap();
    // The test did dump both environments: the proof that there was something to leak.
    assert!(log.contains("BUILD ENV") && log.contains("PARENT ENV"), "{log}");
    assert!(log.contains("DB_PASSWORD") && log.contains("[REDACTED:"), "{log}");
    let state = all_text(&dir.join(".kubeheal"));
    for (name, value) in SECRETS {
        for (place, text) in [
            ("a healer request", requests.join("\n")),
            ("the state folder", state.clone()),
            ("stdout", stdout.to_string()),
            ("stderr", stderr.to_string()),
        ] {
            assert!(!text.contains(value), "{name}'s value reached {place}");
        }
    }
    // The build never inherited them either.
    let build_env = log.lines().find(|l| l.starts_with("BUILD ENV")).unwrap();
    for (name, _) in SECRETS {
        assert!(!build_env.contains(name), "the build inherited {name}: {build_env}");
    }
    for request in &requests {
        assert!(
            !request.contains(OUTSIDE_MARKER),
            "a file outside the repository was sent"
        );
        let body: serde_json::Value = serde_json::from_str(request).unwrap();
        let files = body["failed_files"].as_object().unwrap();
        assert!(
            !files.contains_key("leak.py") && !files.contains_key("other.py"),
            "{files:?}"
        );
    }
    assert!(!state.contains(OUTSIDE_MARKER));
}

#[tokio::test]
async fn a_state_folder_that_is_a_link_is_refused_and_nothing_is_written_where_it_points() {
    for tracked in [true, false] {
        let base = tempfile::tempdir().unwrap();
        let elsewhere = base.path().join("elsewhere");
        std::fs::create_dir_all(elsewhere.join("repo")).unwrap();
        std::fs::write(elsewhere.join("repo/precious.txt"), "keep me").unwrap();
        let dir = base.path().join("project");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("test_a.py"), "def test_a():\n    assert False\n").unwrap();
        symlink(&elsewhere, dir.join(".kubeheal")).unwrap();
        if tracked {
            commit_all(&dir);
        }
        let out = kubeheal(&dir, base.path(), &["--command", "python3 -m pytest -q"])
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(stderr.contains(".kubeheal"), "{stderr}");
        // Tracked, the repository is told to stop tracking it first; else, what to do.
        let fix = if tracked {
            "git rm -r --cached"
        } else {
            "remove or rename the link"
        };
        assert!(stderr.contains(fix), "tracked={tracked}: {stderr}");
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("repo/precious.txt")).unwrap(),
            "keep me"
        );
        let names: Vec<_> = std::fs::read_dir(&elsewhere)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            names,
            ["repo"],
            "tracked={tracked}: something was written where the link points"
        );
    }
}

/// Waits until `path` holds text for which `ready` is true.
async fn wait_for(path: &Path, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && ready(&text)
        {
            return text;
        }
        assert!(Instant::now() < deadline, "{} never became ready", path.display());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

#[tokio::test]
async fn sigterm_stops_the_build_and_its_escaped_children_and_a_second_heal_of_the_folder_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("project");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("test_a.py"), "def test_a():\n    assert False\n").unwrap();
    commit_all(&dir);
    let tmp = base.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let pidfile = base.path().join("escaped.pid");
    let command = format!(
        "setsid sh -c 'echo $$ > {}; while true; do sleep 1; done' & sleep 120",
        pidfile.display()
    );
    let first = kubeheal(&dir, &tmp, &["--command", &command]).spawn().unwrap();
    let pid: i32 = wait_for(&pidfile, |t| t.trim().parse::<i32>().is_ok())
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));

    let second = kubeheal(&dir, &tmp, &["--command", "true"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success());
    assert!(stderr.contains("another kubeheal heal is running"), "{stderr}");

    let kubeheal_pid = nix::unistd::Pid::from_raw(first.id().unwrap() as i32);
    nix::sys::signal::kill(kubeheal_pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = tokio::time::timeout(Duration::from_secs(30), first.wait_with_output())
        .await
        .expect("kubeheal stops on SIGTERM")
        .unwrap();
    assert!(!out.status.success());
    let status: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".kubeheal/status.json")).unwrap()).unwrap();
    assert_eq!(status["phase"], "Cancelled", "{status:#}");
    // What stopped it, in the words of the laptop, not of a cluster's spec.cancel.
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.contains("interrupted (Ctrl-C or SIGTERM)"), "{message}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(pid), "a process the build started with setsid outlived kubeheal");
    let left: Vec<PathBuf> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "the build's copy was left behind: {left:?}");
}

#[tokio::test]
async fn a_branch_a_person_made_under_the_heal_branch_name_is_never_rewritten() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("python-syntax");
    std::fs::create_dir(&dir).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python-syntax");
    for entry in std::fs::read_dir(example).unwrap().flatten() {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
    }
    commit_all(&dir);
    git(&dir, &["checkout", "--quiet", "-b", "kubeheal/python-syntax"]);
    std::fs::write(dir.join("NOTES.md"), "a person's work\n").unwrap();
    git(&dir, &["add", "NOTES.md"]);
    git(&dir, &["commit", "--quiet", "-m", "my own work"]);
    let mine = git(&dir, &["rev-parse", "HEAD"]);
    git(&dir, &["checkout", "--quiet", "main"]);
    let tmp = base.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = kubeheal(&dir, &tmp, &[]).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(git(&dir, &["rev-parse", "kubeheal/python-syntax"]), mine);
    assert!(stdout.contains("kubeheal/python-syntax-2"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the branch kubeheal/python-syntax holds commits kubeheal did not make"),
        "{stderr}"
    );
    let subject = git(&dir, &["log", "-1", "--format=%s", "kubeheal/python-syntax-2"]);
    assert!(subject.starts_with("[AI-AGENT] SYNTAX"), "{subject}");
    // A second heal reuses the branch that holds only kubeheal's own commits.
    let again = kubeheal(&dir, &tmp, &[]).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{stdout}");
    assert!(stdout.contains("branch:      kubeheal/python-syntax-2 "), "{stdout}");
    assert!(!git(&dir, &["branch", "--list"]).contains("python-syntax-3"));
    assert_eq!(git(&dir, &["rev-parse", "kubeheal/python-syntax"]), mine);
}

#[tokio::test]
async fn the_build_runs_in_a_copy_with_its_git_history_and_without_links_that_lead_out() {
    let base = tempfile::tempdir().unwrap();
    let victim = base.path().join("victim.txt");
    std::fs::write(&victim, "untouched").unwrap();
    let dir = base.path().join("project");
    std::fs::create_dir(&dir).unwrap();
    symlink(&victim, dir.join("out.txt")).unwrap();
    std::fs::write(dir.join("inside.txt"), "inside").unwrap();
    symlink("inside.txt", dir.join("alias.txt")).unwrap();
    commit_all(&dir);
    let artifacts = tempfile::tempdir().unwrap();
    let request = ExecutionRequest {
        run_id: "hostile".into(),
        source: dir.clone(),
        revision: None,
        patches: Vec::new(),
        project_type: ProjectType::Auto,
        command: Some("echo pwned > out.txt; cat alias.txt; git rev-parse --is-inside-work-tree".into()),
        timeout: Duration::from_secs(60),
        env: Vec::new(),
        secrets: Vec::new(),
        verify: None,
        artifacts_dir: artifacts.path().to_owned(),
    };
    let execution = LocalExecutor.execute(&request).await;
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert_eq!(execution.envelope.exit_code, Some(0), "{}", execution.log);
    assert!(execution.log.contains("insidetrue"), "{}", execution.log);
    assert!(
        execution.envelope.warnings.iter().any(|w| w.contains("out.txt")),
        "{:?}",
        execution.envelope.warnings
    );
}

#[tokio::test]
async fn a_reader_that_goes_away_ends_kubeheal_quietly_instead_of_a_panic() {
    use tokio::io::AsyncReadExt;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.log");
    let lines: Vec<String> = (1..50_000)
        .map(|i| format!("app.py:{i}:1: E999 SyntaxError: invalid syntax"))
        .collect();
    std::fs::write(&log, lines.join("\n")).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_kubeheal"))
        .args(["parse", "--format", "text"])
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).await.unwrap();
    // The pipe is closed here, as `| head -c 10` closes it.
    let out = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
