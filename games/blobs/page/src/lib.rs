//! Blobs' page (the .io arena): the pointer steers (the own blob is
//! drawn at the middle of the canvas, so the pointer's direction from the
//! middle is where it goes), Space boosts; the camera follows the own blob
//! and zooms out as it grows; pellets, blobs and their names are drawn;
//! the HUD's first line is the own mass and what just happened to it
//! (ate, eaten by, back). Its own bundle (`web/blobs/pkg`, loaded by the
//! one page at `/blobs/`); the page shell, `skirmish-client`, does the
//! rest.

use skirmish_blobs::{radius, Blobs, Body, Note, Steer, BLOB, BOOST, DEAD, MOVE};
use skirmish_client::fields::Fields;
use skirmish_client::num::fixed;
use skirmish_client::{shown_name, Overlays, PageGame, Script};
use skirmish_core::{ClientSession, PlayerId, RemoteView, ServerGame, Vec2};
use web_sys::CanvasRenderingContext2d;

skirmish_client::page!(BlobsPage);

/// Blobs' page.
#[derive(Clone, Copy, Debug)]
pub struct BlobsPage;

/// Where the pointer says to go, and whether Space boosts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aim {
    /// The direction, 65,536 to a turn.
    angle: u16,
    /// Whether the pointer is away from the blob (it goes).
    moving: bool,
    /// Space is held.
    boost: bool,
}

/// The angle (65,536 to a turn) of the direction `x`, `y`.
fn angle_of(x: f64, y: f64) -> u16 {
    let turn = libm::atan2(y, x).rem_euclid(std::f64::consts::TAU);
    (turn / std::f64::consts::TAU * 65_536.0) as u32 as u16
}

/// Units across half of the canvas's shorter side for a blob of `mass`:
/// the camera zooms out as it grows.
fn half_view(mass: f32) -> f64 {
    f64::from(600.0 + 10.0 * radius(mass))
}

impl PageGame for BlobsPage {
    type Game = Blobs;
    const TITLE: &'static str = "Skirmish: blobs";
    const KEYS: &'static str = "the pointer steers · Space boosts";
    type Keys = Aim;

    fn key(keys: &mut Aim, code: &str, down: bool) -> bool {
        if code != "Space" {
            return false;
        }
        keys.boost = down;
        true
    }

    fn pointer(keys: &mut Aim, x: f64, y: f64, width: f64, height: f64) {
        let (dx, dy) = (x - width / 2.0, y - height / 2.0);
        keys.moving = dx * dx + dy * dy > 100.0;
        keys.angle = angle_of(dx, dy);
    }

    /// `{angle, move, boost}`: the direction in radians, whether to go
    /// and whether to boost. Without them (the positional form), `turn` is
    /// the direction, `throttle` above 0 goes and `fire` boosts.
    fn scripted(script: &dyn Script) -> Steer {
        let angle = script.number("angle").or(script.number("turn"));
        let angle = angle.unwrap_or(0.0);
        let go = script.flag("move") || script.number("throttle").is_some_and(|t| t > 0.0);
        let boost = script.flag("boost") || script.flag("fire");
        let flags = if go { MOVE } else { 0 } | if boost { BOOST } else { 0 };
        (angle_of(libm::cos(angle), libm::sin(angle)), flags)
    }

    fn release(keys: &mut Aim) {
        keys.boost = false;
    }

    fn controls(keys: &mut Aim, scripted: Option<Steer>) -> Steer {
        scripted.unwrap_or_else(|| {
            let flags = if keys.moving { MOVE } else { 0 } | if keys.boost { BOOST } else { 0 };
            (keys.angle, flags)
        })
    }

    fn draw(
        ctx: &CanvasRenderingContext2d,
        width: f64,
        height: f64,
        session: &ClientSession<Blobs>,
        overlays: Overlays,
    ) {
        ctx.set_fill_style_str("#101418");
        ctx.fill_rect(0.0, 0.0, width, height);
        let view = session.view();
        let Some(own) = &view.own else {
            return;
        };
        let centre = own.visible.at;
        let scale = width.min(height) / 2.0 / half_view(own.visible.mass);
        let to_px = |at: Vec2| {
            (
                width / 2.0 + f64::from(at.x - centre.x) * scale,
                height / 2.0 + f64::from(at.y - centre.y) * scale,
            )
        };
        let arena = session.setup().map_or(Vec2::splat(5000.0), Blobs::extent);
        let (x0, y0) = to_px(Vec2::ZERO);
        let (x1, y1) = to_px(arena);
        ctx.set_fill_style_str("#1b2128");
        ctx.fill_rect(x0, y0, x1 - x0, y1 - y0);
        let name_of = |id: PlayerId| shown_name(session, id);
        for pellet in &view.things {
            let (x, y) = to_px(pellet.visual.at);
            disc(ctx, x, y, 3.0_f64.max(2.0 * scale), "#81c784");
        }
        for r in view.remotes.iter().filter(|r| r.state.kind == BLOB) {
            let (x, y) = to_px(r.visual.at);
            let size = f64::from(radius(r.visual.mass)) * scale;
            disc(ctx, x, y, size, "#ffb74d");
            label(ctx, x, y - size - 4.0, &name_of(r.id));
        }
        if overlays.ghosts {
            if let Some(authoritative) = own.authoritative {
                let (x, y) = to_px(authoritative.at);
                ring(ctx, x, y, f64::from(radius(authoritative.mass)) * scale);
            }
        }
        let (x, y) = to_px(own.visible.at);
        let size = f64::from(radius(own.visible.mass)) * scale;
        let colour = if own.alive { "#4fc3f7" } else { "#666" };
        disc(ctx, x, y, size, colour);
        label(ctx, x, y - size - 4.0, &name_of(own.id));
    }

