//! Source maps, read and applied exactly as Chrome DevTools applies them to a CPU profile's
//! call frames: the original function name (`NamesResolver.resolveProfileFrameFunctionName`)
//! and the original place (`CompilerScriptMapping`). Maps and scripts come from the user
//! (pairs, folders) through a [`Loader`], and from the trace itself ([`Embedded`]); nothing is
//! fetched.

mod codec;
mod info;
mod map;
mod resolve;
mod scopes;
mod text;
mod units;
mod url;

pub use crate::model::trace::scripts::Embedded;
pub(crate) use resolve::{resolve, FrameAt};
pub use resolve::{FrameKey, Loader, MapProblem, Resolution, Resolved, ScriptSummary};
