//! The game on the page, one animation frame at a time.
//!
//! Each frame has three parts, in this order. The network: the connection
//! advances (sending `hello` when a link has just opened) and the frames it
//! received go into the session. The step: the controls and the panel's
//! settings go into the session, which runs its fixed 50 ms steps for the
//! elapsed time (a long gap, such as a hidden tab, is clamped by the
//! session); what it returns is sent. The drawing: the status line, the
//! canvas and the panel show the session's view. The clock is the
//! `requestAnimationFrame` timestamp, passed in.

use std::time::Duration;

use skirmish_core::{
    ClientMessage, ClientSession, Delivery, Encoding, ErrorCode, Incoming, Networked, Phase,
    SessionConfig, SessionEvent,
};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::fields::Fields;
use crate::game::Overlays;
use crate::game::{Controls, Local, PageGame};
use crate::hud::{self, Panel};
use crate::net::{Connection, Payload, Status, Transport};

/// The client of game `G` (a game's page): the session and everything the
/// shell keeps around it.
pub struct App<G: PageGame> {
    canvas: HtmlCanvasElement,
    ctx: CanvasRenderingContext2d,
    panel: Panel,
    keys: G::Keys,
    controls_override: Option<Controls<G>>,
    connection: Connection,
    session: ClientSession<G::Game>,
    encoding: Encoding,
    overlays: Overlays,
    last_frame: Option<f64>,
    fps: f64,
    frames: u64,
    /// Milliseconds spent inside [`App::frame`], summed (the page's frame
    /// cost; `skirmish.debug().frame_cpu_ms` is the mean).
    busy_ms: f64,
    status: String,
    /// The last frame the page could not read, and why.
    unreadable: Option<String>,
}

impl<G: PageGame> App<G> {
    /// A client for a session with `config`, drawing on `canvas` and
    /// talking over `connection`; its flight recorder keeps at most
    /// `record` bytes (`None`: no recorder).
    pub fn new(
        canvas: HtmlCanvasElement,
        ctx: CanvasRenderingContext2d,
        panel: Panel,
        connection: Connection,
        config: SessionConfig,
        record: Option<usize>,
    ) -> App<G> {
        App {
            canvas,
            ctx,
            panel,
            keys: G::Keys::default(),
            controls_override: None,
            connection,
            encoding: config.encoding,
            session: match record {
                Some(limit) => ClientSession::recorded(config, limit),
                None => ClientSession::new(config),
            },
            overlays: Overlays { ghosts: true },
            last_frame: None,
            fps: 0.0,
            busy_ms: 0.0,
            frames: 0,
            status: String::new(),
            unreadable: None,
        }
    }

    /// Runs one animation frame at `now` (ms, `performance.now()`).
    pub fn frame(&mut self, now: f64) {
        let started = crate::net::now_ms();
        self.count_frame(now);
        self.network(now);
        self.step(now);
        self.draw(now);
        self.busy_ms += crate::net::now_ms() - started;
    }

    /// Between frames, at `now`: what arrived is handed over and what the
    /// conditioner holds goes out when it is due, not at the next frame.
    pub fn between_frames(&mut self, now: f64) {
        self.network(now);
        self.step(now);
    }

    /// When the next message the conditioner holds is due (ms, on the
    /// clock of [`App::frame`]).
    pub fn next_send_due(&self) -> Option<f64> {
        self.session
            .next_send_due()
            .map(|d| d.as_secs_f64() * 1000.0)
    }

    /// A key went down or up; whether the game uses it.
    pub fn key(&mut self, code: &str, down: bool) -> bool {
        G::key(&mut self.keys, code, down)
    }

    /// The pointer moved to `x`, `y` on the canvas (CSS pixels).
    pub fn pointer(&mut self, x: f64, y: f64) {
        let (w, h) = (self.canvas.client_width(), self.canvas.client_height());
        G::pointer(&mut self.keys, x, y, f64::from(w), f64::from(h));
    }

    /// The page lost the focus: no key is held any more.
    pub fn release_keys(&mut self) {
        G::release(&mut self.keys);
    }

    /// Overrides the keyboard's controls (as the game merges them), or
    /// gives them back to it with `None`.
    pub fn override_controls(&mut self, controls: Option<Controls<G>>) {
        self.controls_override = controls;
    }

    /// The flight recorder's bytes so far (empty without a recorder).
    pub fn recording(&self) -> Vec<u8> {
        self.session
            .recording()
            .map(|r| r.bytes().to_vec())
            .unwrap_or_default()
    }

    /// The flight recorder's size and whether it stopped at its bound.
    pub fn recording_info(&self) -> Option<(usize, bool)> {
        self.session
            .recording()
            .map(|r| (r.bytes().len(), r.is_full()))
    }

