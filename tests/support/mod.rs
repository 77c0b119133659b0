//! Shared by the integration tests: the real control plane harness, loopback HTTP servers, and
//! throwaway Git repositories.

#![allow(dead_code)] // each test binary uses a different part of the harness

pub mod cluster;
pub mod git;
pub mod http;
