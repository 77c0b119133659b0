//! The API users write against: the three custom resources of group `kubeheal.dev`, version
//! `v1alpha1`, and the types they share. Every `///` comment on a field is `kubectl explain` text.

pub mod code_fix_dds;
pub mod heal_run;
pub mod healer_ticket;
pub mod shared;

pub use code_fix_dds::{CodeFixDDS, CodeFixDDSSpec, CodeFixDDSStatus};
pub use heal_run::{HealRun, HealRunSpec, HealRunStatus};
pub use healer_ticket::{HealerTicket, HealerTicketSpec, HealerTicketStatus};

/// The API group of every kubeheal resource.
pub const GROUP: &str = "kubeheal.dev";
/// The served and stored version.
pub const VERSION: &str = "v1alpha1";
