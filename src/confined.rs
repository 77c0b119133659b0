//! The one place that opens a repository's files, under every layer that reads or writes them
//! (the healer request, the work repository's copy, the executor's copy, `kubeheal heal`'s state
//! folder). A repository is untrusted input: a committed symlink to `/proc/self/environ`, to
//! `~/.ssh` or to another run's clone must never make kubeheal read or write there.
//!
//! Paths are resolved by [`cap_std`] relative to an open directory handle (`openat`-style), so a
//! path or a link that leads out of the directory fails, with no window between a check and the
//! open. On top of that: the last component is never a link (a file kubeheal reads for a healer or
//! writes is always a regular file of the workspace), special files (FIFOs, devices, sockets) are
//! refused without blocking, and reads are bounded.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt, PermissionsExt};
use thiserror::Error;

/// Why a file could not be opened inside a confined folder.
#[derive(Debug, Error)]
pub enum ConfinedError {
    #[error("{path} is not a path inside {root}: only relative paths without `..` are allowed")]
    NotRelative { root: PathBuf, path: String },
    #[error("{path} in {root} is a symbolic link; kubeheal reads and writes regular files only")]
    Symlink { root: PathBuf, path: String },
    #[error("{path} in {root} leads outside of {root} (through a symbolic link or `..`); refused")]
    Escapes { root: PathBuf, path: String },
    #[error("{path} in {root} is not a regular file")]
    NotAFile { root: PathBuf, path: String },
    #[error("{path} in {root} is larger than {limit} bytes")]
    TooLarge { root: PathBuf, path: String, limit: u64 },
    #[error("{path} in {root} is not UTF-8 text")]
    NotText { root: PathBuf, path: String },
    #[error("failed to open {root}: {source}")]
    Root {
        root: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to access {path} in {root}: {source}")]
    Io {
        root: PathBuf,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl ConfinedError {
    /// Whether the file does not exist (as opposed to being refused or unreadable).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ConfinedError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// A folder whose files kubeheal opens by relative path only, never leaving it.
#[derive(Debug)]
pub struct ConfinedDir {
    root: PathBuf,
    dir: Dir,
}

/// What a tree copy left out, for the run's warnings.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CopyReport {
    /// Symbolic links that lead outside the tree (or nowhere), not copied.
    pub skipped_links: Vec<String>,
    /// FIFOs, sockets and devices, not copied.
    pub skipped_special: Vec<String>,
}

impl CopyReport {
    /// One warning line per thing left out.
    pub fn warnings(&self) -> Vec<String> {
        let links = self.skipped_links.iter().map(|p| {
            format!("{p} is a symbolic link that leads outside the workspace (or nowhere); it was not copied")
        });
        let special = self
            .skipped_special
            .iter()
            .map(|p| format!("{p} is not a regular file, folder or link; it was not copied"));
        links.chain(special).collect()
    }
}

impl ConfinedDir {
    /// Opens `root` (which the caller chose, so it may itself be reached through a link).
    pub fn open(root: &Path) -> Result<ConfinedDir, ConfinedError> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority()).map_err(|source| ConfinedError::Root {
            root: root.to_owned(),
            source,
        })?;
        Ok(ConfinedDir {
            root: root.to_owned(),
            dir,
        })
    }

    /// Opens `name` inside `parent` as a folder kubeheal keeps its own state in: created when
    /// missing, refused when it is a link or not a folder (a repository must not choose where
    /// kubeheal writes).
    pub fn state_dir(parent: &Path, name: &str) -> Result<ConfinedDir, ConfinedError> {
        let outer = ConfinedDir::open(parent)?;
        let path = outer.checked(name)?;
        match outer.dir.create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(outer.io(name, source)),
        }
        let dir = outer.dir.open_dir_nofollow(&path).map_err(|source| {
            if outer.is_link(&path) {
                ConfinedError::Symlink {
                    root: outer.root.clone(),
                    path: name.to_owned(),
                }
            } else {
                outer.io(name, source)
            }
        })?;
        Ok(ConfinedDir {
            root: outer.root.join(name),
            dir,
        })
    }

