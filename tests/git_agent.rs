//! The Git agent against real repositories: a bare repository on disk, and the same repository
//! served over smart HTTP by `git http-backend` behind a loopback server that demands the token
//! (as a forge does), so that pushing with a HealRun's credentials is proven, not assumed.

#[path = "support/mod.rs"]
mod support;

use std::sync::atomic::Ordering;

use kubeheal::core::format::{CYCLE_TRAILER, REVERT_TRAILER, RUN_TRAILER};
use kubeheal::git::Repo;
use support::git::{FORGE_TOKEN as TOKEN, forge, git};

/// A bare repository `origin.git` with one commit on main; returns (folder holding it, commit).
fn origin() -> (tempfile::TempDir, String) {
    let root = tempfile::tempdir().expect("a temp dir");
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("calc.py"), "def add(a, b)\n    return a + b\n").expect("write");
    git(&work, &["init", "-q"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "start"]);
    let commit = git(&work, &["rev-parse", "HEAD"]);
    git(root.path(), &["clone", "-q", "--bare", "work", "origin.git"]);
    (root, commit)
}

const PATCH: &str = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n-def add(a, b)\n+def add(a, b):\n     return a + b\n";

fn message(cycle: u32) -> String {
    format!(
        "[AI-AGENT] SYNTAX error in calc.py line 1 → Fix: add the missing ':'\n\n{RUN_TRAILER}: team/calc\n{CYCLE_TRAILER}: {cycle}\n"
    )
}

#[tokio::test]
async fn a_clone_left_half_made_by_a_crash_is_repaired_by_the_next_sync() {
    let (root, start) = origin();
    let url = format!("file://{}", root.path().join("origin.git").display());
    // What a process killed between `git init` and adding the remote leaves behind.
    let dir = root.path().join("cache");
    std::fs::create_dir_all(&dir).expect("mkdir");
    git(&dir, &["init", "-q"]);
    let repo = Repo::at(&dir);
    repo.sync(&url).await.expect("the next sync repairs the clone");
    assert_eq!(repo.resolve(Some("main")).await.expect("main"), start);
    assert_eq!(git(&dir, &["remote", "get-url", "origin"]), url);
}

#[tokio::test]
async fn a_git_folder_left_unfinished_by_a_crash_inside_git_init_is_made_again() {
    let (root, start) = origin();
    let url = format!("file://{}", root.path().join("origin.git").display());
    let dir = root.path().join("cache");
    std::fs::create_dir_all(dir.join(".git")).expect("an empty .git, as a killed init leaves it");
    let repo = Repo::at(&dir);
    repo.sync(&url).await.expect("the next sync makes the clone again");
    assert_eq!(repo.resolve(Some("main")).await.expect("main"), start);
}

#[tokio::test]
async fn lock_files_left_by_a_git_killed_mid_command_do_not_block_the_clone_for_ever() {
    let (root, start) = origin();
    let url = format!("file://{}", root.path().join("origin.git").display());
    let repo = Repo::at(root.path().join("cache"));
    repo.sync(&url).await.expect("clone");
    // What `git checkout` and `git update-ref` killed half-way leave behind.
    let git_dir = root.path().join("cache/.git");
    std::fs::write(git_dir.join("index.lock"), "").expect("a stale index lock");
    std::fs::create_dir_all(git_dir.join("refs/heads")).expect("refs");
    std::fs::write(git_dir.join("refs/heads/kubeheal-calc.lock"), "").expect("a stale ref lock");
    repo.sync(&url).await.expect("the next sync");
    repo.checkout(&start).await.expect("a checkout after a crash");
    assert!(!git_dir.join("index.lock").exists());
}

#[tokio::test]
async fn a_commit_pushed_before_a_crash_is_found_again_by_its_trailers_from_a_fresh_clone() {
    let (root, start) = origin();
    let url = format!("file://{}", root.path().join("origin.git").display());
    let first = Repo::at(root.path().join("cache-1"));
    first.sync(&url).await.expect("clone");
    assert_eq!(first.resolve(Some("main")).await.expect("main"), start);
    assert_eq!(first.resolve(None).await.expect("the remote's HEAD"), start);
    let commit = first
        .commit_patch("kubeheal/calc", &start, PATCH, &message(1))
        .await
        .expect("commit");
    first.push("kubeheal/calc").await.expect("push");

    // The operator's cache is gone; a new clone finds the commit instead of making another.
    let second = Repo::at(root.path().join("cache-2"));
    second.sync(&url).await.expect("clone");
    let remote = "refs/remotes/origin/kubeheal/calc";
    assert_eq!(
        second
            .commit_for(remote, "team/calc", CYCLE_TRAILER, 1)
            .await
            .as_deref(),
        Some(commit.as_str())
    );
    assert_eq!(second.commit_for(remote, "team/calc", CYCLE_TRAILER, 2).await, None);
    assert_eq!(second.commit_for(remote, "team/other", CYCLE_TRAILER, 1).await, None);

    // A revert is a new commit on the branch, found again the same way.
    let revert = second
        .revert_on(
            "kubeheal/calc",
            &commit,
            &commit,
            &format!("Revert\n\n{RUN_TRAILER}: team/calc\n{REVERT_TRAILER}: 1\n"),
        )
        .await
        .expect("revert");
    second.push("kubeheal/calc").await.expect("push");
    let origin = root.path().join("origin.git");
    assert_eq!(git(&origin, &["rev-parse", "kubeheal/calc"]), revert);
    assert_eq!(
        git(&origin, &["show", "kubeheal/calc:calc.py"]),
        "def add(a, b)\n    return a + b"
    );
    assert_eq!(git(&origin, &["rev-parse", "main"]), start, "main is untouched");
}

