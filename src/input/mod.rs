//! Bytes → borrowed raw values: the input stage. It knows JSON and the shapes of trace events
//! and profiles, and nothing of what they mean.
//!
//! The modules marked `internals` are public to the project's measurement tools only (the
//! `internals` feature); without it their `pub` items reach no user.

#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub mod chunk;
pub(crate) mod copy;
pub(crate) mod document;
pub(crate) mod formats;
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub mod json;
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub(crate) mod leaf;
pub(crate) mod reader;
mod region;
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub mod scan;
pub(crate) mod shaped;
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub mod shapes;
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub(crate) mod sink;
pub(crate) mod source;
mod stream;

pub use formats::InputKind;
pub use source::Source;
