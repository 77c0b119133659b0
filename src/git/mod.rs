//! The Git agent, over the git CLI: the heal branch (never the default branch), one commit per
//! accepted patch with the formatter's `[AI-AGENT] ...` subject and trailers naming the run and
//! cycle, and reverts as new commits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use thiserror::Error;
use tokio::process::Command;

/// Errors of the Git agent.
#[derive(Debug, Error)]
pub enum GitError {
    #[error("failed to run git: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("git {command} failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("refusing to commit to {0}: fixes go to a heal branch, never the default or a protected branch")]
    ProtectedBranch(String),
}

/// A local repository kubeheal works in.
#[derive(Debug, Clone)]
pub struct Repo {
    pub dir: PathBuf,
}

const AUTHOR: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "kubeheal"),
    ("GIT_AUTHOR_EMAIL", "kubeheal@kubeheal.dev"),
    ("GIT_COMMITTER_NAME", "kubeheal"),
    ("GIT_COMMITTER_EMAIL", "kubeheal@kubeheal.dev"),
];

impl Repo {
    pub async fn git(&self, args: &[&str]) -> Result<String, GitError> {
        let out = Command::new("git")
            .args(["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&self.dir)
            .envs(AUTHOR)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null())
            .output()
            .await?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(GitError::Failed {
                command: args.first().copied().unwrap_or_default().to_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    /// A repository at `dir` holding `source`: a clone when `source` is the root of a Git
    /// repository, else a new repository with one commit of its files.
    pub async fn prepare(source: &Path, dir: &Path) -> Result<Repo, GitError> {
        let repo = Repo { dir: dir.to_owned() };
        if dir.join(".git").exists() {
            return Ok(repo);
        }
        std::fs::create_dir_all(dir)?;
        if source.join(".git").exists() {
            let parent = Repo {
                dir: dir.parent().unwrap_or(dir).to_owned(),
            };
            parent
                .git(&[
                    "clone",
                    "--quiet",
                    &source.display().to_string(),
                    &dir.display().to_string(),
                ])
                .await?;
        } else {
            copy_tree(source, dir)?;
            repo.git(&["init", "--quiet"]).await?;
            repo.git(&["add", "--all"]).await?;
            repo.git(&[
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                "kubeheal: the project as it was given",
            ])
            .await?;
        }
        Ok(repo)
    }

    /// Switches to `branch` (created at HEAD when new); refuses the default and protected names.
    pub async fn heal_branch(&self, branch: &str) -> Result<(), GitError> {
        if matches!(branch, "main" | "master" | "HEAD" | "develop" | "trunk")
            || !branch.contains('/') && !branch.starts_with("kubeheal")
        {
            return Err(GitError::ProtectedBranch(branch.to_owned()));
        }
        self.git(&["switch", "--quiet", "-C", branch]).await.map(|_| ())
    }

    pub async fn head(&self) -> Result<String, GitError> {
        self.git(&["rev-parse", "HEAD"]).await
    }

    /// Writes `files`, commits exactly them, and returns the commit.
    pub async fn commit(&self, files: &BTreeMap<String, String>, message: &str) -> Result<String, GitError> {
        for (path, content) in files {
            let target = self.dir.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&target, content)?;
        }
        let mut args = vec!["add", "--"];
        args.extend(files.keys().map(String::as_str));
        self.git(&args).await?;
        self.git(&["commit", "--quiet", "-m", message]).await?;
        self.head().await
    }

    /// Reverts `commit` with a new commit; returns it.
    pub async fn revert(&self, commit: &str, reason: &str) -> Result<String, GitError> {
        self.git(&["revert", "--no-edit", "--no-commit", commit]).await?;
        self.git(&["commit", "--quiet", "-m", &format!("Revert {commit}: {reason}")])
            .await?;
        self.head().await
    }

    /// `git diff --shortstat base..HEAD`.
    pub async fn diff_stat(&self, base: &str) -> Result<String, GitError> {
        self.git(&["diff", "--shortstat", &format!("{base}..HEAD")]).await
    }

    /// A file's content at HEAD's working tree, if it exists.
    pub fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(path)).ok()
    }
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".kubeheal" || name == ".git" || name == "__pycache__" || name == ".pytest_cache" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
