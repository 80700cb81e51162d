//! A deterministic client/server stepper: the real [`Room`] (the code the
//! server drives) and real [`ClientSession`]s connected by an in-memory link, on a simulated clock.
//!
//! Every message takes the same path as over a socket: the room's frames
//! (JSON text or compact binary) are handed to `ClientSession::receive` the
//! moment they arrive; the session's messages come out of `advance` and are
//! fed to the room the moment they arrive, with the time since its last
//! tick (so input slack is measured as on the server). Between them each
//! client has a seeded link per direction, in the stepper rather than in
//! the session, so that arrivals fall on a 1 ms grid rather than on the
//! client's frames: droppable frames (snapshots, pongs) and every client
//! message travel as datagrams (lost, duplicated, reordered by jitter),
//! the rest as an ordered stream with the same latency and jitter.
//! Time is simulated, so a run is exactly reproducible: the same seeds and
//! scripts give the same counters, bit for bit, on every run and every
//! machine.
//!
//! Each client has a clock of its own ([`ClientClock`]: a rate error, frame
//! hitches during which its frames wait, as a browser's would) and a
//! scripted network per direction ([`NetScript`]). What each client went
//! through is kept in a [`ClientTrace`]: input-to-acknowledgement times,
//! slack reports, dilation, and whether remote time ever ran backwards or
//! outside ±10 % of real time.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use skirmish_core::{
    decode_client_frame, ClientMessage, ClientSession, Conditioner, Delivery, Encoding, Frame,
    Incoming, Networked, Outbox, OwnState, PlayerId, Room, RoomConfig, Seating, SessionConfig,
    SessionEvent, Tick, World, PROTOCOL_VERSION,
};
use skirmish_core::{delta, LinkConditions, Vec2, Visual};
pub use skirmish_core::{Driver, Harness};

use crate::scenario::{ClientClock, NetScript};
pub use crate::trace::{ClientCounters, ClientTrace};

/// How one client joins a stepper match.
#[derive(Clone, Debug)]
pub struct ClientSpec<D> {
    /// Its brain.
    pub script: D,
    /// Its network over time.
    pub net: NetScript,
    /// Its clock.
    pub clock: ClientClock,
    /// Seed of its conditioners.
    pub seed: u64,
    /// How it gets snapshots.
    pub encoding: Encoding,
    /// The protocol it speaks.
    pub protocol: u32,
    /// Resends per input message while snapshots are lost.
    pub resends: u32,
}

impl<D> ClientSpec<D> {
    /// A client with `script` on a steady `both`-ways link, a perfect clock,
    /// JSON snapshots, the newest protocol and the resends a session ships
    /// with.
    pub fn new(script: D, both: LinkConditions, seed: u64) -> ClientSpec<D> {
        ClientSpec {
            script,
            net: NetScript::steady(both),
            clock: ClientClock::default(),
            seed,
            encoding: Encoding::Json,
            protocol: PROTOCOL_VERSION,
            resends: SessionConfig::default().resends,
        }
    }
}

/// One client of game `G` in the stepper, driven by `D`.
pub struct SimClient<G: Harness, D> {
    /// Its player.
    pub id: PlayerId,
    /// Its session.
    pub session: ClientSession<G>,
    /// Its brain.
    pub script: D,
    /// How it gets snapshots.
    pub encoding: Encoding,
    /// Its clock.
    pub clock: ClientClock,
    /// Its network over time.
    pub net: NetScript,
    /// What it went through.
    pub trace: ClientTrace,
    /// Frames that arrived during a hitch, handed in after it.
    inbox: Vec<Frame>,
    /// Client to server: every message a datagram.
    up: Conditioner<ClientMessage<<G as Networked>::Wire>>,
    /// Server to client: droppable frames.
    down: Conditioner<Frame>,
    /// Server to client: the reliable, ordered stream.
    stream: Conditioner<Frame>,
    /// Inputs sent and not yet acknowledged: tick and true time sent.
    unacked: VecDeque<(Tick, Duration)>,
    /// The last remote time drawn: (true time, remote ticks).
    last_remote: Option<(Duration, f64)>,
    /// Per remote: where it was drawn last frame, and how far it moved then.
    drawn: BTreeMap<PlayerId, (Vec2, Vec2)>,
}

/// A drawn remote moving more than this in one frame respawned.
const RESPAWN_JUMP: f32 = 40.0;

/// The in-memory match.
pub struct Stepper<G: Harness, D> {
    /// The authoritative room, the same code the server drives.
    pub room: Room<G>,
    /// The clients, in join order.
    pub clients: Vec<SimClient<G, D>>,
    out: Outbox,
    /// Frames the room sends half a tick after the rest (own echoes): when
    /// each goes on its link, and to whom.
    later: VecDeque<(Duration, PlayerId, Frame)>,
    now: Duration,
    next_tick: Duration,
    last_tick: Duration,
    frame: Duration,
}

