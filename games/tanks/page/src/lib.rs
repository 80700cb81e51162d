//! The tank game's page (`web/pkg`, served at `/`): WASD or the arrows and
//! Space ([`input`]), the arena drawn by [`render`], its hit points at the
//! top of the HUD, and its shots and hit points in the debug state. The
//! page shell, `skirmish-client`, does the rest: [`skirmish_client::page!`]
//! exports its entry points for [`TanksPage`]. This bundle also exports
//! [`golden_trajectory_hash`].

pub mod input;
pub mod render;

use skirmish_client::fields::Fields;
use skirmish_client::{shown_name, Overlays, PageGame, Script};
use skirmish_core::{ClientSession, PlayerId, RemoteView};
use skirmish_tanks::{Controls, Pose, Tanks};
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::CanvasRenderingContext2d;

use crate::input::Keys;

skirmish_client::page!(TanksPage);

/// The golden trajectory hash of the tank game as computed in this build,
/// as a hex string (JavaScript numbers cannot hold 64 bits).
#[wasm_bindgen(js_name = goldenTrajectoryHash)]
pub fn golden_trajectory_hash() -> String {
    format!(
        "{:#018x}",
        skirmish_tanks::determinism::golden_trajectory_hash()
    )
}

/// The tank game's page.
#[derive(Clone, Copy, Debug)]
pub struct TanksPage;

impl PageGame for TanksPage {
    type Game = Tanks;
    const TITLE: &'static str = "Skirmish";
    const KEYS: &'static str = "W/S or ↑/↓ drive · A/D or ←/→ turn · Space fires";
    type Keys = Keys;

    fn key(keys: &mut Keys, code: &str, down: bool) -> bool {
        keys.set(code, down)
    }

    /// `{turn, throttle, fire}`: the turn and throttle (-1 to 1), and
    /// whether to fire.
    fn scripted(script: &dyn Script) -> Controls {
        let number = |name| script.number(name).unwrap_or(0.0) as f32;
        Controls {
            turn: number("turn"),
            throttle: number("throttle"),
            fire: script.flag("fire"),
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
        session: &ClientSession<Tanks>,
        overlays: Overlays,
    ) {
        let sim = session.game_config().cloned().unwrap_or_default();
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

    fn hud_line(session: &ClientSession<Tanks>) -> String {
        hp_line(hp(session), session.hud().alive)
    }

    fn numbers(pose: &Pose) -> Vec<f32> {
        vec![pose.position.x, pose.position.y, pose.rotation]
    }

    fn debug(session: &ClientSession<Tanks>, fields: Fields) -> Fields {
        let shots = session.game().stats();
        fields
            .with("hp", hp(session))
            .with("shots", shots.shots)
            .with("shots_on_target", shots.shots_on_target)
            .with("hits", shots.hits)
    }

    fn debug_remote(remote: &RemoteView<Tanks>, fields: Fields) -> Fields {
        fields.with("hp", remote.state.hp)
    }
}

/// The own tank's authoritative hit points, once known.
fn hp(session: &ClientSession<Tanks>) -> Option<u16> {
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
    use skirmish_client::net::{outgoing, Payload, Reliability};
    use skirmish_client::Named;
    use skirmish_core::{ClientMessage, Encoding, SessionConfig, Tick};
    use skirmish_tanks::WireInput;

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
        let c = TanksPage::controls(&mut keys, Some(scripted));
        assert_eq!((c.turn, c.throttle, c.fire), (0.5, -1.0, true));
    }

    #[test]
    fn a_script_names_the_turn_the_throttle_and_fire() {
        let named = Named(&[("turn", -1.0), ("throttle", 0.5), ("fire", 1.0)]);
        let c = TanksPage::scripted(&named);
        assert_eq!((c.turn, c.throttle, c.fire), (-1.0, 0.5, true));
        let c = TanksPage::scripted(&Named(&[("throttle", 1.0)]));
        assert_eq!(
            (c.turn, c.throttle, c.fire),
            (0.0, 1.0, false),
            "what is not named is not held"
        );
    }

    #[test]
    fn hello_goes_reliably_and_inputs_and_pings_may_be_dropped() {
        let session: ClientSession<Tanks> = ClientSession::new(SessionConfig {
            encoding: Encoding::Compact,
            ..SessionConfig::default()
        });
        let hello = session.hello();
        let (payload, reliability) = outgoing(&hello, session.encode(&hello));
        assert_eq!(reliability, Reliability::Reliable);
        let binary = skirmish_core::control::encode_client(&hello).expect("a binary hello");
        assert_eq!(payload, Payload::Binary(binary), "binary all the way");
        let ping = ClientMessage::Ping { id: 7 };
        assert_eq!(
            outgoing(&ping, session.encode(&ping)).1,
            Reliability::Droppable
        );
        let input = ClientMessage::Input {
            inputs: vec![WireInput::default()],
            snapshot_ack: Some(Tick(3)),
            seq: Some(1),
        };
        let (payload, reliability) = outgoing(&input, session.encode(&input));
        assert_eq!(reliability, Reliability::Droppable);
        assert!(
            matches!(payload, Payload::Binary(bytes) if bytes.len() < 16),
            "a compact session sends its inputs as a few binary bytes"
        );
    }
}