    /// The folder's path, for messages and for tools that need one (git).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The regular file at `path` (relative), at most `limit` bytes.
    pub fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ConfinedError> {
        let relative = self.checked(path)?;
        let mut options = OpenOptions::new();
        // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; the type is
        // checked on the open handle right after.
        options
            .read(true)
            .follow(FollowSymlinks::No)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
        let file = self
            .dir
            .open_with(&relative, &options)
            .map_err(|e| self.open_error(path, &relative, e))?;
        let metadata = file.metadata().map_err(|e| self.io(path, e))?;
        if !metadata.is_file() {
            return Err(ConfinedError::NotAFile {
                root: self.root.clone(),
                path: path.to_owned(),
            });
        }
        if metadata.len() > limit {
            return Err(self.too_large(path, limit));
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        file.take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io(path, e))?;
        if bytes.len() as u64 > limit {
            return Err(self.too_large(path, limit));
        }
        Ok(bytes)
    }

    /// [`ConfinedDir::read`] as UTF-8 text.
    pub fn read_text(&self, path: &str, limit: u64) -> Result<String, ConfinedError> {
        String::from_utf8(self.read(path, limit)?).map_err(|_| ConfinedError::NotText {
            root: self.root.clone(),
            path: path.to_owned(),
        })
    }

    /// Replaces the file at `path` with `contents` (a new file beside it, renamed over it: a link
    /// at `path` is replaced, never written through; a reader never sees half a file). Missing
    /// parent folders are created inside the folder.
    pub fn write(&self, path: &str, contents: &[u8]) -> Result<(), ConfinedError> {
        let relative = self.checked(path)?;
        if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.dir
                .create_dir_all(parent)
                .map_err(|e| self.open_error(path, parent, e))?;
        }
        let name = relative.file_name().unwrap_or_default().to_string_lossy();
        let temporary = relative.with_file_name(format!(".{name}.kubeheal-{}.tmp", std::process::id()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true).follow(FollowSymlinks::No);
        let mut file = self
            .dir
            .open_with(&temporary, &options)
            .map_err(|e| self.open_error(path, &temporary, e))?;
        let written = file.write_all(contents).and_then(|()| file.sync_all());
        drop(file);
        if let Err(e) = written.and_then(|()| self.dir.rename(&temporary, &self.dir, &relative)) {
            let _ = self.dir.remove_file(&temporary);
            return Err(self.open_error(path, &relative, e));
        }
        Ok(())
    }