impl<G: Harness, D: Driver<G>> Stepper<G, D> {
    /// An empty match of the game's `settings` (anything that converts to
    /// them), with a world seeded by `seed`, seats for everyone and the
    /// room's other defaults; clients render at 100 frames per second of
    /// simulated time.
    pub fn new(settings: impl Into<G::Settings>, seed: u64) -> Stepper<G, D> {
        Stepper::with_room(RoomConfig {
            name: "stepper".into(),
            capacity: usize::MAX,
            game: settings.into(),
            seed,
            ..RoomConfig::default()
        })
    }

    /// An empty match in a room set up as `config` says.
    pub fn with_room(config: RoomConfig<G>) -> Stepper<G, D> {
        Stepper {
            room: Room::new(config),
            clients: Vec::new(),
            out: Outbox::new(),
            later: VecDeque::new(),
            now: Duration::ZERO,
            next_tick: Duration::ZERO,
            last_tick: Duration::ZERO,
            frame: Duration::from_millis(10),
        }
    }

    /// The authoritative world.
    pub fn world(&self) -> &World<G> {
        self.room.world()
    }

    /// The true time.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Joins a client whose link has `up` and `down` conditions.
    ///
    /// # Panics
    /// If the room refuses (a test bug).
    pub fn join(&mut self, script: D, up: LinkConditions, down: LinkConditions, seed: u64) {
        self.join_with(script, up, down, seed, Encoding::Json);
    }

    /// Like [`Stepper::join`], with snapshots in `encoding`.
    ///
    /// # Panics
    /// If the room refuses (a test bug).
    pub fn join_with(
        &mut self,
        script: D,
        up: LinkConditions,
        down: LinkConditions,
        seed: u64,
        encoding: Encoding,
    ) {
        let mut spec = ClientSpec::new(script, up, seed);
        spec.net.changes[0].down = down;
        spec.encoding = encoding;
        self.join_spec(spec);
    }

    /// Joins a client as `spec` says; its id.
    ///
    /// # Panics
    /// If the room refuses (a test bug).
    pub fn join_spec(&mut self, spec: ClientSpec<D>) -> PlayerId {
        let id = PlayerId(self.clients.len() as u32 + 1);
        let (up, down) = spec.net.initial();
        let session = ClientSession::new(SessionConfig {
            seed: spec.seed,
            encoding: spec.encoding,
            protocol: spec.protocol,
            resends: spec.resends,
            ..SessionConfig::default()
        });
        self.clients.push(SimClient {
            id,
            session,
            script: spec.script,
            encoding: spec.encoding,
            clock: spec.clock,
            net: spec.net,
            trace: ClientTrace::default(),
            inbox: Vec::new(),
            up: Conditioner::new(spec.seed.wrapping_mul(3), up),
            down: Conditioner::new(spec.seed.wrapping_mul(3).wrapping_add(1), down),
            stream: stream(spec.seed.wrapping_mul(3).wrapping_add(2), down),
            unacked: VecDeque::new(),
            last_remote: None,
            drawn: BTreeMap::new(),
        });
        // Every frame the room may drop travels as a datagram here.
        // A compact session's hello is binary, and so are its control
        // messages (as over a real socket).
        let seating = Seating {
            encoding: spec.encoding,
            protocol: spec.protocol,
            datagrams: true,
            binary_control: spec.encoding == Encoding::Compact,
        };
        self.room
            .join(id, &format!("bot{}", id.0), seating, &mut self.out)
            .expect("the stepper's room has a seat for everyone");
        self.deliver();
        id
    }

    /// Puts every frame in the outbox on its recipient's link.
    fn deliver(&mut self) {
        let now = self.now;
        let half = G::cadence(self.room.world().config()) / 2;
        for &(to, i) in self.out.later() {
            if let Some(frame) = self.out.frames().get(i) {
                self.later.push_back((now + half, to, frame.clone()));
            }
        }
        let droppable: Vec<bool> = (0..self.out.frames().len())
            .map(|i| self.out.droppable(i))
            .collect();
        let (frames, deliveries) = self.out.take();
        for (to, i) in deliveries {
            let (Some(client), Some(frame)) =
                (self.clients.iter_mut().find(|c| c.id == to), frames.get(i))
            else {
                continue;
            };
            if droppable.get(i).copied().unwrap_or(false) {
                client.down.send(now, frame.clone());
            } else {
                client.stream.send(now, frame.clone());
            }
        }
    }

