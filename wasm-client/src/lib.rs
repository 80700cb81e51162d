//! The browser page shell: a thin WebAssembly shell that drives
//! `skirmish-core`'s [`ClientSession`](skirmish_core::ClientSession) from
//! the page, for any game that implements [`PageGame`].
//!
//! The shell owns what core may not touch: the clock
//! (`requestAnimationFrame` timestamps), the keyboard and the pointer, the
//! canvas and the connection, over WebTransport (a reliable stream for
//! `hello`, datagrams for inputs, pings and snapshots) when the browser has
//! it and the server offers it, over a WebSocket otherwise, with fallback
//! and reconnection. Each animation frame it drains what arrived into the
//! session, reads the controls and the panel, lets the session run its
//! fixed steps, sends what the session returns, and draws the session's
//! view.
//!
//! One bundle per game: each game's page is a `cdylib` crate of its own
//! (`games/GAME/page`) that implements [`PageGame`] and starts the shell
//! with one line, [`page!`], which exports what the page's JavaScript
//! calls. The shell: `page` (the DOM, the keys, the frame loop; the socket
//! beside the page: `/ws` for `/`, `/walkers/ws` for `/walkers/`), `app`
//! (one frame: network, step, draw), [`net`] (the connection: a plan that
//! picks the transport, a link per transport behind one trait), [`hud`]
//! (the panel), [`fields`] (the debug state as a JavaScript object) and
//! [`game`] (what it asks of a game, and the [`Overlays`] and [`Fit`]
//! every game's drawing uses). This file holds what the page calls:
//! `web/index.html` calls [`run`], and `window.skirmish` wraps
//! [`debug_state`], [`set_controls`], [`clear_controls`], [`recording`],
//! [`recording_size`] (the flight recorder, always on, saved with the
//! panel's button or `skirmish.saveRecording()`) and
//! [`determinism_trace`].

pub mod app;
pub mod fields;
pub mod game;
pub mod hud;
pub mod net;
pub mod num;
pub mod page;

use js_sys::Reflect;
use wasm_bindgen::prelude::JsValue;

pub use crate::game::{shown_name, Fit, Named, Overlays, PageGame, Script};
use crate::page::with_app;

/// Exports the page's entry points for the game `$page` (a [`PageGame`]):
/// `run`, `debugState`, `setControls`, `clearControls`, `recording`,
/// `recordingSize` and `determinismTrace`, each calling the shell's
/// function of that name. A game's page crate says it once, at its root:
/// `skirmish_client::page!(MyPage);`.
// rustfmt indents the attributes' arguments deeper at every run here.
#[rustfmt::skip]
#[macro_export]
macro_rules! page {
    ($page:ty) => {
        /// Starts the game on the page: connects, listens to the keyboard
        /// and runs the frame loop.
        ///
        /// # Errors
        /// The page lacks a `canvas#game` or a 2D context.
        #[$crate::__private::wasm_bindgen::prelude::wasm_bindgen(
            wasm_bindgen = $crate::__private::wasm_bindgen
        )]
        pub fn run() -> ::core::result::Result<(), $crate::__private::wasm_bindgen::JsValue> {
            $crate::run::<$page>()
        }

        /// The client's state as JSON (`skirmish.debug()`).
        #[$crate::__private::wasm_bindgen::prelude::wasm_bindgen(
            wasm_bindgen = $crate::__private::wasm_bindgen,
            js_name = debugState
        )]
        pub fn debug_state() -> ::std::string::String {
            $crate::debug_state::<$page>()
        }

        /// Overrides the keyboard's controls (`skirmish.setControls`): the
        /// game's controls as an object, or `turn, throttle, fire`.
        #[$crate::__private::wasm_bindgen::prelude::wasm_bindgen(
            wasm_bindgen = $crate::__private::wasm_bindgen,
            js_name = setControls
        )]
        pub fn set_controls(
            controls: &$crate::__private::wasm_bindgen::JsValue,
            throttle: &$crate::__private::wasm_bindgen::JsValue,
            fire: &$crate::__private::wasm_bindgen::JsValue,
        ) {
            $crate::set_controls::<$page>(controls, throttle, fire);
        }

        /// Gives the controls back to the keyboard.
        #[$crate::__private::wasm_bindgen::prelude::wasm_bindgen(
            wasm_bindgen = $crate::__private::wasm_bindgen,
            js_name = clearControls
        )]
        pub fn clear_controls() {
            $crate::clear_controls::<$page>();
        }

        /// The flight recorder's bytes so far.
        #[$crate::__private::wasm_bindgen::prelude::wasm_bindgen(
            wasm_bindgen = $crate::__private::wasm_bindgen
        )]
        pub fn recording() -> ::std::vec::Vec<u8> {
            $crate::recording::<$page>()
        }

        /// The flight recorder's size in bytes, negative once it stopped at
        /// its bound, `0` without a recorder.
        #[$crate::__private::wasm_bindgen::prelude::wasm_bindgen(
            wasm_bindgen = $crate::__private::wasm_bindgen,
            js_name = recordingSize
        )]
        pub fn recording_size() -> f64 {
            $crate::recording_size::<$page>()
        }

        /// The determinism check's trace of this page's game.
        #[$crate::__private::wasm_bindgen::prelude::wasm_bindgen(
            wasm_bindgen = $crate::__private::wasm_bindgen,
            js_name = determinismTrace
        )]
        pub fn determinism_trace(seed: u32, steps: u32) -> ::std::vec::Vec<u64> {
            $crate::determinism_trace::<$page>(seed, steps)
        }
    };
}

