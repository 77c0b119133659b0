//! The pure core of the heal loop: decisions without I/O. `heal_run` is the HealRun state
//! machine both drivers run; `format` the one place human-facing strings are rendered; `gate` decides whether a patch may be committed; `patch` turns a
//! healer's answer into the diff and digest an approval binds to; `redact` is the one rule for
//! what secrets look like, applied wherever text leaves the executor or goes to a healer.

pub mod format;
pub mod gate;
pub mod heal_run;
pub mod monitor;
pub mod patch;
pub mod proposal;
pub mod redact;
