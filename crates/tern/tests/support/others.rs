//! Programs written by others that tests put in front of or behind tern (HAProxy, hitch,
//! stunnel): started in the foreground on loopback ports, waited for until they listen, and
//! killed by their own PID when dropped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Longest wait for a program to listen.
const LISTEN_WAIT: Duration = Duration::from_secs(10);

/// A free loopback port (bound then released: these programs need its number in their file).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A program running in the foreground, its stdout and stderr in `log`.
pub struct Other {
    child: Child,
    pub log: PathBuf,
}

impl Other {
    /// Starts `program ARGS` in `dir` and waits until each of `ports` accepts connections.
    pub fn start(dir: &Path, program: &str, args: &[&str], ports: &[u16]) -> Other {
        let log = dir.join(format!(
            "{}.log",
            program.rsplit('/').next().unwrap_or(program)
        ));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        let mut other = Other { child, log };
        let deadline = Instant::now() + LISTEN_WAIT;
        for port in ports {
            while TcpStream::connect(("127.0.0.1", *port)).is_err() {
                if let Ok(Some(status)) = other.child.try_wait() {
                    panic!("{program} exited with {status}: {}", other.log_text());
                }
                assert!(
                    Instant::now() < deadline,
                    "{program} not listening on {port}: {}",
                    other.log_text()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        other
    }

    /// HAProxy running `cfg` (written to `dir/haproxy.cfg`) in the foreground.
    pub fn haproxy(dir: &Path, cfg: &str, ports: &[u16]) -> Other {
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, cfg).unwrap();
        Other::start(
            dir,
            "haproxy",
            &["-db", "-f", path.to_str().unwrap()],
            ports,
        )
    }

    /// What the program wrote so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the program's output holds `needle`; the output.
    pub fn wait_log(&self, needle: &str, wait: Duration) -> String {
        let deadline = Instant::now() + wait;
        loop {
            let text = self.log_text();
            if text.contains(needle) {
                return text;
            }
            assert!(Instant::now() < deadline, "{needle:?} not in: {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Other {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
