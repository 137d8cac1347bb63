//! The integration tests: one binary (see Cargo.toml), modules by subject.

mod accuracy;
mod check;
mod cli;
mod conformance;
mod diff;
mod errors;
mod escapes;
mod export;
mod files;
mod first_hour;
mod gecko;
mod layers;
mod lines;
mod pipeline;
mod properties;
mod ranges;
mod regressions;
mod selftime;
mod sourcemaps;
mod spec_tables;
mod support;
mod timeline;
mod tree;
mod view;
