//! Remote players are interpolated, not predicted (RS-9).
//!
//! Each remote player has a [`RemoteBuffer`] of accepted authoritative samples
//! keyed by server tick. It is drawn in the past, at the estimated server time
//! minus an interpolation delay (default 100 ms, two ticks): by then the
//! samples on both sides of the drawn moment have usually arrived, so the
//! remote moves smoothly between true server states, as the game's
//! [`Visual::lerp`] blends them (for a game on a plane: linear in position,
//! along the shortest arc in rotation).
//!
//! When the buffer runs dry (the next sample is late or lost), the remote is
//! extrapolated from the last sample's velocity for at most
//! [`InterpolationConfig::max_extrapolation`] (100 ms), then held. We chose a
//! short extrapolation over a longer one because a wrong guess has to be
//! taken back visibly when the real sample arrives; 100 ms covers one or two
//! lost snapshots, and holding afterwards is honest about a stalled link.
//!
//! A guess taken back is not drawn as a jump: when a remote drawn
//! extrapolated is next sampled elsewhere (its real samples turned), the
//! difference is kept as an offset from where it is now sampled, drawn and
//! faded out with a time constant of [`SETTLE_SECS`] (100 ms), so that it never
//! snaps back against its own motion ([`RemoteBuffer::settle`]).
//!
//! Only states the [`Authority`](crate::client::authority::Authority) accepted enter a
//! buffer, so a stale packet never affects interpolation (CAPS-6); the buffer
//! also refuses any tick not newer than its newest sample on its own.

use std::collections::VecDeque;
use std::time::Duration;

use crate::shared::game::{Offset, Visual};
use crate::shared::tick::Tick;

/// How remote players are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InterpolationConfig {
    /// Whether to interpolate at all; when off, remotes are drawn at their
    /// newest sample (the HUD toggle that shows what interpolation does).
    pub enabled: bool,
    /// How far in the past remotes are drawn.
    pub delay: Duration,
    /// How long past the newest sample a remote may be extrapolated.
    pub max_extrapolation: Duration,
    /// Samples kept per remote.
    pub capacity: usize,
}

impl InterpolationConfig {
    /// How far behind the server remotes are drawn when snapshots arrive
    /// `arrival_jitter` late on average behind the best arrival: the
    /// configured delay, or more when arrivals are uneven (one tick plus four
    /// mean deviations), at most four times the configured delay.
    pub fn adaptive_delay(&self, cadence: Duration, arrival_jitter: Duration) -> Duration {
        let needed = cadence + arrival_jitter * 4;
        needed.clamp(self.delay, self.delay * 4)
    }
}

impl Default for InterpolationConfig {
    fn default() -> Self {
        InterpolationConfig {
            enabled: true,
            delay: Duration::from_millis(100),
            max_extrapolation: Duration::from_millis(100),
            capacity: 32,
        }
    }
}

/// How a sampled state was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// Between two samples.
    Interpolated,
    /// Past the newest sample, along its velocity.
    Extrapolated,
    /// Held at the first or the newest sample.
    Held,
}

/// One authoritative sample of a remote, as a game draws it (`V`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemoteSample<V: Visual> {
    /// The server tick it was true at.
    pub tick: Tick,
    /// What is drawn.
    pub visual: V,
    /// Its motion per second, for extrapolation past the newest sample
    /// (no motion: held).
    pub velocity: V::Offset,
    /// Whether it is alive: a death or a new life between two samples is
    /// not motion, and is not interpolated across.
    pub alive: bool,
}

impl<V: Visual> RemoteSample<V> {
    /// Whether it draws as `other` does, whatever its tick.
    fn same(&self, other: &RemoteSample<V>) -> bool {
        self.visual == other.visual && self.velocity == other.velocity && self.alive == other.alive
    }
}

/// How quickly a taken-back extrapolation fades from what is drawn: the
/// time constant of its decay (seconds).
pub const SETTLE_SECS: f32 = 0.1;

/// A taken-back guess farther than this from the new sample is not faded:
/// the remote respawned or teleported, and is drawn where it is.
const MAX_SETTLE_OFFSET: f32 = 40.0;

/// The accepted samples of one remote, oldest first, and what is left of
/// a taken-back extrapolation; of a game whose remotes are drawn as `V`.
#[derive(Clone, Debug)]
pub struct RemoteBuffer<V: Visual> {
    samples: VecDeque<RemoteSample<V>>,
    /// Drawn minus sampled, fading.
    offset: V::Offset,
    /// What was drawn at the last frame: what, how it was sampled, and the
    /// newest sample then.
    drawn: Option<(V, SampleKind, Tick)>,
}

impl<V: Visual> Default for RemoteBuffer<V> {
    fn default() -> Self {
        RemoteBuffer {
            samples: VecDeque::new(),
            offset: V::Offset::default(),
            drawn: None,
        }
    }
}

