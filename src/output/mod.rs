//! The estimate → bytes: the calls JSON and the timeline trace.

pub(crate) mod calls;
pub(crate) mod timeline;
