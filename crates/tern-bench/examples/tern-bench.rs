//! A standalone `tern-bench` binary, so the benchmark scripts run before (and independently of)
//! the `tern` binary that mounts the same options as `tern bench`.
//!
//! Build: `cargo build --release -p tern-bench --example tern-bench`.

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "tern-bench",
    about = "HTTP/1.1 and HTTPS load generator (closed or open loop)"
)]
struct Cli {
    #[command(flatten)]
    args: tern_bench::BenchArgs,
}

fn main() -> anyhow::Result<()> {
    tern_bench::run(Cli::parse().args)
}