#[tokio::test]
async fn the_default_branch_is_refused() {
    let (root, start) = origin();
    let repo = Repo::at(root.path().join("cache"));
    repo.sync(&format!("file://{}", root.path().join("origin.git").display()))
        .await
        .expect("clone");
    for branch in ["main", "master"] {
        let error = repo
            .commit_patch(branch, &start, PATCH, &message(1))
            .await
            .expect_err("refused");
        assert!(error.to_string().contains("never the default"), "{error}");
    }
}

#[tokio::test]
async fn pushing_to_a_forge_that_demands_a_token_uses_the_runs_token_in_an_http_header() {
    let (root, start) = origin();
    let (url, refused) = forge(root.path()).await;

    // Without the token the forge refuses even the clone.
    let anonymous = Repo::at(root.path().join("anonymous"));
    let error = anonymous.sync(&url).await.expect_err("refused");
    assert!(refused.load(Ordering::SeqCst) > 0);
    assert!(error.to_string().contains("fetch"), "{error}");

    let repo = Repo::at(root.path().join("cache")).with_token(Some(TOKEN.into()));
    repo.sync(&url).await.expect("clone with the token");
    let commit = repo
        .commit_patch("kubeheal/calc", &start, PATCH, &message(1))
        .await
        .expect("commit");
    repo.push("kubeheal/calc").await.expect("push with the token");
    assert_eq!(
        git(&root.path().join("origin.git"), &["rev-parse", "kubeheal/calc"]),
        commit
    );
    // The token is in no URL, remote or config git keeps.
    // The token is in no URL, remote or config git keeps, nor is the header that carries it.
    let config = std::fs::read_to_string(root.path().join("cache/.git/config")).expect("config");
    assert!(!config.contains(TOKEN), "{config}");
    assert!(!config.to_lowercase().contains("extraheader"), "{config}");

    // A wrong token: the error says the forge refused it, and never shows it (nor its base64).
    let wrong = Repo::at(root.path().join("wrong")).with_token(Some("not-the-token-9f8e7d".into()));
    let error = wrong.sync(&url).await.expect_err("refused").to_string();
    assert!(!error.contains("not-the-token-9f8e7d"), "{error}");
    assert!(
        !error.contains("eC1hY2Nlc3MtdG9rZW46bm90LXRoZS10b2tlbi05ZjhlN2Q"),
        "{error}"
    );
    assert!(error.contains("refused the token"), "{error}");
}

#[tokio::test]
async fn a_branch_or_tag_is_resolved_with_ls_remote_and_no_clone_and_a_commit_id_is_left_to_the_clone() {
    let (root, start) = origin();
    let work = root.path().join("work");
    std::fs::write(work.join("calc.py"), "def add(a, b):\n    return a + b\n").expect("write");
    git(&work, &["commit", "-qam", "fixed"]);
    let fixed = git(&work, &["rev-parse", "HEAD"]);
    git(&work, &["tag", "-a", "v1", "-m", "release", &start]);
    git(&work, &["tag", "light", &fixed]);
    git(&work, &["branch", "old", &start]);
    git(&work, &["push", "-q", "--tags", "../origin.git", "main", "old"]);
    let url = format!("file://{}", root.path().join("origin.git").display());
    let dir = root.path().join("cache");
    let repo = Repo::at(&dir);
    assert_eq!(
        repo.resolve_remote(&url, None).await.expect("ls-remote"),
        Some(fixed.clone())
    );
    assert_eq!(
        repo.resolve_remote(&url, Some("main")).await.expect("ls-remote"),
        Some(fixed.clone())
    );
    assert_eq!(
        repo.resolve_remote(&url, Some("old")).await.expect("ls-remote"),
        Some(start.clone())
    );
    // An annotated tag is its commit, not the tag object.
    assert_eq!(
        repo.resolve_remote(&url, Some("v1")).await.expect("ls-remote"),
        Some(start.clone())
    );
    assert_eq!(
        repo.resolve_remote(&url, Some("light")).await.expect("ls-remote"),
        Some(fixed.clone())
    );
    // What no ref lists is for the clone to answer (and to refuse).
    assert_eq!(repo.resolve_remote(&url, Some(&start)).await.expect("ls-remote"), None);
    assert_eq!(
        repo.resolve_remote(&url, Some("main~1")).await.expect("ls-remote"),
        None
    );
    assert_eq!(
        repo.resolve_remote(&url, Some("no-such-branch"))
            .await
            .expect("ls-remote"),
        None
    );
    assert!(!dir.join(".git").exists(), "nothing was cloned");
    // A repository that is not there is an error that says so.
    let missing = format!("file://{}", root.path().join("missing.git").display());
    let error = repo
        .resolve_remote(&missing, Some("main"))
        .await
        .expect_err("no repository");
    assert!(!error.is_transient(), "{error}");

    // The clone agrees with every answer.
    repo.sync(&url).await.expect("clone");
    for revision in ["main", "old", "v1", "light"] {
        assert_eq!(
            repo.resolve_remote(&url, Some(revision)).await.expect("ls-remote"),
            Some(repo.resolve(Some(revision)).await.expect("rev-parse")),
            "{revision}"
        );
    }
}
