//! A replay's timeline as an SVG a person can open in a browser: a strip
//! of what happened at which frame (corrections sized by their error,
//! snaps, late and repeated inputs, resends, lost snapshots; pointing at
//! one names its frame, for `--until`), then one chart per series
//! (correction size, RTT, input slack, time dilation, interpolation delay)
//! over the recording's time, each with its own axes ([`crate::chart`]).
//! Plain SVG text, no dependency.

use std::fmt::Write as _;

use skirmish_core::{clamp, Mark, MarkKind, Sample};

use crate::chart::{chart, Line};

/// The width of a chart ([`chart`] draws each panel this wide).
const WIDTH: f64 = 760.0;
/// The height of one panel: one chart.
const PANEL: f64 = 320.0;
const LEFT: f64 = 70.0;
/// Room for the title above the panels.
const TOP: f64 = 34.0;

/// One series: its title, unit, colour and value per sample.
struct Series {
    title: &'static str,
    unit: &'static str,
    colour: &'static str,
    value: fn(&Sample) -> Option<f64>,
}

const SERIES: [Series; 5] = [
    Series {
        title: "correction size",
        unit: "units",
        colour: "#d62728",
        value: |s| Some(f64::from(s.correction)),
    },
    Series {
        title: "round-trip time",
        unit: "ms",
        colour: "#1f77b4",
        value: |s| s.rtt_ms,
    },
    Series {
        title: "input slack",
        unit: "ms",
        colour: "#2ca02c",
        value: |s| s.slack_ms,
    },
    Series {
        title: "time dilation",
        unit: "%",
        colour: "#9467bd",
        value: |s| Some(s.dilation_pct),
    },
    Series {
        title: "interpolation delay",
        unit: "ms",
        colour: "#ff7f0e",
        value: |s| Some(s.interpolation_ms),
    },
];

