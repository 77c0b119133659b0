//! The operator's image, as far as it can be assembled on machines that cannot pull a base
//! image: the runtime root the Dockerfile builds (`image/rootfs.sh`: Debian's git and CA
//! certificates, their libraries, no shell) with this build's `kubeheal` where the Dockerfile
//! puts it, for the tests that run the operator in a chroot of it as its Pod would run.
//!
//! Needs root (chroot, mknod) and `mmdebstrap` with a Debian mirror (`.ci/run` installs it). The
//! root is built once per version of `image/rootfs.sh`, under `~/.cache/kubeheal/rootfs/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Where the Dockerfile puts the binary (its `ENTRYPOINT`).
pub const ENTRYPOINT: &str = "/usr/local/bin/kubeheal";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The runtime root `image/rootfs.sh` makes, built once per version of the script.
pub fn runtime_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let script = repo_root().join("image/rootfs.sh");
        let text = std::fs::read_to_string(&script).expect("image/rootfs.sh is readable");
        // Named after the script's content: `sha256:` and 16 of its hex digits.
        let version = kubeheal::core::patch::digest(&text)[7..23].to_owned();
        let home = std::env::var_os("HOME").map(PathBuf::from).expect("HOME is set");
        let cache = home.join(".cache/kubeheal/rootfs");
        let root = cache.join(&version);
        if root.join("usr/bin/git").exists() {
            return root;
        }
        std::fs::create_dir_all(&cache).expect("create the root cache");
        // Built beside its final place and renamed: a build cut short is never taken for a root.
        let building = cache.join(format!("{version}.building-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&building);
        let out = Command::new(&script)
            .arg(&building)
            .output()
            .expect("image/rootfs.sh runs");
        assert!(
            out.status.success(),
            "image/rootfs.sh failed (it needs mmdebstrap, a Debian mirror and root):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if std::fs::rename(&building, &root).is_err() {
            // Another test binary built it meanwhile.
            let _ = std::fs::remove_dir_all(&building);
        }
        root
    })
}

/// Runs `command`, failing the test with its error output when it fails.
pub fn run(command: &mut Command) {
    let out = command.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The image at `image` (a new folder): a copy of the runtime root, checked to hold no shell or
/// interpreter, with the device nodes every container runtime provides in `/dev` (git needs
/// random bytes for its temporary files; the root has none of its own) and this build's
/// `kubeheal` at [`ENTRYPOINT`]. Everything in it is root's, as in the image.
pub fn assemble_image(image: &Path) {
    let dockerfile = std::fs::read_to_string(repo_root().join("Dockerfile")).expect("the Dockerfile");
    assert!(
        dockerfile.contains(&format!("ENTRYPOINT [\"{ENTRYPOINT}\"]")),
        "the Dockerfile's entrypoint is not {ENTRYPOINT}"
    );
    run(Command::new("cp").arg("-a").arg(runtime_root()).arg(image));
    for program in ["sh", "bash", "dash", "perl"] {
        for dir in ["bin", "usr/bin"] {
            let path = image.join(dir).join(program);
            assert!(
                !path.exists(),
                "the runtime root has a shell or interpreter: {}",
                path.display()
            );
        }
    }
    std::fs::create_dir_all(image.join("dev")).expect("mkdir dev");
    for (name, minor) in [
        ("null", "3"),
        ("zero", "5"),
        ("full", "7"),
        ("random", "8"),
        ("urandom", "9"),
    ] {
        run(Command::new("mknod")
            .args(["-m", "666"])
            .arg(image.join("dev").join(name))
            .args(["c", "1", minor]));
    }
    let binary = image.join(ENTRYPOINT.trim_start_matches('/'));
    std::fs::create_dir_all(binary.parent().expect("a folder")).expect("mkdir");
    std::fs::copy(env!("CARGO_BIN_EXE_kubeheal"), binary).expect("copy the binary into the image");
}

/// `chroot` from coreutils, named by its path.
pub fn chroot() -> &'static str {
    ["/usr/sbin/chroot", "/usr/bin/chroot"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("chroot (coreutils) is installed")
}