impl<V: Visual> RemoteBuffer<V> {
    /// Adds an accepted sample; `false` (and nothing changes) if its tick
    /// is not newer than the newest sample or it is not finite.
    pub fn add(&mut self, sample: RemoteSample<V>, config: &InterpolationConfig) -> bool {
        if !sample.visual.is_finite()
            || !sample.velocity.is_finite()
            || self.samples.back().is_some_and(|s| sample.tick <= s.tick)
        {
            return false;
        }
        // A still entity (a pellet) sends the same sample every snapshot:
        // the newest of three equal samples only moves on, which draws the
        // same and keeps its buffer at two.
        let n = self.samples.len();
        if n >= 2 && sample.same(&self.samples[n - 1]) && sample.same(&self.samples[n - 2]) {
            self.samples[n - 1].tick = sample.tick;
            return true;
        }
        if n >= config.capacity.max(2) {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
        true
    }

    /// How many samples are buffered.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no sample is buffered.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The newest sample's tick.
    pub fn newest_tick(&self) -> Option<Tick> {
        self.samples.back().map(|s| s.tick)
    }

    /// What to draw at server time `at`: the sample, moved by what is left
    /// of a taken-back extrapolation.
    pub fn drawn(
        &self,
        at: f64,
        tick: Duration,
        config: &InterpolationConfig,
    ) -> Option<(V, SampleKind)> {
        let (visual, kind) = self.sample(at, tick, config)?;
        Some((visual.shifted(&self.offset), kind))
    }

    /// A frame of `dt` seconds is drawn at `at`: the offset fades, and a
    /// remote drawn extrapolated at the last frame that is sampled
    /// elsewhere now keeps being drawn where it was, the difference fading
    /// from there on.
    pub fn settle(&mut self, at: f64, tick: Duration, config: &InterpolationConfig, dt: f32) {
        let Some((visual, kind)) = self.sample(at, tick, config) else {
            return;
        };
        self.offset = if config.enabled && dt.is_finite() {
            self.offset.scaled(libm::expf(-dt.max(0.0) / SETTLE_SECS))
        } else {
            V::Offset::default()
        };
        let newest = self.newest_tick().unwrap_or_default();
        // A guess is taken back when samples came since it was drawn (it
        // was extrapolated from an older one): interpolating now, or
        // extrapolating from the new newest.
        if let Some((drawn, SampleKind::Extrapolated, from)) = self.drawn {
            let error = visual.offset_to(&drawn);
            let taken_back = kind != SampleKind::Extrapolated || from != newest;
            if taken_back && config.enabled && error.size().distance <= MAX_SETTLE_OFFSET {
                self.offset = error;
            }
        }
        if !self.offset.is_finite() || self.offset.size().distance > MAX_SETTLE_OFFSET {
            self.offset = V::Offset::default();
        }
        self.drawn = Some((visual.shifted(&self.offset), kind, newest));
    }

    /// Whether the remote was alive at server time `at`, as the newest
    /// sample at or before it says (the first sample before any); `None`
    /// while empty. A remote is drawn dying and respawning at the time it
    /// is drawn at, not when the newest snapshot says so.
    pub fn alive_at(&self, at: f64) -> Option<bool> {
        let i = self.samples.partition_point(|s| f64::from(s.tick.0) <= at);
        self.samples
            .get(i.saturating_sub(1))
            .or(self.samples.front())
            .map(|s| s.alive)
    }

    /// What is drawn at server time `at` (ticks with fraction), with ticks
    /// of `tick` length; `None` while empty.
    pub fn sample(
        &self,
        at: f64,
        tick: Duration,
        config: &InterpolationConfig,
    ) -> Option<(V, SampleKind)> {
        let first = self.samples.front()?;
        let last = self.samples.back()?;
        if !config.enabled {
            return Some((last.visual, SampleKind::Held));
        }
        if !at.is_finite() || at <= f64::from(first.tick.0) {
            return Some((first.visual, SampleKind::Held));
        }
        let newest = f64::from(last.tick.0);
        if at >= newest {
            let tick_secs = tick.as_secs_f64();
            let ahead = ((at - newest) * tick_secs).min(config.max_extrapolation.as_secs_f64());
            if ahead <= 0.0 || last.velocity == V::Offset::default() {
                return Some((last.visual, SampleKind::Held));
            }
            let visual = last.visual.shifted(&last.velocity.scaled(ahead as f32));
            return Some((visual, SampleKind::Extrapolated));
        }
        // The first sample after `at`; the one before it exists because
        // `at` is past the first sample.
        let i = self.samples.partition_point(|s| f64::from(s.tick.0) <= at);
        let (a, b) = (self.samples.get(i.checked_sub(1)?)?, self.samples.get(i)?);
        if a.alive != b.alive {
            // A death or a new life is not motion: held until its tick.
            return Some((a.visual, SampleKind::Held));
        }
        let span = f64::from(b.tick.0 - a.tick.0);
        let t = ((at - f64::from(a.tick.0)) / span) as f32;
        Some((a.visual.lerp(&b.visual, t), SampleKind::Interpolated))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_delay_grows_with_uneven_arrivals_within_bounds() {
        let config = InterpolationConfig::default();
        let tick = Duration::from_millis(50);
        let ms = Duration::from_millis;
        assert_eq!(config.adaptive_delay(tick, ms(0)), ms(100), "configured");
        assert_eq!(
            config.adaptive_delay(tick, ms(20)),
            ms(130),
            "1 tick + 4 x 20"
        );
        assert_eq!(config.adaptive_delay(tick, ms(500)), ms(400), "at most 4x");
    }
}
