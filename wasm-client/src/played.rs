//! The game this bundle plays: the one module of the shell that picks it.
//! The tank game by default; built with `--features walkers`, the guide's
//! game (`web/walkers/pkg`); with `--features blobs`, the .io arena
//! (`web/blobs/pkg`). One wasm bundle per game: a bundle links only the
//! game it plays.

#[cfg(feature = "blobs")]
pub use skirmish_blobs::Blobs as Played;
#[cfg(not(any(feature = "walkers", feature = "blobs")))]
pub use skirmish_tanks::Tanks as Played;
#[cfg(all(feature = "walkers", not(feature = "blobs")))]
pub use skirmish_walkers::Walkers as Played;

/// The golden trajectory hash of the tank game as computed in this build,
/// as a hex string (JavaScript numbers cannot hold 64 bits).
#[cfg(not(any(feature = "walkers", feature = "blobs")))]
#[wasm_bindgen::prelude::wasm_bindgen(js_name = goldenTrajectoryHash)]
pub fn golden_trajectory_hash() -> String {
    format!(
        "{:#018x}",
        skirmish_tanks::determinism::golden_trajectory_hash()
    )
}
