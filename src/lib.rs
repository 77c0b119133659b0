//! kubeheal: a Kubernetes operator that heals failing builds and tests.
//!
//! A failing build becomes a HealRun that the operator drives to a fix: execute the build, parse
//! the log into bug reports, ask a code healer for a patch, gate it, commit it to a heal branch,
//! and run again. `api` holds the resources users write; `crdgen` turns them into CRD YAML.

#![forbid(unsafe_code)]

pub mod api;
pub mod confined;
pub mod core;
pub mod crdgen;
pub mod decide;
pub mod decision;
pub mod executor;
pub mod git;
pub mod healer;
pub mod intake;
pub mod local;
pub mod operator;
pub mod parse;
pub mod probe;
pub mod ticket;
