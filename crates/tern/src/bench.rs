//! `tern bench`: the load generator, or with `suite` the side-by-side scenario runner.

use anyhow::Context as _;

use crate::cli::{BenchCommand, BenchSub};

pub fn main(bench: BenchCommand) -> anyhow::Result<()> {
    match (bench.sub, bench.args) {
        (Some(BenchSub::Suite(args)), _) => tern_suite::run(args),
        (None, Some(args)) => tern_bench::run(args),
        // clap requires the URL when no subcommand is given; this is only a guard.
        (None, None) => None.context("tern bench: a URL or `suite SCENARIO` is required"),
    }
}
