//! `ClientSession`: the whole client, without a platform, as a small state
//! machine that tells its shell what happened.
//!
//! The browser shell, the headless bots and the tests drive the same session:
//! - [`ClientSession::hello`] is sent once a connection opens;
//! - [`ClientSession::receive`] takes each frame with the moment it arrived
//!   (so the clock and the round-trip time are measured at arrival, not at
//!   the next rendered frame);
//! - [`ClientSession::advance`] is called once per rendered frame with the
//!   shell's time; it runs the fixed steps (prediction) and returns the
//!   messages to send;
//! - [`ClientSession::events`] drains what happened ([`SessionEvent`]);
//! - [`ClientSession::view`] and [`ClientSession::hud`] say what to draw;
//! - [`ClientSession::disconnected`] goes back to [`Phase::Connecting`].
//!
//! The phases: [`Phase::Connecting`] until `welcome`, [`Phase::Joined`] until
//! the first own state places the player, then [`Phase::Playing`]. Inside,
//! the [`Authority`] owns the authoritative state of every player; the own
//! player's states go to the [`LocalPlayer`] (reconciliation), the others' to
//! a [`RemoteBuffer`] each (interpolation, drawn
//! [`InterpolationConfig::adaptive_delay`] behind the [`ServerClock`]'s
//! estimate). Every input message carries all inputs not yet acknowledged
//! (the newest [`MAX_INPUTS_PER_MESSAGE`]), each with the view it was made
//! in, so a lost message costs nothing. Both directions pass through a
//! seeded [`Conditioner`] so that latency, jitter, loss and duplication can
//! be added and reproduced.
//!
//! A frame longer than [`SessionConfig::max_frame`] (a hidden tab) runs at
//! most that much simulation, so the fixed-step loop never spirals; the
//! clock keeps the shell's real time.

mod acks;
mod baselines;
mod config;
mod cover;
mod downlink;
mod events;
mod hud;
mod uplink;
mod view;

use std::collections::VecDeque;
use std::time::Duration;

pub use baselines::KEPT_BASELINES;
pub use config::{Incoming, SessionConfig, Toggles};
pub use events::SessionEvent;
use hud::Rates;
pub use hud::{Hud, PacingHud, SessionStats};
pub use uplink::{LOSS_MEMORY, MAX_STEPS_PER_FRAME};
pub use view::{OwnView, RemoteView, ThingView, View};

use self::baselines::Baselines;
use self::downlink::Downlink;
use crate::client::authority::Authority;
use crate::client::clock::ServerClock;
use crate::client::conditioner::{Conditioner, Delivery, LinkConditions};
use crate::client::game::{ClientGame, NoteOf};
use crate::client::idmap::IdMap;
use crate::client::interpolation::{InterpolationConfig, RemoteBuffer};
use crate::client::pacing::Pacing;
use crate::client::prediction::LocalPlayer;
use crate::client::record::{Call, ClientRecorder};
use crate::client::smoothing::SmoothingConfig;
use crate::client::timeline::RemoteTimeline;
use crate::shared::game::{config_of, Networked, OwnState};
use crate::shared::protocol::{
    decode_server, ClientMessage, ErrorCode, GameId, ProtocolError, ServerMessage,
};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::{compact, control, delta};

/// Where a session is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Not welcomed (yet, or again after a disconnection): the shell sends
    /// [`ClientSession::hello`] when its connection opens.
    #[default]
    Connecting,
    /// Welcomed; waiting for the first own state to place the player.
    Joined,
    /// Placed: fixed steps predict and send inputs.
    Playing,
}

/// What `welcome` told us.
#[derive(Clone, Debug)]
struct Welcome<G: Networked> {
    id: PlayerId,
    room: String,
    /// The game's setup: its configuration and whatever else it sends.
    setup: G::Setup,
    /// The length of a step.
    cadence: Duration,
    /// The protocol the server speaks with us (2: inputs name server ticks).
    protocol: u32,
}

impl<G: Networked> Welcome<G> {
    fn config(&self) -> &G::Config {
        config_of::<G>(&self.setup)
    }
}

/// The phase with what it owns: one field, so no combination of options can
/// disagree with another.
#[derive(Clone, Debug)]
enum State<G: ClientGame> {
    Connecting,
    Joined(Welcome<G>),
    Playing(Welcome<G>, Box<LocalPlayer<G>>),
}

