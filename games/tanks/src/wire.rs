//! How the tank game travels: its input's binary bits, what `welcome`
//! tells a joiner (the movement constants and the rules of combat), its
//! hits, and the binary forms of all three.

use glam::Vec2;
use serde::{Deserialize, Serialize};

use super::Tanks;
use crate::config::{Rect, SimConfig, MAX_OBSTACLES};
use crate::input::MoveInput;
use crate::quantised::{flags, Quantised, ALIVE, HAS_VELOCITY};
use crate::shots::CombatRules;
use crate::state::PlayerState;
use skirmish_core::PlayerId;
use skirmish_core::Tick;
use skirmish_core::Wired;
use skirmish_core::{Codec, ReadError, Reader, Writer};
use skirmish_core::{Networked, OwnState, Stamp};

/// What `welcome` tells a tank: the movement constants and the rules of
/// combat (in JSON as the fields `config` and `combat`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TankSetup {
    /// The movement constants; the client must use exactly these.
    pub config: SimConfig,
    /// The rules of combat (range, cooldown, ...), for the client's
    /// predicted shots; absent from older servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combat: Option<CombatRules>,
}

impl Codec for TankSetup {
    fn write(&self, w: &mut Writer) {
        self.config.write(w);
        w.u8(u8::from(self.combat.is_some()));
        if let Some(rules) = &self.combat {
            rules.write(w);
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<TankSetup, ReadError> {
        let config = SimConfig::read(r)?;
        let combat = if r.bool()? {
            Some(CombatRules::read(r)?)
        } else {
            None
        };
        Ok(TankSetup { config, combat })
    }
}

/// One input as it travels: the movement input and the moment the client was
/// drawing remote players when it was made (for lag compensation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WireInput {
    /// The client tick of this input.
    pub tick: Tick,
    /// Turn, -1 to 1.
    pub turn: f32,
    /// Throttle, -1 to 1.
    pub throttle: f32,
    /// Whether fire is held.
    #[serde(default)]
    pub fire: bool,
    /// The server tick, with fraction, at which the client was drawing remote
    /// players; `None` means "now".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_tick: Option<f64>,
}

impl WireInput {
    /// The movement part.
    pub fn move_input(&self) -> MoveInput {
        MoveInput {
            tick: self.tick,
            turn: self.turn,
            throttle: self.throttle,
            fire: self.fire,
        }
    }

    /// The wire form of `input`, seen at `view_tick`.
    pub fn new(input: MoveInput, view_tick: Option<f64>) -> WireInput {
        WireInput {
            tick: input.tick,
            turn: input.turn,
            throttle: input.throttle,
            fire: input.fire,
            view_tick,
        }
    }
}

/// The game this build's protocol carries: the tank game, version 2
/// (version 1: before the compact own block put the library's part first).
pub const GAME_NAME: &str = "tanks";
/// The version of [`GAME_NAME`] this build plays.
pub const GAME_VERSION: u32 = 2;

/// A tank's setup carries the configuration it predicts with.
impl skirmish_core::Carries<SimConfig> for TankSetup {
    fn config(&self) -> &SimConfig {
        &self.config
    }
}

impl Networked for Tanks {
    type Setup = TankSetup;
    type Wire = WireInput;
    type Entity = Quantised;
    const EVENTS: &'static str = "combat";

    fn quantise(own: &PlayerState, config: &SimConfig) -> Quantised {
        Quantised::of(own, config)
    }

    fn dequantise(entity: &Quantised, id: PlayerId, tick: Tick, config: &SimConfig) -> PlayerState {
        entity.state(id, tick, config)
    }
}

/// A tank's own state in binary: f32 x, y, rotation, u8 hp, u8 flags (1
/// alive, 2 has velocity, others 0), f32 vx, vy.
impl OwnState for PlayerState {
    const BYTES: usize = 4 * 3 + 1 + 1 + 4 * 2;

    fn id(&self) -> PlayerId {
        self.id
    }

    fn stamp(&self) -> Stamp {
        Stamp {
            tick: self.tick,
            ack: self.ack_move_tick,
        }
    }

    fn write(&self, w: &mut Writer) {
        w.f32(self.position.x);
        w.f32(self.position.y);
        w.f32(self.rotation);
        w.u8(self.hp.min(255) as u8);
        w.u8(flags(self));
        let v = self.velocity.unwrap_or(Vec2::ZERO);
        w.f32(v.x);
        w.f32(v.y);
    }

    fn read(id: PlayerId, stamp: Stamp, r: &mut Reader<'_>) -> Result<PlayerState, ReadError> {
        let position = Vec2::new(r.f32()?, r.f32()?);
        let rotation = r.f32()?;
        let hp = u16::from(r.u8()?);
        let flags = r.u8()?;
        if flags & !(ALIVE | HAS_VELOCITY) != 0 {
            return Err(ReadError::Invalid {
                at: r.offset() - 1,
                what: "unknown flags in a tank's state",
            });
        }
        let velocity = Vec2::new(r.f32()?, r.f32()?);
        Ok(PlayerState {
            id,
            tick: stamp.tick,
            ack_move_tick: stamp.ack,
            position,
            rotation,
            hp,
            alive: flags & ALIVE != 0,
            velocity: (flags & HAS_VELOCITY != 0).then_some(velocity),
        })
    }
}

/// One hit, sent once to every client of the room.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CombatEvent {
    /// The server tick of the hit.
    pub server_tick: Tick,
    /// Who fired.
    pub attacker: PlayerId,
    /// Who was hit.
    pub target: PlayerId,
    /// Hit points taken.
    pub damage: u16,
    /// The target's hit points after the hit.
    pub hp: u16,
    /// Whether the hit killed the target.
    pub killed: bool,
    /// Where the shot started.
    pub from: Vec2,
    /// Where it hit.
    pub to: Vec2,
}

