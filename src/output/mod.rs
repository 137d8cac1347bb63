//! The estimate → bytes: the calls JSON and the timeline trace.

pub mod calls;
pub mod timeline;