/// The step length assumed before `welcome` says the game's.
const DEFAULT_CADENCE: Duration = Duration::from_millis(50);

/// Events kept for the shell before the oldest are dropped (and counted).
const MAX_EVENTS: usize = 1024;

/// The platform-free client of game `G`. A clone is the same session at
/// the same moment: what a replay keeps to go back to.
#[derive(Clone, Debug)]
pub struct ClientSession<G: ClientGame> {
    config: SessionConfig,
    toggles: Toggles,
    state: State<G>,
    /// The shell's time at the last [`ClientSession::advance`]; `None`
    /// before the shell first gave a time (which becomes the start).
    now: Option<Duration>,
    accumulator: Duration,
    authority: Authority<G::Own>,
    names: IdMap<String>,
    remotes: IdMap<RemoteBuffer<G::Local>>,
    clock: ServerClock,
    up: Conditioner<ClientMessage<G::Wire>>,
    down: Conditioner<Downlink<G>>,
    baselines: Baselines<G::Entity>,
    controls: G::Controls,
    /// What the game keeps on the client.
    game: G::Client,
    next_tick: Tick,
    /// Protocol 2: how ahead of the server inputs are sent.
    pacing: Pacing,
    /// The wall-clock time of the next step (the cadence, dilated).
    period: Duration,
    /// Steps to make no input in (a backward jump of the schedule).
    hold: u32,
    /// Protocol 2: whether the first input tick has been set (it waits for
    /// the first round-trip sample).
    schedule_started: bool,
    /// When the last input message goes again (while loss is seen).
    resend_at: Option<Duration>,
    /// Resends still to come for the last step.
    resends_left: u32,
    /// Input messages' numbers and the uplink loss they show.
    cover: cover::Cover,
    /// Input-to-acknowledgement of the newest inputs, for the HUD.
    acks: acks::AckTimer,
    /// How far back the last own action judged at its view was judged
    /// from, as the view was.
    last_rewind: Option<Duration>,
    /// The time remote players are drawn at.
    timeline: RemoteTimeline,
    /// Until when snapshots were seen missing lately: the interpolation
    /// delay grows a tick and inputs are resent (if configured) till then.
    losing_until: Option<Duration>,
    /// The share of snapshots lost lately.
    loss: f64,
    /// Which snapshots arrived, to tell loss from reordering.
    arrivals: downlink::Arrivals,
    last_snapshot: Option<Tick>,
    /// The newest server tick whose binary timing report was read (each
    /// report comes twice over datagrams: in the snapshot and its echo).
    timing_through: Option<Tick>,
    last_error: Option<(ErrorCode, String)>,
    events: VecDeque<SessionEvent<NoteOf<G>>>,
    stats: SessionStats,
    rates: Rates,
    /// The flight recorder, when the session records itself.
    recorder: Option<Box<ClientRecorder<G>>>,
}

impl<G: ClientGame> ClientSession<G> {
    /// A session that has not joined yet.
    pub fn new(config: SessionConfig) -> ClientSession<G> {
        let up = Conditioner::new(config.seed, config.up);
        let down = Conditioner::new(config.seed.wrapping_add(1), config.down);
        ClientSession {
            toggles: Toggles::default(),
            state: State::Connecting,
            now: None,
            accumulator: Duration::ZERO,
            authority: Authority::default(),
            names: IdMap::new(),
            remotes: IdMap::new(),
            clock: ServerClock::new(DEFAULT_CADENCE),
            up,
            down,
            baselines: Baselines::default(),
            controls: G::Controls::default(),
            game: G::Client::default(),
            next_tick: Tick::ZERO,
            pacing: Pacing::new(config.pacing, DEFAULT_CADENCE),
            period: DEFAULT_CADENCE,
            hold: 0,
            schedule_started: false,
            resend_at: None,
            resends_left: 0,
            cover: cover::Cover::default(),
            acks: acks::AckTimer::default(),
            last_rewind: None,
            timeline: RemoteTimeline::default(),
            losing_until: None,
            loss: 0.0,
            arrivals: downlink::Arrivals::default(),
            last_snapshot: None,
            timing_through: None,
            last_error: None,
            events: VecDeque::new(),
            stats: SessionStats::default(),
            rates: Rates::default(),
            recorder: None,
            config,
        }
    }

