//! The browser client: a thin shell that drives `skirmish-core`'s
//! [`ClientSession`] from the DOM.
//!
//! The shell owns what core may not touch: the clock
//! (`requestAnimationFrame` timestamps), the keyboard, the WebSocket and the
//! canvas. Each animation frame it drains the socket's inbox into the
//! session, reads the controls and the panel, lets the session run its fixed
//! 50 ms steps for the elapsed time (a long gap, such as a hidden tab, is
//! clamped by the session), sends what the session returns, and draws the
//! session's view. `web/index.html` calls [`run`].

pub mod hud;
pub mod input;
pub mod net;
pub mod render;
pub mod wt;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use skirmish_core::{
    ClientSession, Controls, Delivery, Encoding, Incoming, Phase, PlayerId, SessionConfig,
    SessionEvent,
};
use wasm_bindgen::prelude::{wasm_bindgen, Closure, JsValue};
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, KeyboardEvent, Window};

use crate::hud::Panel;
use crate::input::Keys;
use crate::net::{now_ms, Connection, Payload, Preference, Status};
use crate::render::Overlays;

/// The golden trajectory hash as computed in this build, as a hex string
/// (JavaScript numbers cannot hold 64 bits).
#[wasm_bindgen(js_name = goldenTrajectoryHash)]
pub fn golden_trajectory_hash() -> String {
    format!(
        "{:#018x}",
        skirmish_core::determinism::golden_trajectory_hash()
    )
}

