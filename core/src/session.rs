//! `ClientSession`: the whole client, without a platform.
//!
//! The browser shell and the headless bots drive the same session:
//! - [`ClientSession::receive`] takes each text frame from the socket;
//! - [`ClientSession::on_frame`] is called once per rendered frame with the
//!   time since the last one; it runs the fixed 50 ms steps (prediction) and
//!   returns the messages to send;
//! - [`ClientSession::view`] and [`ClientSession::hud`] say what to draw.
//!
//! Inside, the pieces of core work together: the [`Roster`] owns the
//! authoritative state of every player; the own player's states go to the
//! [`LocalPlayer`] (reconciliation), the others' to a [`RemoteBuffer`] each
//! (interpolation, drawn [`InterpolationConfig::delay`] behind the
//! [`ServerClock`]'s estimate, more when snapshots arrive unevenly: one tick
//! plus four mean arrival deviations, at most four times the configured
//! delay). Every input message carries all inputs not
//! yet acknowledged (the newest [`MAX_INPUTS_PER_MESSAGE`]), so a lost message
//! costs nothing. Both directions pass through a seeded [`Conditioner`] so
//! that latency, jitter, loss and duplication can be added and reproduced.
//!
//! A frame longer than [`SessionConfig::max_frame`] (a hidden tab) is
//! clamped, so the fixed-step loop never spirals.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use glam::Vec2;

use crate::clock::ServerClock;
use crate::compact;
use crate::conditioner::{Conditioner, ConditionerStats, LinkConditions};
use crate::interpolation::{InterpolationConfig, RemoteBuffer, SampleKind};
use crate::local::{LocalPlayer, ReconcileReport};
use crate::pending::PushError;
use crate::protocol::{
    decode_server, ClientMessage, Encoding, ErrorCode, PlayerId, ProtocolError, ServerMessage,
    WireInput, MAX_INPUTS_PER_MESSAGE, PROTOCOL_VERSION,
};
use crate::sim::{MoveInput, Pose};
use crate::smoothing::SmoothingConfig;
use crate::snapshot::Roster;
use crate::state::PlayerState;
use crate::tick::Tick;
use crate::world::{shot_path, CombatRules};
use crate::SimConfig;

/// How long a shot's tracer stays visible.
pub const TRACER_LIFE: Duration = Duration::from_millis(300);

/// Which parts of the netcode are on; each can be turned off to see what it
/// does.
// Four independent switches of a debug panel, not a state machine.
#[allow(clippy::struct_excessive_bools)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Toggles {
    /// Draw the own player where it is predicted (off: where the server
    /// last said it was).
    pub prediction: bool,
    /// Replay unacknowledged inputs on each authoritative state (off: take
    /// the state as it is, and watch the rubber band).
    pub reconciliation: bool,
    /// Smooth corrections (off: every correction snaps).
    pub smoothing: bool,
    /// Interpolate remote players (off: draw their newest state).
    pub interpolation: bool,
}

impl Default for Toggles {
    fn default() -> Self {
        Toggles {
            prediction: true,
            reconciliation: true,
            smoothing: true,
            interpolation: true,
        }
    }
}

/// How a session is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionConfig {
    /// Display name sent in `hello`.
    pub name: String,
    /// A room to join by name.
    pub room: Option<String>,
    /// How corrections of the own player are shown.
    pub smoothing: SmoothingConfig,
    /// How remote players are drawn.
    pub interpolation: InterpolationConfig,
    /// Added conditions, client to server.
    pub up: LinkConditions,
    /// Added conditions, server to client.
    pub down: LinkConditions,
    /// Seed of the conditioners.
    pub seed: u64,
    /// Time between two pings.
    pub ping_interval: Duration,
    /// Longest frame time taken into account.
    pub max_frame: Duration,
    /// How snapshots should be sent.
    pub encoding: Encoding,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            name: "player".to_string(),
            room: None,
            smoothing: SmoothingConfig::default(),
            interpolation: InterpolationConfig::default(),
            up: LinkConditions::default(),
            down: LinkConditions::default(),
            seed: 1,
            ping_interval: Duration::from_secs(1),
            max_frame: Duration::from_millis(250),
            encoding: Encoding::Json,
        }
    }
}

