//! Shared by the integration tests: the real control plane harness, the test node that plays the
//! kubelet's part, loopback HTTP servers, throwaway Git repositories, and seed 003's envelope validator.

#![allow(dead_code)] // each test binary uses a different part of the harness

pub mod browser;
pub mod cluster;
pub mod git;
pub mod http;
pub mod image;
pub mod node;
pub mod seed003;
pub mod specora;