    /// A session that records every call into it from the start, keeping at
    /// most about `limit` bytes (see [`ClientSession::recording`]).
    pub fn recorded(config: SessionConfig, limit: usize) -> ClientSession<G> {
        let recorder = ClientRecorder::new(&config, limit);
        ClientSession {
            recorder: Some(Box::new(recorder)),
            ..ClientSession::new(config)
        }
    }

    /// The recording so far, if this session records itself: replayed by
    /// [`replay_client_of`](crate::replay_client_of) natively, bit for bit.
    pub fn recording(&self) -> Option<&ClientRecorder<G>> {
        self.recorder.as_deref()
    }

    fn record(&mut self, call: &Call<'_, G::Controls, G::Local>) {
        if let Some(recorder) = &mut self.recorder {
            recorder.call(call);
        }
    }

    /// The `hello` to send first, straight to the connection.
    pub fn hello(&self) -> ClientMessage<G::Wire> {
        ClientMessage::Hello {
            name: self.config.name.clone(),
            protocol: self.config.protocol,
            room: self.config.room.clone(),
            encoding: self.config.encoding,
            game: Some(GameId::of::<G>()),
        }
    }

    /// A message as this session puts it on the wire: inputs as the binary
    /// message when it asked for compact snapshots, everything else as JSON
    /// text (see [`encode_client`](crate::encode_client)).
    pub fn encode(&self, message: &ClientMessage<G::Wire>) -> crate::Frame {
        crate::shared::uplink::encode_client(message, self.config.encoding)
    }

    /// Where the session is.
    pub fn phase(&self) -> Phase {
        match self.state {
            State::Connecting => Phase::Connecting,
            State::Joined(_) => Phase::Joined,
            State::Playing(..) => Phase::Playing,
        }
    }

    /// Sets the controls held from now on; a momentary press is latched
    /// until the next fixed step ([`ClientGame::latch`]).
    pub fn set_controls(&mut self, controls: G::Controls) {
        let pressed = G::latch(&mut self.game, &controls);
        if self.recorder.is_some() && (controls != self.controls || pressed) {
            self.record(&Call::Controls(controls));
        }
        self.controls = controls;
    }

    /// What the game keeps on the client (its own counters, its effects).
    pub fn game(&self) -> &G::Client {
        &self.game
    }

    /// Turns parts of the netcode on or off.
    pub fn set_toggles(&mut self, toggles: Toggles) {
        // Setting the same toggles again changes nothing: not recorded
        // (the page sets them every frame).
        if toggles != self.toggles {
            self.record(&Call::Toggles(toggles));
        }
        self.toggles = toggles;
        if let State::Playing(_, local) = &mut self.state {
            local.set_replay(toggles.reconciliation);
            local.set_smoothing_config(SmoothingConfig {
                enabled: toggles.smoothing && self.config.smoothing.enabled,
                ..self.config.smoothing
            });
        }
    }

    /// The toggles in force.
    pub fn toggles(&self) -> Toggles {
        self.toggles
    }

    /// Models the transport underneath: datagrams (the default) or one
    /// ordered stream, whose losses stall rather than drop.
    pub fn set_delivery(&mut self, delivery: Delivery) {
        self.record(&Call::Delivery(delivery));
        self.up.set_delivery(delivery);
        self.down.set_delivery(delivery);
    }

    /// Changes the added network conditions.
    pub fn set_conditions(&mut self, up: LinkConditions, down: LinkConditions) {
        let same = up.clamped() == self.up.conditions() && down.clamped() == self.down.conditions();
        if !same {
            self.record(&Call::Conditions(up, down));
        }
        self.up.set_conditions(up);
        self.down.set_conditions(down);
    }