/// The controls held right now.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Controls {
    /// Turn, -1 to 1.
    pub turn: f32,
    /// Throttle, -1 to 1.
    pub throttle: f32,
    /// Fire held.
    pub fire: bool,
}

/// Counters of the session, for the HUD, the bots and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SessionStats {
    /// Text frames received.
    pub frames_received: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Frames that did not decode.
    pub decode_errors: u64,
    /// `error` messages from the server.
    pub server_errors: u64,
    /// Snapshots handled.
    pub snapshots: u64,
    /// Inputs predicted and sent.
    pub inputs: u64,
    /// Input messages sent.
    pub input_messages: u64,
    /// Inputs refused because the pending buffer was full.
    pub inputs_refused: u64,
    /// Combat events received.
    pub combat_events: u64,
    /// Respawns and other placements of the own player.
    pub placements: u64,
}

/// The own player, ready to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OwnView {
    /// The player's id.
    pub id: PlayerId,
    /// Where to draw it.
    pub visible: Pose,
    /// The gameplay truth: the newest prediction (a ghost outline).
    pub predicted: Pose,
    /// The last authoritative pose (a ghost outline).
    pub authoritative: Option<Pose>,
    /// Authoritative hit points.
    pub hp: u16,
    /// Authoritative liveness.
    pub alive: bool,
}

/// A remote player, ready to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteView {
    /// The player's id.
    pub id: PlayerId,
    /// Where to draw it.
    pub pose: Pose,
    /// How the pose was sampled.
    pub kind: SampleKind,
    /// Authoritative hit points.
    pub hp: u16,
    /// Authoritative liveness.
    pub alive: bool,
}

/// A shot to draw as a fading line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tracer {
    /// Start.
    pub from: Vec2,
    /// End.
    pub to: Vec2,
    /// 1 when new, 0 when gone.
    pub fade: f32,
}

/// Everything to draw this frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// The own player, once joined and placed.
    pub own: Option<OwnView>,
    /// The other players, in id order.
    pub remotes: Vec<RemoteView>,
    /// Recent hits.
    pub tracers: Vec<Tracer>,
}

/// The numbers the HUD shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hud {
    /// The own player's id and room, once joined.
    pub joined: Option<(PlayerId, String)>,
    /// Authoritative HP of the own player.
    pub hp: Option<u16>,
    /// Whether the own player is alive.
    pub alive: bool,
    /// Smoothed round-trip time.
    pub rtt: Option<Duration>,
    /// Estimated server time in ticks.
    pub server_tick: Option<f64>,
    /// Newest snapshot tick received.
    pub last_snapshot: Option<Tick>,
    /// Inputs not yet acknowledged.
    pub pending: usize,
    /// Size of the last counted correction.
    pub last_correction: f32,
    /// Corrections counted (smoothed or snapped).
    pub corrections: u64,
    /// Snaps.
    pub snaps: u64,
    /// Errors absorbed below the dead zone.
    pub absorbed: u64,
    /// The visible error right now.
    pub visible_error: f32,
    /// How far behind the server remote players are drawn.
    pub interpolation_delay: Duration,
    /// The last error from the server.
    pub last_error: Option<(ErrorCode, String)>,
    /// Session counters.
    pub stats: SessionStats,
    /// Client to server conditioner counters.
    pub up: ConditionerStats,
    /// Server to client conditioner counters.
    pub down: ConditionerStats,
}

/// What `welcome` told us.
#[derive(Clone, Debug)]
struct Joined {
    id: PlayerId,
    room: String,
    sim: SimConfig,
    /// The server's combat rules, for predicted shots.
    rules: CombatRules,
}