/// A `performance.now()` reading as the session's time.
fn millis(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

struct App {
    window: Window,
    canvas: HtmlCanvasElement,
    ctx: CanvasRenderingContext2d,
    panel: Panel,
    keys: Keys,
    controls_override: Option<Controls>,
    connection: Connection,
    session: ClientSession,
    encoding: Encoding,
    last_frame: Option<f64>,
    fps: f64,
    frames: u64,
    status: String,
}

thread_local! {
    static APP: RefCell<Option<App>> = const { RefCell::new(None) };
}

fn js_error(message: &str) -> JsValue {
    JsValue::from_str(message)
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

/// Starts the game on the page: connects, listens to the keyboard and runs
/// the frame loop.
///
/// # Errors
/// The page lacks a `canvas#game` or a 2D context.
#[wasm_bindgen]
pub fn run() -> Result<(), JsValue> {
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
    let location = window.location();
    let scheme = if location.protocol()? == "https:" {
        "wss"
    } else {
        "ws"
    };
    let url = format!("{scheme}://{}/ws", location.host()?);
    let name = query(&window, "name")
        .unwrap_or_else(|| format!("player-{}", (js_sys::Math::random() * 9000.0) as u32 + 1000));
    let config = SessionConfig {
        name: name.chars().take(skirmish_core::MAX_NAME_CHARS).collect(),
        room: query(&window, "room"),
        // Binary snapshots with deltas unless `?encoding=json` asks for
        // readable ones.
        encoding: if query(&window, "encoding").as_deref() == Some("json") {
            Encoding::Json
        } else {
            Encoding::Compact
        },
        seed: (js_sys::Math::random() * 1e9) as u64,
        ..SessionConfig::default()
    };
    let app = App {
        connection: Connection::new(
            url,
            Preference::parse(query(&window, "transport").as_deref()),
            now_ms(),
        ),
        encoding: config.encoding,
        session: ClientSession::new(config),
        panel: Panel::new(document),
        keys: Keys::default(),
        controls_override: None,
        last_frame: None,
        fps: 0.0,
        frames: 0,
        status: String::new(),
        window: window.clone(),
        canvas,
        ctx,
    };
    APP.with(|slot| *slot.borrow_mut() = Some(app));
    listen_keys(&window)?;
    start_frame_loop(&window)
}

fn with_app<R>(f: impl FnOnce(&mut App) -> R) -> Option<R> {
    APP.with(|slot| slot.borrow_mut().as_mut().map(f))
}

fn listen_keys(window: &Window) -> Result<(), JsValue> {
    for (event, down) in [("keydown", true), ("keyup", false)] {
        let on_key = Closure::<dyn FnMut(KeyboardEvent)>::new(move |e: KeyboardEvent| {
            let typing = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                .is_some_and(|i| i.type_() == "text");
            if typing {
                return;
            }
            if with_app(|app| app.keys.set(&e.code(), down)) == Some(true) {
                e.prevent_default();
            }
        });
        window.add_event_listener_with_callback(event, on_key.as_ref().unchecked_ref())?;
        on_key.forget();
    }
    let on_blur = Closure::<dyn FnMut()>::new(|| {
        with_app(|app| app.keys.clear());
    });
    window.add_event_listener_with_callback("blur", on_blur.as_ref().unchecked_ref())?;
    on_blur.forget();
    Ok(())
}

fn start_frame_loop(window: &Window) -> Result<(), JsValue> {
    type Loop = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;
    let slot: Loop = Rc::new(RefCell::new(None));
    let again = slot.clone();
    let window_in_loop = window.clone();
    *slot.borrow_mut() = Some(Closure::new(move |now: f64| {
        with_app(|app| app.frame(now));
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

impl App {
    fn frame(&mut self, now: f64) {
        let dt = self.last_frame.map_or(0.0, |last| (now - last).max(0.0));
        self.last_frame = Some(now);
        self.frames += 1;
        if dt > 0.0 {
            let fps = 1000.0 / dt;
            self.fps = if self.fps == 0.0 {
                fps
            } else {
                self.fps * 0.95 + fps * 0.05
            };
        }

        let mut inbox = Vec::new();
        let status = self.connection.poll(now, &mut inbox).clone();
        match &status {
            Status::Open {
                fresh: true,
                transport,
            } => {
                // The conditioner models what the transport would do with
                // loss: a stall on a WebSocket, a drop on WebTransport.
                self.session.set_delivery(match transport {
                    net::Transport::WebSocket => Delivery::Stream,
                    net::Transport::WebTransport => Delivery::Datagrams,
                });
                if let Some(bytes) = self.connection.send(&self.session.hello()) {
                    self.session.sent(bytes);
                }
            }
            Status::Open { .. } => {}
            Status::Connecting => self.status = "connecting…".to_string(),
            Status::Waiting { reason, retry_at } => {
                if self.session.phase() != Phase::Connecting {
                    // A new connection will be a new player.
                    self.session.disconnected(reason);
                }
                self.status = format!(
                    "disconnected ({reason}); reconnecting in {:.1} s",
                    ((retry_at - now) / 1000.0).max(0.0)
                );
            }
        }
        for frame in &inbox {
            let incoming = match &frame.payload {
                Payload::Text(text) => Incoming::Text(text),
                Payload::Binary(bytes) => Incoming::Binary(bytes),
            };
            self.session.receive(incoming, millis(frame.at));
        }

        let (toggles, ghosts) = self.panel.toggles();
        self.session.set_toggles(toggles);
        let (up, down) = self.panel.conditions();
        self.session.set_conditions(up, down);
        let keys = self.keys.take_controls();
        let controls = self.controls_override.map_or(keys, |c| Controls {
            fire: c.fire || keys.fire,
            ..c
        });
        self.session.set_controls(controls);
        for message in self.session.advance(millis(now)) {
            if let Some(bytes) = self.connection.send(&message) {
                self.session.sent(bytes);
            }
        }
        for event in self.session.events() {
            if let SessionEvent::Joined { id, room } = event {
                let over = self
                    .connection
                    .transport()
                    .map_or("?", net::Transport::name);
                self.status = format!("connected over {over}: room {room}, player #{id}");
            }
        }

        let hud = self.session.hud();
        let mut status_line = self.status.clone();
        if let Some((code, message)) = &hud.last_error {
            status_line = format!("{status_line} (server said {code}: {message})");
        }
        self.panel.set_status(&status_line);
        self.fit_canvas();
        let sim = self.session.sim_config().cloned().unwrap_or_default();
        let session = &self.session;
        let name_of = |id: PlayerId| {
            session
                .name_of(id)
                .map_or_else(|| format!("#{id}"), str::to_string)
        };
        render::draw(
            &self.ctx,
            f64::from(self.canvas.width()),
            f64::from(self.canvas.height()),
            &sim,
            &session.view(),
            &name_of,
            Overlays { ghosts },
        );
        self.panel.show(&hud, self.fps, now);
    }

    /// Keeps the canvas's drawing buffer the size it is shown at.
    fn fit_canvas(&self) {
        let (w, h) = (self.canvas.client_width(), self.canvas.client_height());
        if w > 0 && h > 0 && (self.canvas.width() != w as u32 || self.canvas.height() != h as u32) {
            self.canvas.set_width(w as u32);
            self.canvas.set_height(h as u32);
        }
        let _ = &self.window;
    }

    fn debug(&self) -> serde_json::Value {
        let hud = self.session.hud();
        let view = self.session.view();
        let pose =
            |p: skirmish_core::Pose| serde_json::json!([p.position.x, p.position.y, p.rotation]);
        serde_json::json!({
            "status": self.status,
            "frames": self.frames,
            "player_id": hud.joined.as_ref().map(|(id, _)| id.0),
            "room": hud.joined.as_ref().map(|(_, room)| room.clone()),
            "hp": hud.hp,
            "alive": hud.alive,
            "rtt_ms": hud.rtt.map(|d| d.as_secs_f64() * 1000.0),
            "pending": hud.pending,
            "corrections": hud.corrections,
            "snaps": hud.snaps,
            "inputs": hud.stats.inputs,
            "snapshots": hud.stats.snapshots,
            "ack": hud.ack.map(|t| t.0),
            "last_input_tick": hud.last_input.map(|t| t.0),
            "phase": format!("{:?}", hud.phase),
            "transport": self.connection.transport().map(net::Transport::name),
            "encoding": format!("{:?}", self.encoding),
            "bytes_down_per_sec": hud.down_rate,
            "bytes_up_per_sec": hud.up_rate,
            "missing_baselines": hud.stats.missing_baselines,
            "deltas": hud.stats.deltas,
            "protocol_scheduled": hud.pacing.scheduled,
            "slack_ms": hud.pacing.slack_ms,
            "target_slack_ms": hud.pacing.target_slack_ms,
            "dilation_pct": hud.pacing.dilation_pct,
            "late_inputs": hud.pacing.late,
            "repeated_inputs": hud.pacing.repeated,
            "hard_resyncs": hud.pacing.resyncs,
            "interpolation_delay_ms": hud.interpolation_delay.as_secs_f64() * 1000.0,
            "remote_time": self.session.remote_time(),
            "last_rewind_ms": hud.pacing.last_rewind.map(|d| d.as_secs_f64() * 1000.0),
            "visible": view.own.map(|o| pose(o.visible)),
            "predicted": view.own.map(|o| pose(o.predicted)),
            "authoritative": view.own.and_then(|o| o.authoritative).map(pose),
            "remotes": view.remotes.iter().map(|r| serde_json::json!({"id": r.id.0, "name": self.session.name_of(r.id), "hp": r.hp, "alive": r.alive, "pose": pose(r.pose)})).collect::<Vec<_>>(),
            "hud_text": hud::hud_text(&hud, self.fps),
        })
    }
}

/// The client's state as JSON, for end-to-end tests and debugging from the
/// browser console (`skirmish.debug()` on the page).
#[wasm_bindgen(js_name = debugState)]
pub fn debug_state() -> String {
    with_app(|app| app.debug().to_string()).unwrap_or_else(|| "null".to_string())
}

/// Overrides the keyboard's turn and throttle (fire is held if either
/// holds it), for scripted play and end-to-end tests that must aim exactly.
#[wasm_bindgen(js_name = setControls)]
pub fn set_controls(turn: f32, throttle: f32, fire: bool) {
    with_app(|app| {
        app.controls_override = Some(Controls {
            turn,
            throttle,
            fire,
        });
    });
}

/// Gives the controls back to the keyboard.
#[wasm_bindgen(js_name = clearControls)]
pub fn clear_controls() {
    with_app(|app| app.controls_override = None);
}
