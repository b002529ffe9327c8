//! Writes the stats page of a synthetic view (every server status, TLS counters) to a file, or
//! its metrics or `show stat` JSON, for looking at without a running tern and for
//! `scripts/stats-page-check`.
//!
//! `cargo run -p tern-admin --example stats_page -- [--metrics | --json] [OUT]` (stdout without
//! OUT).

#[path = "../tests/support/view.rs"]
mod view;

use std::time::Duration;

use tern_admin::render;

fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let view = view::view();
    let text = match args.first().map(String::as_str) {
        Some("--metrics") => {
            args.remove(0);
            render::prometheus::metrics(&view)
        }
        Some("--json") => {
            args.remove(0);
            format!("{:#}\n", render::json::stat(&view))
        }
        _ => render::html::page(&view, Duration::from_secs(10)),
    };
    match args.first() {
        Some(path) => std::fs::write(path, text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