/// The platform-free client.
#[derive(Debug)]
pub struct ClientSession {
    config: SessionConfig,
    toggles: Toggles,
    now: Duration,
    accumulator: Duration,
    joined: Option<Joined>,
    local: Option<LocalPlayer>,
    placed: bool,
    roster: Roster,
    names: BTreeMap<PlayerId, String>,
    remotes: BTreeMap<PlayerId, RemoteBuffer>,
    clock: ServerClock,
    up: Conditioner<ClientMessage>,
    down: Conditioner<ServerMessage>,
    controls: Controls,
    next_tick: u32,
    views: VecDeque<(Tick, Option<f64>)>,
    next_ping: u64,
    last_ping: Option<Duration>,
    pings: VecDeque<(u64, Duration)>,
    /// Shot lines to draw: (from, to, when).
    tracers: VecDeque<(Vec2, Vec2, Duration)>,
    last_shot: Option<Duration>,
    last_report: Option<ReconcileReport>,
    last_snapshot: Option<Tick>,
    last_error: Option<(ErrorCode, String)>,
    stats: SessionStats,
}

impl ClientSession {
    /// A session that has not joined yet.
    pub fn new(config: SessionConfig) -> ClientSession {
        let up = Conditioner::new(config.seed, config.up);
        let down = Conditioner::new(config.seed.wrapping_add(1), config.down);
        ClientSession {
            toggles: Toggles::default(),
            now: Duration::ZERO,
            accumulator: Duration::ZERO,
            joined: None,
            local: None,
            placed: false,
            roster: Roster::default(),
            names: BTreeMap::new(),
            remotes: BTreeMap::new(),
            clock: ServerClock::new(SimConfig::default().cadence()),
            up,
            down,
            controls: Controls::default(),
            next_tick: 0,
            views: VecDeque::new(),
            next_ping: 0,
            last_ping: None,
            pings: VecDeque::new(),
            tracers: VecDeque::new(),
            last_shot: None,
            last_report: None,
            last_snapshot: None,
            last_error: None,
            stats: SessionStats::default(),
            config,
        }
    }

    /// The `hello` to send first, straight to the socket.
    pub fn hello(&self) -> ClientMessage {
        ClientMessage::Hello {
            name: self.config.name.clone(),
            protocol: PROTOCOL_VERSION,
            room: self.config.room.clone(),
            encoding: self.config.encoding,
        }
    }

    /// Sets the controls held from now on.
    pub fn set_controls(&mut self, controls: Controls) {
        self.controls = controls;
    }

