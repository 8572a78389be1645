//! Why progressive recovery: a downstream fails for 20 seconds, then restarts cold and needs
//! 20 seconds to warm up; overloading it makes it fall over again. Steady traffic goes
//! through a classic breaker and through a progressive one (backoff and ramp-up), in virtual
//! time. Prints a table per variant and writes the timeline to `docs/recovery.svg`
//! (or the path given as the first argument).

use std::error::Error;
use std::path::PathBuf;

use breaker_workspace::simulation::{classic, progressive, run, Report, Scenario};
use plotters::prelude::*;

mod common;
use common::{draw_legend, state_color};

fn main() -> Result<(), Box<dyn Error>> {
    let scenario = Scenario::default();
    let reports = [
        run("classic", classic(), &scenario),
        run("progressive", progressive(), &scenario),
    ];
    println!(
        "downstream down from {}s to {}s, then cold: {:.0} to {:.0} req/s over {}s; \
         overload makes it fall over; client sends {:.0} req/s for {}s (seed {})\n",
        scenario.outage_start.as_secs(),
        scenario.outage_end.as_secs(),
        scenario.full_capacity * 0.1,
        scenario.full_capacity,
        scenario.warm_up.as_secs(),
        scenario.rate,
        scenario.length.as_secs(),
        scenario.seed,
    );
    println!(
        "{:<12} {:>10} {:>16} {:>9} {:>22}",
        "breaker", "re-opened", "overloaded hits", "served", "time to full recovery"
    );
    for r in &reports {
        let recovery = r
            .recovery
            .map_or("never".to_string(), |d| format!("{:.1}s", d.as_secs_f64()));
        println!(
            "{:<12} {:>10} {:>16} {:>9} {:>22}",
            r.variant,
            r.reopened,
            r.overloaded,
            format!("{}/{}", r.served, r.requests),
            recovery
        );
    }

    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/recovery.svg"), PathBuf::from);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    plot(&path, &scenario, &reports)?;
    println!("\ntimeline written to {}", path.display());
    Ok(())
}

fn plot(path: &PathBuf, scenario: &Scenario, reports: &[Report]) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((reports.len(), 1));
    let seconds = scenario.length.as_secs() as u32;
    let top = scenario.full_capacity * 1.1;
    for (area, report) in panels.iter().zip(reports) {
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{} breaker: re-opened {} times, {} overloaded hits",
                    report.variant, report.reopened, report.overloaded
                ),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0u32..seconds, 0f64..top)?;
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc("requests per second")
            .disable_mesh()
            .draw()?;
        // The breaker's state as a band behind the lines: green closed, amber half-open, red open.
        chart.draw_series(report.timeline.iter().map(|s| {
            Rectangle::new(
                [(s.at, 0.0), (s.at + 1, top)],
                state_color(s.state).filled(),
            )
        }))?;
        chart
            .draw_series(LineSeries::new(
                report.timeline.iter().map(|s| (s.at, s.capacity)),
                BLACK.stroke_width(2),
            ))?
            .label("downstream capacity")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        chart
            .draw_series(LineSeries::new(
                report.timeline.iter().map(|s| (s.at, f64::from(s.sent))),
                RGBColor(150, 150, 150),
            ))?
            .label("client requests")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RGBColor(150, 150, 150)));
        chart
            .draw_series(LineSeries::new(
                report
                    .timeline
                    .iter()
                    .map(|s| (s.at, f64::from(s.admitted))),
                BLUE.stroke_width(2),
            ))?
            .label("admitted by the breaker")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        draw_legend(&mut chart)?;
    }
    root.present()?;
    Ok(())
}
