//! The whole game's sync test in headless Chromium (`wasm-pack test
//! --headless --chrome games/tanks/page`, run by `cargo xtask test`): the
//! server's step re-simulated from a saved world every tick, as natively,
//! folding to the same hash.
#![cfg(target_arch = "wasm32")]

use skirmish_tanks::determinism::{SYNC_HASH, SYNC_TEST};
use skirmish_tanks::{TankSettings, Tanks};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn the_whole_game_resimulates_in_the_browser_as_natively() {
    let (seed, run) = SYNC_TEST;
    let report = skirmish_core::sync_test::<Tanks>(&TankSettings::default(), seed, run)
        .unwrap_or_else(|d| panic!("{d:?}"));
    assert_eq!(report.compared, 240);
    assert_eq!(report.hash, SYNC_HASH, "got {:#018x}", report.hash);
}
