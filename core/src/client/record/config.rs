//! A [`SessionConfig`] in a client recording's header, in binary: every
//! number travels as its bits, so the replay starts from exactly the
//! recorded configuration (and the page carries no JSON codec for it). The
//! layout is in `docs/RECORDING.md`.

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
    r.varint().map(Duration::from_nanos)
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

/// A count the session keeps buffers of: bounded, so a damaged header
/// cannot ask for a huge allocation.
fn read_count(r: &mut Reader<'_>, what: &str) -> Result<usize, FormatError> {
    let v = r.varint()?;
    usize::try_from(v)
        .ok()
        .filter(|&n| n <= 1 << 16)
        .ok_or_else(|| r.damaged(format!("{what} of {v}")))
}

/// A magnitude of the configuration (a time, a distance, a share): finite
/// and not negative, or the header is damaged (the session would use it
/// as a bound).
fn magnitude(r: &mut Reader<'_>, v: f64, what: &str) -> Result<f64, FormatError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(r.damaged(format!("{what} of {v}")))
    }
}

fn read_f64(r: &mut Reader<'_>, what: &str) -> Result<f64, FormatError> {
    let v = r.f64()?;
    magnitude(r, v, what)
}

fn read_f32(r: &mut Reader<'_>, what: &str) -> Result<f32, FormatError> {
    let v = r.f32()?;
    magnitude(r, f64::from(v), what).map(|_| v)
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
        capacity: read_count(r, "an interpolation capacity")?,
    };
    let up = read_conditions(r)?;
    let down = read_conditions(r)?;
    let seed = r.u64()?;
    let ping_interval = read_duration(r)?;
    let max_frame = read_duration(r)?;
    let encoding = if r.u8()? == 0 {
        Encoding::Json
    } else {
        Encoding::Compact
    };
    let protocol = read_u32(r, "a protocol")?;
    let pacing = PacingConfig {
        late_target: read_f64(r, "a late target")?,
        safety_ms: read_f64(r, "a safety margin")?,
        level_samples: read_count(r, "level samples")?,
        spread_samples: read_count(r, "spread samples")?,
        initial_spread_ms: read_f64(r, "an initial spread")?,
        max_dilation: read_f64(r, "a largest dilation")?,
        time_constant: read_duration(r)?,
        integral_time: read_duration(r)?,
        resync_ms: read_f64(r, "a resync threshold")?,
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
        let mut r = Reader::fields(&w.bytes);
        assert_eq!(read_config(&mut r), Ok(config.clone()));
        assert!(r.is_empty());
        for cut in 0..w.bytes.len() {
            assert!(read_config(&mut Reader::fields(&w.bytes[..cut])).is_err());
        }
        // A negative bound (found by fuzzing: the pacing clamps with it).
        config.pacing.max_dilation = -0.1;
        let mut w = Writer::default();
        write_config(&mut w, &config);
        let err = read_config(&mut Reader::fields(&w.bytes));
        assert!(matches!(err, Err(FormatError::Damaged { .. })), "{err:?}");
    }
}
