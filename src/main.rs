//! The `kubeheal` command line. Each subcommand is a thin shell around the library; only what
//! works is listed.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// kubeheal heals failing builds and tests, in a Kubernetes cluster or on a laptop.
#[derive(Debug, Parser)]
#[command(name = "kubeheal", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write the CustomResourceDefinitions to crds/ and charts/kubeheal/crds/.
    Crdgen {
        /// Repository root to write into.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Write nothing; fail when a committed copy differs from the types.
        #[arg(long)]
        check: bool,
        /// Print the CRDs as one multi-document YAML stream instead of writing files
        /// (`kubeheal crdgen --stdout | kubectl apply --server-side -f -`).
        #[arg(long, conflicts_with = "check")]
        stdout: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Crdgen { root, check, stdout } => crdgen(&root, check, stdout),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("kubeheal: {message}");
            ExitCode::FAILURE
        }
    }
}

fn crdgen(root: &std::path::Path, check: bool, stdout: bool) -> Result<(), String> {
    use kubeheal::crdgen;
    if stdout {
        let docs = crdgen::render().map_err(|e| e.to_string())?;
        let stream: Vec<String> = docs.into_iter().map(|d| d.yaml).collect();
        print!("{}", stream.join("---\n"));
        return Ok(());
    }
    if check {
        crdgen::check(root).map_err(|e| e.to_string())?;
        eprintln!("kubeheal: CRDs in {} are up to date", crdgen::CRD_DIRS.join(" and "));
        return Ok(());
    }
    for path in crdgen::write(root).map_err(|e| e.to_string())? {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
