//! The contract between the netcode and a game.
//!
//! The library owns time (ticks, command frames, pacing), acknowledgements,
//! the pending inputs, replay and reconciliation, smoothing, interpolation,
//! deltas, interest, lag compensation, the recorder and the harness. A
//! game brings what only it knows, through [`Game`]: its configuration, the
//! controls of one tick, the state its own client predicts and the one
//! step that moves it. The step must be deterministic: the same state,
//! input, duration and configuration give the same bits on every target
//! (no `f32::sin`, no fused multiply-add, no hash-map iteration; `libm`
//! for transcendental functions).
//!
//! What is drawn is a [`Visual`]: the library interpolates between two of
//! them and shows a misprediction as an [`Offset`] that decays, with the
//! thresholds of `SmoothingConfig` measured in its [`Size`].
//!
//! The netcode is being made generic in steps (issue 27; `ARCHITECTURE.md`
//! says which parts take any [`Game`] today); the rest still speaks the
//! types of Skirmish's first game, which implements this contract too.

use std::fmt::Debug;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::shared::bytes::{Codec, ReadError, Reader, Writer};
use crate::shared::fields::Fields;
use crate::shared::state::{PlayerId, ThingId};
use crate::shared::tick::Tick;
use crate::shared::wired::Wired;
use glam::Vec2;

/// A game the netcode runs: its types and its deterministic step.
///
/// No method takes `self`: a game is a type, not a value (a unit struct),
/// so the library's types carry it as a parameter at no cost. Derive
/// `Clone`, `Copy`, `Debug` and `PartialEq` on it: the library's messages
/// and rooms of the game are printed and compared through it.
///
/// # Example
/// A dot on a line that its input pushes left or right, predicted,
/// corrected by the server and smoothed like any game:
///
/// ```
/// use std::time::Duration;
/// use skirmish_core::{Game, LocalPlayer, NoEvent, Offset, Replicated, Size, SmoothingConfig};
/// use skirmish_core::{Stamp, Tick, Vec2, Visual};
///
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Dots;
///
/// #[derive(Clone, Copy, Debug, Default, PartialEq)]
/// struct Dot(f32);
///
/// #[derive(Clone, Copy, Debug, Default, PartialEq)]
/// struct Shift(f32);
///
/// impl Offset for Shift {
///     fn plus(&self, o: &Shift) -> Shift { Shift(self.0 + o.0) }
///     fn negated(&self) -> Shift { Shift(-self.0) }
///     fn scaled(&self, k: f32) -> Shift { Shift(self.0 * k) }
///     fn size(&self) -> Size { Size { distance: self.0.abs(), angle: 0.0 } }
///     fn is_finite(&self) -> bool { self.0.is_finite() }
/// }
///
/// impl Visual for Dot {
///     type Offset = Shift;
///     fn lerp(&self, to: &Dot, t: f32) -> Dot { Dot(self.0 + (to.0 - self.0) * t) }
///     fn offset_to(&self, to: &Dot) -> Shift { Shift(to.0 - self.0) }
///     fn shifted(&self, o: &Shift) -> Dot { Dot(self.0 + o.0) }
///     fn is_finite(&self) -> bool { self.0.is_finite() }
///     fn place(&self) -> Vec2 { Vec2::new(self.0, 0.0) }
/// }
///
/// impl Replicated for Dot {
///     type Event = NoEvent; // nothing happens to a dot between states
///     fn is_valid(&self) -> bool { self.0.is_finite() }
///     fn apply(&mut self, event: &NoEvent) { match *event {} }
/// }
///
/// impl Game for Dots {
///     const NAME: &'static str = "dots";
///     const VERSION: u32 = 1;
///     type Config = ();
///     type Input = i8;
///     type Own = Dot;
///     type Local = Dot;
///     fn cadence((): &()) -> Duration { Duration::from_millis(50) }
///     fn sanitize(input: i8) -> i8 { input.clamp(-1, 1) }
///     fn predict(dot: Dot, input: &i8, dt: Duration, (): &()) -> Dot {
///         Dot(dot.0 + f32::from(*input) * 100.0 * dt.as_secs_f32())
///     }
///     fn local(own: &Dot) -> Dot { *own }
/// }
///
/// let mut me: LocalPlayer<Dots> = LocalPlayer::new((), SmoothingConfig::default(), Dot(0.0));
/// me.accept(Stamp { tick: Tick(0), ack: None }, &Dot(0.0)).unwrap();
/// me.step(Tick(1), 1, None).unwrap(); // predicted at once: 5 units right
/// assert_eq!(me.predicted(), Dot(5.0));
/// // The server applied tick 1 and says 4: rebuilt at 4, drawn at 5 for now.
/// let report = me.accept(Stamp { tick: Tick(1), ack: Some(Tick(1)) }, &Dot(4.0)).unwrap();
/// assert_eq!((me.predicted(), me.visible(1.0)), (Dot(4.0), Dot(5.0)));
/// assert_eq!(report.error, 1.0);
/// ```
pub trait Game: Send + Sync + 'static {
    /// The game's name, on the wire and in recordings.
    const NAME: &'static str;
    /// The game's version: a client, a server or a recording of another
    /// version is refused, never misread.
    const VERSION: u32;
    /// The constants both sides step with, sent to a client as it joins.
    /// `Default`: where a room of default settings starts.
    type Config: Clone + Debug + Default + PartialEq + Send + Sync;
    /// The controls of one tick.
    type Input: Copy + Debug + Default + PartialEq + Send + Sync;
    /// The own player's authoritative state as the server sends it to its
    /// owner, exactly: the game's fields in the library's envelope
    /// ([`Owned`](crate::Owned)), or a type of the game's own.
    type Own: Replicated;
    /// The part of the own state the client predicts, and draws.
    type Local: Visual;

    /// The length of one fixed step.
    fn cadence(config: &Self::Config) -> Duration;

    /// The input both sides actually use: whatever a client sent, made
    /// valid (clamped, non-finite numbers replaced). Every input goes
    /// through it before [`Game::predict`], on both sides.
    #[must_use]
    fn sanitize(input: Self::Input) -> Self::Input;

    /// Applies `input` to `local` for `duration`: the one movement step
    /// that live prediction, replay and the server all run.
    #[must_use]
    fn predict(
        local: Self::Local,
        input: &Self::Input,
        duration: Duration,
        config: &Self::Config,
    ) -> Self::Local;

    /// The predicted part of an authoritative state.
    fn local(own: &Self::Own) -> Self::Local;
}