    /// Takes one frame from the server that arrived at the shell's time `at`
    /// (never before the last [`ClientSession::advance`]). It is handled at
    /// once unless the conditioner holds it back (`welcome`, `roster` and
    /// `error` never are).
    pub fn receive(&mut self, frame: Incoming<'_>, at: Duration) {
        if self.recorder.is_some() {
            self.record(&match frame {
                Incoming::Text(text) => Call::Text(text.as_bytes(), at),
                Incoming::Binary(bytes) => Call::Binary(bytes, at),
            });
        }
        let at = at.max(*self.now.get_or_insert(at));
        self.stats.frames_received += 1;
        let decoded = match frame {
            Incoming::Text(text) => {
                self.stats.bytes_received += text.len() as u64;
                decode_server::<G>(text).map(Downlink::Text)
            }
            Incoming::Binary(bytes) => {
                self.stats.bytes_received += bytes.len() as u64;
                if control::is_server_control(bytes) {
                    control::decode_server::<G>(bytes).map(Downlink::Text)
                } else if bytes.first() == Some(&compact::OWN) {
                    self.decode_echo(bytes).map(Downlink::Own)
                } else {
                    let decoded = self.decode_binary(bytes);
                    if decoded.is_ok() && delta::baseline_tick(bytes).is_some() {
                        self.stats.deltas += 1;
                    }
                    decoded.map(Downlink::Binary)
                }
            }
        };
        match decoded {
            // The handshake, the roster and errors are not game traffic: a
            // protocol over UDP would deliver them reliably, so they bypass
            // the conditioner.
            Ok(Downlink::Text(
                message @ (ServerMessage::Welcome { .. }
                | ServerMessage::Roster { .. }
                | ServerMessage::Error { .. }),
            )) => self.handle(message, at),
            Ok(message) => {
                self.down.send(at, message);
                self.deliver_incoming(at);
            }
            Err(e) => {
                let missing = match frame {
                    Incoming::Binary(bytes) => {
                        delta::baseline_tick(bytes).is_some_and(|t| self.baselines.get(t).is_none())
                    }
                    Incoming::Text(_) => false,
                };
                if missing {
                    self.stats.missing_baselines += 1;
                }
                self.refuse(e);
            }
        }
    }

    /// The connection is gone: back to [`Phase::Connecting`], with nothing
    /// of the old connection left to send or to draw. Counters and settings
    /// stay.
    pub fn disconnected(&mut self, reason: &str) {
        self.record(&Call::Disconnected(reason));
        self.state = State::Connecting;
        self.up.clear();
        self.down.clear();
        self.baselines.clear();
        self.forget_world(true);
        self.names.clear();
        self.push_event(SessionEvent::Disconnected {
            reason: reason.to_string(),
        });
    }

    /// When the next message the uplink's conditioner holds is due: a shell
    /// that runs once a frame calls [`ClientSession::advance`] then too, so
    /// that what it sends leaves when the conditioner says, not at the
    /// next frame.
    pub fn next_send_due(&self) -> Option<Duration> {
        self.up.next_due()
    }

    /// Lets time pass to the shell's `now`: handles due messages, runs the
    /// fixed steps, and returns the messages to send now.
    pub fn advance(&mut self, now: Duration) -> Vec<ClientMessage<G::Wire>> {
        let called = now;
        let last = *self.now.get_or_insert(now);
        let real = now.saturating_sub(last);
        let elapsed = real.min(self.config.max_frame);
        let now = now.max(last);
        self.now = Some(now);
        self.deliver_incoming(now);
        if let Some(ack) = self
            .local()
            .and_then(|l| l.authoritative())
            .and_then(|s| s.stamp().ack)
        {
            self.acks.acknowledged(ack, now);
        }
        let cadence = match &self.state {
            State::Connecting => None,
            State::Joined(welcome) | State::Playing(welcome, _) => Some(welcome.cadence),
        };
        if let Some(cadence) = cadence {
            let target = self.remote_target();
            self.timeline.advance(now, target, cadence);
            let at = self.remote_time().unwrap_or(0.0);
            let interpolation = self.interpolation();
            for buffer in self.remotes.values_mut() {
                buffer.settle(at, cadence, &interpolation, elapsed.as_secs_f32());
            }
            self.run_steps(real, cadence);
            if let State::Playing(_, local) = &mut self.state {
                local.advance_frame(elapsed.as_secs_f32());
            }
            if self.clock.ping_due(now, self.config.ping_interval) {
                let id = self.clock.ping(now);
                self.up.send(now, ClientMessage::Ping { id });
            }
        }
        G::prune(&mut self.game, now);
        self.rates.update(now, &self.stats);
        let mut out = Vec::new();
        while let Some(message) = self.up.deliver(now) {
            out.push(message);
        }
        if self.recorder.is_some() {
            let view = self.view();
            if let Some(recorder) = &mut self.recorder {
                recorder.advance(called, &view);
            }
        }
        out
    }