    /// The client's state as JSON, for end-to-end tests and debugging.
    pub fn debug(&self) -> String {
        let hud = self.session.hud();
        let view = self.session.view();
        let lost = self.connection.counters();
        let pose = |v: Local<G>| G::numbers(&v);
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let remotes: Vec<Fields> = view
            .remotes
            .iter()
            .map(|r| {
                let fields = Fields::new()
                    .with("id", r.id.0)
                    .with("name", self.session.name_of(r.id))
                    .with("alive", r.alive)
                    .with("pose", pose(r.visual));
                G::debug_remote(r, fields)
            })
            .collect();
        let things: Vec<Fields> = view
            .things
            .iter()
            .map(|t| {
                Fields::new()
                    .with("id", t.id.wire().0)
                    .with("pose", pose(t.visual))
            })
            .collect();
        let fields = Fields::new()
            .with("status", self.status.as_str())
            .with("frames", self.frames)
            .with("frame_cpu_ms", self.busy_ms / self.frames.max(1) as f64)
            .with("recording_bytes", self.recording_info().map(|(n, _)| n))
            .with("player_id", hud.joined.as_ref().map(|(id, _)| id.0))
            .with("room", hud.joined.as_ref().map(|(_, room)| room.as_str()))
            .with("alive", hud.alive)
            .with("rtt_ms", hud.rtt.map(ms))
            .with("conditioner_rtt_ms", ms(hud.added_rtt))
            .with("pending", hud.pending)
            .with("corrections", hud.corrections)
            .with("snaps", hud.snaps)
            .with("inputs", hud.stats.inputs)
            .with("snapshots", hud.stats.snapshots)
            .with("ack", hud.ack.map(|t| t.0))
            .with("last_input_tick", hud.last_input.map(|t| t.0))
            .with("phase", format!("{:?}", hud.phase))
            .with(
                "transport",
                self.connection.transport().map(Transport::name),
            )
            .with("encoding", format!("{:?}", self.encoding))
            .with("bytes_down_per_sec", hud.down_rate)
            .with("bytes_up_per_sec", hud.up_rate)
            .with("missing_baselines", hud.stats.missing_baselines)
            .with("deltas", hud.stats.deltas)
            .with("protocol_scheduled", hud.pacing.scheduled)
            .with("slack_ms", hud.pacing.slack_ms)
            .with("target_slack_ms", hud.pacing.target_slack_ms)
            .with("dilation_pct", hud.pacing.dilation_pct)
            .with("late_inputs", hud.pacing.late)
            .with("repeated_inputs", hud.pacing.repeated)
            .with("hard_resyncs", hud.pacing.resyncs)
            .with("input_resends", hud.stats.resends)
            .with("uplink_loss_pct", hud.pacing.uplink_loss_pct)
            .with("cover_broken", hud.pacing.cover_broken)
            .with("echoes_used", hud.stats.echoes_used)
            .with("interpolation_delay_ms", ms(hud.interpolation_delay))
            .with("remote_time", self.session.remote_time())
            .with("last_rewind_ms", hud.pacing.last_rewind.map(ms))
            .with(
                "input_to_ack_p50_ms",
                hud.pacing.input_to_ack.map(|(p50, _)| ms(p50)),
            )
            .with(
                "input_to_ack_p99_ms",
                hud.pacing.input_to_ack.map(|(_, p99)| ms(p99)),
            )
            .with("inbox_dropped", lost.inbox_dropped)
            .with("undecodable_datagrams", lost.undecodable)
            .with("failed_sends", lost.failed_sends)
            .with("visible", view.own.map(|o| pose(o.visible)))
            .with("predicted", view.own.map(|o| pose(o.predicted)))
            .with(
                "authoritative",
                view.own.and_then(|o| o.authoritative).map(pose),
            )
            .with("remotes", remotes)
            .with("things", things)
            .with(
                "hud_text",
                hud::hud_text(&hud, &G::hud_line(&self.session), &lost, self.fps),
            );
        G::debug(&self.session, fields).to_json()
    }

    /// Counts the frame and smooths the frame rate.
    fn count_frame(&mut self, now: f64) {
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
    }

    /// Advances the connection and hands what arrived to the session.
    fn network(&mut self, now: f64) {
        let mut inbox = Vec::new();
        let status = self.connection.poll(now, &mut inbox).clone();
        self.follow(&status, now);
        for frame in &inbox {
            let incoming = match &frame.payload {
                Payload::Text(text) => Incoming::Text(text),
                Payload::Binary(bytes) => Incoming::Binary(bytes),
            };
            self.session.receive(incoming, millis(frame.at));
        }
    }

