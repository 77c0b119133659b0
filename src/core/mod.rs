//! The pure core of the heal loop: decisions without I/O. `gate` decides whether a patch may be
//! committed.

pub mod gate;