/// When an authoritative own state was true, and which of the player's
/// inputs it has applied: what the library reads with the game's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// The server tick the state belongs to.
    pub tick: Tick,
    /// The newest of the player's input ticks the server has applied.
    pub ack: Option<Tick>,
}

/// How large an [`Offset`] is, along the two axes the smoothing rules
/// measure: a distance and a rotation (0 for a game without headings).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Size {
    /// How far, in the game's units.
    pub distance: f32,
    /// How much rotation, in radians.
    pub angle: f32,
}

/// What is drawn of a state: the library interpolates between two of
/// them and shows a correction as an offset on top.
pub trait Visual: Copy + Debug + PartialEq + Send + Sync {
    /// A difference between two visuals.
    type Offset: Offset;

    /// The visual a fraction `t` (0..=1) of the way from `self` to `to`.
    #[must_use]
    fn lerp(&self, to: &Self, t: f32) -> Self;

    /// The offset that takes `self` to `to`.
    fn offset_to(&self, to: &Self) -> Self::Offset;

    /// `self` moved by `offset`.
    #[must_use]
    fn shifted(&self, offset: &Self::Offset) -> Self;

    /// Whether every number in it is finite.
    fn is_finite(&self) -> bool;

    /// Where it is on the plane: what interest measures and what the
    /// stepper watches for snap-backs.
    fn place(&self) -> Vec2;
}

/// A difference between two [`Visual`]s, which the smoothing folds,
/// decays and measures. `Default` is no difference.
pub trait Offset: Copy + Debug + Default + PartialEq + Send + Sync {
    /// Both offsets, one after the other.
    #[must_use]
    fn plus(&self, other: &Self) -> Self;

    /// The offset the other way.
    #[must_use]
    fn negated(&self) -> Self;

    /// The offset scaled by `factor` (the decay).
    #[must_use]
    fn scaled(&self, factor: f32) -> Self;

    /// How large it is.
    fn size(&self) -> Size;

    /// Whether every number in it is finite.
    fn is_finite(&self) -> bool;
}

/// An authoritative state the client keeps per player, as the server
/// replicates it, and the events that change it between states.
pub trait Replicated: Copy + Debug + PartialEq + Send + Sync {
    /// What changes it between two states: sent once, applied once.
    type Event: Applied;

    /// Whether a state from the network can be accepted (every number
    /// finite, every field within its range).
    fn is_valid(&self) -> bool;

    /// Whether the player is alive: a dead own player makes neutral inputs,
    /// and a living state after a dead one places it afresh rather than
    /// correcting it. A game without deaths keeps the default.
    fn alive(&self) -> bool {
        true
    }

