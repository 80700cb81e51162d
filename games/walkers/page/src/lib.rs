//! Walkers' page (the guide's game, `docs/GUIDE.md`): WASD or the arrows
//! walk, the field is drawn as a square with a point for each walker and
//! its name, the HUD's first line says where the own walker is. Its own
//! bundle (`web/walkers/pkg`, loaded by the one page, `web/index.html`,
//! served at `/walkers/`); the page shell, `skirmish-client`, does the
//! rest.

use skirmish_client::fields::Fields;
use skirmish_client::num::fixed;
use skirmish_client::{shown_name, Fit, Overlays, PageGame, Script};
use skirmish_core::{ClientSession, PlayerId, RemoteView, ServerGame, Vec2};
use skirmish_walkers::Walkers;
use web_sys::CanvasRenderingContext2d;

skirmish_client::page!(WalkersPage);

/// Walkers' page.
#[derive(Clone, Copy, Debug)]
pub struct WalkersPage;

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

    /// The walk the held keys make: opposite keys cancel.
    fn walk(self) -> (i8, i8) {
        let [up, down, left, right] = self.0.map(i8::from);
        (right - left, down - up)
    }
}

/// `v` rounded to a whole number, as the HUD shows it: the shell's `fixed`,
/// not `{:.0}`, so that no float formatting is in the bundle.
fn whole(v: f32) -> String {
    fixed(f64::from(v), 0)
}

/// The sign of a script's number, as a step.
fn step(value: f64) -> i8 {
    if value > 0.0 {
        1
    } else if value < 0.0 {
        -1
    } else {
        0
    }
}

const OWN: &str = "#4fc3f7";
const REMOTE: &str = "#ffb74d";

impl PageGame for WalkersPage {
    type Game = Walkers;
    const TITLE: &'static str = "Skirmish: walkers";
    const KEYS: &'static str = "WASD or the arrows walk";
    type Keys = Held;

    fn key(keys: &mut Held, code: &str, down: bool) -> bool {
        let Some(i) = Held::index(code) else {
            return false;
        };
        keys.0[i] = down;
        true
    }

    /// `{x, y}`: the walk along x and y, by their signs; without them,
    /// `turn` walks along x and `throttle` along y (the positional form).
    fn scripted(script: &dyn Script) -> (i8, i8) {
        let axis = |name, or| step(script.number(name).or(script.number(or)).unwrap_or(0.0));
        (axis("x", "turn"), axis("y", "throttle"))
    }

    fn release(keys: &mut Held) {
        *keys = Held::default();
    }

    fn controls(keys: &mut Held, scripted: Option<(i8, i8)>) -> (i8, i8) {
        scripted.unwrap_or_else(|| keys.walk())
    }

    fn draw(
        ctx: &CanvasRenderingContext2d,
        width: f64,
        height: f64,
        session: &ClientSession<Walkers>,
        overlays: Overlays,
    ) {
        let field = Walkers::extent(&());
        let fit = Fit::new(field, width, height);
        ctx.set_fill_style_str("#101418");
        ctx.fill_rect(0.0, 0.0, width, height);
        let (x0, y0) = fit.point(Vec2::ZERO);
        let (x1, y1) = fit.point(field);
        ctx.set_fill_style_str("#1b2128");
        ctx.fill_rect(x0, y0, x1 - x0, y1 - y0);
        ctx.set_stroke_style_str("#3a4450");
        ctx.set_line_width(2.0);
        ctx.stroke_rect(x0, y0, x1 - x0, y1 - y0);
        let name_of = |id: PlayerId| shown_name(session, id);
        let view = session.view();
        for remote in &view.remotes {
            fit.dot(ctx, remote.visual, REMOTE, &name_of(remote.id));
        }
        if let Some(own) = &view.own {
            if overlays.ghosts {
                if let Some(authoritative) = own.authoritative {
                    fit.ring(ctx, authoritative, "rgba(239, 83, 80, 0.9)");
                }
                fit.ring(ctx, own.predicted, "rgba(129, 199, 132, 0.9)");
            }
            fit.dot(ctx, own.visible, OWN, &name_of(own.id));
        }
    }

    fn hud_line(session: &ClientSession<Walkers>) -> String {
        match session.view().own {
            Some(own) => format!("at {}, {}", whole(own.visible.x), whole(own.visible.y)),
            None => "at -".to_string(),
        }
    }

    fn numbers(at: &Vec2) -> Vec<f32> {
        vec![at.x, at.y]
    }

    fn debug(_session: &ClientSession<Walkers>, fields: Fields) -> Fields {
        fields
    }

    fn debug_remote(_remote: &RemoteView<Walkers>, fields: Fields) -> Fields {
        fields
    }
}

#[cfg(test)]
mod tests {
    use skirmish_client::Named;

    use super::*;

    #[test]
    fn keys_walk_and_opposite_keys_cancel() {
        let mut held = Held::default();
        assert!(WalkersPage::key(&mut held, "KeyD", true));
        assert!(WalkersPage::key(&mut held, "ArrowUp", true));
        assert_eq!(WalkersPage::controls(&mut held, None), (1, -1));
        assert!(WalkersPage::key(&mut held, "KeyA", true));
        assert_eq!(WalkersPage::controls(&mut held, None), (0, -1));
        assert!(
            !WalkersPage::key(&mut held, "Space", true),
            "not a walker's key"
        );
        WalkersPage::release(&mut held);
        assert_eq!(WalkersPage::controls(&mut held, None), (0, 0));
        let positional = Named(&[("turn", -0.5), ("throttle", 1.0), ("fire", 1.0)]);
        assert_eq!(WalkersPage::scripted(&positional), (-1, 1));
        assert_eq!(
            WalkersPage::scripted(&Named(&[("x", 2.0), ("y", -1.0)])),
            (1, -1)
        );
        assert_eq!(WalkersPage::scripted(&Named(&[("y", 1.0)])), (0, 1));
    }
}
