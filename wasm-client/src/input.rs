//! Keyboard to controls: WASD or the arrow keys turn and drive, Space fires.
//!
//! Keys are matched by `KeyboardEvent.code` (the physical key), so the
//! layout does not matter. [`Keys::clear`] releases everything when the
//! window loses focus, so no key stays stuck.

use skirmish_core::session::Controls;

/// Which of our keys are held.
// Five independent keys, not a state machine.
#[allow(clippy::struct_excessive_bools)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    forward: bool,
    back: bool,
    left: bool,
    right: bool,
    fire: bool,
    /// A press of fire not yet seen by a fixed step: a tap shorter than a
    /// step still fires.
    fire_latched: bool,
}

impl Keys {
    /// Records a key going down or up; `false` if it is not one of ours
    /// (the page should then let the browser handle it).
    pub fn set(&mut self, code: &str, down: bool) -> bool {
        let slot = match code {
            "KeyW" | "ArrowUp" => &mut self.forward,
            "KeyS" | "ArrowDown" => &mut self.back,
            "KeyA" | "ArrowLeft" => &mut self.left,
            "KeyD" | "ArrowRight" => &mut self.right,
            "Space" => &mut self.fire,
            _ => return false,
        };
        *slot = down;
        if code == "Space" && down {
            self.fire_latched = true;
        }
        true
    }

    /// A fixed step has used the controls: a latched tap is consumed.
    pub fn consumed(&mut self) {
        self.fire_latched = false;
    }

    /// Releases every key (the window lost focus).
    pub fn clear(&mut self) {
        *self = Keys::default();
    }

    /// The controls these keys mean. Opposite keys cancel out. Turning
    /// right is a positive turn: clockwise on a screen whose y axis points
    /// down.
    pub fn controls(&self) -> Controls {
        let axis = |plus: bool, minus: bool| f32::from(i8::from(plus) - i8::from(minus));
        Controls {
            turn: axis(self.right, self.left),
            throttle: axis(self.forward, self.back),
            fire: self.fire || self.fire_latched,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasd_and_arrows_map_to_controls() {
        let mut keys = Keys::default();
        assert!(keys.set("KeyW", true));
        assert!(keys.set("ArrowRight", true));
        assert!(keys.set("Space", true));
        let c = keys.controls();
        assert_eq!((c.turn, c.throttle, c.fire), (1.0, 1.0, true));
        keys.set("ArrowLeft", true);
        assert_eq!(keys.controls().turn, 0.0, "opposites cancel");
        keys.set("KeyW", false);
        keys.set("ArrowDown", true);
        assert_eq!(keys.controls().throttle, -1.0);
        assert!(!keys.set("KeyQ", true), "not ours");
    }

    #[test]
    fn a_tap_shorter_than_a_step_still_fires_once() {
        let mut keys = Keys::default();
        keys.set("Space", true);
        keys.set("Space", false);
        assert!(keys.controls().fire, "latched until a step sees it");
        keys.consumed();
        assert!(!keys.controls().fire);
    }

    #[test]
    fn losing_focus_releases_every_key() {
        let mut keys = Keys::default();
        keys.set("KeyW", true);
        keys.set("Space", true);
        keys.clear();
        assert_eq!(keys.controls(), Controls::default());
    }
}