    /// Drains what happened since the last call, oldest first.
    pub fn events(&mut self) -> impl Iterator<Item = SessionEvent<NoteOf<G>>> + '_ {
        self.events.drain(..)
    }

    /// The own player's prediction state, once playing.
    pub fn local(&self) -> Option<&LocalPlayer<G>> {
        match &self.state {
            State::Playing(_, local) => Some(local),
            _ => None,
        }
    }

    /// The owned authoritative state of every known player.
    pub fn authority(&self) -> &Authority<G::Own> {
        &self.authority
    }

    /// How many others the page keeps samples of to interpolate: its
    /// players, and its things only when they move
    /// ([`ClientGame::thing_motion`]).
    pub fn interpolated(&self) -> usize {
        self.remotes.len()
    }

    /// A player's display name, from the room's roster.
    pub fn name_of(&self, id: PlayerId) -> Option<&str> {
        self.names.get(id).map(String::as_str)
    }

    /// The server clock estimate.
    pub fn clock(&self) -> &ServerClock {
        &self.clock
    }

    /// The game's configuration the server sent, once welcomed.
    pub fn game_config(&self) -> Option<&G::Config> {
        self.welcome().map(Welcome::config)
    }

    /// Everything the game's `welcome` said, once welcomed.
    pub fn setup(&self) -> Option<&G::Setup> {
        self.welcome().map(|w| &w.setup)
    }

    /// The shell's time at the last [`ClientSession::advance`] (zero before
    /// any).
    pub fn now(&self) -> Duration {
        self.now.unwrap_or_default()
    }

    fn welcome(&self) -> Option<&Welcome<G>> {
        match &self.state {
            State::Connecting => None,
            State::Joined(welcome) | State::Playing(welcome, _) => Some(welcome),
        }
    }

    fn interpolation(&self) -> InterpolationConfig {
        InterpolationConfig {
            enabled: self.toggles.interpolation && self.config.interpolation.enabled,
            ..self.config.interpolation
        }
    }

    /// How far behind the server remote players should be drawn: enough
    /// for uneven arrivals, and one tick more while snapshots are being
    /// lost (a lost snapshot is a gap to bridge, not lateness).
    fn interpolation_delay(&self) -> Duration {
        let cadence = self.welcome().map_or(DEFAULT_CADENCE, |w| w.cadence);
        let delay = self
            .config
            .interpolation
            .adaptive_delay(cadence, self.clock.arrival_jitter());
        let losing = self.losing_until.is_some_and(|until| self.now() < until);
        if losing {
            (delay + cadence).min(self.config.interpolation.delay * 4)
        } else {
            delay
        }
    }

    /// Where the remote timeline is heading: the clock's estimate less the
    /// interpolation delay.
    fn remote_target(&self) -> Option<f64> {
        let cadence = self.welcome()?.cadence.as_secs_f64().max(1e-6);
        let now = self.clock.server_ticks(self.now())?;
        Some(now - self.interpolation_delay().as_secs_f64() / cadence)
    }

    /// The server time, in ticks with fraction, remote players are drawn
    /// at now (the view an action is judged against): the [`RemoteTimeline`],
    /// which never runs backwards and runs within ±10 % of real time.
    pub fn remote_time(&self) -> Option<f64> {
        self.welcome()?;
        self.timeline.time()
    }

    fn push_event(&mut self, event: SessionEvent<NoteOf<G>>) {
        if let Some(recorder) = &mut self.recorder {
            recorder.event(&event);
        }
        if self.events.len() >= MAX_EVENTS {
            self.events.pop_front();
            self.stats.events_dropped += 1;
        }
        self.events.push_back(event);
    }

    fn refuse(&mut self, error: ProtocolError) {
        self.stats.decode_errors += 1;
        self.last_error = Some((error.code, error.message.clone()));
        self.push_event(SessionEvent::BadFrame(error));
    }
}
