//! What the page shell asks of a game: its keys and the controls they
//! make, how it draws a frame, and what of it the HUD and the debug state
//! show. The shell itself (the connection, the session, the HUD's
//! netcode numbers, the graph, the recorder, the conditioner panel) is the
//! same for every game. What every game's drawing shares is here too:
//! the [`Overlays`] the panel turns on and the [`Fit`] of a field into the
//! canvas.

use skirmish_core::{ClientGame, ClientSession, Game, Harness, PlayerId, RemoteView, Vec2};
use web_sys::CanvasRenderingContext2d;

use crate::fields::Fields;

/// The controls of the game a page plays.
pub type Controls<P> = <<P as PageGame>::Game as ClientGame>::Controls;

/// What the game draws, of the game a page plays.
pub type Local<P> = <<P as PageGame>::Game as Game>::Local;

/// A game's page: what the shell asks of the game it plays. Implemented by
/// the game's page crate, on a type of its own.
pub trait PageGame: Sized + 'static {
    /// The game played.
    type Game: ClientGame + Harness;

    /// The page's title.
    const TITLE: &'static str;

    /// The keys, as the panel tells them.
    const KEYS: &'static str;

    /// Which of the game's keys are held.
    type Keys: Default;

    /// A key went down (`down`) or up, by `KeyboardEvent.code`; `false` if
    /// the game does not use it (the browser then handles it).
    fn key(keys: &mut Self::Keys, code: &str, down: bool) -> bool;

    /// The controls a script asks for with `skirmish.setControls({..})`,
    /// read by name from `script`, in the game's terms. The positional
    /// `setControls(turn, throttle, fire)` comes as the names `turn`,
    /// `throttle` and `fire`, which every game reads in some way.
    fn scripted(script: &dyn Script) -> Controls<Self>;

    /// The pointer moved to `x`, `y` on a canvas of `width` x `height`
    /// pixels (CSS pixels from its top left). By default the game ignores
    /// it.
    fn pointer(keys: &mut Self::Keys, x: f64, y: f64, width: f64, height: f64) {
        let _ = (keys, x, y, width, height);
    }

    /// Releases every key (the window lost the focus).
    fn release(keys: &mut Self::Keys);

    /// This frame's controls from the keys, and from a script's override
    /// when there is one (`skirmish.setControls`); taps since the last
    /// frame count once.
    fn controls(keys: &mut Self::Keys, scripted: Option<Controls<Self>>) -> Controls<Self>;

    /// Draws the session's view on a canvas of `width` x `height` pixels.
    fn draw(
        ctx: &CanvasRenderingContext2d,
        width: f64,
        height: f64,
        session: &ClientSession<Self::Game>,
        overlays: Overlays,
    );

    /// The game's line at the top of the HUD (a tank's hit points).
    fn hud_line(session: &ClientSession<Self::Game>) -> String;

    /// What is drawn, as numbers for the debug state (a tank's x, y and
    /// heading).
    fn numbers(visual: &Local<Self>) -> Vec<f32>;

    /// The game's own fields of the debug state.
    fn debug(session: &ClientSession<Self::Game>, fields: Fields) -> Fields;

    /// The game's own fields of a remote in the debug state.
    fn debug_remote(remote: &RemoteView<Self::Game>, fields: Fields) -> Fields;
}

/// The controls a script asks for (`skirmish.setControls({..})`), by
/// name: a game reads the numbers and flags it knows and ignores the rest.
pub trait Script {
    /// The number named `name`, if the script gave one.
    fn number(&self, name: &str) -> Option<f64>;

    /// Whether `name` is set (in JavaScript, truthy); not set if absent.
    fn flag(&self, name: &str) -> bool;
}

