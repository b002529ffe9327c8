//! Creating the control socket's file safely, and removing it only if it is still ours.
//!
//! `bind(2)` creates the socket file with the mode `0777 & ~umask`, so binding at the final path
//! and then calling `chmod` leaves a window in which the socket is as open as the umask allows.
//! Setting a private umask around `bind` would not do either: the umask is process-wide, and the
//! workers create files (logs, certificates reloaded) at the same time. So the socket is bound
//! inside a fresh directory of mode 0700 next to the final path, `chmod`ed there (nobody else can
//! reach it through that directory), then `rename(2)`d into place, which is atomic and replaces
//! a stale socket in one step (HAProxy also binds a temporary name and renames it). The listening
//! socket is never reachable at a mode wider than the one configured.
//!
//! An existing file at the path is replaced only if it is a socket nothing answers on (left by a
//! process that crashed), or, when taking over ([`Existing::Replace`]), a live one (a binary
//! upgrade: the new process takes the path, the old one keeps serving its open connections). A
//! regular file, a directory or a symbolic link there is an error: it is not ours to delete.
//!
//! On stop, the file is removed only if the path still holds our socket (same device and
//! inode): after an upgrade it holds the new process's socket, which must survive.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Longest socket path (`sun_path` holds 108 bytes with the terminating NUL).
const MAX_PATH: usize = 107;

/// What to do with a live socket already at the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Refuse to start: another process serves it.
    Refuse,
    /// Take the path over (binary upgrade).
    Replace,
}

/// A bound, listening control socket at its final path.
#[derive(Debug)]
pub struct SocketFile {
    pub listener: UnixListener,
    pub owned: OwnedPath,
}

/// The path of a socket file we created, removed by [`OwnedPath::remove`] if still ours.
#[derive(Debug)]
pub struct OwnedPath {
    pub path: PathBuf,
    dev: u64,
    ino: u64,
}

impl OwnedPath {
    /// Removes the socket file if the path still holds the socket created by [`bind`].
    pub fn remove(&self) {
        match fs::symlink_metadata(&self.path) {
            Ok(meta) if meta.dev() == self.dev && meta.ino() == self.ino => {
                if let Err(e) = fs::remove_file(&self.path) {
                    tracing::warn!("control: cannot remove {}: {e}", self.path.display());
                }
            }
            _ => {}
        }
    }
}

/// Binds a listening socket at `path` with permissions `mode` (see the module doc).
pub fn bind(path: &Path, mode: u32, existing: Existing) -> Result<SocketFile, String> {
    if path.as_os_str().len() > MAX_PATH {
        return Err(format!(
            "the path is longer than {MAX_PATH} bytes, the most a Unix socket address holds"
        ));
    }
    check_existing(path, existing)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let private = private_dir(parent)?;
    let result = bind_in(&private, path, mode);
    // Empty after a successful rename; holds the socket after a failure.
    let _ = fs::remove_file(private.join("s"));
    let _ = fs::remove_dir(&private);
    result
}

fn bind_in(private: &Path, path: &Path, mode: u32) -> Result<SocketFile, String> {
    let temporary = private.join("s");
    if temporary.as_os_str().len() > MAX_PATH {
        return Err(format!(
            "the temporary path `{}` used while binding is longer than {MAX_PATH} bytes: \
             choose a shorter socket path",
            temporary.display()
        ));
    }
    let listener = UnixListener::bind(&temporary)
        .map_err(|e| format!("cannot bind `{}`: {e}", temporary.display()))?;
    fs::set_permissions(&temporary, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot set mode {mode:04o}: {e}"))?;
    let meta = fs::symlink_metadata(&temporary).map_err(|e| format!("cannot stat: {e}"))?;
    fs::rename(&temporary, path).map_err(|e| {
        format!(
            "cannot move the socket from `{}` into place: {e}",
            temporary.display()
        )
    })?;
    Ok(SocketFile {
        listener,
        owned: OwnedPath {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
        },
    })
}

/// A new directory of mode 0700 in `parent`, named after the process and a counter. A name
/// already taken (by a crashed process with a recycled pid, or by someone else in a shared
/// directory) is skipped, never cleared: it is not ours.
fn private_dir(parent: &Path) -> Result<PathBuf, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let mut last_error = None;
    for _ in 0..16 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!(".tern.{}.{n}", std::process::id()));
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => {
                return Err(format!(
                    "cannot create a directory in `{}`: {e}",
                    parent.display()
                ))
            }
        }
    }
    Err(format!(
        "cannot create a directory in `{}`: {}",
        parent.display(),
        last_error.map_or_else(String::new, |e| e.to_string())
    ))
}

/// Refuses to replace anything but a socket, and a live socket unless taking over.
fn check_existing(path: &Path, existing: Existing) -> Result<(), String> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot check the path: {e}")),
    };
    if !meta.file_type().is_socket() {
        return Err(
            "the path exists and is not a socket; refusing to replace it (remove it yourself if \
             it should go)"
                .to_owned(),
        );
    }
    match UnixStream::connect(path) {
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => Ok(()),
        Err(e) => Err(format!(
            "cannot tell whether the socket there is in use: {e}"
        )),
        Ok(_) if existing == Existing::Replace => Ok(()),
        Ok(_) => {
            Err("another process answers on this socket (is tern already running?)".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tern-sock-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn binds_with_the_mode_and_leaves_no_temporary() {
        let dir = temp_dir("mode");
        let path = dir.join("ctl.sock");
        let socket = bind(&path, 0o600, Existing::Refuse).unwrap();
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("ctl.sock")]);
        UnixStream::connect(&path).unwrap();
        socket.owned.remove();
        assert!(!path.exists());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn replaces_a_stale_socket_but_not_a_live_one_or_a_file() {
        let dir = temp_dir("stale");
        let path = dir.join("ctl.sock");
        drop(UnixListener::bind(&path).unwrap()); // stale: nothing answers
        let live = bind(&path, 0o600, Existing::Refuse).unwrap();
        let err = bind(&path, 0o600, Existing::Refuse).unwrap_err();
        assert!(err.contains("another process answers"), "{err}");
        let taken = bind(&path, 0o600, Existing::Replace).unwrap();
        // The first owner no longer owns the path: stopping it leaves the new socket.
        live.owned.remove();
        assert!(path.exists());
        taken.owned.remove();
        assert!(!path.exists());
        fs::write(&path, "not a socket").unwrap();
        let err = bind(&path, 0o600, Existing::Replace).unwrap_err();
        assert!(err.contains("not a socket"), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "not a socket");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn missing_directory_and_long_paths_are_errors() {
        let err = bind(
            Path::new("/nonexistent-tern-dir/ctl.sock"),
            0o600,
            Existing::Refuse,
        )
        .unwrap_err();
        assert!(err.contains("/nonexistent-tern-dir"), "{err}");
        let long = PathBuf::from(format!("/tmp/{}.sock", "x".repeat(110)));
        assert!(bind(&long, 0o600, Existing::Refuse)
            .unwrap_err()
            .contains("longer than"));
    }
}
