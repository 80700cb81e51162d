//! A deterministic client/server stepper: the real [`Room`] (the code the
//! server drives) and real [`ClientSession`]s connected by an in-memory link, on a simulated clock.
//!
//! Every message takes the same path as over a socket: the room's frames
//! (JSON text or compact binary) are handed to `ClientSession::receive` (through
//! the session's seeded down-conditioner); the session's messages come out of
//! `advance` (through its up-conditioner) and are fed to the room. Time is
//! simulated, so a run is exactly reproducible: the same seeds and scripts
//! give the same counters, bit for bit, on every run and every machine.

use std::time::Duration;

use skirmish_core::LinkConditions;
use skirmish_core::{ClientMessage, Encoding, PlayerId, SimConfig, World};
use skirmish_core::{ClientSession, Incoming, SessionConfig};
use skirmish_core::{Frame, Outbox, Room, RoomConfig};

use crate::script::Script;

/// One client in the stepper.
pub struct SimClient {
    /// Its player.
    pub id: PlayerId,
    /// Its session.
    pub session: ClientSession,
    /// Its brain.
    pub script: Script,
    /// How it gets snapshots.
    pub encoding: Encoding,
}

/// What one client went through, for assertions and regression numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClientCounters {
    /// Inputs predicted and sent.
    pub inputs: u64,
    /// Reconciliations with any error above 0.01 u.
    pub mispredictions: u64,
    /// Corrections counted (at or above the dead zone).
    pub corrections: u64,
    /// Snaps.
    pub snaps: u64,
    /// The largest reconciliation error, in units.
    pub max_error: f32,
    /// The largest counted correction, in units.
    pub max_correction: f32,
    /// Snapshots handled.
    pub snapshots: u64,
    /// Messages the down-conditioner dropped.
    pub lost_down: u64,
    /// Messages the up-conditioner dropped.
    pub lost_up: u64,
}

/// The in-memory match.
pub struct Stepper {
    /// The authoritative room, the same code the server drives.
    pub room: Room,
    /// The clients, in join order.
    pub clients: Vec<SimClient>,
    out: Outbox,
    now: Duration,
    next_tick: Duration,
    frame: Duration,
}

impl Stepper {
    /// An empty match on `sim`, with a world seeded by `seed`; clients
    /// render at 100 frames per second of simulated time.
    pub fn new(sim: SimConfig, seed: u64) -> Stepper {
        Stepper {
            room: Room::new(RoomConfig {
                name: "stepper".into(),
                capacity: usize::MAX,
                sim,
                seed,
                ..RoomConfig::default()
            }),
            clients: Vec::new(),
            out: Outbox::new(),
            now: Duration::ZERO,
            next_tick: Duration::ZERO,
            frame: Duration::from_millis(10),
        }
    }

    /// The authoritative world.
    pub fn world(&self) -> &World {
        self.room.world()
    }

    /// Joins a client whose link has `up` and `down` conditions.
    ///
    /// # Panics
    /// If the room refuses (a test bug).
    pub fn join(&mut self, script: Script, up: LinkConditions, down: LinkConditions, seed: u64) {
        self.join_with(script, up, down, seed, Encoding::Json);
    }

    /// Like [`Stepper::join`], with snapshots in `encoding`.
    ///
    /// # Panics
    /// If the room refuses (a test bug).
    pub fn join_with(
        &mut self,
        script: Script,
        up: LinkConditions,
        down: LinkConditions,
        seed: u64,
        encoding: Encoding,
    ) {
        let id = PlayerId(self.clients.len() as u32 + 1);
        let session = ClientSession::new(SessionConfig {
            up,
            down,
            seed,
            encoding,
            ..SessionConfig::default()
        });
        self.clients.push(SimClient {
            id,
            session,
            script,
            encoding,
        });
        self.room
            .join(id, &format!("bot{}", id.0), encoding, &mut self.out)
            .expect("the stepper's room has a seat for everyone");
        self.deliver();
    }

    /// Hands every frame in the outbox to its recipient's session.
    fn deliver(&mut self) {
        let (frames, deliveries) = self.out.take();
        for (to, i) in deliveries {
            let (Some(client), Some(frame)) =
                (self.clients.iter_mut().find(|c| c.id == to), frames.get(i))
            else {
                continue;
            };
            let frame = match frame {
                Frame::Text(text) => Incoming::Text(text),
                Frame::Binary(bytes) => Incoming::Binary(bytes),
            };
            client.session.receive(frame, self.now);
        }
    }

    /// Runs `duration` of simulated time.
    pub fn run(&mut self, duration: Duration) {
        let end = self.now + duration;
        let arena = self.room.world().sim_config().arena;
        let cadence = self.room.world().sim_config().cadence();
        while self.now < end {
            self.now += self.frame;
            while self.next_tick <= self.now {
                self.next_tick += cadence;
                self.room.tick(&mut self.out);
                self.deliver();
            }
            for i in 0..self.clients.len() {
                let client = &mut self.clients[i];
                let controls = client.script.controls(&client.session, arena);
                client.session.set_controls(controls);
                let id = client.id;
                // Nothing here reads events: let them go.
                client.session.events().for_each(drop);
                for message in client.session.advance(self.now) {
                    if matches!(message, ClientMessage::Hello { .. }) {
                        continue;
                    }
                    // The session only sends well-formed messages.
                    let _ = self.room.receive(id, &message, &mut self.out);
                    self.deliver();
                }
            }
        }
    }

    /// Each client's counters, in join order.
    pub fn counters(&self) -> Vec<ClientCounters> {
        self.clients
            .iter()
            .map(|c| {
                let hud = c.session.hud();
                let stats = c.session.local().map(|l| *l.stats()).unwrap_or_default();
                ClientCounters {
                    inputs: hud.stats.inputs,
                    mispredictions: stats.mispredictions,
                    corrections: stats.corrections,
                    snaps: stats.snaps,
                    max_error: stats.max_error,
                    max_correction: stats.max_correction,
                    snapshots: hud.stats.snapshots,
                    lost_down: hud.down.dropped,
                    lost_up: hud.up.dropped,
                }
            })
            .collect()
    }
}
