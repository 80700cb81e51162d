//! The client side: a [`session::ClientSession`] over prediction, smoothing,
//! interpolation, the store of authoritative states, the server clock and a
//! network conditioner. Only the browser shell, the bots and tests run it.

pub mod authority;
pub mod backoff;
pub mod clock;
pub mod conditioner;
pub mod game;
pub mod idmap;
pub mod interpolation;
pub mod pacing;
pub mod pending;
pub mod prediction;
pub mod record;
pub mod replay;
pub mod session;
pub mod smoothing;
pub mod timeline;
