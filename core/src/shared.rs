//! What both sides compute, once: the vocabulary (ticks, inputs, states),
//! the movement step, the configuration, combat, the protocol and its
//! encodings, and the determinism check. Nothing here knows which side runs
//! it.

pub mod bytes;
pub mod clamp;
pub mod combat;
pub mod compact;
pub mod config;
pub mod control;
pub mod delta;
pub mod determinism;
pub mod fields;
pub mod framing;
pub mod game;
pub mod input;
pub mod percentile;
pub mod protocol;
pub mod record;
pub mod rng;
pub mod sim;
pub mod state;
pub mod tick;
pub mod timing;
pub mod uplink;
pub mod varint;
pub mod wired;
