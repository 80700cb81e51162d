//! Keyboard to controls: WASD or the arrow keys turn and drive, Space fires.
//!
//! Keys are matched by `KeyboardEvent.code` (the physical key), so the
//! layout does not matter. [`Keys::clear`] releases everything when the
//! window loses focus, so no key stays stuck.

use skirmish_tanks::Controls;

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
    /// A press of fire since the controls were last taken: a tap shorter
    /// than a frame still reaches the session (which latches it until its
    /// next fixed step).
    fire_tapped: bool,
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
            self.fire_tapped = true;
        }
        true
    }

    /// Releases every key (the window lost focus).
    pub fn clear(&mut self) {
        *self = Keys::default();
    }

    /// The controls these keys mean, once per frame: a fire tap since the
    /// last call counts once. Opposite keys cancel out. Turning right is a
    /// positive turn: clockwise on a screen whose y axis points down.
    pub fn take_controls(&mut self) -> Controls {
        let axis = |plus: bool, minus: bool| f32::from(i8::from(plus) - i8::from(minus));
        let fire = self.fire || self.fire_tapped;
        self.fire_tapped = false;
        Controls {
            turn: axis(self.right, self.left),
            throttle: axis(self.forward, self.back),
            fire,
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
        let c = keys.take_controls();
        assert_eq!((c.turn, c.throttle, c.fire), (1.0, 1.0, true));
        keys.set("ArrowLeft", true);
        assert_eq!(keys.take_controls().turn, 0.0, "opposites cancel");
        keys.set("KeyW", false);
        keys.set("ArrowDown", true);
        assert_eq!(keys.take_controls().throttle, -1.0);
        assert!(!keys.set("KeyQ", true), "not ours");
    }

    #[test]
    fn a_tap_shorter_than_a_frame_still_fires_once() {
        let mut keys = Keys::default();
        keys.set("Space", true);
        keys.set("Space", false);
        assert!(keys.take_controls().fire, "tapped since the last frame");
        assert!(!keys.take_controls().fire, "counted once");
        keys.set("Space", true);
        assert!(
            keys.take_controls().fire && keys.take_controls().fire,
            "held"
        );
    }

    #[test]
    fn losing_focus_releases_every_key() {
        let mut keys = Keys::default();
        keys.set("KeyW", true);
        keys.set("Space", true);
        keys.clear();
        assert_eq!(keys.take_controls(), Controls::default());
    }
}
