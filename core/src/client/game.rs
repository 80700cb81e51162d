//! What a game adds on its client: the controls its shell sets, the input
//! a fixed step makes of them, what it keeps beside the library's state
//! (cooldowns, effects, its own counters), what its events mean to the
//! player, and what the flight recorder hashes of what it draws.
//!
//! The session ([`ClientSession`](crate::ClientSession)) owns
//! everything else: the phases, the clock and pacing, prediction and
//! reconciliation, interpolation of the others, deltas and baselines, the
//! conditioner, the HUD's numbers and the recorder.

use std::fmt::Debug;
use std::time::Duration;

use crate::client::authority::Authority;
use crate::client::idmap::IdMap;
use crate::client::interpolation::{InterpolationConfig, RemoteBuffer, RemoteSample};
use crate::shared::bytes::{Codec, Writer};
use crate::shared::game::{config_of, EventOf, Game, Networked, OwnState, Replicated};
use crate::shared::record::StateHash;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// What a game keeps on its page beside the library's state (cooldowns,
/// effects, its own counters), with what it tells its shell happened and
/// what it draws besides the players. `()` keeps, tells and draws nothing.
pub trait ClientState: Clone + Debug + Default {
    /// What the game tells its shell happened (drained with the session's
    /// events).
    type Note: Clone + Debug + PartialEq;
    /// What the game draws this frame besides the players.
    type Effects: Clone + Debug + Default + PartialEq;
}

/// A game that keeps nothing on its page.
impl ClientState for () {
    type Note = ();
    type Effects = ();
}

/// What game `G` tells its shell happened ([`ClientState::Note`]).
pub type NoteOf<G> = <<G as ClientGame>::Client as ClientState>::Note;

/// What game `G` draws besides the players ([`ClientState::Effects`]).
pub type EffectsOf<G> = <<G as ClientGame>::Client as ClientState>::Effects;

/// How the page draws a thing ([`ClientGame::thing_motion`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThingMotion {
    /// Where its newest state says, no samples kept: a pellet.
    Still,
    /// Between its states, behind the interpolation delay, as another
    /// player is: a thing whose motion the page cannot foresee.
    Interpolated,
    /// Where its newest state's motion ([`ClientGame::sample`]'s velocity)
    /// takes it by the own player's predicted tick, no samples kept: a
    /// ball on its course, drawn in the present the own player acts in,
    /// and placed anew when a state says otherwise.
    Predicted,
}