    /// Runs `duration` of simulated time, in steps of 1 ms.
    ///
    /// # Panics
    /// A session sent a message its own encoding cannot carry or the server
    /// refuses: a bug the scenario should show at once.
    pub fn run(&mut self, duration: Duration) {
        let end = self.now + duration;
        let config = self.room.world().config().clone();
        let cadence = G::cadence(&config);
        let ms = Duration::from_millis(1);
        while self.now < end {
            let before = self.now;
            self.now += ms;
            let now = self.now;
            while self.next_tick <= now {
                self.last_tick = self.next_tick;
                self.next_tick += cadence;
                self.room.tick(&mut self.out);
                self.deliver();
            }
            while self.later.front().is_some_and(|(at, ..)| *at <= now) {
                let Some((_, to, frame)) = self.later.pop_front() else {
                    break;
                };
                if let Some(client) = self.clients.iter_mut().find(|c| c.id == to) {
                    client.down.send(now, frame);
                }
            }
            let frame_due = (now.as_micros() % self.frame.as_micros()) == 0;
            for i in 0..self.clients.len() {
                let client = &mut self.clients[i];
                if let Some(change) = client.net.change_in(before, now).copied() {
                    client.up.set_conditions(change.up);
                    client.down.set_conditions(change.down);
                    client.stream.set_conditions(reliable(change.down));
                }
                client.arrive(now);
                let mut messages = Vec::new();
                if frame_due && client.clock.draws_at(now) {
                    messages = client.frame(now, &config);
                }
                for message in messages {
                    if matches!(message, ClientMessage::Hello { .. }) {
                        continue;
                    }
                    // As on the wire: the server gets what decoding the
                    // client's frame gives (binary inputs for compact clients).
                    let (text, bytes) = match client.session.encode(&message) {
                        Frame::Text(text) => (true, text.into_bytes()),
                        Frame::Binary(bytes) => (false, bytes),
                    };
                    if let ClientMessage::Input { .. } = &message {
                        client.trace.uplink_bytes += bytes.len() as u64;
                    }
                    let Ok(message) = decode_client_frame(text, &bytes) else {
                        panic!("the session sent a message the server refuses: {message:?}");
                    };
                    client.up.send(now, message);
                }
                let id = client.id;
                let since = now.saturating_sub(self.last_tick);
                while let Some(message) = self.clients[i].up.deliver(now) {
                    // The session only sends well-formed messages.
                    let _ = self.room.receive_at(id, &message, since, &mut self.out);
                    self.deliver();
                }
            }
        }
    }

    /// Each client's counters, in join order.
    pub fn counters(&self) -> Vec<ClientCounters> {
        self.clients.iter().map(SimClient::counters).collect()
    }
}

/// The reliable stream's conditions: the link's latency and jitter, never a
/// loss or a duplicate (a retransmission is not modelled).
fn reliable(c: LinkConditions) -> LinkConditions {
    LinkConditions {
        loss: 0.0,
        duplicate: 0.0,
        ..c
    }
}

fn stream(seed: u64, c: LinkConditions) -> Conditioner<Frame> {
    let mut s = Conditioner::new(seed, reliable(c));
    s.set_delivery(Delivery::Stream);
    s
}

impl<G: Harness, D: Driver<G>> SimClient<G, D> {
    /// Frames that arrived by `now` go in (or wait out a hitch).
    fn arrive(&mut self, now: Duration) {
        let mut any = false;
        while let Some(frame) = self.stream.deliver(now) {
            self.inbox.push(frame);
            any = true;
        }
        while let Some(frame) = self.down.deliver(now) {
            self.inbox.push(frame);
            any = true;
        }
        if any && self.clock.draws_at(now) {
            self.take_inbox(now);
        }
    }

    /// Frames held during a hitch go in now, stamped now.
    fn take_inbox(&mut self, now: Duration) {
        let local = self.clock.local(now);
        for frame in std::mem::take(&mut self.inbox) {
            let (frame, bytes) = match &frame {
                Frame::Text(text) => (Incoming::Text(text), text.len()),
                Frame::Binary(bytes) => (Incoming::Binary(bytes), bytes.len()),
            };
            self.trace.downlink_bytes += bytes as u64;
            if let Incoming::Binary(b) = frame {
                if delta::frame_tick(b).is_some() {
                    self.trace.largest_snapshot = self.trace.largest_snapshot.max(b.len());
                }
            }
            self.session.receive(frame, local);
        }
        self.observe(now);
    }

    /// One rendered frame at true time `now`: controls in, time in, events
    /// and remote time observed; the messages to send.
    fn frame(
        &mut self,
        now: Duration,
        config: &G::Config,
    ) -> Vec<ClientMessage<<G as Networked>::Wire>> {
        self.take_inbox(now);
        let controls = Driver::controls(&mut self.script, &self.session, config);
        self.session.set_controls(controls);
        let messages = self.session.advance(self.clock.local(now));
        self.observe(now);
        self.watch_remote_time(now);
        self.watch_drawn_remotes();
        let t = now.as_secs_f64();
        let tenth = (now.as_millis() % 100) < 10;
        if tenth {
            let pct = self.session.hud().pacing.dilation_pct;
            self.trace.dilation_pct.push((t, pct));
        }
        messages
    }

