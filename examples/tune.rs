//! The replay tuner: recommends a circuit breaker configuration from a recording of real calls.
//!
//! ```text
//! cargo run --release --example tune -- trace.csv [--name app::get_book] [--svg tune.svg]
//! cargo run --release --example tune -- --simulate trace.csv
//! ```
//!
//! The trace is the CSV format of `breaker::recording` (`t_ms,latency_ms,outcome`, one call a
//! line). The tuner replays it through every configuration of its grid, compared with the
//! defaults (`Config::default()`), prints the Pareto front and the recommendation as an
//! attribute line and as an override block, and draws the downstream's health with the
//! default and the recommended breaker's states. `--simulate` writes the trace of the recovery
//! simulation (`examples/recovery.rs`) instead; `docs/trace.csv` is that trace.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;

use breaker::recording::Recording;
use breaker::State;
use breaker_workspace::simulation::{classic, record, Scenario};
use breaker_workspace::tune::replay::Run;
use breaker_workspace::tune::search::Spec;
use breaker_workspace::tune::{tune, Tuning};
use plotters::prelude::*;

mod common;
use common::{draw_legend, state_color};

struct Args {
    trace: PathBuf,
    name: String,
    svg: PathBuf,
    simulate: bool,
}

fn args() -> Result<Args, String> {
    let usage = "usage: tune TRACE.csv [--name NAME] [--svg OUT.svg] | tune --simulate OUT.csv";
    let mut args = Args {
        trace: PathBuf::new(),
        name: "app::get_book".into(),
        svg: PathBuf::from("tune.svg"),
        simulate: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--name" => args.name = it.next().ok_or(usage)?,
            "--svg" => args.svg = it.next().ok_or(usage)?.into(),
            "--simulate" => args.simulate = true,
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}; {usage}")),
            _ => args.trace = arg.into(),
        }
    }
    if args.trace.as_os_str().is_empty() {
        return Err(usage.into());
    }
    Ok(args)
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = args()?;
    if args.simulate {
        let recording = record(classic(), &Scenario::outage());
        recording.write_csv(&args.trace)?;
        println!(
            "{} calls of the recovery simulation written to {}",
            recording.calls().len(),
            args.trace.display()
        );
        return Ok(());
    }
    let recording = Recording::read_csv(&args.trace)?;
    let tuning = tune(&recording, Spec::DEFAULT);
    print(&args, &recording, &tuning);
    plot(&args.svg, &tuning)?;
    println!("\ntimeline written to {}", args.svg.display());
    Ok(())
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

fn print(args: &Args, recording: &Recording, t: &Tuning) {
    let h = &t.health;
    let outages: Vec<_> = h
        .outages
        .iter()
        .map(|o| format!("{}..{}", secs(o.start), secs(o.end)))
        .collect();
    println!(
        "{}: {} calls over {}; healthy p99 {:.1} ms; outages: {}",
        args.trace.display(),
        recording.calls().len(),
        secs(h.end),
        h.healthy_p99.as_secs_f64() * 1e3,
        if outages.is_empty() {
            "none".into()
        } else {
            outages.join(", ")
        }
    );
    println!(
        "replayed {} configurations in {:.2} s on {} threads ({:.2} ms a replay)\n",
        t.specs.len(),
        t.elapsed.as_secs_f64(),
        t.threads,
        t.elapsed.as_secs_f64() * 1e3 * t.threads as f64 / t.specs.len().max(1) as f64
    );
    println!(
        "cost = calls let into the outage + calls rejected while healthy; Pareto front, {} \
         configurations, the 12 of least cost:",
        t.front.len()
    );
    let header = format!(
        "{:>5} {:>8} {:>6} {:>9} {:>9} {:>6} {:>6}  configuration",
        "cost", "detect", "into", "rejected", "recovery", "flaps", "false"
    );
    println!("{header}");
    let row = |s: &breaker_workspace::tune::score::Scores, what: String| {
        println!(
            "{:>5} {:>8} {:>6} {:>9} {:>9} {:>6} {:>6}  {what}",
            s.cost(),
            secs(s.detection),
            s.sent_into_outage,
            s.healthy_rejected,
            secs(s.recovery),
            s.flaps,
            s.false_opens
        );
    };
    for &i in t.front.iter().take(12) {
        row(&t.scores[i], t.specs[i].to_string());
    }
    println!("\nthe defaults:");
    row(&t.baseline_scores, t.baseline.to_string());
    match t.recommended {
        Some(i) => {
            println!("\nrecommended (least cost, no false open, no outage missed):");
            row(&t.scores[i], t.specs[i].to_string());
            println!("\n{}", t.specs[i].attribute());
            println!(
                "\nas an override (feature `overrides`):\n\n{}",
                t.specs[i].toml(&args.name)
            );
        }
        None if h.outages.is_empty() => {
            println!("\nno outage in the trace: nothing to tune against; keep the defaults")
        }
        None => println!("\nno configuration of the grid beats the defaults on this trace"),
    }
}

/// The states of a run as `[from, to)` bands.
fn bands(run: &Run, end: f64) -> Vec<(f64, f64, State)> {
    let mut bands = Vec::new();
    let mut from = (0.0, State::Closed);
    for &(at, state) in &run.transitions {
        bands.push((from.0, at.as_secs_f64(), from.1));
        from = (at.as_secs_f64(), state);
    }
    bands.push((from.0, end, from.1));
    bands
}

fn plot(path: &Path, t: &Tuning) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let end = t.health.end.as_secs_f64().max(1.0);
    let recommended = t.recommendation();
    let panels = root.split_evenly((2, 1));
    let runs = [
        ("the defaults", t.baseline, t.baseline_scores),
        ("recommended", recommended, t.recommended_scores()),
    ];
    for (area, (title, spec, scores)) in panels.iter().zip(runs) {
        let run = t.replay(&spec);
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{title}: {} calls into the outage, {} healthy calls rejected, {} flaps",
                    scores.sent_into_outage, scores.healthy_rejected, scores.flaps
                ),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..end, 0f64..1.05)?;
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc("failure rate")
            .disable_mesh()
            .draw()?;
        chart.draw_series(bands(&run, end).into_iter().map(|(from, to, s)| {
            Rectangle::new([(from, 0.0), (to, 1.05)], state_color(s).filled())
        }))?;
        // The failure rate of each bucket where calls ran, as a step; none where none ran.
        let bucket = t.health.bucket.as_secs_f64();
        chart
            .draw_series(t.health.buckets.iter().enumerate().filter_map(|(i, b)| {
                let (x, rate) = (i as f64 * bucket, b.failure_rate()?);
                Some(PathElement::new(
                    [(x, rate), (x + bucket, rate)],
                    BLACK.stroke_width(2),
                ))
            }))?
            .label("failure rate of the calls that ran (recorded)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        let sick = RGBColor(120, 0, 0);
        chart
            .draw_series(t.health.outages.iter().map(|o| {
                let (from, to) = (o.start.as_secs_f64(), o.end.as_secs_f64());
                Rectangle::new([(from, 1.02), (to, 1.05)], sick.filled())
            }))?
            .label("estimated outage")
            .legend(move |(x, y)| Rectangle::new([(x, y - 3), (x + 20, y + 3)], sick.filled()));
        draw_legend(&mut chart)?;
    }
    root.present()?;
    Ok(())
}
