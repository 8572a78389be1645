//! `breakerbox-tune`: recommends a circuit breaker configuration from a recording of real calls.

use std::path::PathBuf;
use std::process::ExitCode;

use breakerbox::recording::{parse_config_keys, Recording};
use breakerbox_tune::{outages, plot, report, tune_with, Options};
use clap::Parser;

/// Recommends a circuit breaker configuration from a recording of real calls.
///
/// Reads a trace in the CSV format of `breakerbox::recording` (`t_ms,latency_ms,outcome`, one
/// call a line, as `Breaker::recording().write_csv(..)` writes it), replays it through every
/// configuration of the grid and through the current one (the trace's `# config:` line, or
/// `--current`), picks the configuration of least cost over the trace and perturbed copies
/// of it, prints what it changes key by key, as an attribute line and as an override block,
/// and draws the timeline as SVG.
#[derive(Debug, Parser)]
#[command(name = "breakerbox-tune", version)]
struct Args {
    /// The trace: a CSV file in the format of `breakerbox::recording`.
    trace: PathBuf,

    /// The breaker's registry name, for the override block [default: the name in the
    /// trace's `# breaker: NAME` line].
    #[arg(long)]
    name: Option<String>,

    /// The configuration the recorded breaker runs, in the attribute's keys, like
    /// 'rate = 0.4, open = "3s", probes = 2' (unwritten keys take their defaults) [default:
    /// the trace's `# config: KEYS` line].
    #[arg(long, value_name = "KEYS")]
    current: Option<String>,

    /// Print every outage, one a line (the report summarizes more than 10).
    #[arg(long)]
    outages: bool,

    /// Where to draw the timeline.
    #[arg(long, value_name = "PATH", default_value = "tune.svg")]
    svg: PathBuf,

    /// Perturbed copies of the trace the leading candidates are replayed on.
    #[arg(long, value_name = "N", default_value_t = 8)]
    perturbations: usize,

    /// The seed of the perturbations.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,

    /// Threads replaying candidates [default: every core].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let recording =
        Recording::read_csv(&args.trace).map_err(|e| format!("cannot read the trace {e}"))?;
    let name = match (&args.name, recording.name()) {
        (Some(name), _) => name.clone(),
        (None, Some(name)) => name.to_owned(),
        (None, None) => {
            return Err(format!(
                "the trace {} does not name its breaker (no `# breaker: NAME` line): pass \
                 --name with the name the breaker is registered under",
                args.trace.display()
            ))
        }
    };
    let current = match (&args.current, recording.config()) {
        (Some(keys), _) => {
            parse_config_keys(keys).map_err(|e| format!("--current is not a configuration: {e}"))?
        }
        (None, Some(config)) => config.clone(),
        (None, None) => {
            return Err(format!(
                "the trace {} does not give its breaker's configuration (no `# config: KEYS` \
                 line): pass --current with the attribute keys the breaker runs, like \
                 --current 'rate = 0.5, open = \"5s\"'",
                args.trace.display()
            ))
        }
    };
    if recording.calls().is_empty() {
        return Err(format!("the trace {} holds no call", args.trace.display()));
    }
    let mut options = Options {
        perturbations: args.perturbations,
        seed: args.seed,
        ..Options::default()
    };
    if let Some(threads) = args.threads {
        if threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        options.threads = threads;
    }
    let tuning = tune_with(&recording, &current, options);
    print!(
        "{}",
        report::report(&tuning, &args.trace.display().to_string(), &name)
    );
    if args.outages {
        print!("\n{}", outages::list(&tuning.health));
    }
    plot::plot(&args.svg, &tuning)
        .map_err(|e| format!("cannot draw the timeline to {}: {e}", args.svg.display()))?;
    println!("timeline written to {}", args.svg.display());
    Ok(())
}