/// A tank's input as it travels: its shot is what is judged at its view.
///
/// Binary form: head bits 0-1 turn, 2-3 throttle (0: 0.0, 1: 1.0, 2: -1.0,
/// 3: its `f32` follows), bit 4 fire; then the turn's and the throttle's
/// `f32` when coded 3.
impl Wired for WireInput {
    type Input = MoveInput;

    fn input(&self) -> MoveInput {
        self.move_input()
    }

    fn of(tick: Tick, input: MoveInput, view_tick: Option<f64>) -> WireInput {
        WireInput::new(MoveInput { tick, ..input }, view_tick)
    }

    fn tick(&self) -> Tick {
        self.tick
    }

    fn view_tick(&self) -> Option<f64> {
        self.view_tick
    }

    fn with_view(self, view_tick: Option<f64>) -> WireInput {
        WireInput { view_tick, ..self }
    }

    fn acts_on_view(&self) -> bool {
        self.fire
    }

    fn repeated_at(&self, tick: Tick) -> WireInput {
        WireInput {
            tick,
            fire: false,
            view_tick: None,
            ..*self
        }
    }

    fn is_finite(&self) -> bool {
        self.turn.is_finite() && self.throttle.is_finite()
    }

    fn write_bits(&self, out: &mut Vec<u8>) -> u8 {
        let (turn, turn_code) = code(self.turn);
        let (throttle, throttle_code) = code(self.throttle);
        out.extend(turn.iter().flatten());
        out.extend(throttle.iter().flatten());
        turn_code | throttle_code << 2 | u8::from(self.fire) << 4
    }

    fn read_bits(head: u8, r: &mut Reader<'_>, tick: Tick) -> Result<WireInput, ReadError> {
        let turn = value(r, head & 3)?;
        let throttle = value(r, head >> 2 & 3)?;
        Ok(WireInput {
            tick,
            turn,
            throttle,
            fire: head & 0x10 != 0,
            view_tick: None,
        })
    }
}

/// The two-bit code of a control value, and the bytes that follow it.
fn code(value: f32) -> (Option<[u8; 4]>, u8) {
    // Bit patterns, not `==`: -0.0 must come back as -0.0.
    match value.to_bits() {
        0 => (None, 0),
        b if b == 1.0f32.to_bits() => (None, 1),
        b if b == (-1.0f32).to_bits() => (None, 2),
        _ => (Some(value.to_le_bytes()), 3),
    }
}

/// The control value a two-bit code stands for, reading its bytes when it
/// has them.
fn value(r: &mut Reader<'_>, code: u8) -> Result<f32, ReadError> {
    Ok(match code {
        0 => 0.0,
        1 => 1.0,
        2 => -1.0,
        _ => r.f32()?,
    })
}

fn write_vec2(v: Vec2, w: &mut Writer) {
    w.f32(v.x);
    w.f32(v.y);
}

fn read_vec2(r: &mut Reader<'_>) -> Result<Vec2, ReadError> {
    Ok(Vec2::new(r.f32()?, r.f32()?))
}

impl Codec for SimConfig {
    fn write(&self, w: &mut Writer) {
        w.varint(u64::from(self.tick_ms));
        w.f32(self.speed);
        w.f32(self.turn_rate);
        w.f32(self.player_radius);
        write_vec2(self.arena, w);
        w.varint(self.obstacles.len() as u64);
        for o in &self.obstacles {
            write_vec2(o.min, w);
            write_vec2(o.max, w);
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<SimConfig, ReadError> {
        let tick_ms = r.varint32()?;
        let speed = r.f32()?;
        let turn_rate = r.f32()?;
        let player_radius = r.f32()?;
        let arena = read_vec2(r)?;
        let n = r.count()?;
        if n > MAX_OBSTACLES {
            return Err(ReadError::Invalid {
                at: r.offset(),
                what: "more obstacles than a configuration may have",
            });
        }
        let mut obstacles = Vec::with_capacity(n);
        for _ in 0..n {
            obstacles.push(Rect {
                min: read_vec2(r)?,
                max: read_vec2(r)?,
            });
        }
        Ok(SimConfig {
            tick_ms,
            speed,
            turn_rate,
            player_radius,
            arena,
            obstacles,
        })
    }
}

/// In binary as serde describes it: each field in order, integers as
/// varints.
impl Codec for CombatRules {}

/// In binary as serde describes it: each field in order, integers as
/// varints, points exactly.
impl Codec for CombatEvent {}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod json;

#[cfg(test)]
mod uplink;
