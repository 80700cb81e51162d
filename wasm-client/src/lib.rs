//! The browser client: a thin WebAssembly shell that drives
//! `skirmish-core`'s [`ClientSession`](skirmish_core::ClientSession) from
//! the page.
//!
//! The shell owns what core may not touch: the clock
//! (`requestAnimationFrame` timestamps), the keyboard, the canvas and the
//! connection, over WebTransport (a reliable stream for `hello`, datagrams
//! for inputs, pings and snapshots) when the browser has it and the server
//! offers it, over a WebSocket otherwise, with fallback and reconnection.
//! Each animation frame it drains what arrived into the session, reads the
//! controls and the panel, lets the session run its fixed steps, sends what
//! the session returns, and draws the session's view.
//!
//! One bundle per game: `played` picks the game (the tank game; walkers,
//! the guide's game, with `--features walkers`), which the shell takes
//! through [`game::PageGame`]; the tank's side is `tank`, [`input`] (keys
//! to controls) and [`render`] (the canvas), walkers' is `walkers`. The
//! shell: `page` (the DOM, the keys, the frame loop; the socket beside the
//! page: `/ws` for `/`, `/walkers/ws` for `/walkers/`), `app` (one frame:
//! network, step, draw), [`net`] (the connection: a plan that picks the
//! transport, a link per transport behind one trait), [`hud`] (the panel)
//! and `fields` (the debug state as a JavaScript object). This file
//! holds what the page calls: `web/index.html` calls [`run`], and
//! `window.skirmish` wraps [`debug_state`], [`set_controls`],
//! [`clear_controls`], [`recording`] and [`recording_size`] (the flight
//! recorder, always on, saved with the panel's button or
//! `skirmish.saveRecording()`).

mod app;
#[cfg(feature = "blobs")]
mod blobs;
mod fields;
pub mod game;
pub mod hud;
pub mod input;
pub mod net;
mod num;
mod page;
mod played;
pub mod render;
mod tank;
#[cfg(feature = "walkers")]
mod walkers;

use wasm_bindgen::prelude::{wasm_bindgen, JsValue};

use crate::game::PageGame;
use crate::page::with_app;
use crate::played::Played;

/// Starts the game on the page: connects, listens to the keyboard and runs
/// the frame loop.
///
/// # Errors
/// The page lacks a `canvas#game` or a 2D context.
#[wasm_bindgen]
pub fn run() -> Result<(), JsValue> {
    page::start()
}

/// The client's state as JSON, for end-to-end tests and debugging from the
/// browser console (`skirmish.debug()` on the page).
#[wasm_bindgen(js_name = debugState)]
pub fn debug_state() -> String {
    with_app(|app| app.debug()).unwrap_or_else(|| "null".to_string())
}

/// Overrides the keyboard's controls, for scripted play and end-to-end
/// tests that must aim exactly: a tank's turn and throttle (fire is held
/// if either holds it); a walker's steps along x and y (the signs of
/// `turn` and `throttle`).
#[wasm_bindgen(js_name = setControls)]
pub fn set_controls(turn: f32, throttle: f32, fire: bool) {
    with_app(|app| {
        app.override_controls(Some(Played::scripted(turn, throttle, fire)));
    });
}

/// The flight recorder's bytes so far (`skirmish.saveRecording()` saves
/// them as a file; `cargo xtask replay FILE` replays it natively).
#[wasm_bindgen]
pub fn recording() -> Vec<u8> {
    with_app(|app| app.recording()).unwrap_or_default()
}

/// The flight recorder's size in bytes, negative once it stopped at its
/// bound, `0` without a recorder.
#[wasm_bindgen(js_name = recordingSize)]
pub fn recording_size() -> f64 {
    match with_app(|app| app.recording_info()).flatten() {
        Some((bytes, false)) => bytes as f64,
        Some((bytes, true)) => -(bytes as f64),
        None => 0.0,
    }
}

/// Gives the controls back to the keyboard.
#[wasm_bindgen(js_name = clearControls)]
pub fn clear_controls() {
    with_app(|app| app.override_controls(None));
}

/// The determinism check's trace of this build's game: the running hash
/// after each of `steps` (at most a million) seeded steps from `seed`, as
/// `skirmish_core::trace` computes it natively (`skirmish.determinism()`
/// on the page; a browser test compares the two and names the first
/// step where they differ).
#[wasm_bindgen(js_name = determinismTrace)]
pub fn determinism_trace(seed: u32, steps: u32) -> Vec<u64> {
    skirmish_core::trace::<Played>(u64::from(seed), steps.min(1_000_000))
}
