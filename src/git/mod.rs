//! The Git agent, over the git CLI: a cached clone per run, the heal branch (never the default
//! branch), one commit per accepted patch with the formatter's `[AI-AGENT] ...` subject and
//! trailers naming the run and cycle, pushes with the source's token, and reverts as new commits.
//!
//! Commits are found again by their trailers (`Kubeheal-Run`, `Kubeheal-Cycle`), so a driver that
//! crashed after pushing but before recording the commit adopts it instead of committing twice.

use std::path::{Path, PathBuf};
use std::time::Duration;

use thiserror::Error;

use crate::confined::{ConfinedDir, ConfinedError};
use crate::core::format::RUN_TRAILER;
use tokio::process::Command;

/// Errors of the Git agent.
#[derive(Debug, Error)]
pub enum GitError {
    #[error("failed to run git in {dir}: {source}")]
    Spawn {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to prepare {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("git {command} failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("git {command} did not finish within {} s and was stopped", GIT_TIMEOUT.as_secs())]
    TimedOut { command: String },
    #[error(
        "git {command}: the remote refused the token (HTTP 401); check the key `token` of spec.source.secretRef and that it may read and push this repository"
    )]
    TokenRefused { command: String },
    #[error(transparent)]
    Files(#[from] ConfinedError),
    #[error(
        "refusing to commit to {0}: fixes go to a heal branch under kubeheal/, never the default or a branch people work on"
    )]
    ProtectedBranch(String),
}

/// Longest any one git command may take (a stalled remote must not hang a run).
pub const GIT_TIMEOUT: Duration = Duration::from_secs(300);

impl GitError {
    /// Whether trying again later may help: the remote could not be reached or timed out, or
    /// answered with a server error. Everything else (a revision or repository that does not
    /// exist, refused credentials, a patch that does not apply) stays the same until someone
    /// changes the spec.
    pub fn is_transient(&self) -> bool {
        match self {
            GitError::TimedOut { .. } | GitError::Spawn { .. } => true,
            GitError::Failed { stderr, .. } => {
                let stderr = stderr.to_ascii_lowercase();
                TRANSIENT.iter().any(|needle| stderr.contains(needle))
            }
            GitError::Io { .. } | GitError::Files(_) | GitError::ProtectedBranch(_) | GitError::TokenRefused { .. } => {
                false
            }
        }
    }

    /// Whether git refused to apply a patch (it does not fit the files, or touches a path
    /// through a link): the patch is at fault, not the repository.
    pub fn is_patch_refused(&self) -> bool {
        matches!(self, GitError::Failed { command, .. } if command == "apply")
    }
}

/// What git prints when the network, not the request, failed.
const TRANSIENT: &[&str] = &[
    "could not resolve host",
    "temporary failure in name resolution",
    "connection refused",
    "connection reset",
    "connection timed out",
    "operation timed out",
    "network is unreachable",
    "no route to host",
    "early eof",
    "rpc failed",
    "the remote end hung up unexpectedly",
    "returned error: 429",
    "returned error: 500",
    "returned error: 502",
    "returned error: 503",
    "returned error: 504",
    "gnutls_handshake",
    "ssl_connect",
    "tls connection was non-properly terminated",
];

/// The token as HTTP Basic credentials (`x-access-token:TOKEN`, base64): the user name GitHub
/// expects with an app or personal token; GitLab and Gitea take any user name with a token.
fn basic_credentials(token: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{token}"))
}

/// A local repository kubeheal works in.
#[derive(Clone)]
pub struct Repo {
    pub dir: PathBuf,
    /// The HTTPS token for the remote, handed to git in its environment as an HTTP header:
    /// never in a URL, an argument, a config file or an error message.
    token: Option<String>,
    /// Commit author and committer (name, e-mail); default kubeheal's own.
    author: Option<(String, String)>,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("dir", &self.dir)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

const AUTHOR: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "kubeheal"),
    ("GIT_AUTHOR_EMAIL", "kubeheal@kubeheal.dev"),
    ("GIT_COMMITTER_NAME", "kubeheal"),
    ("GIT_COMMITTER_EMAIL", "kubeheal@kubeheal.dev"),
];

impl Repo {
    /// The repository at `dir` (which need not exist yet).
    pub fn at(dir: impl Into<PathBuf>) -> Repo {
        Repo {
            dir: dir.into(),
            token: None,
            author: None,
        }
    }

