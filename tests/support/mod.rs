//! Shared by the integration tests: the real control plane harness and loopback HTTP servers.

#![allow(dead_code)] // each test binary uses a different part of the harness

pub mod cluster;
pub mod http;
