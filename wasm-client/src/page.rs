//! The page around the game: the elements the client draws on, the URL's
//! settings, the keyboard, and the `requestAnimationFrame` loop that runs
//! the [`App`] once per frame.
//!
//! The one `App` lives in a thread-local slot, so that the browser's
//! callbacks (keys, frames) and the functions `lib.rs` exports to the page
//! reach it through [`with_app`]. The slot holds it as `dyn Any`, since a
//! thread-local cannot be generic; each call names the page's game and
//! downcasts (a bundle starts one game, so the downcast always holds).
//! Nothing here holds game state.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use skirmish_core::{Encoding, SessionConfig};
use wasm_bindgen::prelude::{Closure, JsValue};
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, KeyboardEvent, Window};

use crate::app::App;
use crate::game::PageGame;
use crate::hud::Panel;
use crate::net::{now_ms, Connection, Preference};

/// Starts the game on the page: connects, listens to the keyboard and runs
/// the frame loop.
///
/// # Errors
/// The page lacks a `canvas#game` or a 2D context.
pub fn start<P: PageGame>() -> Result<(), JsValue> {
    let window = web_sys::window().ok_or_else(|| js_error("no window"))?;
    let document = window.document().ok_or_else(|| js_error("no document"))?;
    let canvas: HtmlCanvasElement = document
        .get_element_by_id("game")
        .ok_or_else(|| js_error("the page has no canvas#game"))?
        .dyn_into()?;
    let ctx: CanvasRenderingContext2d = canvas
        .get_context("2d")?
        .ok_or_else(|| js_error("no 2D canvas context"))?
        .dyn_into()?;
    // One page for every game: the bundle names its own.
    document.set_title(P::TITLE);
    if let Some(keys) = document.get_element_by_id("keys") {
        keys.set_text_content(Some(P::KEYS));
    }
    listen_pointer::<P>(&canvas)?;
    let location = window.location();
    let scheme = if location.protocol()? == "https:" {
        "wss"
    } else {
        "ws"
    };
    // The game's socket is beside its page: `/ws` for the page at `/`,
    // `/walkers/ws` for the page at `/walkers/`.
    let path = location.pathname()?;
    let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let url = format!("{scheme}://{}{folder}/ws", location.host()?);
    let connection = Connection::new(
        url,
        query(&window, "wt-port").and_then(|p| p.parse().ok()),
        Preference::parse(query(&window, "transport").as_deref()),
        now_ms(),
    );
    let app = App::<P>::new(
        canvas,
        ctx,
        Panel::new(document),
        connection,
        session_config(&window),
        record_limit(&window),
    );
    APP.with(|slot| *slot.borrow_mut() = Some(Box::new(app)));
    listen_keys::<P>(&window)?;
    start_frame_loop::<P>(&window)
}

/// Runs `f` on the app of game `P`, if the page has started it.
pub fn with_app<P: PageGame, R>(f: impl FnOnce(&mut App<P>) -> R) -> Option<R> {
    APP.with(|slot| {
        slot.borrow_mut()
            .as_mut()
            .and_then(|app| app.downcast_mut::<App<P>>())
            .map(f)
    })
}

