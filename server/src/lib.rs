//! The authoritative Skirmish server. It drives `skirmish-core`'s world at a
//! fixed cadence and talks to clients over WebSockets.

pub use skirmish_core::SimConfig;
