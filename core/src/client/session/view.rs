//! What to draw this frame, assembled from the session's state: the own
//! player where prediction (or the server) puts it, remote players where
//! interpolation samples them, and the game's effects.

use super::{ClientSession, State};
use crate::client::game::{ClientGame, EffectsOf};
use crate::client::interpolation::SampleKind;
use crate::shared::game::{Game, Replicated};
use crate::shared::state::PlayerId;

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

/// Everything to draw this frame.
#[derive(Clone, Debug, PartialEq)]
pub struct View<G: ClientGame> {
    /// The own player, once playing.
    pub own: Option<OwnView<G>>,
    /// The other players, in id order.
    pub remotes: Vec<RemoteView<G>>,
    /// What the game draws besides the players.
    pub effects: EffectsOf<G>,
}

impl<G: ClientGame> Default for View<G> {
    fn default() -> Self {
        View {
            own: None,
            remotes: Vec::new(),
            effects: EffectsOf::<G>::default(),
        }
    }
}

impl<G: ClientGame> ClientSession<G> {
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
        let remotes = self
            .authority
            .iter_ids()
            .filter(|(id, _)| *id != me)
            .filter_map(|(id, state)| {
                while buffers.next_if(|(b, _)| *b < id).is_some() {}
                let (_, buffer) = buffers.next_if(|(b, _)| *b == id)?;
                let (visual, kind) = buffer.drawn(at, cadence, &interpolation)?;
                let alive = state.alive() && buffer.alive_at(at).unwrap_or(true);
                Some(RemoteView {
                    id,
                    visual,
                    kind,
                    state: *state,
                    alive,
                })
            })
            .collect();
        View {
            own: self.own_view(me),
            remotes,
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
