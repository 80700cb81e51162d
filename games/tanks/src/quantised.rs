//! The tank game in binary snapshots: a tank as another player's frames
//! carry it ([`Quantised`]: position to 1/65535 of the arena, heading to
//! 1/65536 of a turn, HP and flags a byte, velocity to 1/127 of the top
//! speed per axis), its fields for the delta coder with the motion that
//! predicts an unlisted tank, and the whole-frame helpers of the tank's
//! tests and tools.

use glam::Vec2;

use crate::config::SimConfig;
use crate::sim::wrap_angle;
use crate::state::PlayerState;
use skirmish_core::clamp;
use skirmish_core::compact::{decode_frame, encode_head, QuantisedFrame};
use skirmish_core::delta::{self, Entity};
use skirmish_core::protocol::ProtocolError;
use skirmish_core::PlayerId;
use skirmish_core::Tick;
use skirmish_core::{Fields, Width};

/// Bytes of the tank game's head (the library's part and a tank's state).
pub const HEAD_BYTES: usize = skirmish_core::compact::head_bytes::<PlayerState>();

/// Bytes of one remote entry in the tail.
pub const ENTRY_BYTES: usize = 4 + 2 + 2 + 2 + 1 + 1 + 1 + 1;

/// A tank's flags, in its quantised and its exact form: alive.
pub(crate) const ALIVE: u8 = 1;
/// A tank's flags: it has a velocity.
pub(crate) const HAS_VELOCITY: u8 = 2;
/// A player's state as binary frames carry a remote player: position to
/// 1/65535 of the arena, rotation to 1/65536 of a turn, HP to a byte,
/// velocity to 1/127 of the top speed per axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Quantised {
    /// x, in 1/65535 of the arena's width.
    pub x: u16,
    /// y, in 1/65535 of the arena's height.
    pub y: u16,
    /// Heading, in 1/65536 of a turn.
    pub rotation: u16,
    /// Hit points, at most 255.
    pub hp: u8,
    /// 1: alive, 2: has a velocity.
    pub flags: u8,
    /// Velocity x, in 1/127 of the top speed.
    pub vx: i8,
    /// Velocity y, in 1/127 of the top speed.
    pub vy: i8,
}

impl Quantised {
    /// `state` quantised for `config`'s arena and speed.
    pub fn of(state: &PlayerState, config: &SimConfig) -> Quantised {
        let turn = wrap_angle(state.rotation) / std::f32::consts::TAU;
        let v = state.velocity.unwrap_or(Vec2::ZERO) / config.speed.max(1e-6) * 127.0;
        Quantised {
            x: quantise(state.position.x, config.arena.x),
            y: quantise(state.position.y, config.arena.y),
            rotation: (turn * 65536.0).round() as i32 as u16,
            hp: state.hp.min(255) as u8,
            flags: flags(state),
            vx: clamp(v.x.round(), -127.0, 127.0) as i8,
            vy: clamp(v.y.round(), -127.0, 127.0) as i8,
        }
    }

    /// The state this stands for, as player `id`'s at `tick`.
    pub fn state(&self, id: PlayerId, tick: Tick, config: &SimConfig) -> PlayerState {
        let turn = f32::from(self.rotation as i16) / 65536.0;
        let v = |q: i8| f32::from(q) / 127.0 * config.speed;
        PlayerState {
            id,
            tick,
            ack_move_tick: None,
            position: Vec2::new(
                dequantise(self.x, config.arena.x),
                dequantise(self.y, config.arena.y),
            ),
            rotation: wrap_angle(turn * std::f32::consts::TAU),
            hp: u16::from(self.hp),
            alive: self.flags & ALIVE != 0,
            velocity: (self.flags & HAS_VELOCITY != 0).then_some(Vec2::new(v(self.vx), v(self.vy))),
        }
    }
}

/// How far a quantised velocity carries a quantised position in a given
/// number of ticks, per axis: computed once per frame, used per player.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motion {
    kx: f64,
    ky: f64,
}

