//! The tank game on the page: WASD or the arrows and Space
//! ([`crate::input`]), the arena drawn by [`crate::render`], its hit points
//! at the top of the HUD, and its shots and hit points in the debug state.

use skirmish_tanks::prelude::*;
use skirmish_tanks::{ClientSession, Controls, PlayerId, Pose, RemoteView, Tanks};
use web_sys::CanvasRenderingContext2d;

use crate::fields::Fields;
use crate::game::Overlays;
use crate::game::{shown_name, PageGame};
use crate::input::Keys;
use crate::render;

impl PageGame for Tanks {
    const TITLE: &'static str = "Skirmish";
    const KEYS: &'static str = "W/S or ↑/↓ drive · A/D or ←/→ turn · Space fires";
    type Keys = Keys;

    fn key(keys: &mut Keys, code: &str, down: bool) -> bool {
        keys.set(code, down)
    }

    fn scripted(turn: f32, throttle: f32, fire: bool) -> Controls {
        Controls {
            turn,
            throttle,
            fire,
        }
    }

    fn release(keys: &mut Keys) {
        keys.clear();
    }

    /// A script's turn and throttle win; fire is held if either holds it.
    fn controls(keys: &mut Keys, scripted: Option<Controls>) -> Controls {
        let held = keys.take_controls();
        scripted.map_or(held, |c| Controls {
            fire: c.fire || held.fire,
            ..c
        })
    }

    fn draw(
        ctx: &CanvasRenderingContext2d,
        width: f64,
        height: f64,
        session: &ClientSession,
        overlays: Overlays,
    ) {
        let sim = session.sim_config().cloned().unwrap_or_default();
        let name_of = |id: PlayerId| shown_name(session, id);
        render::draw(
            ctx,
            width,
            height,
            &sim,
            &session.view(),
            &name_of,
            overlays,
        );
    }

    fn hud_line(session: &ClientSession) -> String {
        hp_line(hp(session), session.hud().alive)
    }

    fn numbers(pose: &Pose) -> Vec<f32> {
        vec![pose.position.x, pose.position.y, pose.rotation]
    }

    fn debug(session: &ClientSession, fields: Fields) -> Fields {
        let shots = session.shots();
        fields
            .with("hp", hp(session))
            .with("shots", shots.shots)
            .with("shots_on_target", shots.shots_on_target)
            .with("hits", shots.hits)
    }

    fn debug_remote(remote: &RemoteView, fields: Fields) -> Fields {
        fields.with("hp", remote.state.hp)
    }
}

/// The own tank's authoritative hit points, once known.
fn hp(session: &ClientSession) -> Option<u16> {
    let (me, _) = session.hud().joined?;
    session.authority().get(me).map(|s| s.hp)
}

/// `HP n`, `HP n (dead)`, or `HP -` before the first state.
pub fn hp_line(hp: Option<u16>, alive: bool) -> String {
    match hp {
        Some(hp) if !alive => format!("HP {hp} (dead)"),
        Some(hp) => format!("HP {hp}"),
        None => "HP -".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hud_line_shows_authoritative_hp_and_death() {
        assert_eq!(hp_line(Some(80), true), "HP 80");
        assert_eq!(hp_line(Some(0), false), "HP 0 (dead)");
        assert_eq!(hp_line(None, false), "HP -");
    }

    #[test]
    fn a_script_steers_and_a_held_key_still_fires() {
        let mut keys = Keys::default();
        keys.set("Space", true);
        let scripted = Controls {
            turn: 0.5,
            throttle: -1.0,
            fire: false,
        };
        let c = Tanks::controls(&mut keys, Some(scripted));
        assert_eq!((c.turn, c.throttle, c.fire), (0.5, -1.0, true));
    }
}
