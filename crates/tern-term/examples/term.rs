//! Runs a term backend until stdin closes, for manual checks before the `tern term` subcommand:
//! `cargo run --release -p tern-term --example term -- 127.0.0.1:0 [THREADS]`.
use std::io::Read;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:0".into())
        .parse()?;
    let threads = args.next().map_or(Ok(1), |t| t.parse())?;
    let term = tern_term::start(tern_term::TermOptions {
        threads,
        ..tern_term::TermOptions::new(addr)
    })?;
    println!("listening on {}", term.local_addrs()[0]);
    // Serve until stdin reaches EOF (Ctrl-D, or the parent closing the pipe).
    std::io::stdin().read_to_end(&mut Vec::new())?;
    println!("{:?}", term.stats());
    term.shutdown();
    Ok(())
}