impl Motion {
    /// The motion of `ticks` ticks of `config`'s cadence in its arena.
    pub fn new(ticks: u32, config: &SimConfig) -> Motion {
        let seconds = f64::from(config.tick_ms) / 1000.0 * f64::from(ticks);
        let per_unit = f64::from(config.speed) * seconds / 127.0 * 65535.0;
        Motion {
            kx: per_unit / f64::from(config.arena.x).max(1e-6),
            ky: per_unit / f64::from(config.arena.y).max(1e-6),
        }
    }
}

impl Fields for Quantised {
    type Config = SimConfig;
    type Motion = Motion;

    /// x, y and heading wide; HP, flags and the two velocities a byte.
    const WIDTHS: &'static [Width] = &[
        Width::Wide,
        Width::Wide,
        Width::Wide,
        Width::Byte,
        Width::Byte,
        Width::Byte,
        Width::Byte,
    ];

    fn get(&self, i: usize) -> u16 {
        match i {
            0 => self.x,
            1 => self.y,
            2 => self.rotation,
            3 => u16::from(self.hp),
            4 => u16::from(self.flags),
            5 => u16::from(self.vx as u8),
            _ => u16::from(self.vy as u8),
        }
    }

    fn set(&mut self, i: usize, value: u16) {
        let byte = value as u8;
        match i {
            0 => self.x = value,
            1 => self.y = value,
            2 => self.rotation = value,
            3 => self.hp = byte,
            4 => self.flags = byte,
            5 => self.vx = byte as i8,
            _ => self.vy = byte as i8,
        }
    }

    fn motion(ticks: u32, config: &SimConfig) -> Motion {
        Motion::new(ticks, config)
    }

    fn moved(&self, motion: &Motion) -> Quantised {
        Quantised::moved(self, motion)
    }
}

impl Quantised {
    /// Where this state's velocity takes it in `ticks` of `config`'s
    /// cadence, clamped to the arena; every other field unchanged. Both
    /// sides compute it with the same `f64` operations, so it is
    /// bit-identical natively and in wasm.
    #[must_use]
    pub fn predicted(&self, ticks: u32, config: &SimConfig) -> Quantised {
        self.moved(&Motion::new(ticks, config))
    }

    /// [`Quantised::predicted`] with the motion computed once.
    #[must_use]
    pub fn moved(&self, motion: &Motion) -> Quantised {
        if self.vx == 0 && self.vy == 0 {
            return *self;
        }
        // Rounded half up by a truncating cast of a non-negative number:
        // plain IEEE operations, no library call.
        let step = |q: u16, v: i8, k: f64| -> u16 {
            (clamp(f64::from(q) + f64::from(v) * k, 0.0, 65535.0) + 0.5) as u16
        };
        Quantised {
            x: step(self.x, self.vx, motion.kx),
            y: step(self.y, self.vy, motion.ky),
            ..*self
        }
    }
}

/// The shared tail: every player, quantised.
pub fn encode_tail(players: &[PlayerState], config: &SimConfig, out: &mut Vec<u8>) {
    let count = players.len().min(usize::from(u16::MAX));
    out.extend_from_slice(&(count as u16).to_le_bytes());
    for p in &players[..count] {
        out.extend_from_slice(&p.id.0.to_le_bytes());
        delta::write_full(&Quantised::of(p, config), out);
    }
}

/// A whole frame for one recipient (head and tail in one go).
pub fn encode(
    server_tick: Tick,
    own: &PlayerState,
    players: &[PlayerState],
    config: &SimConfig,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD_BYTES + 2 + players.len() * ENTRY_BYTES);
    encode_head(server_tick, own, None, &mut out);
    encode_tail(players, config, &mut out);
    out
}

/// Reads a compact snapshot: the server tick and every player's state, the
/// recipient's own exactly and the others dequantised.
///
/// # Errors
/// A frame of another kind, too short, or with trailing bytes.
pub fn decode(bytes: &[u8], config: &SimConfig) -> Result<(Tick, Vec<PlayerState>), ProtocolError> {
    let frame = decode_quantised(bytes)?;
    let players = frame
        .players
        .iter()
        .map(|(id, q)| {
            if *id == frame.own.id {
                frame.own
            } else {
                q.state(*id, frame.server_tick, config)
            }
        })
        .collect();
    Ok((frame.server_tick, players))
}

