//! Walkers, the game of `docs/GUIDE.md`: players walk a square field, a
//! point each, so that the harness can run the guide's game.

// A guide imports the whole library at once.
#[allow(clippy::wildcard_imports)]
#[rustfmt::skip]
mod listing;

pub use listing::*;