    /// Applies `event` (whose target this is).
    fn apply(&mut self, event: &Self::Event);
}

/// An event the server sends reliably, to be applied once to one
/// player's state: two copies with the same key are the same event.
pub trait Applied: Clone + Debug + PartialEq + Send + Sync {
    /// What tells two events apart.
    type Key: Copy + Debug + PartialEq + Send + Sync;

    /// Its identity.
    fn key(&self) -> Self::Key;

    /// The server tick it happened at: a state at or after it includes it.
    fn tick(&self) -> Tick;

    /// Whose state it changes: a player's, a thing's, or the world's.
    fn target(&self) -> Target;
}

/// Whose state an event changes ([`Applied::target`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A player's own state, on every page that sees the player.
    Player(PlayerId),
    /// A thing's state (a ball's, a pickup's), on every page that sees
    /// the thing.
    Thing(ThingId),
    /// The world's (a goal, a round's end): no state changes; it reaches
    /// every page, whatever it sees, and its game hears of it once
    /// ([`crate::ClientGame::event`]).
    World,
}

impl Target {
    /// The id snapshots carry the target by; `None`: the world's.
    pub fn id(self) -> Option<PlayerId> {
        match self {
            Target::Player(id) => Some(id),
            Target::Thing(id) => Some(id.wire()),
            Target::World => None,
        }
    }
}

/// A player's own state as it travels to that player: exactly (it is the
/// baseline the client replays from), after the library's id, tick and
/// acknowledgement.
pub trait OwnState: Replicated + Serialize + DeserializeOwned {
    /// Bytes its binary form takes, about (for buffer sizes and byte
    /// budgets).
    const BYTES: usize;

    /// Whose state it is.
    fn id(&self) -> PlayerId;

    /// The tick it is at and the newest input it includes.
    fn stamp(&self) -> Stamp;

    /// Appends the game's part, exactly (floats bit for bit).
    fn write(&self, w: &mut Writer);

    /// Reads what [`OwnState::write`] wrote, as player `id`'s state at
    /// `stamp`.
    ///
    /// # Errors
    /// Bytes that end early or do not form a state.
    fn read(id: PlayerId, stamp: Stamp, r: &mut Reader<'_>) -> Result<Self, ReadError>;
}

/// How a game travels between the server and its clients, beyond its
/// inputs: what a joiner is told in `welcome`, its own
/// state and its events in JSON (for JSON clients) and in binary (for
/// clients that speak binary all the way), and the other players' states
/// as snapshots carry them (quantised [`Fields`]).
pub trait Networked: Game<Own: OwnState<Event: Serialize + DeserializeOwned + Codec>> {
    /// What `welcome` tells a joiner of the world beyond the library's
    /// fields (player, protocol, tick, tick length, room): at least the
    /// configuration the client must predict with. In JSON its fields sit
    /// beside the library's; in binary it follows them.
    /// It carries the configuration: [`NoSetup`](crate::NoSetup) carries
    /// none (`()`), a game's configuration carries itself.
    type Setup: Clone
        + Debug
        + PartialEq
        + Serialize
        + DeserializeOwned
        + Codec
        + Carries<Self::Config>
        + Send
        + Sync;

    /// An input as it travels: the game's input with its tick and the view
    /// it was made in ([`Wired`]).
    type Wire: Wired<Input = Self::Input> + Serialize + DeserializeOwned;

    /// Another player's state as binary snapshots carry it.
    type Entity: Fields<Config = Self::Config>;

    /// The `type` of the JSON message carrying a tick's events.
    const EVENTS: &'static str = "events";

    /// `own` as binary snapshots carry another player's state.
    fn quantise(own: &Self::Own, config: &Self::Config) -> Self::Entity;

    /// The state `entity` stands for, as player `id`'s at `tick`.
    fn dequantise(
        entity: &Self::Entity,
        id: PlayerId,
        tick: Tick,
        config: &Self::Config,
    ) -> Self::Own;
}

/// A setup ([`Networked::Setup`]) and the configuration it gives the
/// client.
pub trait Carries<C> {
    /// The configuration the client predicts with.
    fn config(&self) -> &C;
}

/// The configuration game `G`'s setup carries.
pub(crate) fn config_of<G: Networked>(setup: &G::Setup) -> &G::Config {
    Carries::<G::Config>::config(setup)
}

/// A configuration sent as the whole setup carries itself.
impl<C> Carries<C> for C {
    fn config(&self) -> &C {
        self
    }
}

/// What changes a player's state of game `G` between snapshots, sent once
/// to every client ([`Replicated::Event`] of its own state).
pub type EventOf<G> = <<G as Game>::Own as Replicated>::Event;
