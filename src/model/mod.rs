//! Raw values → the model: profiles (DevTools' `CPUProfileDataModel`) and each thread's events,
//! assembled as DevTools' handlers do. Every JS quirk that changes an answer is kept here.

pub mod entries;
pub mod packed;
pub mod profile;
pub mod trace;
