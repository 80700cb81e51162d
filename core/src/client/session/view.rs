//! What to draw this frame, assembled from the session's state: the own
//! player where prediction (or the server) puts it, remote players where
//! interpolation samples them, and the game's effects.

use super::{ClientSession, State};
use crate::client::game::{ClientGame, EffectsOf, ThingMotion};
use crate::client::interpolation::SampleKind;
use crate::shared::game::{Game, Replicated};
use crate::shared::game::{Offset, Visual};
use crate::shared::state::{PlayerId, ThingId};

/// The own player, ready to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OwnView<G: Game> {
    /// The player's id.
    pub id: PlayerId,
    /// Where to draw it.
    pub visible: G::Local,
    /// The gameplay truth: the newest prediction (a ghost outline).
    pub predicted: G::Local,
    /// The last authoritative state's visual (a ghost outline).
    pub authoritative: Option<G::Local>,
    /// The authoritative state.
    pub state: G::Own,
    /// Authoritative liveness.
    pub alive: bool,
}

/// A remote player, ready to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteView<G: Game> {
    /// The player's id.
    pub id: PlayerId,
    /// Where to draw it.
    pub visual: G::Local,
    /// How the visual was sampled.
    pub kind: SampleKind,
    /// The authoritative state.
    pub state: G::Own,
    /// Whether it is drawn alive: dead as soon as the server says so,
    /// alive again only once the time it is drawn at reaches its new life.
    pub alive: bool,
}

/// A thing of the world (a pellet, a ball: not a player), ready to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThingView<G: Game> {
    /// Its id.
    pub id: ThingId,
    /// Where to draw it, as its game's [`ClientGame::thing_motion`] says:
    /// its newest state's, placed (a still thing keeps no samples; one
    /// that jumps is drawn where it landed, never slid), interpolated like
    /// a player's, or carried by its velocity to the own player's
    /// predicted tick.
    pub visual: G::Local,
    /// The authoritative state.
    pub state: G::Own,
}

/// Everything to draw this frame.
#[derive(Clone, Debug, PartialEq)]
pub struct View<G: ClientGame> {
    /// The own player, once playing.
    pub own: Option<OwnView<G>>,
    /// The other players, in id order.
    pub remotes: Vec<RemoteView<G>>,
    /// The world's things in view, in id order.
    pub things: Vec<ThingView<G>>,
    /// What the game draws besides the players.
    pub effects: EffectsOf<G>,
}

impl<G: ClientGame> Default for View<G> {
    fn default() -> Self {
        View {
            own: None,
            remotes: Vec::new(),
            things: Vec::new(),
            effects: EffectsOf::<G>::default(),
        }
    }
}

impl<G: ClientGame> ClientSession<G> {
    /// Where a thing that keeps no samples is drawn: as its newest state's
    /// sample, held, or carried by its velocity to the own player's
    /// predicted tick (in protocol 1, to the server's time now).
    fn thing_drawn(&self, state: &G::Own, cadence: std::time::Duration) -> G::Local {
        let sample = G::sample(state);
        if G::thing_motion(state) != ThingMotion::Predicted {
            return sample.visual;
        }
        // The own player's predicted tick names a server tick in protocol
        // 2; in protocol 1 its ticks are its own, and the server's time
        // now stands in.
        let present = if self.scheduled() {
            Some(f64::from(self.next_tick.0.saturating_sub(1)))
        } else {
            self.clock.server_ticks(self.now())
        };
        let Some(present) = present else {
            return sample.visual;
        };
        let ticks = present - f64::from(sample.tick.0);
        let ahead = (ticks.max(0.0) * cadence.as_secs_f64()) as f32;
        sample.visual.shifted(&sample.velocity.scaled(ahead))
    }

    /// What to draw now.
    pub fn view(&self) -> View<G> {
        let Some(welcome) = self.welcome() else {
            return View::default();
        };
        let (me, cadence) = (welcome.id, welcome.cadence);
        let at = self.remote_time().unwrap_or(0.0);
        let interpolation = self.interpolation();
        // Both in id order: walked side by side, not searched.
        let mut buffers = self.remotes.iter().peekable();
        let (mut remotes, mut things) = (Vec::new(), Vec::new());
        for (id, state) in self.authority.iter_ids().filter(|(id, _)| *id != me) {
            while buffers.next_if(|(b, _)| *b < id).is_some() {}
            let buffer = buffers.next_if(|(b, _)| *b == id).map(|(_, b)| b);
            if let Some(thing) = id.thing() {
                // Things follow players in id order.
                let visual = match buffer {
                    Some(buffer) => buffer.drawn(at, cadence, &interpolation).map(|(v, _)| v),
                    None => Some(self.thing_drawn(state, cadence)),
                };
                if let Some(visual) = visual {
                    things.push(ThingView {
                        id: thing,
                        visual,
                        state: *state,
                    });
                }
                continue;
            }
            let Some((visual, kind)) = buffer.and_then(|b| b.drawn(at, cadence, &interpolation))
            else {
                continue;
            };
            let alive = state.alive() && buffer.and_then(|b| b.alive_at(at)).unwrap_or(true);
            remotes.push(RemoteView {
                id,
                visual,
                kind,
                state: *state,
                alive,
            });
        }
        View {
            own: self.own_view(me),
            remotes,
            things,
            effects: G::effects(&self.game, self.now()),
        }
    }

    fn own_view(&self, me: PlayerId) -> Option<OwnView<G>> {
        let State::Playing(welcome, local) = &self.state else {
            return None;
        };
        let state = self.authority.get(me)?;
        let cadence = welcome.cadence.as_secs_f32().max(1e-6);
        let alpha = self.accumulator.as_secs_f32() / cadence;
        let visible = if self.toggles.prediction {
            local.visible(alpha)
        } else {
            G::local(state)
        };
        Some(OwnView {
            id: me,
            visible,
            predicted: local.predicted(),
            authoritative: local.authoritative().map(G::local),
            state: *state,
            alive: state.alive(),
        })
    }
}
