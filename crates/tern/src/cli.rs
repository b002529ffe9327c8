//! Command-line interface.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// tern: a TLS-terminating load balancer and reverse proxy.
#[derive(Debug, Parser)]
#[command(name = "tern", version, about, propagate_version = true)]
pub struct Cli {
    /// Log filter: error, warn, info, debug, trace, or a tracing directive such as
    /// `tern_proxy=debug`. RUST_LOG takes precedence when set.
    #[arg(long, global = true, default_value = "info")]
    pub log_level: String,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the load balancer with a configuration file.
    Run(RunArgs),
    /// Validate a configuration file (and load its certificates), then exit: 0 valid, 1 valid
    /// with warnings (a HAProxy file), 2 invalid.
    Check(CheckArgs),
    /// Print a HAProxy configuration (haproxy.cfg) as the equivalent tern TOML.
    Convert(ConvertArgs),
    /// Start three test backends and a TLS frontend balancing across them.
    Demo(DemoArgs),
    /// Run the test backend: responses chosen by query parameters (?s=size&t=ms&r=status&k=0).
    Term(TermArgs),
    /// Generate HTTP/1.1, HTTP/2 (--h2) or HTTPS load and report rates, latencies and CPU;
    /// `tern bench suite SCENARIO` runs a side-by-side scenario and writes a report.
    Bench(Box<BenchCommand>),
    /// Measure the TLS provider's crypto and in-memory handshake speed (like `openssl speed`).
    Speed(tern_speed::SpeedArgs),
    /// Send a command to a running tern's control API (`tern ctl help` lists them).
    Ctl(CtlArgs),
}

/// `tern ctl [-s SOCKET] [--json] COMMAND...`, or `--http URL [--token T]`.
#[derive(Debug, Args)]
pub struct CtlArgs {
    /// Control socket (`control.socket`). Default: $TERN_SOCKET, else /run/tern/tern.sock.
    #[arg(
        short = 's',
        long = "socket",
        value_name = "PATH",
        conflicts_with = "http"
    )]
    pub socket: Option<PathBuf>,
    /// Talk to the HTTP listener (`control.http`) instead, e.g. http://127.0.0.1:9000.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// Bearer token for state-changing commands over HTTP. Default: $TERN_TOKEN.
    #[arg(long, value_name = "TOKEN", requires = "http")]
    pub token: Option<String>,
    /// Ask for the answer as JSON (`{"ok", "output", "error"}`).
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub timeout: u64,
    /// The command, e.g. `show stat` or `set weight app/s1 0`.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// `tern bench URL [OPTIONS]` or `tern bench suite SCENARIO [OPTIONS]`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchCommand {
    #[command(subcommand)]
    pub sub: Option<BenchSub>,
    #[command(flatten)]
    pub args: Option<tern_bench::BenchArgs>,
}

#[derive(Debug, Subcommand)]
pub enum BenchSub {
    /// Run a scenario file: start backends and each target, run the workloads side by side,
    /// and write report.md, report.html and report.json.
    Suite(tern_suite::SuiteArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Configuration file: tern TOML, or HAProxy syntax (`.cfg`).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: PathBuf,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Configuration file: tern TOML, or HAProxy syntax (`.cfg`).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: PathBuf,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// HAProxy configuration file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Address of the demo's TLS frontend.
    #[arg(long, default_value = "127.0.0.1:8443", value_name = "ADDR")]
    pub listen: SocketAddr,
}

#[derive(Debug, Args)]
pub struct TermArgs {
    /// Address to listen on (repeatable; port 0 picks a free port).
    #[arg(long = "listen", value_name = "ADDR", required = true)]
    pub listen: Vec<SocketAddr>,
    /// Serve HTTPS with this PEM file (certificate chain and private key); ALPN offers h2 and
    /// http/1.1. A plain listener serves HTTP/2 to clients that open with its preface (h2c).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// Number of threads, each with its own event loop and listening sockets.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: u16,
    /// Name shown in the default page and the x-term-server header.
    #[arg(long)]
    pub name: Option<String>,
    /// Pin thread i to CPU i of this comma-separated list.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub cpus: Option<Vec<usize>>,
    /// Expect a PROXY protocol header (v1 or v2) at the start of every connection and echo it
    /// in x-proxy-version, x-proxy-src and x-proxy-dst response headers.
    #[arg(long)]
    pub accept_proxy: bool,
}
