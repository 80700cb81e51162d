//! A replay's timeline as an SVG a person can open in a browser: one chart
//! per series (correction size, RTT, input slack, time dilation,
//! interpolation delay) over the recording's time, each with its own axes
//! ([`crate::chart`]). Plain SVG text, no dependency.

use std::fmt::Write as _;

use skirmish_core::Sample;

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

/// The SVG of `samples`, titled `title`: one chart per series, stacked,
/// each with its own axes ([`chart`]).
pub fn timeline(title: &str, samples: &[Sample]) -> String {
    let height = TOP + PANEL * SERIES.len() as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/><text x="{LEFT}" y="22" font-size="15">{}</text>"#,
        escape(title)
    );
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
        let top = TOP + PANEL * k as f64;
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
        let svg = timeline("a <test>", &samples);
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("no samples"));
        assert!(svg.contains("a &lt;test&gt;"));
        assert!(svg.contains("time (s)"));
        assert_eq!(
            svg.matches("<svg").count(),
            1 + SERIES.len(),
            "a chart per series"
        );
    }
}
