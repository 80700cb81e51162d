//! Browser tests, run in headless Chromium by `wasm-pack test --headless --chrome`.
#![cfg(target_arch = "wasm32")]

use skirmish_core::determinism::{golden_trajectory_hash, GOLDEN_TRAJECTORY_HASH};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn golden_trajectory_hash_matches_in_browser() {
    assert_eq!(golden_trajectory_hash(), GOLDEN_TRAJECTORY_HASH);
}