    /// Drains the session's events into the trace.
    fn observe(&mut self, now: Duration) {
        let t = now.as_secs_f64();
        let mut mispredicted = 0;
        for event in self.session.events() {
            match event {
                SessionEvent::StepPredicted { tick, acted } => {
                    self.unacked.push_back((tick, now));
                    if acted {
                        self.trace.shot_ticks.push(tick);
                    }
                }
                SessionEvent::Note(note) => {
                    self.trace.notes += 1;
                    if G::is_hit(&note) {
                        self.trace.hits += 1;
                    }
                }
                SessionEvent::Timing(timing) if timing.tick.is_some() => {
                    self.trace.slack_ms.push((t, f64::from(timing.slack_ms)));
                }
                SessionEvent::Reconciled { report, placed } if !placed && report.error > 0.01 => {
                    mispredicted += 1;
                }
                _ => {}
            }
        }
        for _ in 0..mispredicted {
            self.trace.mispredicted_at.push(t);
        }
        let ack = self
            .session
            .local()
            .and_then(|l| l.authoritative())
            .and_then(|s| s.stamp().ack);
        if let Some(ack) = ack {
            while let Some(&(tick, sent)) = self.unacked.front() {
                if tick > ack {
                    break;
                }
                self.unacked.pop_front();
                let ms = now.saturating_sub(sent).as_secs_f64() * 1000.0;
                self.trace.ack_ms.push((t, ms));
            }
        }
        let hud = self.session.hud();
        let late = hud.pacing.late as usize;
        while self.trace.late_at.len() < late {
            self.trace.late_at.push(t);
        }
        let repeated = hud.pacing.repeated as usize;
        while self.trace.repeated_at.len() < repeated {
            self.trace.repeated_at.push(t);
        }
    }

    /// Remote time must never run backwards, and between frames 100 ms or
    /// more apart it must run within ±10 % of real time.
    fn watch_remote_time(&mut self, now: Duration) {
        let Some(remote) = self.session.remote_time() else {
            return;
        };
        let cadence = self
            .session
            .game_config()
            .map_or(0.05, |c| G::cadence(c).as_secs_f64());
        match self.last_remote {
            Some((_, last)) if remote < last - 1e-9 => {
                self.trace.remote_backwards += 1;
                self.last_remote = Some((now, remote));
            }
            Some((at, last)) if now.saturating_sub(at) >= Duration::from_millis(100) => {
                let real = now.saturating_sub(at).as_secs_f64();
                let rate = (remote - last) * cadence / real;
                let (lo, hi) = self.trace.remote_rate.unwrap_or((rate, rate));
                self.trace.remote_rate = Some((lo.min(rate), hi.max(rate)));
                self.last_remote = Some((now, remote));
            }
            Some(_) => {}
            None => self.last_remote = Some((now, remote)),
        }
    }

    /// What is drawn must not snap back either: a remote drawn moving one
    /// way, then the next frame farther the other way than it can go (a
    /// wrong extrapolation corrected, say), is counted; a jump of over
    /// [`RESPAWN_JUMP`] is a respawn, not motion. A remote that left the
    /// view (out of interest) and comes back is drawn afresh, not moved.
    fn watch_drawn_remotes(&mut self) {
        let mut drawn = BTreeMap::new();
        for remote in self.session.view().remotes {
            let at = Visual::place(&remote.visual);
            let moved = match self.drawn.get(&remote.id) {
                Some(&(last, last_moved)) => {
                    let moved = at - last;
                    if moved.length() > RESPAWN_JUMP {
                        Vec2::ZERO
                    } else {
                        if G::snapped_back(last_moved, moved) {
                            self.trace.drawn_snap_backs += 1;
                        }
                        moved
                    }
                }
                None => Vec2::ZERO,
            };
            drawn.insert(remote.id, (at, moved));
        }
        self.drawn = drawn;
    }

    /// This client's counters.
    pub fn counters(&self) -> ClientCounters {
        let hud = self.session.hud();
        let stats = self.session.local().map(|l| *l.stats()).unwrap_or_default();
        ClientCounters {
            inputs: hud.stats.inputs,
            mispredictions: stats.mispredictions,
            corrections: stats.corrections,
            snaps: stats.snaps,
            max_error: stats.max_error,
            max_correction: stats.max_correction,
            snapshots: hud.stats.snapshots,
            lost_down: self.down.stats().dropped,
            lost_up: self.up.stats().dropped,
            late: hud.pacing.late,
            repeated: hud.pacing.repeated,
            resyncs: hud.pacing.resyncs,
        }
    }
}
