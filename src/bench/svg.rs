//! A small hand-written SVG line chart on log-log axes (no plotting crate).
//!
//! Points with a non-positive coordinate cannot sit on a log axis and are left out; the axes
//! span whole decades around the remaining points, with a labelled tick per decade and light
//! minor ticks at 2…9 times each decade.

use std::fmt::Write as _;

/// One line of the chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Shown in the legend.
    pub name: String,
    /// `(x, y)` points, drawn in x order.
    pub points: Vec<(f64, f64)>,
}

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 540.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 70.0;

/// Colour-blind-safe palette (Okabe–Ito), then black.
const COLOURS: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// A decade range `[10^lo, 10^hi]` covering every value, at least one decade wide; with
/// `pad`, a value on a power of ten gets the decade below it too, so that it does not sit on
/// the axis.
fn decades(values: impl Iterator<Item = f64>, pad: bool) -> (i32, i32) {
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        min = min.min(v);
        max = max.max(v);
    }
    if !min.is_finite() || !max.is_finite() {
        return (0, 1);
    }
    // Without padding, a hair of slack keeps an exact power of ten inside its own decade.
    let slack = if pad { -0.05 } else { 1e-9 };
    let lo = (min.log10() + slack).floor() as i32;
    let mut hi = (max.log10() - 1e-9).ceil() as i32;
    if hi <= lo {
        hi = lo + 1;
    }
    (lo, hi)
}

fn tick_label(exp: i32, mantissa: u32) -> String {
    let v = f64::from(mantissa) * 10f64.powi(exp);
    if exp >= 0 {
        format!("{v:.0}")
    } else {
        let digits = usize::try_from(-exp).unwrap_or(0);
        format!("{v:.digits$}")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders the chart as a standalone SVG document.
pub fn log_log_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let valid = |&(x, y): &(f64, f64)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite();
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied().filter(valid))
        .collect();
    let (x_lo, x_hi) = decades(all.iter().map(|p| p.0), false);
    let (y_lo, y_hi) = decades(all.iter().map(|p| p.1), true);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let sx = |x: f64| LEFT + (x.log10() - f64::from(x_lo)) / f64::from(x_hi - x_lo) * plot_w;
    let sy =
        |y: f64| TOP + plot_h - (y.log10() - f64::from(y_lo)) / f64::from(y_hi - y_lo) * plot_h;

    let mut svg = String::new();
    // `write!` into a String cannot fail.
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="Helvetica, Arial, sans-serif">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="32" font-size="18" font-weight="bold" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        escape(title)
    );

    // Grid and ticks.
    let bottom = TOP + plot_h;
    let right = LEFT + plot_w;
    for exp in x_lo..=x_hi {
        for m in 1..=9u32 {
            if exp == x_hi && m > 1 {
                break;
            }
            let x = sx(f64::from(m) * 10f64.powi(exp));
            let (stroke, tick) = if m == 1 {
                ("#bbbbbb", 8.0)
            } else {
                ("#eeeeee", 4.0)
            };
            let _ = writeln!(
                svg,
                r#"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{bottom}" stroke="{stroke}" stroke-width="1"/>"#
            );
            let _ = writeln!(
                svg,
                r#"<line x1="{x:.1}" y1="{bottom}" x2="{x:.1}" y2="{:.1}" stroke="black" stroke-width="1"/>"#,
                bottom + tick
            );
            if m == 1 || m == 2 || m == 5 {
                let (size, colour) = if m == 1 {
                    (13, "black")
                } else {
                    (10, "#666666")
                };
                let _ = writeln!(
                    svg,
                    r#"<text x="{x:.1}" y="{:.1}" font-size="{size}" fill="{colour}" text-anchor="middle">{}</text>"#,
                    bottom + 24.0,
                    tick_label(exp, m)
                );
            }
        }
    }
    for exp in y_lo..=y_hi {
        for m in 1..=9u32 {
            if exp == y_hi && m > 1 {
                break;
            }
            let y = sy(f64::from(m) * 10f64.powi(exp));
            let (stroke, tick) = if m == 1 {
                ("#bbbbbb", 8.0)
            } else {
                ("#eeeeee", 4.0)
            };
            let _ = writeln!(
                svg,
                r#"<line x1="{LEFT}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="{stroke}" stroke-width="1"/>"#
            );
            let _ = writeln!(
                svg,
                r#"<line x1="{:.1}" y1="{y:.1}" x2="{LEFT}" y2="{y:.1}" stroke="black" stroke-width="1"/>"#,
                LEFT - tick
            );
            if m == 1 || m == 2 || m == 5 {
                let (size, colour) = if m == 1 {
                    (13, "black")
                } else {
                    (10, "#666666")
                };
                let _ = writeln!(
                    svg,
                    r#"<text x="{:.1}" y="{:.1}" font-size="{size}" fill="{colour}" text-anchor="end">{}</text>"#,
                    LEFT - 12.0,
                    y + 4.0,
                    tick_label(exp, m)
                );
            }
        }
    }
    let _ = writeln!(
        svg,
        r#"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black" stroke-width="1.2"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="14" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 20.0,
        escape(x_label)
    );
    let _ = writeln!(
        svg,
        r#"<text x="24" y="{0:.1}" font-size="14" text-anchor="middle" transform="rotate(-90 24 {0:.1})">{1}</text>"#,
        TOP + plot_h / 2.0,
        escape(y_label)
    );

    // Lines, markers and the legend.
    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let dash = if i % 2 == 1 {
            r#" stroke-dasharray="7 4""#
        } else {
            ""
        };
        // Earlier series get larger markers, so that coinciding points show as rings.
        let radius = 3.0 + 1.2 * (series.len() - 1 - i) as f64;
        let mut points: Vec<(f64, f64)> = s.points.iter().copied().filter(valid).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if points.len() > 1 {
            let coords: Vec<String> = points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            let _ = writeln!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>"#,
                coords.join(" ")
            );
        }
        for &(x, y) in &points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{radius:.1}" fill="{colour}" stroke="white" stroke-width="0.8"><title>{}: {x} → {y:.2}</title></circle>"#,
                sx(x),
                sy(y),
                escape(&s.name)
            );
        }
        let ly = TOP + 14.0 + 24.0 * i as f64;
        let lx = right + 20.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2"{dash}/>"#,
            lx + 32.0
        );
        let _ = writeln!(
            svg,
            r#"<circle cx="{:.1}" cy="{ly:.1}" r="{radius:.1}" fill="{colour}" stroke="white" stroke-width="0.8"/>"#,
            lx + 16.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="13">{}</text>"#,
            lx + 40.0,
            ly + 4.5,
            escape(&s.name)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decades_cover_the_data() {
        assert_eq!(decades([2.0, 1000.0].into_iter(), false), (0, 3));
        assert_eq!(decades([1.0].into_iter(), false), (0, 1));
        assert_eq!(decades([1.0, 50.0].into_iter(), true), (-1, 2));
        assert_eq!(decades([0.5, 3.0].into_iter(), false), (-1, 1));
        assert_eq!(tick_label(-1, 5), "0.5");
        assert_eq!(tick_label(2, 1), "100");
    }

    #[test]
    fn chart_is_a_document_with_every_series() {
        let svg = log_log_chart(
            "t",
            "x",
            "y",
            &[
                Series {
                    name: "a<b".into(),
                    points: vec![(2.0, 1.0), (10.0, 5.0), (0.0, 3.0)],
                },
                Series {
                    name: "c".into(),
                    points: vec![(2.0, 1.0)],
                },
            ],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("a&lt;b"));
        assert_eq!(svg.matches("<polyline").count(), 1);
    }
}
