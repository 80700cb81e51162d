//! The browser client: a thin shell that drives `skirmish-core` from the DOM.
//!
//! For now it exposes the determinism check; the canvas game arrives with the
//! browser-client work.

use wasm_bindgen::prelude::wasm_bindgen;

/// The golden trajectory hash as computed in this build, as a hex string
/// (JavaScript numbers cannot hold 64 bits).
#[wasm_bindgen(js_name = goldenTrajectoryHash)]
pub fn golden_trajectory_hash() -> String {
    format!(
        "{:#018x}",
        skirmish_core::determinism::golden_trajectory_hash()
    )
}
