//! What to draw this frame, assembled from the session's state: the own
//! player where prediction (or the server) puts it, remote players where
//! interpolation samples them, and the shot lines.

use super::{ClientSession, State, Tracer};
use crate::client::interpolation::SampleKind;
use crate::shared::sim::Pose;
use crate::shared::state::{PlayerId, PlayerState};

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

/// Everything to draw this frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// The own player, once playing.
    pub own: Option<OwnView>,
    /// The other players, in id order.
    pub remotes: Vec<RemoteView>,
    /// Recent shots.
    pub tracers: Vec<Tracer>,
}

impl ClientSession {
    /// What to draw now.
    pub fn view(&self) -> View {
        let Some(me) = self.welcome().map(|w| w.id) else {
            return View::default();
        };
        let at = self.remote_time().unwrap_or(0.0);
        let interpolation = self.interpolation();
        let remotes = self
            .authority
            .iter()
            .filter(|s| s.id != me)
            .filter_map(|state| {
                let cadence = self.welcome()?.sim.cadence();
                let buffer = self.remotes.get(state.id)?;
                let (pose, kind) = buffer.drawn(at, cadence, &interpolation)?;
                // Dead as soon as the server says so; alive again only once
                // the time it is drawn at reaches its respawn.
                let alive = state.alive && buffer.alive_at(at).unwrap_or(true);
                Some(RemoteView {
                    id: state.id,
                    pose,
                    kind,
                    hp: state.hp,
                    alive,
                })
            })
            .collect();
        View {
            own: self.own_view(me),
            remotes,
            tracers: self.tracers.at(self.now()),
        }
    }

    fn own_view(&self, me: PlayerId) -> Option<OwnView> {
        let State::Playing(welcome, local) = &self.state else {
            return None;
        };
        let state = self.authority.get(me)?;
        let cadence = welcome.sim.cadence().as_secs_f32().max(1e-6);
        let alpha = self.accumulator.as_secs_f32() / cadence;
        let visible = if self.toggles.prediction {
            local.visible(alpha)
        } else {
            state.pose()
        };
        Some(OwnView {
            id: me,
            visible,
            predicted: local.predicted(),
            authoritative: local.authoritative().map(PlayerState::pose),
            hp: state.hp,
            alive: state.alive,
        })
    }
}
