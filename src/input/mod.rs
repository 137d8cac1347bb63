//! Bytes → borrowed raw values: the input stage. It knows JSON and the shapes of trace events
//! and profiles, and nothing of what they mean.

pub mod chunk;
pub mod document;
pub mod json;
pub mod leaf;
pub(crate) mod reader;
mod region;
pub mod scan;
pub mod shapes;
pub mod sink;
pub mod source;

pub use source::Source;