    /// Follows the connection's state: `hello` on a fresh link, the status
    /// line otherwise.
    fn follow(&mut self, status: &Status, now: f64) {
        match status {
            Status::Open {
                fresh: true,
                transport,
            } => {
                // The conditioner models what the transport would do with
                // loss: a stall on a WebSocket, a drop on WebTransport.
                self.session.set_delivery(match transport {
                    Transport::WebSocket => Delivery::Stream,
                    Transport::WebTransport => Delivery::Datagrams,
                });
                let hello = self.session.hello();
                self.send(&hello);
            }
            Status::Open { .. } => {}
            Status::Connecting => self.status = "connecting…".to_string(),
            Status::Waiting { reason, retry_at } => {
                if self.session.phase() != Phase::Connecting {
                    // A new connection will be a new player.
                    self.session.disconnected(reason);
                }
                self.status = format!(
                    "disconnected ({reason}); reconnecting in {} s",
                    crate::num::fixed(((retry_at - now) / 1000.0).max(0.0), 1)
                );
            }
        }
    }

    /// Feeds the controls and the panel's settings to the session, runs its
    /// steps up to `now` and sends what it returns.
    fn step(&mut self, now: f64) {
        let (toggles, ghosts) = self.panel.toggles();
        self.session.set_toggles(toggles);
        self.overlays = Overlays { ghosts };
        let (up, down) = self.panel.conditions();
        self.session.set_conditions(up, down);
        let controls = G::controls(&mut self.keys, self.controls_override);
        self.session.set_controls(controls);
        for message in self.session.advance(millis(now)) {
            self.send(&message);
        }
        for event in self.session.events() {
            match event {
                SessionEvent::Joined { id, room } => {
                    let over = self.connection.transport().map_or("?", Transport::name);
                    self.status = format!("connected over {over}: room {room}, player #{id}");
                }
                // What the page could not read is the page's to say, not
                // the server's (a bundle built without the library's
                // `json` feature meeting a JSON peer says so here).
                SessionEvent::BadFrame(error) => {
                    self.unreadable = Some(error.message.clone());
                }
                _ => {}
            }
        }
    }

    /// Sends a message and tells the session how many bytes went out.
    fn send(&mut self, message: &ClientMessage<<G::Game as Networked>::Wire>) {
        let frame = self.session.encode(message);
        if let Some(bytes) = self.connection.send(message, frame) {
            self.session.sent(bytes);
        }
    }

    /// Shows the status line, the arena and the panel.
    fn draw(&mut self, now: f64) {
        let hud = self.session.hud();
        let status_line = status_line(
            &self.status,
            self.unreadable.as_deref(),
            hud.last_error.as_ref(),
        );
        self.panel.set_status(&status_line);
        self.fit_canvas();
        G::draw(
            &self.ctx,
            f64::from(self.canvas.width()),
            f64::from(self.canvas.height()),
            &self.session,
            self.overlays,
        );
        let line = G::hud_line(&self.session);
        self.panel
            .show(&hud, &line, &self.connection.counters(), self.fps, now);
    }

    /// Keeps the canvas's drawing buffer the size it is shown at.
    fn fit_canvas(&self) {
        let (w, h) = (self.canvas.client_width(), self.canvas.client_height());
        if w > 0 && h > 0 && (self.canvas.width() != w as u32 || self.canvas.height() != h as u32) {
            self.canvas.set_width(w as u32);
            self.canvas.set_height(h as u32);
        }
    }
}

/// A `performance.now()` reading as the session's time.
fn millis(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

/// The status line: the connection's `status`, then the last error, told
/// as the page's own when it is the frame the page could not read
/// (`unreadable`), else as what the server said.
fn status_line(
    status: &str,
    unreadable: Option<&str>,
    last: Option<&(ErrorCode, String)>,
) -> String {
    match (unreadable, last) {
        (Some(why), Some((_, message))) if why == message => {
            format!("{status} (cannot read what the server sent: {why})")
        }
        (_, Some((code, message))) => format!("{status} (server said {code}: {message})"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_page_cannot_read_is_not_told_as_the_servers() {
        let no_json = "this build reads no JSON: skirmish-core is built without its `json` feature";
        let last = Some((ErrorCode::BadMessage, no_json.to_string()));
        let line = status_line("connected", Some(no_json), last.as_ref());
        assert_eq!(
            line,
            format!("connected (cannot read what the server sent: {no_json})")
        );
        let said = Some((ErrorCode::ServerFull, "every room is full".to_string()));
        let line = status_line("connected", Some(no_json), said.as_ref());
        assert_eq!(
            line,
            "connected (server said server_full: every room is full)"
        );
        assert_eq!(status_line("connected", None, None), "connected");
    }
}