thread_local! {
    static APP: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

fn js_error(message: &str) -> JsValue {
    JsValue::from_str(message)
}

/// The session's settings from the URL: `?name=`, `?room=`,
/// `?encoding=json`.
fn session_config(window: &Window) -> SessionConfig {
    let name = query(window, "name")
        .unwrap_or_else(|| format!("player-{}", (js_sys::Math::random() * 9000.0) as u32 + 1000));
    SessionConfig {
        name: name.chars().take(skirmish_core::MAX_NAME_CHARS).collect(),
        room: query(window, "room"),
        // Binary all the way: the page is built without JSON (readable
        // JSON is for tools: the bots without `--compact`, or any
        // WebSocket client that says hello in text).
        encoding: Encoding::Compact,
        seed: (js_sys::Math::random() * 1e9) as u64,
        ..SessionConfig::default()
    }
}

/// The flight recorder's bound: `?record=off` turns it off, `?record-mb=N`
/// sets it (default 16 MiB).
fn record_limit(window: &Window) -> Option<usize> {
    if query(window, "record").as_deref() == Some("off") {
        return None;
    }
    let mb = query(window, "record-mb").and_then(|v| v.parse::<usize>().ok());
    Some(mb.map_or(skirmish_core::DEFAULT_RECORDING_LIMIT, |mb| {
        mb.saturating_mul(1 << 20)
    }))
}

/// A query parameter of the page's URL.
fn query(window: &Window, name: &str) -> Option<String> {
    let search = window.location().search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .and_then(|(_, value)| js_sys::decode_uri_component(value).ok())
        .and_then(|v| v.as_string())
        .filter(|v| !v.is_empty())
}

fn listen_keys<P: PageGame>(window: &Window) -> Result<(), JsValue> {
    for (event, down) in [("keydown", true), ("keyup", false)] {
        let on_key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |e: KeyboardEvent| {
            let typing = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .is_some_and(|i| i.type_() == "text");
            if typing {
                return;
            }
            if with_app::<P, _>(|app| app.key(&e.code(), down)) == Some(true) {
                e.prevent_default();
            }
        });
        window.add_event_listener_with_callback(event, on_key.as_ref().unchecked_ref())?;
        on_key.forget();
    }
    let on_blur = Closure::<dyn FnMut()>::new(|| {
        with_app::<P, _>(App::release_keys);
    });
    window.add_event_listener_with_callback("blur", on_blur.as_ref().unchecked_ref())?;
    on_blur.forget();
    Ok(())
}

/// The pointer over the canvas, for games steered by it.
fn listen_pointer<P: PageGame>(canvas: &HtmlCanvasElement) -> Result<(), JsValue> {
    let on_move = Closure::<dyn FnMut(web_sys::PointerEvent)>::new(|e: web_sys::PointerEvent| {
        with_app::<P, _>(|app| app.pointer(e.offset_x(), e.offset_y()));
    });
    canvas.add_event_listener_with_callback("pointermove", on_move.as_ref().unchecked_ref())?;
    on_move.forget();
    Ok(())
}

thread_local! {
    /// When the timer set for the conditioner's next message fires (ms).
    static BETWEEN_AT: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
}

/// Sets a timer for when the conditioner's next message is due, unless one
/// is set for then or sooner: what the page sends leaves on time, not at
/// the next frame (up to 17 ms late at 60 Hz, more at lower rates).
fn between_frames<P: PageGame>(window: &Window) {
    let Some(due) = with_app::<P, _>(|app| app.next_send_due()).flatten() else {
        return;
    };
    if BETWEEN_AT.with(|at| at.get().is_some_and(|at| at <= due)) {
        return;
    }
    let delay = (due - crate::net::now_ms()).max(0.0).ceil() as i32;
    let again = window.clone();
    let fire = Closure::once_into_js(move || {
        BETWEEN_AT.with(|at| at.set(None));
        with_app::<P, _>(|app| app.between_frames(crate::net::now_ms()));
        between_frames::<P>(&again);
    });
    if window
        .set_timeout_with_callback_and_timeout_and_arguments_0(fire.unchecked_ref(), delay)
        .is_ok()
    {
        BETWEEN_AT.with(|at| at.set(Some(due)));
    }
}

fn start_frame_loop<P: PageGame>(window: &Window) -> Result<(), JsValue> {
    type Loop = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;
    let slot: Loop = Rc::new(RefCell::new(None));
    let again = slot.clone();
    let window_in_loop = window.clone();
    *slot.borrow_mut() = Some(Closure::new(move |now: f64| {
        with_app::<P, _>(|app| app.frame(now));
        between_frames::<P>(&window_in_loop);
        if let Some(callback) = again.borrow().as_ref() {
            let _ = window_in_loop.request_animation_frame(callback.as_ref().unchecked_ref());
        }
    }));
    let first = slot.borrow();
    let callback = first
        .as_ref()
        .ok_or_else(|| js_error("frame loop not set up"))?;
    window.request_animation_frame(callback.as_ref().unchecked_ref())?;
    Ok(())
}
