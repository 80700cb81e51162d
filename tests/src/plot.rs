//! A replay's timeline as an SVG a person can open in a browser: one panel
//! per series (correction size, RTT, input slack, time dilation,
//! interpolation delay) over the recording's time. Plain SVG text, no
//! dependency.

use std::fmt::Write as _;

use skirmish_core::Sample;

const WIDTH: f64 = 960.0;
const PANEL: f64 = 110.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;

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

/// The SVG of `samples`, titled `title`.
pub fn timeline(title: &str, samples: &[Sample]) -> String {
    let height = TOP + PANEL * SERIES.len() as f64 + 30.0;
    let span = samples.last().map_or(1.0, |s| s.at.as_secs_f64()).max(1e-3);
    let plot_w = WIDTH - LEFT - RIGHT;
    let x = |t: f64| LEFT + t / span * plot_w;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="20" font-size="14">{}</text>"#,
        escape(title)
    );
    for (k, series) in SERIES.iter().enumerate() {
        let top = TOP + PANEL * k as f64;
        let bottom = top + PANEL - 25.0;
        let values: Vec<(f64, f64)> = samples
            .iter()
            .filter_map(|s| (series.value)(s).map(|v| (s.at.as_secs_f64(), v)))
            .filter(|(_, v)| v.is_finite())
            .collect();
        let lo = values
            .iter()
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min)
            .min(0.0);
        let hi = values
            .iter()
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max)
            .max(lo + 1e-9);
        let y = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top - 14.0);
        let _ = writeln!(
            svg,
            r##"<text x="{LEFT}" y="{}" font-weight="bold">{} ({})</text><line x1="{LEFT}" y1="{bottom}" x2="{}" y2="{bottom}" stroke="#999"/><line x1="{LEFT}" y1="{}" x2="{LEFT}" y2="{bottom}" stroke="#999"/><text x="{}" y="{}" text-anchor="end">{}</text><text x="{}" y="{bottom}" text-anchor="end">{}</text>"##,
            top + 10.0,
            series.title,
            series.unit,
            WIDTH - RIGHT,
            top + 14.0,
            LEFT - 4.0,
            top + 18.0,
            number(hi),
            LEFT - 4.0,
            number(lo),
        );
        if values.is_empty() {
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" fill="#999">no samples</text>"##,
                LEFT + 10.0,
                bottom - 10.0
            );
            continue;
        }
        let points: Vec<String> = values
            .iter()
            .map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline fill="none" stroke="{}" stroke-width="1.2" points="{}"/>"#,
            series.colour,
            points.join(" ")
        );
    }
    let axis = TOP + PANEL * SERIES.len() as f64;
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="{axis}">0 s</text><text x="{}" y="{axis}" text-anchor="end">{:.1} s</text>"#,
        WIDTH - RIGHT,
        span
    );
    svg.push_str("</svg>\n");
    svg
}

fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
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
        assert!(svg.contains("4.9 s"));
    }
}