/// What [`page!`] expands to needs, under the shell's names (a page crate
/// need not depend on `wasm-bindgen` itself).
#[doc(hidden)]
pub mod __private {
    pub use wasm_bindgen;
}

/// Starts game `P` on the page: connects, listens to the keyboard and
/// runs the frame loop.
///
/// # Errors
/// The page lacks a `canvas#game` or a 2D context.
pub fn run<P: PageGame>() -> Result<(), JsValue> {
    page::start::<P>()
}

/// The client's state as JSON, for end-to-end tests and debugging from the
/// browser console (`skirmish.debug()` on the page).
pub fn debug_state<P: PageGame>() -> String {
    with_app::<P, _>(|app| app.debug()).unwrap_or_else(|| "null".to_string())
}

/// Overrides the keyboard's controls, for scripted play and end-to-end
/// tests that must aim exactly: `controls` is an object of the game's
/// named controls (`{turn, throttle, fire}` for a tank, `{x, y}` for a
/// walker), which [`PageGame::scripted`] reads; the older positional
/// form, `turn, throttle, fire`, is read as the object `{turn, throttle,
/// fire}` for every game.
pub fn set_controls<P: PageGame>(controls: &JsValue, throttle: &JsValue, fire: &JsValue) {
    let scripted = if controls.is_object() {
        P::scripted(&Object(controls))
    } else {
        let number = |v: &JsValue| v.as_f64().unwrap_or(0.0);
        P::scripted(&Named(&[
            ("turn", number(controls)),
            ("throttle", number(throttle)),
            ("fire", f64::from(u8::from(fire.is_truthy()))),
        ]))
    };
    with_app::<P, _>(|app| app.override_controls(Some(scripted)));
}

/// Gives the controls back to the keyboard.
pub fn clear_controls<P: PageGame>() {
    with_app::<P, _>(|app| app.override_controls(None));
}

/// The flight recorder's bytes so far (`skirmish.saveRecording()` saves
/// them as a file; `cargo xtask replay FILE` replays it natively).
pub fn recording<P: PageGame>() -> Vec<u8> {
    with_app::<P, _>(|app| app.recording()).unwrap_or_default()
}

/// The flight recorder's size in bytes, negative once it stopped at its
/// bound, `0` without a recorder.
pub fn recording_size<P: PageGame>() -> f64 {
    match with_app::<P, _>(|app| app.recording_info()).flatten() {
        Some((bytes, false)) => bytes as f64,
        Some((bytes, true)) => -(bytes as f64),
        None => 0.0,
    }
}

/// The determinism check's trace of the page's game: the running hash
/// after each of `steps` (at most a million) seeded steps from `seed`, as
/// `skirmish_core::trace` computes it natively (`skirmish.determinism()`
/// on the page; a browser test compares the two and names the first
/// step where they differ).
pub fn determinism_trace<P: PageGame>(seed: u32, steps: u32) -> Vec<u64> {
    skirmish_core::trace::<P::Game>(u64::from(seed), steps.min(1_000_000))
}

/// A script's controls as a JavaScript object: a number is a property
/// that holds one, a flag a truthy property.
struct Object<'a>(&'a JsValue);

impl Script for Object<'_> {
    fn number(&self, name: &str) -> Option<f64> {
        Reflect::get(self.0, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_f64())
    }

    fn flag(&self, name: &str) -> bool {
        Reflect::get(self.0, &JsValue::from_str(name)).is_ok_and(|v| v.is_truthy())
    }
}