    /// Opens the regular file at `path` for writing without truncating it, creating it when
    /// missing; never through a link (for lock files).
    pub fn open_for_update(&self, path: &str) -> Result<std::fs::File, ConfinedError> {
        let relative = self.checked(path)?;
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).follow(FollowSymlinks::No);
        let file = self
            .dir
            .open_with(&relative, &options)
            .map_err(|e| self.open_error(path, &relative, e))?;
        Ok(file.into_std())
    }

    /// Creates the folder `path` (and its parents) inside, and returns its full path.
    pub fn create_dir_all(&self, path: &str) -> Result<PathBuf, ConfinedError> {
        let relative = self.checked(path)?;
        self.dir
            .create_dir_all(&relative)
            .map_err(|e| self.open_error(path, &relative, e))?;
        Ok(self.root.join(relative))
    }

    /// Removes the folder or file at `path` and everything under it; links are removed, never
    /// followed. A path that does not exist is not an error.
    pub fn remove_all(&self, path: &str) -> Result<(), ConfinedError> {
        let relative = self.checked(path)?;
        let removed = match self.dir.symlink_metadata(&relative) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => Err(e),
            Ok(m) if m.is_dir() => self.dir.remove_dir_all(&relative),
            Ok(_) => self.dir.remove_file_or_symlink(&relative),
        };
        removed.map_err(|e| self.open_error(path, &relative, e))
    }

    /// Copies the whole tree to `to` (a new folder): folders and regular files (with their
    /// permissions), and the links that resolve inside the tree. Links that lead out of it, or
    /// nowhere, and special files are left out and reported. Entries named in `skip` are left
    /// out at every depth.
    pub fn copy_tree(&self, to: &Path, skip: &[&str]) -> Result<CopyReport, ConfinedError> {
        let mut report = CopyReport::default();
        std::fs::create_dir_all(to).map_err(|source| ConfinedError::Root {
            root: to.to_owned(),
            source,
        })?;
        self.copy_dir(&self.dir, Path::new(""), to, skip, &mut report)?;
        Ok(report)
    }

    fn copy_dir(
        &self,
        dir: &Dir,
        at: &Path,
        to: &Path,
        skip: &[&str],
        report: &mut CopyReport,
    ) -> Result<(), ConfinedError> {
        let shown = |name: &std::ffi::OsStr| at.join(name).to_string_lossy().into_owned();
        let entries = dir.entries().map_err(|e| self.io(&at.to_string_lossy(), e))?;
        let mut names: Vec<_> = entries.flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for entry in names {
            let name = entry.file_name();
            if skip.iter().any(|s| name == *s) {
                continue;
            }
            let relative = at.join(&name);
            let target = to.join(&name);
            let kind = entry.file_type().map_err(|e| self.io(&shown(&name), e))?;
            let io = |e| self.io(&shown(&name), e);
            if kind.is_symlink() {
                // The link is kept only when it resolves inside the tree now; its text is copied
                // as it is, so it resolves the same way inside the copy.
                match (self.dir.metadata(&relative), dir.read_link_contents(&name)) {
                    (Ok(_), Ok(contents)) => std::os::unix::fs::symlink(contents, &target).map_err(io)?,
                    _ => report.skipped_links.push(shown(&name)),
                }
            } else if kind.is_dir() {
                let child = dir.open_dir_nofollow(&name).map_err(io)?;
                std::fs::create_dir_all(&target).map_err(io)?;
                self.copy_dir(&child, &relative, &target, skip, report)?;
            } else if kind.is_file() {
                let mut options = OpenOptions::new();
                options.read(true).follow(FollowSymlinks::No);
                let mut from = dir.open_with(&name, &options).map_err(io)?;
                let mode = from.metadata().map_err(io)?.permissions().mode();
                let mut into = std::fs::File::create(&target).map_err(io)?;
                std::io::copy(&mut from, &mut into).map_err(io)?;
                std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(mode & 0o777))
                    .map_err(io)?;
            } else {
                report.skipped_special.push(shown(&name));
            }
        }
        Ok(())
    }

    /// `path` as a relative path with no `..`, no root and no prefix.
    fn checked(&self, path: &str) -> Result<PathBuf, ConfinedError> {
        let candidate = Path::new(path);
        let clean = !path.is_empty()
            && !path.contains('\0')
            && candidate
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !clean {
            return Err(ConfinedError::NotRelative {
                root: self.root.clone(),
                path: path.to_owned(),
            });
        }
        Ok(candidate.components().collect())
    }

    fn is_link(&self, relative: &Path) -> bool {
        self.dir
            .symlink_metadata(relative)
            .is_ok_and(|m| m.file_type().is_symlink())
    }

    /// Names why opening `relative` failed: a link at the end, a way out, or the OS's reason.
    fn open_error(&self, path: &str, relative: &Path, source: std::io::Error) -> ConfinedError {
        if self.is_link(relative) {
            return ConfinedError::Symlink {
                root: self.root.clone(),
                path: path.to_owned(),
            };
        }
        // cap-std reports a path that leads out of the folder as PermissionDenied.
        if source.kind() == std::io::ErrorKind::PermissionDenied && source.raw_os_error().is_none() {
            return ConfinedError::Escapes {
                root: self.root.clone(),
                path: path.to_owned(),
            };
        }
        self.io(path, source)
    }

    fn io(&self, path: &str, source: std::io::Error) -> ConfinedError {
        ConfinedError::Io {
            root: self.root.clone(),
            path: path.to_owned(),
            source,
        }
    }

    fn too_large(&self, path: &str, limit: u64) -> ConfinedError {
        ConfinedError::TooLarge {
            root: self.root.clone(),
            path: path.to_owned(),
            limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("repo");
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/mod.py"), "x = 1\n").unwrap();
        std::fs::write(base.path().join("outside.txt"), "OUTSIDE-SECRET").unwrap();
        (base, root)
    }

    #[test]
    fn a_file_inside_is_read() {
        let (_base, root) = tree();
        let dir = ConfinedDir::open(&root).unwrap();
        assert_eq!(dir.read_text("pkg/mod.py", 1024).unwrap(), "x = 1\n");
        assert_eq!(dir.read_text("./pkg/mod.py", 1024).unwrap(), "x = 1\n");
    }

    #[test]
    fn links_out_of_the_tree_are_never_followed() {
        let (base, root) = tree();
        symlink("/proc/self/environ", root.join("leak.py")).unwrap();
        symlink(base.path().join("outside.txt"), root.join("abs.py")).unwrap();
        symlink("../outside.txt", root.join("rel.py")).unwrap();
        symlink("..", root.join("up")).unwrap();
        let dir = ConfinedDir::open(&root).unwrap();
        for path in [
            "leak.py",
            "abs.py",
            "rel.py",
            "up/outside.txt",
            "../outside.txt",
            "/etc/passwd",
        ] {
            let error = dir.read_text(path, 1 << 20).unwrap_err();
            assert!(
                matches!(
                    error,
                    ConfinedError::Symlink { .. } | ConfinedError::Escapes { .. } | ConfinedError::NotRelative { .. }
                ),
                "{path}: {error}"
            );
        }
    }

    #[test]
    fn a_link_inside_the_tree_is_not_read_as_a_file_either() {
        let (_base, root) = tree();
        symlink("pkg/mod.py", root.join("alias.py")).unwrap();
        let dir = ConfinedDir::open(&root).unwrap();
        let error = dir.read_text("alias.py", 1024).unwrap_err();
        assert!(error.to_string().contains("alias.py"), "{error}");
        assert!(matches!(error, ConfinedError::Symlink { .. }), "{error}");
    }

    #[test]
    fn fifos_are_refused_without_blocking_and_sizes_are_bounded() {
        let (_base, root) = tree();
        nix::unistd::mkfifo(&root.join("pipe.py"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::write(root.join("big.py"), "x".repeat(2048)).unwrap();
        let dir = ConfinedDir::open(&root).unwrap();
        assert!(matches!(
            dir.read("pipe.py", 1024).unwrap_err(),
            ConfinedError::NotAFile { .. }
        ));
        assert!(matches!(
            dir.read("big.py", 1024).unwrap_err(),
            ConfinedError::TooLarge { .. }
        ));
        assert!(dir.read("missing.py", 1024).unwrap_err().is_not_found());
    }

    #[test]
    fn writing_replaces_a_link_instead_of_writing_through_it() {
        let (base, root) = tree();
        symlink(base.path().join("outside.txt"), root.join("status.json")).unwrap();
        let dir = ConfinedDir::open(&root).unwrap();
        dir.write("status.json", b"{}").unwrap();
        assert_eq!(
            std::fs::read_to_string(base.path().join("outside.txt")).unwrap(),
            "OUTSIDE-SECRET"
        );
        assert_eq!(std::fs::read_to_string(root.join("status.json")).unwrap(), "{}");
        assert!(
            !std::fs::symlink_metadata(root.join("status.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn writing_through_a_linked_folder_is_refused() {
        let (base, root) = tree();
        std::fs::create_dir(base.path().join("elsewhere")).unwrap();
        symlink(base.path().join("elsewhere"), root.join("out")).unwrap();
        let dir = ConfinedDir::open(&root).unwrap();
        assert!(dir.write("out/x.txt", b"x").is_err());
        assert!(!base.path().join("elsewhere/x.txt").exists());
    }

    #[test]
    fn a_state_folder_that_is_a_link_is_refused_and_removal_never_follows_links() {
        let (base, root) = tree();
        let victim = base.path().join("victim");
        std::fs::create_dir_all(victim.join("repo")).unwrap();
        std::fs::write(victim.join("repo/keep.txt"), "keep").unwrap();
        symlink(&victim, root.join(".kubeheal")).unwrap();
        let error = ConfinedDir::state_dir(&root, ".kubeheal").unwrap_err();
        assert!(matches!(error, ConfinedError::Symlink { .. }), "{error}");

        std::fs::remove_file(root.join(".kubeheal")).unwrap();
        let state = ConfinedDir::state_dir(&root, ".kubeheal").unwrap();
        symlink(&victim, root.join(".kubeheal/repo")).unwrap();
        state.remove_all("repo").unwrap();
        assert!(victim.join("repo/keep.txt").exists());
        assert!(!root.join(".kubeheal/repo").exists());
    }

    #[test]
    fn a_copy_keeps_links_inside_and_leaves_out_links_that_lead_out() {
        let (base, root) = tree();
        symlink("/proc/self/environ", root.join("leak.py")).unwrap();
        symlink(base.path().join("outside.txt"), root.join("pkg/abs.txt")).unwrap();
        symlink("mod.py", root.join("pkg/alias.py")).unwrap();
        symlink(".", root.join("here")).unwrap();
        symlink("here/../outside.txt", root.join("tricky.txt")).unwrap();
        symlink("missing", root.join("dangling")).unwrap();
        std::fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(root.join("run.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::create_dir(root.join(".kubeheal")).unwrap();
        let to = base.path().join("copy");
        let report = ConfinedDir::open(&root)
            .unwrap()
            .copy_tree(&to, &[".kubeheal"])
            .unwrap();
        assert_eq!(
            report.skipped_links,
            ["dangling", "leak.py", "pkg/abs.txt", "tricky.txt"],
            "{report:?}"
        );
        assert_eq!(std::fs::read_to_string(to.join("pkg/alias.py")).unwrap(), "x = 1\n");
        assert!(to.join("here").is_dir());
        assert!(!to.join(".kubeheal").exists());
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(to.join("run.sh")).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o755);
    }
}
