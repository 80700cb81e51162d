//! A [`SessionConfig`] in a client recording's header, in binary: every
//! number travels as its bits, so the replay starts from exactly the
//! recorded configuration (and the page carries no JSON codec for it). The
//! layout is in `docs/RECORDING.md`.
//!
//! A header is untrusted: every field is read back within the range a
//! session can run with in bounded time and memory (a longest frame of at
//! most 2 s, a dilation of at most [`PacingConfig::DILATION_LIMIT`],
//! periods of 1 ms to an hour, bounded sample counts), and anything else
//! is a [`FormatError::Damaged`] that names the field and its range.

use std::time::Duration;

use crate::client::conditioner::LinkConditions;
use crate::client::interpolation::InterpolationConfig;
use crate::client::pacing::PacingConfig;
use crate::client::session::SessionConfig;
use crate::client::smoothing::SmoothingConfig;
use crate::shared::protocol::Encoding;
use crate::shared::record::{FormatError, Reader, Writer};

fn duration(w: &mut Writer, d: Duration) {
    w.varint(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
}

/// Writes one direction's conditions (also the `set_conditions` record).
pub(super) fn conditions(w: &mut Writer, c: LinkConditions) {
    for v in [c.latency_ms, c.jitter_ms, c.loss, c.duplicate] {
        w.f32(v);
    }
}

/// Writes `config`.
pub(super) fn write_config(w: &mut Writer, c: &SessionConfig) {
    w.text(&c.name);
    match &c.room {
        Some(room) => {
            w.u8(1);
            w.text(room);
        }
        None => w.u8(0),
    }
    let smoothing = &c.smoothing;
    w.u8(u8::from(smoothing.enabled));
    for v in [
        smoothing.snap_distance,
        smoothing.snap_angle,
        smoothing.half_life,
        smoothing.budget,
        smoothing.dead_zone,
        smoothing.dead_zone_angle,
    ] {
        w.f32(v);
    }
    let interpolation = &c.interpolation;
    w.u8(u8::from(interpolation.enabled));
    duration(w, interpolation.delay);
    duration(w, interpolation.max_extrapolation);
    w.varint(interpolation.capacity as u64);
    conditions(w, c.up);
    conditions(w, c.down);
    w.u64(c.seed);
    duration(w, c.ping_interval);
    duration(w, c.max_frame);
    w.u8(u8::from(c.encoding == Encoding::Compact));
    w.varint(u64::from(c.protocol));
    let pacing = &c.pacing;
    w.f64(pacing.late_target);
    w.f64(pacing.safety_ms);
    w.varint(pacing.level_samples as u64);
    w.varint(pacing.spread_samples as u64);
    w.f64(pacing.initial_spread_ms);
    w.f64(pacing.max_dilation);
    duration(w, pacing.time_constant);
    duration(w, pacing.integral_time);
    w.f64(pacing.resync_ms);
    w.varint(u64::from(c.resends));
}

fn read_duration(r: &mut Reader<'_>) -> Result<Duration, FormatError> {
    Ok(Duration::from_nanos(r.varint()?))
}

/// The longest [`SessionConfig::max_frame`] a recording may ask for (the
/// page's and the bots' is 250 ms): a hidden tab's frame, 40 steps at the
/// server's cadence. Whatever it is, the session runs at most
/// [`MAX_STEPS_PER_FRAME`](crate::MAX_STEPS_PER_FRAME)
/// steps in a frame.
const LONGEST_FRAME: Duration = Duration::from_secs(2);

/// The most [`PacingConfig::level_samples`]: every timing report takes
/// the median of twice as many.
const MOST_LEVEL_SAMPLES: usize = 1024;

/// The largest margin, spread or resync threshold of the pacing, in ms: a
/// minute is already nonsense.
const LONGEST_MS: f64 = 60_000.0;

/// The shortest and longest of the session's periods (the ping interval,
/// the pacing's time constants).
const PERIODS: (Duration, Duration) = (Duration::from_millis(1), Duration::from_secs(3600));

/// A duration within `least..=most`, or the header is damaged.
fn read_duration_within(
    r: &mut Reader<'_>,
    what: &str,
    (least, most): (Duration, Duration),
) -> Result<Duration, FormatError> {
    let at = r.offset();
    let d = read_duration(r)?;
    if (least..=most).contains(&d) {
        Ok(d)
    } else {
        Err(FormatError::Damaged {
            offset: at,
            what: format!("{what} of {d:?} (must be {least:?} to {most:?})"),
        })
    }
}

/// Reads what [`conditions`] wrote.
///
/// # Errors
/// At the end.
pub(super) fn read_conditions(r: &mut Reader<'_>) -> Result<LinkConditions, FormatError> {
    Ok(LinkConditions {
        latency_ms: r.f32()?,
        jitter_ms: r.f32()?,
        loss: r.f32()?,
        duplicate: r.f32()?,
    })
}

/// A count the session keeps buffers of: at most `most`, so a damaged
/// header cannot ask for a huge allocation.
fn read_count(r: &mut Reader<'_>, what: &str, most: usize) -> Result<usize, FormatError> {
    let at = r.offset();
    let v = r.varint()?;
    usize::try_from(v)
        .ok()
        .filter(|&n| n <= most)
        .ok_or_else(|| FormatError::Damaged {
            offset: at,
            what: format!("{what} of {v} (at most {most})"),
        })
}

/// A magnitude of the configuration (a time, a distance, a share): finite,
/// not negative and at most `most`, or the header is damaged (the session
/// would use it as a bound).
fn magnitude(at: usize, v: f64, what: &str, most: f64) -> Result<f64, FormatError> {
    if (0.0..=most).contains(&v) {
        Ok(v)
    } else {
        let bound = if most == f64::MAX {
            "must be finite and not negative".to_string()
        } else {
            format!("must be 0 to {most}")
        };
        Err(FormatError::Damaged {
            offset: at,
            what: format!("{what} of {v} ({bound})"),
        })
    }
}

fn read_f64(r: &mut Reader<'_>, what: &str, most: f64) -> Result<f64, FormatError> {
    let at = r.offset();
    let v = r.f64()?;
    magnitude(at, v, what, most)
}

fn read_f32(r: &mut Reader<'_>, what: &str) -> Result<f32, FormatError> {
    let at = r.offset();
    let v = r.f32()?;
    magnitude(at, f64::from(v), what, f64::MAX).map(|_| v)
}

fn read_u32(r: &mut Reader<'_>, what: &str) -> Result<u32, FormatError> {
    let v = r.varint()?;
    u32::try_from(v).map_err(|_| r.damaged(format!("{what} of {v}")))
}

/// Reads what [`write_config`] wrote.
///
/// # Errors
/// The bytes end or hold nonsense.
pub(super) fn read_config(r: &mut Reader<'_>) -> Result<SessionConfig, FormatError> {
    let name = r.text()?.to_string();
    let room = match r.u8()? {
        0 => None,
        _ => Some(r.text()?.to_string()),
    };
    let smoothing = SmoothingConfig {
        enabled: r.u8()? != 0,
        snap_distance: read_f32(r, "a snap distance")?,
        snap_angle: read_f32(r, "a snap angle")?,
        half_life: read_f32(r, "a half-life")?,
        budget: read_f32(r, "a correction budget")?,
        dead_zone: read_f32(r, "a dead zone")?,
        dead_zone_angle: read_f32(r, "a dead-zone angle")?,
    };
    let interpolation = InterpolationConfig {
        enabled: r.u8()? != 0,
        delay: read_duration(r)?,
        max_extrapolation: read_duration(r)?,
        capacity: read_count(r, "an interpolation capacity", 1 << 16)?,
    };
    let up = read_conditions(r)?;
    let down = read_conditions(r)?;
    let seed = r.u64()?;
    let ping_interval = read_duration_within(r, "a ping interval", PERIODS)?;
    let max_frame = read_duration_within(r, "a longest frame", (Duration::ZERO, LONGEST_FRAME))?;
    let encoding = if r.u8()? == 0 {
        Encoding::Json
    } else {
        Encoding::Compact
    };
    let protocol = read_u32(r, "a protocol")?;
    let pacing = PacingConfig {
        late_target: read_f64(r, "a late target", 1.0)?,
        safety_ms: read_f64(r, "a safety margin", LONGEST_MS)?,
        level_samples: read_count(r, "level samples", MOST_LEVEL_SAMPLES)?,
        spread_samples: read_count(r, "spread samples", 1 << 16)?,
        initial_spread_ms: read_f64(r, "an initial spread", LONGEST_MS)?,
        max_dilation: read_f64(r, "a largest dilation", PacingConfig::DILATION_LIMIT)?,
        time_constant: read_duration_within(r, "a pacing time constant", PERIODS)?,
        integral_time: read_duration_within(r, "a pacing integral time", PERIODS)?,
        resync_ms: read_f64(r, "a resync threshold", LONGEST_MS)?,
    };
    let resends = read_u32(r, "resends")?;
    Ok(SessionConfig {
        name,
        room,
        smoothing,
        interpolation,
        up,
        down,
        seed,
        ping_interval,
        max_frame,
        encoding,
        protocol,
        pacing,
        resends,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_reads_back_exactly() {
        let mut config = SessionConfig {
            name: "ana".to_string(),
            room: Some("duel".to_string()),
            seed: u64::MAX - 3,
            encoding: Encoding::Compact,
            resends: 2,
            ..SessionConfig::default()
        };
        config.up.latency_ms = 0.1;
        config.pacing.late_target = 1.0 / 3.0;
        config.smoothing.half_life = f32::MIN_POSITIVE;
        let mut w = Writer::default();
        write_config(&mut w, &config);
        let mut r = Reader::new(&w.bytes);
        assert_eq!(read_config(&mut r), Ok(config.clone()));
        assert!(r.is_empty());
        for cut in 0..w.bytes.len() {
            assert!(read_config(&mut Reader::new(&w.bytes[..cut])).is_err());
        }
        // A negative bound (found by fuzzing: the pacing clamps with it).
        config.pacing.max_dilation = -0.1;
        let mut w = Writer::default();
        write_config(&mut w, &config);
        let err = read_config(&mut Reader::new(&w.bytes));
        assert!(matches!(err, Err(FormatError::Damaged { .. })), "{err:?}");
    }

    #[test]
    fn fields_beyond_their_bounds_are_named() {
        let refused = |change: fn(&mut SessionConfig)| {
            let mut config = SessionConfig::default();
            change(&mut config);
            let mut w = Writer::default();
            write_config(&mut w, &config);
            match read_config(&mut Reader::new(&w.bytes)) {
                Err(FormatError::Damaged { what, .. }) => what,
                other => panic!("expected damage, got {other:?}"),
            }
        };
        let what = refused(|c| c.max_frame = Duration::from_secs(3));
        assert_eq!(what, "a longest frame of 3s (must be 0ns to 2s)");
        let what = refused(|c| c.pacing.max_dilation = 1.0);
        assert_eq!(what, "a largest dilation of 1 (must be 0 to 0.5)");
        let what = refused(|c| c.ping_interval = Duration::ZERO);
        assert!(what.starts_with("a ping interval of 0ns"), "{what}");
        let what = refused(|c| c.pacing.time_constant = Duration::ZERO);
        assert!(what.starts_with("a pacing time constant"), "{what}");
        let what = refused(|c| c.pacing.level_samples = 4096);
        assert_eq!(what, "level samples of 4096 (at most 1024)");
        let what = refused(|c| c.smoothing.half_life = f32::INFINITY);
        assert_eq!(what, "a half-life of inf (must be finite and not negative)");
    }
}
