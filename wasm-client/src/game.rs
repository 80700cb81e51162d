//! What the page shell asks of a game: its keys and the controls they
//! make, how it draws a frame, and what of it the HUD and the debug state
//! show. The shell itself (the connection, the session, the HUD's
//! netcode numbers, the graph, the recorder, the conditioner panel) is the
//! same for every game; `tank.rs` is the tank game's side.

use skirmish_core::{ClientGame, ClientSession, PlayerId, RemoteView};
use web_sys::CanvasRenderingContext2d;

use crate::fields::Fields;
use crate::render::Overlays;

/// A game the page plays.
pub trait PageGame: ClientGame {
    /// The page's title.
    const TITLE: &'static str;

    /// The keys, as the panel tells them.
    const KEYS: &'static str;

    /// Which of the game's keys are held.
    type Keys: Default;

    /// A key went down (`down`) or up, by `KeyboardEvent.code`; `false` if
    /// the game does not use it (the browser then handles it).
    fn key(keys: &mut Self::Keys, code: &str, down: bool) -> bool;

    /// The controls a script asks for with `skirmish.setControls(turn,
    /// throttle, fire)`, in the game's terms.
    fn scripted(turn: f32, throttle: f32, fire: bool) -> Self::Controls;

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
    fn controls(keys: &mut Self::Keys, scripted: Option<Self::Controls>) -> Self::Controls;

    /// Draws the session's view on a canvas of `width` x `height` pixels.
    fn draw(
        ctx: &CanvasRenderingContext2d,
        width: f64,
        height: f64,
        session: &ClientSession<Self>,
        overlays: Overlays,
    );

    /// The game's line at the top of the HUD (a tank's hit points).
    fn hud_line(session: &ClientSession<Self>) -> String;

    /// What is drawn, as numbers for the debug state (a tank's x, y and
    /// heading).
    fn numbers(visual: &Self::Local) -> Vec<f32>;

    /// The game's own fields of the debug state.
    fn debug(session: &ClientSession<Self>, fields: Fields) -> Fields;

    /// The game's own fields of a remote in the debug state.
    fn debug_remote(remote: &RemoteView<Self>, fields: Fields) -> Fields;
}

/// A player's name as a page draws it: the roster's, or `#id` until the
/// roster has it.
pub fn shown_name<G: ClientGame>(session: &ClientSession<G>, id: PlayerId) -> String {
    session
        .name_of(id)
        .map_or_else(|| format!("#{id}"), str::to_string)
}