/// A script's controls as names and numbers (a flag is a number other
/// than 0): the positional `setControls(turn, throttle, fire)`, and tests.
#[derive(Clone, Copy, Debug)]
pub struct Named<'a>(pub &'a [(&'a str, f64)]);

impl Script for Named<'_> {
    fn number(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }

    fn flag(&self, name: &str) -> bool {
        self.number(name).is_some_and(|v| v != 0.0 && !v.is_nan())
    }
}

/// A player's name as a page draws it: the roster's, or `#id` until the
/// roster has it.
pub fn shown_name<G: ClientGame>(session: &ClientSession<G>, id: PlayerId) -> String {
    session
        .name_of(id)
        .map_or_else(|| format!("#{id}"), str::to_string)
}

/// What to draw besides the players, as the panel asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overlays {
    /// Outlines of the own player's authoritative and predicted poses.
    pub ghosts: bool,
}

/// The fit of a game's field (the tank game's arena, say) into the
/// canvas: scaled as large as it fits with a margin, and centred.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Pixels per unit of the field.
    pub scale: f64,
    /// Canvas position of the field's origin.
    pub origin: (f64, f64),
}

impl Fit {
    /// The largest scale at which `field` (its far corner; the near one
    /// is the origin) fits `width` x `height` pixels with a margin,
    /// centred.
    pub fn new(field: Vec2, width: f64, height: f64) -> Fit {
        let margin = 8.0;
        let scale = ((width - 2.0 * margin) / f64::from(field.x))
            .min((height - 2.0 * margin) / f64::from(field.y))
            .max(0.01);
        Fit {
            scale,
            origin: (
                (width - f64::from(field.x) * scale) / 2.0,
                (height - f64::from(field.y) * scale) / 2.0,
            ),
        }
    }

    /// Canvas coordinates of a point of the field.
    pub fn point(&self, p: Vec2) -> (f64, f64) {
        (
            self.origin.0 + f64::from(p.x) * self.scale,
            self.origin.1 + f64::from(p.y) * self.scale,
        )
    }

    /// A player as a filled point at `at`, in `colour`, its `name` above.
    pub fn dot(&self, ctx: &CanvasRenderingContext2d, at: Vec2, colour: &str, name: &str) {
        let (x, y) = self.point(at);
        ctx.set_fill_style_str(colour);
        ctx.begin_path();
        let _ = ctx.arc(x, y, 6.0, 0.0, std::f64::consts::TAU);
        ctx.fill();
        ctx.set_font("12px system-ui, sans-serif");
        ctx.set_text_align("center");
        let _ = ctx.fill_text(name, x, y - 10.0);
    }

    /// An outline around `at`, in `colour`: where the server or the
    /// prediction has the own player (the panel's ghosts).
    pub fn ring(&self, ctx: &CanvasRenderingContext2d, at: Vec2, colour: &str) {
        let (x, y) = self.point(at);
        ctx.set_stroke_style_str(colour);
        ctx.set_line_width(1.5);
        ctx.begin_path();
        let _ = ctx.arc(x, y, 9.0, 0.0, std::f64::consts::TAU);
        ctx.stroke();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_controls_read_numbers_and_flags() {
        let named = Named(&[("turn", -0.5), ("fire", 1.0), ("boost", 0.0)]);
        assert_eq!(named.number("turn"), Some(-0.5));
        assert_eq!(named.number("throttle"), None);
        assert!(named.flag("fire"));
        assert!(!named.flag("boost") && !named.flag("throttle"));
    }

    #[test]
    fn the_field_fits_and_is_centred() {
        let fit = Fit::new(Vec2::new(2000.0, 1200.0), 1280.0, 720.0);
        let (x0, y0) = fit.point(Vec2::ZERO);
        let (x1, y1) = fit.point(Vec2::new(2000.0, 1200.0));
        assert!(x0 >= 8.0 - 1e-9 && y0 >= 8.0 - 1e-9);
        assert!(x1 <= 1272.0 + 1e-9 && y1 <= 712.0 + 1e-9);
        assert!((f64::midpoint(x0, x1) - 640.0).abs() < 1e-9);
        assert!((f64::midpoint(y0, y1) - 360.0).abs() < 1e-9);
    }
}
