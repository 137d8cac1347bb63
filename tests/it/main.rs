//! The integration tests: one binary (see Cargo.toml), modules by subject.

mod conformance;
mod errors;
mod regressions;
mod spec_tables;
mod timeline;
mod support;