/// The SVG of `samples` and `marks`, titled `title`: the strip of marks,
/// then one chart per series, stacked, each with its own axes ([`chart`]).
pub fn timeline(title: &str, samples: &[Sample], marks: &[Mark]) -> String {
    let height = TOP + STRIP + PANEL * SERIES.len() as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/><text x="{LEFT}" y="22" font-size="15">{}</text>"#,
        escape(title)
    );
    let span = samples
        .iter()
        .map(|s| s.at)
        .chain(marks.iter().map(|m| m.at))
        .max()
        .unwrap_or_default()
        .as_secs_f64();
    svg.push_str(&strip(marks, span, TOP));
    for (k, series) in SERIES.iter().enumerate() {
        let points: Vec<(f64, f64)> = samples
            .iter()
            .filter_map(|s| (series.value)(s).map(|v| (s.at.as_secs_f64(), v)))
            .filter(|(_, v)| v.is_finite())
            .collect();
        let empty = points.is_empty();
        let lines: Vec<Line> = if empty {
            Vec::new()
        } else {
            vec![(series.title, series.colour, points)]
        };
        let top = TOP + STRIP + PANEL * k as f64;
        let panel = chart(
            &format!("{} ({})", series.title, series.unit),
            series.unit,
            &lines,
            &[],
        );
        svg.push_str(&panel.replacen(
            r#"<svg xmlns="http://www.w3.org/2000/svg""#,
            &format!(r#"<svg x="0" y="{top}""#),
            1,
        ));
        if empty {
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" fill="#999">no samples</text>"##,
                LEFT + 20.0,
                top + PANEL / 2.0
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// The height of the strip of marks above the charts.
const STRIP: f64 = 120.0;

/// A row of the strip: its label, its colour and which marks it shows.
type Row = (&'static str, &'static str, fn(&MarkKind) -> bool);

/// The strip's rows.
const ROWS: [Row; 5] = [
    ("corrections", "#d62728", |k| {
        matches!(k, MarkKind::Correction { .. })
    }),
    ("snaps", "#8b0000", |k| matches!(k, MarkKind::Snaps(_))),
    ("late / repeated inputs", "#ff7f0e", |k| {
        matches!(k, MarkKind::Late(_) | MarkKind::Repeated(_))
    }),
    ("resends", "#1f77b4", |k| matches!(k, MarkKind::Resends(_))),
    ("lost snapshots, disconnections", "#7f7f7f", |k| {
        matches!(k, MarkKind::Lost(_) | MarkKind::Disconnected)
    }),
];

/// What a mark says when pointed at: its frame (for `--until`) and what
/// happened.
fn said(mark: &Mark) -> String {
    let what = match mark.kind {
        MarkKind::Correction { error, snapped } => format!(
            "a correction of {error:.2} units{}",
            if snapped { ", snapped" } else { "" }
        ),
        MarkKind::Snaps(n) => format!("{n} snap(s)"),
        MarkKind::Late(n) => format!("{n} input(s) late"),
        MarkKind::Repeated(n) => format!("{n} input(s) repeated"),
        MarkKind::Resends(n) => format!("{n} input message(s) sent again"),
        MarkKind::Lost(n) => format!("{n} snapshot(s) missing"),
        MarkKind::Disconnected => "disconnected".to_string(),
    };
    format!(
        "frame {} ({:.2} s): {what}",
        mark.frame,
        mark.at.as_secs_f64()
    )
}

/// The strip of marks at `top`, over `span` seconds: a row per kind, a
/// correction as a bar its size of the largest, every mark with a title
/// naming its frame.
fn strip(marks: &[Mark], span: f64, top: f64) -> String {
    let mut svg = String::new();
    let row_height = (STRIP - 20.0) / ROWS.len() as f64;
    let width = WIDTH - LEFT - 20.0;
    let largest = marks
        .iter()
        .filter_map(|m| match m.kind {
            MarkKind::Correction { error, .. } => Some(f64::from(error)),
            _ => None,
        })
        .fold(0.0, f64::max);
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="{}" font-size="12">what happened (point at a mark for its frame)</text>"#,
        top + 12.0
    );
    for (r, (label, colour, shows)) in ROWS.iter().enumerate() {
        let base = top + 20.0 + row_height * (r as f64 + 1.0);
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" font-size="9" fill="#999">{label}</text><line x1="{LEFT}" x2="{}" y1="{base}" y2="{base}" stroke="#ddd"/>"##,
            LEFT + 4.0,
            base - row_height + 9.0,
            LEFT + width
        );
        for mark in marks.iter().filter(|m| shows(&m.kind)) {
            let x = LEFT + width * clamp(mark.at.as_secs_f64() / span.max(1e-9), 0.0, 1.0);
            let size = match mark.kind {
                MarkKind::Correction { error, .. } if largest > 0.0 => {
                    clamp(f64::from(error) / largest, 0.15, 1.0)
                }
                _ => 0.6,
            };
            let _ = writeln!(
                svg,
                r#"<line x1="{x:.1}" x2="{x:.1}" y1="{base}" y2="{:.1}" stroke="{colour}" stroke-width="2"><title>{}</title></line>"#,
                base - (row_height - 3.0) * size,
                escape(&said(mark))
            );
        }
    }
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn every_series_is_drawn_or_said_to_be_empty() {
        let samples: Vec<Sample> = (0..50)
            .map(|i| Sample {
                at: Duration::from_millis(i * 100),
                correction: (i % 7) as f32,
                rtt_ms: Some(150.0 + i as f64),
                slack_ms: None,
                dilation_pct: -1.0,
                interpolation_ms: 100.0,
            })
            .collect();
        let marks = [
            Mark {
                frame: 12,
                at: Duration::from_millis(200),
                kind: MarkKind::Correction {
                    error: 3.5,
                    snapped: false,
                },
            },
            Mark {
                frame: 40,
                at: Duration::from_millis(700),
                kind: MarkKind::Lost(2),
            },
        ];
        let svg = timeline("a <test>", &samples, &marks);
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("no samples"));
        assert!(svg.contains("a &lt;test&gt;"));
        assert!(svg.contains("time (s)"));
        assert!(svg.contains("<title>frame 12 (0.20 s): a correction of 3.50 units</title>"));
        assert!(svg.contains("<title>frame 40 (0.70 s): 2 snapshot(s) missing</title>"));
        assert_eq!(
            svg.matches("<svg").count(),
            1 + SERIES.len(),
            "a chart per series"
        );
    }
}