/// A game a [`ClientSession`](crate::ClientSession) plays. What
/// it draws ([`Game::Local`]) has a binary form: the flight recorder keeps
/// the own predicted one of every frame. Like every game's marker type it
/// derives `Clone`, `Copy`, `Debug` and `PartialEq`.
pub trait ClientGame:
    Networked + Game<Local: Codec> + Sized + Clone + Copy + Debug + PartialEq
{
    /// What the player holds right now, as the shell sets it. Its binary
    /// form is what the flight recorder keeps of each change.
    type Controls: Copy + Debug + Default + PartialEq + Codec;
    /// What the game keeps on the client beside the library's state, and
    /// what it tells and draws of it ([`ClientState`]); `()`: nothing.
    type Client: ClientState;

    /// How the page draws thing `state` (a pellet, a ball): by default it
    /// stands still ([`ThingMotion::Still`]): it keeps no samples and is
    /// drawn as its newest state says, so one that jumps (a ball served
    /// again, a pellet respawned) is placed where it landed, never slid
    /// there.
    fn thing_motion(state: &Self::Own) -> ThingMotion {
        let _ = state;
        ThingMotion::Still
    }

    /// Whether a `welcome`'s setup can be played; the reason if not. By
    /// default every setup is.
    ///
    /// # Errors
    /// A setup the client must not predict with.
    fn check_setup(setup: &Self::Setup) -> Result<(), String> {
        let _ = setup;
        Ok(())
    }

    /// The shell set `controls`; a momentary press in them is kept for the
    /// next fixed step. `true` if the call matters even when the controls
    /// did not change (it pressed again): the recorder keeps it. By
    /// default nothing is momentary.
    fn latch(client: &mut Self::Client, controls: &Self::Controls) -> bool {
        let _ = (client, controls);
        false
    }

    /// The input of the fixed step at `tick`, from the controls held and
    /// what was latched (which it clears); `alive`: whether the own player
    /// is.
    fn input(
        client: &mut Self::Client,
        controls: &Self::Controls,
        alive: bool,
        tick: Tick,
    ) -> Self::Input;

    /// A fixed step predicted `step.input`: what the game shows at once of
    /// it. `true` if it did an action the server judges at the view it was
    /// made in (aimed at what its player saw): the HUD shows how far back
    /// that view was. By default nothing shows beyond the prediction.
    fn stepped(client: &mut Self::Client, step: &Stepped<'_, Self>) -> bool {
        let _ = (client, step);
        false
    }

    /// An authoritative event arrived at `at`, after the library applied
    /// it; what it means to the own player `me`, if anything (by default
    /// nothing).
    fn event(
        client: &mut Self::Client,
        event: &EventOf<Self>,
        me: PlayerId,
        at: Duration,
    ) -> Option<NoteOf<Self>> {
        let _ = (client, event, me, at);
        None
    }

    /// What `own` is as a remote's sample: where it is drawn, its motion
    /// per second, whether it is alive. By default its visual, no motion
    /// (held past the newest sample, never extrapolated) and its liveness.
    fn sample(own: &Self::Own) -> RemoteSample<Self::Local> {
        RemoteSample {
            tick: own.stamp().tick,
            visual: Self::local(own),
            velocity: Default::default(),
            alive: own.alive(),
        }
    }

    /// Forgets the effects gone by `now` (once per frame; by default
    /// nothing).
    fn prune(client: &mut Self::Client, now: Duration) {
        let _ = (client, now);
    }

    /// The effects drawn at `now` (by default none).
    fn effects(client: &Self::Client, now: Duration) -> EffectsOf<Self> {
        let _ = (client, now);
        EffectsOf::<Self>::default()
    }

    /// Forgets the world: a new welcome (`connection_lost` false) or a lost
    /// connection (true). By default nothing is kept to forget.
    fn forget(client: &mut Self::Client, connection_lost: bool) {
        let _ = (client, connection_lost);
    }

    /// Folds every bit of `visual` that is drawn into the recorder's hash;
    /// by default its binary form.
    fn hash_visual(visual: &Self::Local, hash: &mut StateHash) {
        let mut w = Writer::default();
        visual.write(&mut w);
        hash.bytes(&w.bytes);
    }

    /// What is drawn of a player's state besides its visual, as a word of
    /// the recorder's hash; `alive`: whether it is drawn alive. By default
    /// the hash of its exact binary form, with `alive` folded in.
    fn hash_state(own: &Self::Own, alive: bool) -> u64 {
        let mut w = Writer::default();
        own.write(&mut w);
        let mut h = StateHash::default();
        h.bytes(&w.bytes);
        h.word(u64::from(alive));
        h.0
    }

    /// Folds a note into the recorder's hash. By default that a note was
    /// told, not what it said: a game whose notes carry what a replay must
    /// check folds their fields in.
    fn hash_note(note: &NoteOf<Self>, hash: &mut StateHash) {
        let _ = note;
        hash.word(u64::from_le_bytes(*b"note\0\0\0\0"));
    }

    /// Folds the effects into the recorder's hash (by default nothing).
    fn hash_effects(effects: &EffectsOf<Self>, hash: &mut StateHash) {
        let _ = (effects, hash);
    }
}

/// A fixed step the session just predicted, for [`ClientGame::stepped`].
pub struct Stepped<'a, G: ClientGame> {
    /// Its tick.
    pub tick: Tick,
    /// The input it predicted.
    pub input: &'a G::Input,
    /// The own player's predicted state after it.
    pub predicted: &'a G::Local,
    /// What `welcome` said.
    pub setup: &'a G::Setup,
    /// The shell's time.
    pub now: Duration,
    /// The server time, in ticks with fraction, the others are drawn at.
    pub view_tick: Option<f64>,
    pub(crate) me: PlayerId,
    pub(crate) authority: &'a Authority<G::Own>,
    pub(crate) remotes: &'a IdMap<RemoteBuffer<G::Local>>,
    pub(crate) interpolation: InterpolationConfig,
}

impl<G: ClientGame> Stepped<'_, G> {
    /// The living others where this frame draws them (at
    /// [`Stepped::view_tick`]): what the player aimed at.
    pub fn drawn(&self) -> Vec<(PlayerId, G::Local)> {
        let Some(at) = self.view_tick else {
            return Vec::new();
        };
        let cadence = G::cadence(config_of::<G>(self.setup));
        self.remotes
            .iter()
            .filter(|(id, _)| *id != self.me)
            .filter(|(id, _)| self.authority.get(*id).is_some_and(Replicated::alive))
            .filter(|(_, buffer)| buffer.alive_at(at) == Some(true))
            .filter_map(|(id, buffer)| {
                buffer
                    .drawn(at, cadence, &self.interpolation)
                    .map(|(visual, _)| (id, visual))
            })
            .collect()
    }
}

/// The length of a step of `G` by a setup.
pub(crate) fn cadence_of<G: ClientGame>(setup: &G::Setup) -> Duration {
    G::cadence(config_of::<G>(setup))
}
