//! Shot lines to draw: the own predicted shots and every confirmed hit, each
//! fading out over [`TRACER_LIFE`].

use std::collections::VecDeque;
use std::time::Duration;

use glam::Vec2;

/// How long a shot's tracer stays visible.
pub const TRACER_LIFE: Duration = Duration::from_millis(300);

/// At most this many lines are kept, however many shots arrive at once.
const MAX_TRACERS: usize = 256;

/// A shot to draw as a fading line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tracer {
    /// Start.
    pub from: Vec2,
    /// End.
    pub to: Vec2,
    /// 1 when new, 0 when gone.
    pub fade: f32,
}

/// The lines still visible, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tracers {
    lines: VecDeque<(Vec2, Vec2, Duration)>,
}

impl Tracers {
    /// A line from `from` to `to`, shown from `at`.
    pub(crate) fn push(&mut self, from: Vec2, to: Vec2, at: Duration) {
        if self.lines.len() >= MAX_TRACERS {
            self.lines.pop_front();
        }
        self.lines.push_back((from, to, at));
    }

    /// Forgets the lines that have faded by `now`.
    pub(crate) fn prune(&mut self, now: Duration) {
        let cutoff = now.saturating_sub(TRACER_LIFE);
        while self.lines.front().is_some_and(|(_, _, at)| *at < cutoff) {
            self.lines.pop_front();
        }
    }

    /// The lines as drawn at `now`.
    pub(crate) fn at(&self, now: Duration) -> Vec<Tracer> {
        let life = TRACER_LIFE.as_secs_f32();
        self.lines
            .iter()
            .map(|&(from, to, at)| Tracer {
                from,
                to,
                fade: 1.0 - (now.saturating_sub(at).as_secs_f32() / life).min(1.0),
            })
            .collect()
    }

    /// Forgets every line.
    pub(crate) fn clear(&mut self) {
        self.lines.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fade_and_go() {
        let ms = Duration::from_millis;
        let mut tracers = Tracers::default();
        tracers.push(Vec2::ZERO, Vec2::X, ms(100));
        assert_eq!(tracers.at(ms(100))[0].fade, 1.0);
        assert_eq!(tracers.at(ms(250))[0].fade, 0.5);
        tracers.prune(ms(400));
        assert_eq!(tracers.at(ms(400)).len(), 1, "gone only after its life");
        tracers.prune(ms(401));
        assert!(tracers.at(ms(401)).is_empty());
    }

    #[test]
    fn a_flood_of_shots_is_bounded() {
        let mut tracers = Tracers::default();
        for _ in 0..10_000 {
            tracers.push(Vec2::ZERO, Vec2::X, Duration::ZERO);
        }
        assert_eq!(tracers.at(Duration::ZERO).len(), MAX_TRACERS);
    }
}
