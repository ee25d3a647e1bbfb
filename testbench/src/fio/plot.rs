//! `testbench fio --plot FILE.svg`: the read and write latency distributions (log-scaled
//! latency, share of I/Os per bin, P50/P99/P99.9/P99.99 marked) above IOPS over simulated time.

use super::{percentile, RunResult};
use plotters::prelude::*;
use std::path::Path;

const MARKS: [f64; 4] = [50.0, 99.0, 99.9, 99.99];

/// Log-spaced bins of `lat` (ns, > 0): (bin centre in µs, percent of the I/Os).
fn bins(lat: &[u64], lo: f64, hi: f64, n: usize) -> Vec<(f64, f64)> {
    let (l0, l1) = (lo.ln(), hi.ln());
    let mut c = vec![0usize; n];
    for &x in lat {
        let v = (x.max(1) as f64 / 1000.0).ln();
        let i = (((v - l0) / (l1 - l0)) * n as f64).floor() as isize;
        c[i.clamp(0, n as isize - 1) as usize] += 1;
    }
    (0..n)
        .map(|i| {
            let centre = (l0 + (i as f64 + 0.5) * (l1 - l0) / n as f64).exp();
            (centre, 100.0 * c[i] as f64 / lat.len().max(1) as f64)
        })
        .collect()
}

/// Writes the SVG; an error says why it could not.
pub fn write(r: &RunResult, path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("--plot {}: {e}", path.display());
    let reads: Vec<u64> = r.jobs.iter().flat_map(|j| j.read.lat.lat.clone()).collect();
    let writes: Vec<u64> = r
        .jobs
        .iter()
        .flat_map(|j| j.write.lat.lat.clone())
        .collect();
    let all: Vec<u64> = reads.iter().chain(&writes).copied().collect();
    if all.is_empty() {
        return Err(err(&"no I/O completed: nothing to plot"));
    }
    let lo = (*all.iter().min().expect("non-empty") as f64 / 1000.0 * 0.8).max(0.001);
    let hi = *all.iter().max().expect("non-empty") as f64 / 1000.0 * 1.25;
    let root = SVGBackend::new(path, (1000, 800)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (top, bottom) = root.split_vertically(440);
    let series: Vec<(&str, &Vec<u64>, RGBColor)> = [
        ("read", &reads, RGBColor(31, 119, 180)),
        ("write", &writes, RGBColor(214, 39, 40)),
    ]
    .into_iter()
    .filter(|x| !x.1.is_empty())
    .collect();
    let curves: Vec<Vec<(f64, f64)>> = series.iter().map(|s| bins(s.1, lo, hi, 60)).collect();
    let ymax = curves.iter().flatten().map(|p| p.1).fold(1.0, f64::max) * 1.15;
    let j = &r.job;
    let title = format!(
        "{} {} bs={} iodepth={} numjobs={}: latency, doorbell to CQE",
        j.name,
        j.rw.name(),
        j.bs,
        j.iodepth,
        j.numjobs
    );
    let mut chart = ChartBuilder::on(&top)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("latency (µs, log scale)")
        .y_desc("% of I/Os")
        .draw()
        .map_err(|e| err(&e))?;
    for (k, ((name, lat, color), curve)) in series.iter().zip(&curves).enumerate() {
        let mut sorted = (*lat).clone();
        sorted.sort_unstable();
        chart
            .draw_series(LineSeries::new(curve.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], *color));
        let mut text = Vec::new();
        for p in MARKS {
            let x = percentile(&sorted, p) as f64 / 1000.0;
            text.push(format!("P{p} {x:.2}"));
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, 0.0), (x, ymax)],
                    4,
                    3,
                    color.mix(0.6).stroke_width(1),
                ))
                .map_err(|e| err(&e))?;
        }
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{name} (µs): {}", text.join(", ")),
                (lo * 1.05, ymax * (0.96 - 0.06 * k as f64)),
                ("sans-serif", 13).into_font().color(color),
            )))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;

    // IOPS over simulated time.
    let end = r
        .jobs
        .iter()
        .map(|j| j.runtime_ns)
        .max()
        .unwrap_or(1)
        .max(1);
    let n = 50usize;
    let width = end as f64 / n as f64;
    let rate = |ts: Vec<u64>| -> Vec<(f64, f64)> {
        let mut c = vec![0usize; n];
        for t in ts {
            c[((t as f64 / width) as usize).min(n - 1)] += 1;
        }
        (0..n)
            .map(|i| {
                (
                    (i as f64 + 0.5) * width / 1000.0,
                    c[i] as f64 / (width / 1e9),
                )
            })
            .collect()
    };
    let rd = rate(r.jobs.iter().flat_map(|j| j.read.done_at.clone()).collect());
    let wr = rate(
        r.jobs
            .iter()
            .flat_map(|j| j.write.done_at.clone())
            .collect(),
    );
    let ymax = rd.iter().chain(&wr).map(|p| p.1).fold(1.0, f64::max) * 1.15;
    let mut chart = ChartBuilder::on(&bottom)
        .caption("IOPS over simulated time", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..end as f64 / 1000.0, 0.0..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("simulated time (µs)")
        .y_desc("IOPS")
        .y_label_formatter(&|v| format!("{:.2}M", v / 1e6))
        .draw()
        .map_err(|e| err(&e))?;
    for (name, pts, color) in [
        ("read", rd, RGBColor(31, 119, 180)),
        ("write", wr, RGBColor(214, 39, 40)),
    ] {
        if pts.iter().all(|p| p.1 == 0.0) {
            continue;
        }
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
