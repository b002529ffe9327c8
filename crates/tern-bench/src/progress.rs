//! Live progress on stderr while `tern bench` runs.
//!
//! On a terminal: one line per second (phase, time, rates, errors, active connections, client
//! CPU) and below it a progress bar redrawn in place, erased at the end. Not on a terminal
//! (a log, a pipe): the same lines without the bar, so logs stay readable. `--quiet`: nothing.

use std::io::{IsTerminal, Write};

use crate::engine::{Phase, Tick};

/// Width of the bar in characters.
const BAR: usize = 30;

/// Prints ticks to stderr.
#[derive(Debug)]
pub struct Progress {
    tty: bool,
    bar_shown: bool,
}

impl Progress {
    /// A printer for stderr; draws the bar only if stderr is a terminal.
    pub fn stderr() -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            bar_shown: false,
        }
    }

    /// Prints one tick.
    pub fn tick(&mut self, tick: &Tick) {
        let mut err = std::io::stderr().lock();
        let mut text = String::new();
        if self.bar_shown {
            text.push_str("\r\x1b[2K");
        }
        text.push_str(&line(tick));
        text.push('\n');
        if self.tty {
            text.push_str(&bar(tick.done));
            self.bar_shown = true;
        }
        // Progress is best effort: a closed stderr must not end the run.
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    /// Erases the bar, if drawn.
    pub fn finish(&mut self) {
        if self.bar_shown {
            let _ = std::io::stderr().write_all(b"\r\x1b[2K");
            self.bar_shown = false;
        }
    }
}

/// The once-a-second line.
pub fn line(tick: &Tick) -> String {
    let phase = match tick.phase {
        Phase::Ramp => "ramp   ",
        Phase::Warmup => "warm-up",
        Phase::Measure => "measure",
    };
    let per_s = |n: u64| {
        if tick.interval > 0.0 {
            n as f64 / tick.interval
        } else {
            0.0
        }
    };
    let cpu = tick
        .cpu_share
        .map_or_else(|| "-".to_owned(), |s| format!("{:.0}%", s * 100.0));
    format!(
        "[{phase} {:>6.1} s] {:>9.0} req/s {:>8.0} conn/s {:>10.0} B/s  errors {:>6}  \
         active {:>5}  client cpu {cpu}",
        tick.at,
        per_s(tick.last.requests),
        per_s(tick.last.connections),
        per_s(tick.last.bytes),
        tick.last.errors,
        tick.last.active,
    )
}

/// `[=====>      ]  42%`
pub fn bar(done: f64) -> String {
    let done = done.clamp(0.0, 1.0);
    let filled = (done * BAR as f64).round() as usize;
    let mut s = String::with_capacity(BAR + 8);
    s.push('[');
    for i in 0..BAR {
        s.push(match i.cmp(&filled) {
            std::cmp::Ordering::Less => '=',
            std::cmp::Ordering::Equal => '>',
            std::cmp::Ordering::Greater => ' ',
        });
    }
    s.push_str(&format!("] {:>3.0}%", done * 100.0));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Live;

    #[test]
    fn lines_and_bars() {
        let tick = Tick {
            at: -1.0,
            phase: Phase::Warmup,
            done: 0.5,
            total: Live::default(),
            last: Live {
                requests: 2000,
                connections: 10,
                errors: 3,
                bytes: 4000,
                active: 7,
            },
            interval: 2.0,
            cpu_share: Some(0.42),
        };
        let l = line(&tick);
        assert!(l.starts_with("[warm-up   -1.0 s]"), "{l}");
        assert!(l.contains(" 1000 req/s"), "{l}");
        assert!(l.contains("errors      3"), "{l}");
        assert!(l.contains("active     7"), "{l}");
        assert!(l.ends_with("client cpu 42%"), "{l}");
        assert_eq!(bar(0.0), format!("[>{}]   0%", " ".repeat(BAR - 1)));
        assert_eq!(bar(1.0), format!("[{}] 100%", "=".repeat(BAR)));
        assert!(bar(0.5).contains("=>"));
    }
}
