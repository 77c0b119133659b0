//! Shared by the integration tests: the real control plane harness.

#![allow(dead_code)] // each test binary uses a different part of the harness

pub mod cluster;