    /// The own mass (or that it was eaten), then the newest note of the
    /// last three seconds.
    fn hud_line(session: &ClientSession<Blobs>) -> String {
        let view = session.view();
        let mut line = match view.own {
            Some(own) if own.state.kind == DEAD => "eaten: back in a second".to_string(),
            Some(own) => format!("mass {}", whole(own.visible.mass)),
            None => "mass -".to_string(),
        };
        if let Some(note) = view.effects.last() {
            line.push_str(" · ");
            line.push_str(&told(note, |id| shown_name(session, id)));
        }
        line
    }

    fn numbers(body: &Body) -> Vec<f32> {
        vec![body.at.x, body.at.y, body.mass]
    }

    fn debug(session: &ClientSession<Blobs>, fields: Fields) -> Fields {
        let view = session.view();
        let pellets = view.things.len();
        fields
            .with("pellets_seen", pellets as u32)
            .with("mass", view.own.map(|o| o.state.mass))
    }

    fn debug_remote(remote: &RemoteView<Blobs>, fields: Fields) -> Fields {
        fields
            .with("mass", remote.state.mass)
            .with("kind", u32::from(remote.state.kind))
    }
}

/// `v` rounded to a whole number, as the HUD shows it: the shell's `fixed`,
/// not `{:.0}`, so that no float formatting is in the bundle.
fn whole(v: f32) -> String {
    fixed(f64::from(v), 0)
}

/// A note as the HUD tells it, each blob by its `name`.
fn told(note: &Note, name: impl Fn(PlayerId) -> String) -> String {
    match *note {
        Note::Ate(id, gain) => format!("you ate {} (+{})", name(id), whole(gain)),
        Note::EatenBy(id) => format!("eaten by {}", name(id)),
        Note::Back => "back".to_string(),
    }
}

fn disc(ctx: &CanvasRenderingContext2d, x: f64, y: f64, r: f64, colour: &str) {
    ctx.set_fill_style_str(colour);
    ctx.begin_path();
    let _ = ctx.arc(x, y, r, 0.0, std::f64::consts::TAU);
    ctx.fill();
}

fn ring(ctx: &CanvasRenderingContext2d, x: f64, y: f64, r: f64) {
    ctx.set_stroke_style_str("rgba(239, 83, 80, 0.9)");
    ctx.set_line_width(1.5);
    ctx.begin_path();
    let _ = ctx.arc(x, y, r, 0.0, std::f64::consts::TAU);
    ctx.stroke();
}

fn label(ctx: &CanvasRenderingContext2d, x: f64, y: f64, text: &str) {
    ctx.set_fill_style_str("#d8dee4");
    ctx.set_font("12px system-ui, sans-serif");
    ctx.set_text_align("center");
    let _ = ctx.fill_text(text, x, y);
}

#[cfg(test)]
mod tests {
    use skirmish_client::Named;

    use super::*;

    #[test]
    fn the_pointer_steers_from_the_middle_and_space_boosts() {
        let mut aim = Aim::default();
        BlobsPage::pointer(&mut aim, 200.0, 100.0, 200.0, 200.0);
        assert_eq!(BlobsPage::controls(&mut aim, None), (0, MOVE), "east");
        BlobsPage::pointer(&mut aim, 100.0, 200.0, 200.0, 200.0);
        assert!(BlobsPage::key(&mut aim, "Space", true));
        assert_eq!(
            BlobsPage::controls(&mut aim, None),
            (16_384, MOVE | BOOST),
            "south"
        );
        BlobsPage::pointer(&mut aim, 101.0, 101.0, 200.0, 200.0);
        assert_eq!(
            BlobsPage::controls(&mut aim, None).1,
            BOOST,
            "on the blob: stay"
        );
        assert!(!BlobsPage::key(&mut aim, "KeyW", true));
        let positional = Named(&[("turn", 0.0), ("throttle", 1.0), ("fire", 0.0)]);
        assert_eq!(BlobsPage::scripted(&positional), (0, MOVE));
        let named = Named(&[("angle", std::f64::consts::FRAC_PI_2), ("boost", 1.0)]);
        assert_eq!(
            BlobsPage::scripted(&named),
            (16_384, BOOST),
            "south, staying"
        );
    }

    #[test]
    fn a_note_is_told_with_the_names_known() {
        let names = |id: PlayerId| {
            if id == PlayerId(3) {
                "ann".to_string()
            } else {
                format!("#{id}")
            }
        };
        assert_eq!(
            told(&Note::Ate(PlayerId(3), 8.4), names),
            "you ate ann (+8)"
        );
        assert_eq!(told(&Note::EatenBy(PlayerId(4)), names), "eaten by #4");
        assert_eq!(told(&Note::Back, names), "back");
    }
}
