//! Drift's page: WASD or the arrows steer, the field is drawn as a
//! square with a point for each player and its name. Its own bundle
//! (`web/drift/pkg`, served at `/drift/`); the page shell,
//! `skirmish-client`, does the rest.

use skirmish_client::fields::Fields;
use skirmish_client::num::fixed;
use skirmish_client::{shown_name, Fit, Overlays, PageGame, Script};
use skirmish_core::{ClientSession, PlayerId, RemoteView, ServerGame, Vec2};
use web_sys::CanvasRenderingContext2d;

use skirmish_drift as game;

skirmish_client::page!(DriftPage);

/// Drift's page.
#[derive(Clone, Copy, Debug)]
pub struct DriftPage;

/// The arrow keys or WASD held: up, down, left, right.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held([bool; 4]);

impl Held {
    /// Which of the four a key is, by `KeyboardEvent.code`.
    fn index(code: &str) -> Option<usize> {
        match code {
            "KeyW" | "ArrowUp" => Some(0),
            "KeyS" | "ArrowDown" => Some(1),
            "KeyA" | "ArrowLeft" => Some(2),
            "KeyD" | "ArrowRight" => Some(3),
            _ => None,
        }
    }

    /// The steer the held keys make: opposite keys cancel.
    fn steer(self) -> game::Steer {
        let [up, down, left, right] = self.0.map(i8::from);
        (right - left, down - up)
    }
}

/// The sign of a script's number.
fn sign(value: f64) -> i8 {
    if value > 0.0 {
        1
    } else if value < 0.0 {
        -1
    } else {
        0
    }
}

impl PageGame for DriftPage {
    type Game = game::Drift;
    const TITLE: &'static str = "Skirmish: drift";
    const KEYS: &'static str = "WASD or the arrows steer";
    type Keys = Held;

    fn key(keys: &mut Held, code: &str, down: bool) -> bool {
        let Some(i) = Held::index(code) else {
            return false;
        };
        keys.0[i] = down;
        true
    }

    /// `{x, y}` by their signs; without them `turn` and `throttle`.
    fn scripted(script: &dyn Script) -> game::Steer {
        let axis = |name, or| sign(script.number(name).or(script.number(or)).unwrap_or(0.0));
        (axis("x", "turn"), axis("y", "throttle"))
    }

    fn release(keys: &mut Held) {
        *keys = Held::default();
    }

    fn controls(keys: &mut Held, scripted: Option<game::Steer>) -> game::Steer {
        scripted.unwrap_or_else(|| keys.steer())
    }

    fn draw(
        ctx: &CanvasRenderingContext2d,
        width: f64,
        height: f64,
        session: &ClientSession<game::Drift>,
        overlays: Overlays,
    ) {
        let field = game::Drift::extent(&());
        let fit = Fit::new(field, width, height);
        ctx.set_fill_style_str("#101418");
        ctx.fill_rect(0.0, 0.0, width, height);
        let (x0, y0) = fit.point(Vec2::ZERO);
        let (x1, y1) = fit.point(field);
        ctx.set_fill_style_str("#1b2128");
        ctx.fill_rect(x0, y0, x1 - x0, y1 - y0);
        let name_of = |id: PlayerId| shown_name(session, id);
        let view = session.view();
        for remote in &view.remotes {
            fit.dot(ctx, remote.visual, "#ffb74d", &name_of(remote.id));
        }
        if let Some(own) = &view.own {
            if overlays.ghosts {
                if let Some(authoritative) = own.authoritative {
                    fit.ring(ctx, authoritative, "rgba(239, 83, 80, 0.9)");
                }
                fit.ring(ctx, own.predicted, "rgba(129, 199, 132, 0.9)");
            }
            fit.dot(ctx, own.visible, "#4fc3f7", &name_of(own.id));
        }
    }

    fn hud_line(session: &ClientSession<game::Drift>) -> String {
        match session.view().own {
            // The shell's `fixed`, not `{:.0}`: no float formatting in the bundle.
            Some(own) => {
                let (x, y) = (own.visible.x, own.visible.y);
                format!("at {}, {}", fixed(x.into(), 0), fixed(y.into(), 0))
            }
            None => "at -".to_string(),
        }
    }

    fn numbers(at: &Vec2) -> Vec<f32> {
        vec![at.x, at.y]
    }

    fn debug(_session: &ClientSession<game::Drift>, fields: Fields) -> Fields {
        fields
    }

    fn debug_remote(_remote: &RemoteView<game::Drift>, fields: Fields) -> Fields {
        fields
    }
}