/// Reads a compact snapshot of the tank game without dequantising the
/// players.
///
/// # Errors
/// As [`decode`].
pub fn decode_quantised(
    bytes: &[u8],
) -> Result<QuantisedFrame<Quantised, PlayerState>, ProtocolError> {
    decode_frame(bytes)
}

/// A tank's flags byte ([`ALIVE`], [`HAS_VELOCITY`]).
pub(crate) fn flags(p: &PlayerState) -> u8 {
    (if p.alive { ALIVE } else { 0 })
        | (if p.velocity.is_some() {
            HAS_VELOCITY
        } else {
            0
        })
}

fn quantise(v: f32, extent: f32) -> u16 {
    if !(v.is_finite() && extent > 0.0) {
        return 0;
    }
    (clamp(v / extent, 0.0, 1.0) * 65535.0).round() as u16
}

fn dequantise(q: u16, extent: f32) -> f32 {
    f32::from(q) / 65535.0 * extent
}

/// Every player of `states` quantised, in id order.
pub fn quantise_all(states: &[PlayerState], config: &SimConfig) -> Vec<Entity<Quantised>> {
    let mut set: Vec<Entity<Quantised>> = states
        .iter()
        .map(|s| (s.id, Quantised::of(s, config)))
        .collect();
    set.sort_by_key(|(id, _)| *id);
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Pose;

    fn state(id: u32, x: f32, y: f32, rotation: f32) -> PlayerState {
        PlayerState {
            id: PlayerId(id),
            hp: 80,
            velocity: Some(Vec2::new(141.4, -141.4)),
            ..PlayerState::at(Tick(9), Some(Tick(4)), Pose::new(Vec2::new(x, y), rotation))
        }
    }

    #[test]
    fn own_state_is_exact_and_remotes_are_close() {
        let config = SimConfig::default();
        let players = vec![
            state(1, 0.1 + 0.2, 1199.99, -3.0),
            state(2, 1234.567, 20.0, 3.1),
            state(3, 20.0, 600.0, 0.0),
        ];
        let own = PlayerState {
            alive: false,
            ..players[1]
        };
        let frame = encode(Tick(9), &own, &players, &config);
        assert_eq!(frame.len(), HEAD_BYTES + 2 + 3 * ENTRY_BYTES);
        let (tick, decoded) = decode(&frame, &config).unwrap();
        assert_eq!(tick, Tick(9));
        assert_eq!(
            decoded[1],
            PlayerState {
                tick: Tick(9),
                ..own
            },
            "bit-exact"
        );
        for (a, b) in players.iter().zip(&decoded).filter(|(a, _)| a.id != own.id) {
            assert!(a.position.distance(b.position) < 0.03, "{a:?} {b:?}");
            assert!(crate::angle_delta(a.rotation, b.rotation).abs() < 1e-4);
            assert_eq!((b.hp, b.alive, b.ack_move_tick), (80, true, None));
            assert!(b.velocity.unwrap().distance(a.velocity.unwrap()) < 2.0);
        }
    }

    #[test]
    fn bytes_per_player_stay_under_25() {
        let config = SimConfig::default();
        let players: Vec<_> = (1..=64)
            .map(|i| state(i, 10.0 * i as f32, 300.0, 0.5))
            .collect();
        let frame = encode(Tick(1), &players[0], &players, &config);
        assert!(frame.len() / 64 <= 25, "{} bytes", frame.len());
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        let config = SimConfig::default();
        let frame = encode(
            Tick(1),
            &state(1, 1.0, 1.0, 0.0),
            &[state(1, 1.0, 1.0, 0.0)],
            &config,
        );
        for cut in 0..frame.len() {
            assert!(decode(&frame[..cut], &config).is_err());
        }
        let mut longer = frame.clone();
        longer.push(0);
        assert!(decode(&longer, &config).is_err());
        assert!(decode(&[2, 0, 0], &config).is_err());
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any bytes decode to a frame or an error, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes, &SimConfig::default());
        }
    }
}

#[cfg(test)]
mod delta_tests;