    /// The same repository, committing as `name <email>`.
    pub fn with_author(mut self, name: &str, email: &str) -> Repo {
        self.author = Some((name.to_owned(), email.to_owned()));
        self
    }

    /// The same repository, talking to its remote with `token`.
    pub fn with_token(mut self, token: Option<String>) -> Repo {
        self.token = token.filter(|t| !t.is_empty());
        self
    }

    pub async fn git(&self, args: &[&str]) -> Result<String, GitError> {
        let mut command = Command::new("git");
        command
            .args(["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&self.dir)
            .envs(AUTHOR)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        if let Some((name, email)) = &self.author {
            for (key, value) in [
                ("GIT_AUTHOR_NAME", name),
                ("GIT_AUTHOR_EMAIL", email),
                ("GIT_COMMITTER_NAME", name),
                ("GIT_COMMITTER_EMAIL", email),
            ] {
                command.env(key, value);
            }
        }
        if let Some(token) = &self.token {
            // Basic credentials in the header git adds to its HTTP requests (as GitHub's
            // actions/checkout does), through git's environment: in no URL, argument or config
            // file, and with no credential helper, which git would run with /bin/sh (the
            // operator's image has no shell).
            // The empty first value clears any extraHeader of the user's own config, which would
            // otherwise be sent beside this one (a forge refuses two Authorization headers).
            command
                .env("GIT_CONFIG_COUNT", "2")
                .env("GIT_CONFIG_KEY_0", "http.extraHeader")
                .env("GIT_CONFIG_VALUE_0", "")
                .env("GIT_CONFIG_KEY_1", "http.extraHeader")
                .env(
                    "GIT_CONFIG_VALUE_1",
                    format!("Authorization: Basic {}", basic_credentials(token)),
                );
        }
        let subcommand = args.first().copied().unwrap_or_default().to_owned();
        let out = match tokio::time::timeout(GIT_TIMEOUT, command.output()).await {
            Ok(out) => out.map_err(|source| GitError::Spawn {
                dir: self.dir.clone(),
                source,
            })?,
            Err(_) => return Err(GitError::TimedOut { command: subcommand }),
        };
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            let mut stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            if let Some(token) = &self.token {
                // A 401 to the header makes git ask for a user name, which it may not: what it
                // then prints ("could not read Username") reads as if no token was sent.
                if stderr.contains("could not read Username") || stderr.contains("Authentication failed") {
                    return Err(GitError::TokenRefused { command: subcommand });
                }
                stderr = stderr
                    .replace(token.as_str(), "[REDACTED:TOKEN]")
                    .replace(&basic_credentials(token), "[REDACTED:TOKEN]");
            }
            Err(GitError::Failed {
                command: subcommand,
                stderr,
            })
        }
    }

    /// Clones `url` into this repository's folder unless it is already a clone, then fetches
    /// every branch and tag, so that any commit the run recorded can be checked out.
    pub async fn sync(&self, url: &str) -> Result<(), GitError> {
        self.clear_stale_locks()?;
        // A process killed inside `git init` leaves a `.git` that is no repository: made again.
        let usable = self.dir.join(".git").exists() && self.git(&["rev-parse", "--git-dir"]).await.is_ok();
        if !usable {
            if self.dir.exists() {
                std::fs::remove_dir_all(&self.dir).map_err(|e| io_error(&self.dir, e))?;
            }
            std::fs::create_dir_all(&self.dir).map_err(|e| io_error(&self.dir, e))?;
            self.git(&["init", "--quiet"]).await?;
        }
        // A process killed between `init` and adding the remote leaves a clone without one: the
        // remote is added when missing, set otherwise, so the next sync repairs it.
        if self.git(&["remote", "get-url", "origin"]).await.is_err() {
            self.git(&["remote", "add", "origin", url]).await?;
        } else {
            self.git(&["remote", "set-url", "origin", url]).await?;
        }
        self.git(&[
            "fetch",
            "--quiet",
            "--force",
            "--tags",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
        ])
        .await
        .map(|_| ())
    }

    /// Removes the lock files a git process killed mid-command leaves behind (`index.lock`,
    /// `HEAD.lock`, a ref's `.lock`): every later command would fail on them for ever. Only this
    /// process uses its clone, and never two commands at once, so a lock seen here is stale.
    fn clear_stale_locks(&self) -> Result<(), GitError> {
        let git = self.dir.join(".git");
        if !git.is_dir() {
            return Ok(());
        }
        let mut stack = vec![git];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else { continue };
                if kind.is_dir() {
                    // Objects never carry locks worth a walk; refs and the rest are small.
                    if path.file_name().is_none_or(|n| n != "objects") {
                        stack.push(path);
                    }
                } else if path.extension().is_some_and(|e| e == "lock") {
                    std::fs::remove_file(&path).map_err(|e| io_error(&path, e))?;
                }
            }
        }
        Ok(())
    }

    /// The commit `revision` names at `url`, asked with one `git ls-remote` and no clone: the
    /// default branch's tip when there is no revision, else the branch of that name, else the
    /// tag (peeled to its commit). `None` when only a clone can tell: a commit id or an
    /// expression such as `main~2`, which no ref lists ([`Repo::resolve`] answers those).
    pub async fn resolve_remote(&self, url: &str, revision: Option<&str>) -> Result<Option<String>, GitError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| io_error(&self.dir, e))?;
        let revision = revision.filter(|r| !r.is_empty());
        let listed = match revision {
            None => self.git(&["ls-remote", "--symref", "--", url, "HEAD"]).await?,
            Some(r) => {
                self.git(&[
                    "ls-remote",
                    "--",
                    url,
                    &format!("refs/heads/{r}"),
                    &format!("refs/tags/{r}"),
                    &format!("refs/tags/{r}^{{}}"),
                ])
                .await?
            }
        };
        let refs: Vec<(&str, &str)> = listed
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .filter(|(id, _)| id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit()))
            .collect();
        let find = |name: &str| refs.iter().find(|(_, r)| *r == name).map(|(id, _)| (*id).to_owned());
        Ok(match revision {
            None => find("HEAD"),
            Some(r) => find(&format!("refs/heads/{r}"))
                .or_else(|| find(&format!("refs/tags/{r}^{{}}")))
                .or_else(|| find(&format!("refs/tags/{r}"))),
        })
    }

    /// The commit `revision` names: a remote branch, a tag or a commit; the remote's default
    /// branch when `None`.
    pub async fn resolve(&self, revision: Option<&str>) -> Result<String, GitError> {
        let Some(revision) = revision.filter(|r| !r.is_empty()) else {
            let head = self.git(&["ls-remote", "--symref", "origin", "HEAD"]).await?;
            let branch = head
                .lines()
                .find_map(|l| l.strip_prefix("ref: refs/heads/"))
                .and_then(|l| l.split_whitespace().next())
                .unwrap_or("main")
                .to_owned();
            return self
                .git(&["rev-parse", &format!("refs/remotes/origin/{branch}^{{commit}}")])
                .await;
        };
        for candidate in [
            format!("refs/remotes/origin/{revision}"),
            format!("refs/tags/{revision}"),
            revision.to_owned(),
        ] {
            if let Ok(commit) = self
                .git(&["rev-parse", "--verify", "--quiet", &format!("{candidate}^{{commit}}")])
                .await
            {
                return Ok(commit);
            }
        }
        Err(GitError::Failed {
            command: "rev-parse".into(),
            stderr: format!("the revision {revision} is neither a branch, a tag nor a commit of the repository"),
        })
    }

    /// Checks out `commit` (detached), discarding any change in the working tree.
    pub async fn checkout(&self, commit: &str) -> Result<(), GitError> {
        self.git(&["checkout", "--quiet", "--force", "--detach", commit])
            .await?;
        self.git(&["clean", "--quiet", "-fdx"]).await.map(|_| ())
    }

    /// The tip of `reference` when it is the commit made for `run`'s `cycle` (`trailer` is
    /// `core::format`'s `CYCLE_TRAILER` or `REVERT_TRAILER`).
    pub async fn commit_for(&self, reference: &str, run: &str, trailer: &str, cycle: u32) -> Option<String> {
        self.commit_with(reference, &[(RUN_TRAILER, run), (trailer, &cycle.to_string())])
            .await
    }

    /// The tip of `reference` when its message carries every one of `trailers` (`Key: value`
    /// lines): the commit an earlier, interrupted attempt already made.
    pub async fn commit_with(&self, reference: &str, trailers: &[(&str, &str)]) -> Option<String> {
        let body = self.git(&["log", "-1", "--format=%H%n%B", reference]).await.ok()?;
        let (sha, message) = body.split_once('\n')?;
        let has = |key: &str, value: &str| message.lines().any(|l| l.trim() == format!("{key}: {value}"));
        trailers
            .iter()
            .all(|(key, value)| has(key, value))
            .then(|| sha.to_owned())
    }

    /// The last `count` commits that changed `path`, with their diffs (`git log -p`), for people
    /// and models to see how a file came to be.
    pub async fn recent_changes(&self, path: &str, count: u32) -> Result<String, GitError> {
        self.git(&[
            "log",
            &format!("-{count}"),
            "-p",
            "--no-color",
            "--format=commit %h %s",
            "--",
            path,
        ])
        .await
    }

    /// On `branch` reset to `base`: applies `patch` (a unified diff), commits it with `message`,
    /// and returns the commit.
    pub async fn commit_patch(&self, branch: &str, base: &str, patch: &str, message: &str) -> Result<String, GitError> {
        check_heal_branch(branch)?;
        self.git(&["checkout", "--quiet", "--force", "-B", branch, base])
            .await?;
        let file = self.dir.join(".git").join("kubeheal.patch");
        std::fs::write(&file, patch).map_err(|e| io_error(&file, e))?;
        self.git(&["apply", "--index", "--whitespace=nowarn", &file.display().to_string()])
            .await?;
        self.git(&["commit", "--quiet", "-m", message]).await?;
        self.head().await
    }

    /// On `branch` at `tip`: reverts `commit` with a new commit carrying `message`.
    pub async fn revert_on(&self, branch: &str, tip: &str, commit: &str, message: &str) -> Result<String, GitError> {
        check_heal_branch(branch)?;
        self.git(&["checkout", "--quiet", "--force", "-B", branch, tip]).await?;
        self.git(&["revert", "--no-edit", "--no-commit", commit]).await?;
        self.git(&["commit", "--quiet", "-m", message]).await?;
        self.head().await
    }

    /// Pushes the local `branch` to the remote (the heal branch is kubeheal's own, so a stale
    /// remote copy from an earlier run is overwritten).
    pub async fn push(&self, branch: &str) -> Result<(), GitError> {
        check_heal_branch(branch)?;
        self.git(&[
            "push",
            "--quiet",
            "--force",
            "origin",
            &format!("refs/heads/{branch}:refs/heads/{branch}"),
        ])
        .await
        .map(|_| ())
    }

    /// A repository at `dir` holding `source`: a clone when `source` is the root of a Git
    /// repository, else a new repository with one commit of its files.
    pub async fn prepare(source: &Path, dir: &Path) -> Result<Repo, GitError> {
        let repo = Repo::at(dir);
        if dir.join(".git").exists() {
            return Ok(repo);
        }
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        if source.join(".git").exists() {
            let parent = Repo::at(dir.parent().unwrap_or(dir));
            parent
                .git(&[
                    "clone",
                    "--quiet",
                    &source.display().to_string(),
                    &dir.display().to_string(),
                ])
                .await?;
        } else {
            // A folder that is not a repository: its files, never what its links lead out to.
            ConfinedDir::open(source)?.copy_tree(dir, &[".kubeheal", ".git", "__pycache__", ".pytest_cache"])?;
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
        check_heal_branch(branch)?;
        self.git(&["switch", "--quiet", "-C", branch]).await.map(|_| ())
    }

    pub async fn head(&self) -> Result<String, GitError> {
        self.git(&["rev-parse", "HEAD"]).await
    }

    /// `git diff --shortstat base..HEAD`.
    pub async fn diff_stat(&self, base: &str) -> Result<String, GitError> {
        self.git(&["diff", "--shortstat", &format!("{base}..HEAD")]).await
    }

    /// The files git tracks (empty when git cannot list them).
    pub async fn tracked_files(&self) -> Vec<String> {
        self.git(&["ls-files"])
            .await
            .map(|out| out.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// The working tree, opened so that no file is read through a link out of it.
    pub fn files(&self) -> Result<ConfinedDir, ConfinedError> {
        ConfinedDir::open(&self.dir)
    }
}

fn io_error(path: &Path, source: std::io::Error) -> GitError {
    GitError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Refuses every branch that is not kubeheal's own (`kubeheal/…`): fixes go to a heal branch,
/// and a heal branch is force-pushed, so it must never be one people work on.
fn check_heal_branch(branch: &str) -> Result<(), GitError> {
    if !branch.starts_with("kubeheal/") {
        return Err(GitError::ProtectedBranch(branch.to_owned()));
    }
    Ok(())
}
