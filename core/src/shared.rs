//! What both sides compute, once, for any game: ticks and player ids, the
//! game's contract, the protocol and its encodings, the recording format's
//! bones and what the determinism checks share. Nothing here knows which
//! side runs it.

pub mod bytes;
pub mod clamp;
pub mod compact;
pub mod control;
pub mod delta;
pub mod described;
pub mod determinism;
pub mod fields;
pub mod framing;
pub mod game;
pub mod input;
pub mod owned;
pub mod percentile;
pub mod protocol;
pub mod record;
pub mod rng;
pub mod simple;
pub mod state;
pub mod tick;
pub mod timing;
pub mod uplink;
pub mod varint;
pub mod wired;
