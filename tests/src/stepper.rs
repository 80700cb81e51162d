//! A deterministic client/server stepper: the real [`World`] and real
//! [`ClientSession`]s connected by an in-memory link, on a simulated clock.
//!
//! Every message takes the same path as over a socket: the world's messages
//! are encoded to JSON text and handed to `ClientSession::receive` (through
//! the session's seeded down-conditioner); the session's messages come out of
//! `on_frame` (through its up-conditioner) and are fed to the world. Time is
//! simulated, so a run is exactly reproducible: the same seeds and scripts
//! give the same counters, bit for bit, on every run and every machine.

use std::time::Duration;

use skirmish_core::conditioner::LinkConditions;
use skirmish_core::session::{ClientSession, SessionConfig};
use skirmish_core::{
    compact, encode, ClientMessage, Encoding, PlayerId, RosterEntry, ServerMessage, SimConfig,
    World, PROTOCOL_VERSION,
};

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
    /// The authoritative world.
    pub world: World,
    /// The clients, in join order.
    pub clients: Vec<SimClient>,
    now: Duration,
    next_tick: Duration,
    frame: Duration,
}

impl Stepper {
    /// An empty match on `sim`, with a world seeded by `seed`; clients
    /// render at 100 frames per second of simulated time.
    pub fn new(sim: SimConfig, seed: u64) -> Stepper {
        Stepper {
            world: World::new(sim, seed),
            clients: Vec::new(),
            now: Duration::ZERO,
            next_tick: Duration::ZERO,
            frame: Duration::from_millis(10),
        }
    }

    /// Joins a client whose link has `up` and `down` conditions.
    ///
    /// # Panics
    /// If the id is taken (a test bug).
    pub fn join(&mut self, script: Script, up: LinkConditions, down: LinkConditions, seed: u64) {
        self.join_with(script, up, down, seed, Encoding::Json);
    }

    /// Like [`Stepper::join`], with snapshots in `encoding`.
    ///
    /// # Panics
    /// If the id is taken (a test bug).
    pub fn join_with(
        &mut self,
        script: Script,
        up: LinkConditions,
        down: LinkConditions,
        seed: u64,
        encoding: Encoding,
    ) {
        let id = PlayerId(self.clients.len() as u32 + 1);
        self.world
            .join(id, &format!("bot{}", id.0))
            .expect("fresh ids");
        let mut session = ClientSession::new(SessionConfig {
            up,
            down,
            seed,
            encoding,
            ..SessionConfig::default()
        });
        session.receive(&encode(&ServerMessage::Welcome {
            player_id: id,
            protocol: PROTOCOL_VERSION,
            server_tick: self.world.tick(),
            tick_ms: self.world.sim_config().tick_ms,
            room: "stepper".into(),
            config: self.world.sim_config().clone(),
        }));
        self.clients.push(SimClient {
            id,
            session,
            script,
            encoding,
        });
        let roster = encode(&ServerMessage::Roster {
            players: self
                .world
                .players()
                .map(|(id, p)| RosterEntry {
                    id,
                    name: p.name().to_string(),
                })
                .collect(),
        });
        for client in &mut self.clients {
            client.session.receive(&roster);
        }
    }

    /// Runs `duration` of simulated time.
    pub fn run(&mut self, duration: Duration) {
        let end = self.now + duration;
        let arena = self.world.sim_config().arena;
        let cadence = self.world.sim_config().cadence();
        while self.now < end {
            self.now += self.frame;
            while self.next_tick <= self.now {
                self.next_tick += cadence;
                self.world.step();
                let players = self.world.snapshot();
                let snapshot = encode(&ServerMessage::Snapshot {
                    server_tick: self.world.tick(),
                    players: players.clone(),
                });
                let combat = (!self.world.events().is_empty()).then(|| {
                    encode(&ServerMessage::Combat {
                        events: self.world.events().to_vec(),
                    })
                });
                for client in &mut self.clients {
                    match client.encoding {
                        Encoding::Json => client.session.receive(&snapshot),
                        Encoding::Compact => {
                            let own = players.iter().find(|p| p.id == client.id);
                            if let Some(own) = own {
                                let frame = compact::encode(
                                    self.world.tick(),
                                    own,
                                    &players,
                                    self.world.sim_config(),
                                );
                                client.session.receive_binary(&frame);
                            }
                        }
                    }
                    if let Some(combat) = &combat {
                        client.session.receive(combat);
                    }
                }
            }
            for client in &mut self.clients {
                let controls = client.script.controls(&client.session, arena);
                client.session.set_controls(controls);
                for message in client.session.on_frame(self.frame) {
                    match message {
                        ClientMessage::Input { inputs } => {
                            self.world.receive(client.id, &inputs);
                        }
                        ClientMessage::Ping { id } => {
                            let pong = encode(&ServerMessage::Pong {
                                id,
                                server_tick: self.world.tick(),
                            });
                            client.session.receive(&pong);
                        }
                        ClientMessage::Hello { .. } => {}
                    }
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