    /// Turns parts of the netcode on or off.
    pub fn set_toggles(&mut self, toggles: Toggles) {
        self.toggles = toggles;
        if let Some(local) = &mut self.local {
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

    /// Changes the added network conditions.
    pub fn set_conditions(&mut self, up: LinkConditions, down: LinkConditions) {
        self.up.set_conditions(up);
        self.down.set_conditions(down);
    }

    /// Takes one text frame from the server. It is handled at once unless
    /// the conditioner holds it back (`welcome`, `roster` and `error` never
    /// are).
    pub fn receive(&mut self, text: &str) {
        self.stats.frames_received += 1;
        self.stats.bytes_received += text.len() as u64;
        match decode_server(text) {
            Ok(message) => self.take(message),
            Err(e) => self.refuse(e),
        }
    }

    /// Takes one binary frame from the server: a compact snapshot
    /// ([`crate::compact`]).
    pub fn receive_binary(&mut self, bytes: &[u8]) {
        self.stats.frames_received += 1;
        self.stats.bytes_received += bytes.len() as u64;
        let Some(sim) = self.joined.as_ref().map(|j| &j.sim) else {
            self.refuse(ProtocolError::new(
                ErrorCode::BadMessage,
                "a binary frame before welcome",
            ));
            return;
        };
        match compact::decode(bytes, sim) {
            Ok((server_tick, players)) => self.take(ServerMessage::Snapshot {
                server_tick,
                players,
            }),
            Err(e) => self.refuse(e),
        }
    }

    fn take(&mut self, message: ServerMessage) {
        match message {
            // The handshake, the roster and errors are not game traffic: a
            // protocol over UDP would deliver them reliably, so they bypass
            // the conditioner.
            message @ (ServerMessage::Welcome { .. }
            | ServerMessage::Roster { .. }
            | ServerMessage::Error { .. }) => self.handle(message),
            message => {
                self.down.send(self.now, message);
                self.deliver_incoming();
            }
        }
    }

    fn refuse(&mut self, error: ProtocolError) {
        self.stats.decode_errors += 1;
        self.last_error = Some((error.code, error.message));
    }

    /// Lets `elapsed` of wall time pass: handles due messages, runs the
    /// fixed steps, and returns the messages to send now.
    pub fn on_frame(&mut self, elapsed: Duration) -> Vec<ClientMessage> {
        let elapsed = elapsed.min(self.config.max_frame);
        self.now += elapsed;
        self.deliver_incoming();
        if let Some(sim) = self.joined.as_ref().map(|j| j.sim.clone()) {
            let cadence = sim.cadence();
            self.accumulator += elapsed;
            while self.accumulator >= cadence {
                self.accumulator -= cadence;
                self.fixed_step();
            }
            if let Some(local) = &mut self.local {
                local.advance_frame(elapsed.as_secs_f32());
            }
            if self
                .last_ping
                .is_none_or(|at| self.now.saturating_sub(at) >= self.config.ping_interval)
            {
                self.ping();
            }
        }
        let cutoff = self.now.saturating_sub(TRACER_LIFE);
        while self.tracers.front().is_some_and(|(_, _, at)| *at < cutoff) {
            self.tracers.pop_front();
        }
        let mut out = Vec::new();
        while let Some(message) = self.up.deliver(self.now) {
            out.push(message);
        }
        out
    }

    /// What to draw now.
    pub fn view(&self) -> View {
        let Some(joined) = &self.joined else {
            return View::default();
        };
        let cadence = joined.sim.cadence();
        let own = self.own_view(joined, cadence);
        let at = self.remote_time(cadence);
        let remotes = self
            .roster
            .iter()
            .filter(|s| s.id != joined.id)
            .filter_map(|state| {
                let buffer = self.remotes.get(&state.id)?;
                let (pose, kind) =
                    buffer.sample(at.unwrap_or(0.0), cadence, &self.interpolation())?;
                Some(RemoteView {
                    id: state.id,
                    pose,
                    kind,
                    hp: state.hp,
                    alive: state.alive,
                })
            })
            .collect();
        let tracers = self
            .tracers
            .iter()
            .map(|(from, to, at)| Tracer {
                from: *from,
                to: *to,
                fade: 1.0
                    - (self.now.saturating_sub(*at).as_secs_f32() / TRACER_LIFE.as_secs_f32())
                        .min(1.0),
            })
            .collect();
        View {
            own,
            remotes,
            tracers,
        }
    }

    /// The numbers for the HUD.
    pub fn hud(&self) -> Hud {
        let own = self.joined.as_ref().and_then(|j| self.roster.get(j.id));
        let local = self.local.as_ref();
        let stats = local.map(|l| *l.stats()).unwrap_or_default();
        Hud {
            joined: self.joined.as_ref().map(|j| (j.id, j.room.clone())),
            hp: own.map(|s| s.hp),
            alive: own.is_some_and(|s| s.alive),
            rtt: self.clock.rtt(),
            server_tick: self.clock.server_ticks(self.now),
            last_snapshot: self.last_snapshot,
            pending: local.map_or(0, |l| l.pending().len()),
            last_correction: stats.last_correction,
            corrections: stats.corrections,
            snaps: stats.snaps,
            absorbed: stats.absorbed,
            visible_error: local.map_or(0.0, LocalPlayer::visible_error),
            interpolation_delay: self.interpolation_delay(
                self.joined
                    .as_ref()
                    .map_or(Duration::from_millis(50), |j| j.sim.cadence()),
            ),
            last_error: self.last_error.clone(),
            stats: self.stats,
            up: self.up.stats(),
            down: self.down.stats(),
        }
    }

    /// The own player's prediction state, once joined.
    pub fn local(&self) -> Option<&LocalPlayer> {
        self.local.as_ref()
    }

    /// The owned authoritative state of every known player.
    pub fn roster(&self) -> &Roster {
        &self.roster
    }

    /// A player's display name, from the room's roster.
    pub fn name_of(&self, id: PlayerId) -> Option<&str> {
        self.names.get(&id).map(String::as_str)
    }

    /// The report of the last reconciliation.
    pub fn last_report(&self) -> Option<&ReconcileReport> {
        self.last_report.as_ref()
    }

    /// The server clock estimate.
    pub fn clock(&self) -> &ServerClock {
        &self.clock
    }

    /// Time since the session started, as the frames told it.
    pub fn now(&self) -> Duration {
        self.now
    }

    fn interpolation(&self) -> InterpolationConfig {
        InterpolationConfig {
            enabled: self.toggles.interpolation && self.config.interpolation.enabled,
            ..self.config.interpolation
        }
    }

    /// The server time remote players are drawn at.
    fn remote_time(&self, cadence: Duration) -> Option<f64> {
        let now = self.clock.server_ticks(self.now)?;
        let delay =
            self.interpolation_delay(cadence).as_secs_f64() / cadence.as_secs_f64().max(1e-6);
        Some(now - delay)
    }

    /// How far behind the server remote players are drawn: the configured
    /// delay, or more when snapshots arrive unevenly (one tick plus four
    /// mean arrival deviations), at most four times the configured delay.
    fn interpolation_delay(&self, cadence: Duration) -> Duration {
        let configured = self.config.interpolation.delay;
        let needed = cadence + self.clock.arrival_jitter() * 4;
        needed.clamp(configured, configured * 4)
    }

    fn own_view(&self, joined: &Joined, cadence: Duration) -> Option<OwnView> {
        let local = self.local.as_ref().filter(|_| self.placed)?;
        let state = self.roster.get(joined.id)?;
        let alpha = self.accumulator.as_secs_f32() / cadence.as_secs_f32().max(1e-6);
        let visible = if self.toggles.prediction {
            local.visible_pose(alpha)
        } else {
            state.pose()
        };
        Some(OwnView {
            id: joined.id,
            visible,
            predicted: local.predicted_pose(),
            authoritative: local.authoritative().map(PlayerState::pose),
            hp: state.hp,
            alive: state.alive,
        })
    }

    fn deliver_incoming(&mut self) {
        while let Some(message) = self.down.deliver(self.now) {
            self.handle(message);
        }
    }

    fn handle(&mut self, message: ServerMessage) {
        match message {
            ServerMessage::Welcome {
                player_id,
                room,
                config,
                combat,
                ..
            } => self.on_welcome(player_id, room, config, combat.unwrap_or_default()),
            ServerMessage::Snapshot {
                server_tick,
                players,
            } => self.on_snapshot(server_tick, &players),
            ServerMessage::Roster { players } => {
                self.names = players.into_iter().map(|e| (e.id, e.name)).collect();
            }
            ServerMessage::Combat { events } => {
                for event in events {
                    self.stats.combat_events += 1;
                    self.roster.apply_combat(&event);
                    self.tracers.push_back((event.from, event.to, self.now));
                }
            }
            ServerMessage::Pong { id, server_tick } => {
                if let Some(i) = self.pings.iter().position(|(p, _)| *p == id) {
                    let (_, sent_at) = self.pings[i];
                    self.pings.drain(..=i);
                    self.clock.on_pong(sent_at, server_tick, self.now);
                }
            }
            ServerMessage::Error { code, message } => {
                self.stats.server_errors += 1;
                self.last_error = Some((code, message));
            }
        }
    }

    fn on_welcome(&mut self, id: PlayerId, room: String, sim: SimConfig, rules: CombatRules) {
        if let Err(e) = sim.validate() {
            self.stats.decode_errors += 1;
            self.last_error = Some((ErrorCode::BadMessage, format!("unusable config: {e}")));
            return;
        }
        if !rules.is_valid() {
            self.stats.decode_errors += 1;
            self.last_error = Some((ErrorCode::BadMessage, "unusable combat rules".into()));
            return;
        }
        let mut local = LocalPlayer::new(sim.clone(), self.config.smoothing, Pose::default());
        local.set_replay(self.toggles.reconciliation);
        self.clock = ServerClock::new(sim.cadence());
        self.local = Some(local);
        self.placed = false;
        self.roster = Roster::default();
        self.remotes.clear();
        self.views.clear();
        self.accumulator = Duration::ZERO;
        self.joined = Some(Joined {
            id,
            room,
            sim,
            rules,
        });
        self.set_toggles(self.toggles);
    }

    fn on_snapshot(&mut self, server_tick: Tick, players: &[PlayerState]) {
        let Some(me) = self.joined.as_ref().map(|j| j.id) else {
            return;
        };
        self.stats.snapshots += 1;
        if self.last_snapshot.is_none_or(|t| server_tick > t) {
            // Only the newest snapshot so far says anything about the clock.
            self.clock.on_snapshot(server_tick, self.now);
            self.last_snapshot = Some(server_tick);
            let ids: Vec<PlayerId> = players.iter().map(|p| p.id).collect();
            self.roster.retain_present(&ids);
            self.remotes.retain(|id, _| ids.contains(id));
        }
        let interpolation = self.config.interpolation;
        for state in players {
            let was_alive = self.roster.get(state.id).map(|s| s.alive);
            if self.roster.accept(state).is_err() {
                continue;
            }
            if state.id == me {
                self.on_own_state(state, was_alive);
            } else {
                self.remotes
                    .entry(state.id)
                    .or_default()
                    .push(state, &interpolation);
            }
        }
    }

    fn on_own_state(&mut self, state: &PlayerState, was_alive: Option<bool>) {
        let Some(local) = &mut self.local else {
            return;
        };
        let respawned = was_alive == Some(false) && state.alive;
        let result = if !self.placed || respawned {
            self.stats.placements += 1;
            local.place(state)
        } else {
            local.reconcile(state)
        };
        if let Ok(report) = result {
            self.placed = true;
            self.last_report = Some(report);
        }
        if let Some(ack) = state.ack_move_tick {
            while self.views.front().is_some_and(|(t, _)| *t <= ack) {
                self.views.pop_front();
            }
        }
    }

    fn fixed_step(&mut self) {
        let Some(local) = &mut self.local else {
            return;
        };
        if !self.placed {
            return;
        }
        let alive = self
            .joined
            .as_ref()
            .and_then(|j| self.roster.get(j.id))
            .is_some_and(|s| s.alive);
        self.next_tick += 1;
        let tick = Tick(self.next_tick);
        let controls = if alive {
            self.controls
        } else {
            Controls::default()
        };
        let input = MoveInput {
            tick,
            turn: controls.turn,
            throttle: controls.throttle,
            fire: controls.fire,
        };
        match local.predict(input) {
            Ok(pose) => {
                // The own shot shows at once, like the movement: the same
                // path the server will trace (hits come back as events).
                let rules = self
                    .joined
                    .as_ref()
                    .map_or_else(CombatRules::default, |j| j.rules);
                let cooldown = Duration::from_millis(u64::from(rules.cooldown_ms));
                let ready = self
                    .last_shot
                    .is_none_or(|at| self.now.saturating_sub(at) >= cooldown);
                if input.fire && ready {
                    self.last_shot = Some(self.now);
                    let (dir, reach) = shot_path(local.sim_config(), &pose, rules.range);
                    self.tracers
                        .push_back((pose.position, pose.position + dir * reach, self.now));
                }
            }
            Err(PushError::Full { .. }) => {
                self.stats.inputs_refused += 1;
                return;
            }
            Err(PushError::NotIncreasing { .. }) => return,
        }
        self.stats.inputs += 1;
        let cadence = local.sim_config().cadence();
        let view = self.remote_time(cadence);
        self.views.push_back((tick, view));
        let Some(local) = &self.local else {
            return;
        };
        let pending = local.pending();
        let skip = pending.len().saturating_sub(MAX_INPUTS_PER_MESSAGE);
        let inputs: Vec<WireInput> = pending
            .iter()
            .skip(skip)
            .map(|step| {
                let view = self
                    .views
                    .iter()
                    .find(|(t, _)| *t == step.tick)
                    .and_then(|(_, v)| *v);
                WireInput::new(step.input, view)
            })
            .collect();
        self.stats.input_messages += 1;
        self.up.send(self.now, ClientMessage::Input { inputs });
    }

    fn ping(&mut self) {
        self.next_ping += 1;
        self.last_ping = Some(self.now);
        if self.pings.len() >= 16 {
            self.pings.pop_front();
        }
        self.pings.push_back((self.next_ping, self.now));
        self.up
            .send(self.now, ClientMessage::Ping { id: self.next_ping });
    }
}
