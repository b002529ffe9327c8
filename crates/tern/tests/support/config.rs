//! Building test configurations and certificate files.

use std::path::Path;

use super::Term;

/// A one-frontend, one-backend configuration, rendered as TOML. Fields are raw TOML fragments
/// so each test can add exactly the keys it is about.
#[derive(Debug, Clone)]
pub struct Config {
    pub global: Vec<String>,
    pub binds: Vec<String>,
    pub frontend: Vec<String>,
    pub backend: Vec<String>,
    pub servers: Vec<String>,
}

impl Config {
    /// One plain bind on an ephemeral port, one worker, monitor URI `/test`.
    pub fn new() -> Config {
        Config {
            global: vec!["workers = 1".into()],
            binds: vec!["\"127.0.0.1:0\"".into()],
            frontend: vec!["monitor_uri = \"/test\"".into()],
            backend: Vec::new(),
            servers: Vec::new(),
        }
    }

    /// Adds each term as a server `s<i>` with weight 1.
    pub fn terms(mut self, terms: &[&Term]) -> Config {
        for t in terms {
            self.servers.push(format!(
                "{{ name = \"{}\", address = \"{}\" }}",
                t.name, t.addr
            ));
        }
        self
    }

    /// Adds a server by raw address.
    pub fn server(mut self, name: &str, addr: &str, weight: u32) -> Config {
        self.servers.push(format!(
            "{{ name = \"{name}\", address = \"{addr}\", weight = {weight} }}"
        ));
        self
    }

    /// Adds a server as a raw TOML table, e.g. `{ name = "b", address = "...", backup = true }`.
    pub fn raw_server(mut self, item: &str) -> Config {
        self.servers.push(item.into());
        self
    }

    pub fn global(mut self, line: &str) -> Config {
        self.global.push(line.into());
        self
    }

    pub fn frontend(mut self, line: &str) -> Config {
        self.frontend.push(line.into());
        self
    }

    pub fn backend(mut self, line: &str) -> Config {
        self.backend.push(line.into());
        self
    }

    /// Adds raw TOML lines to the frontend and to the backend.
    pub fn with_lines(mut self, frontend: &[&str], backend: &[&str]) -> Config {
        self.frontend
            .extend(frontend.iter().map(|l| (*l).to_owned()));
        self.backend.extend(backend.iter().map(|l| (*l).to_owned()));
        self
    }

    /// Replaces the binds with these raw TOML items.
    pub fn binds(mut self, items: &[&str]) -> Config {
        self.binds = items.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// Makes the frontend TLS with this certificate file list (raw TOML items).
    pub fn tls(self, certs: &[&str]) -> Config {
        let list = certs.join(", ");
        self.frontend(&format!("tls = {{ certs = [{list}] }}"))
    }

    pub fn toml(&self) -> String {
        let servers = if self.servers.is_empty() {
            // A server nobody listens on: port 1 on loopback refuses connections.
            "{ name = \"none\", address = \"127.0.0.1:1\" }".to_owned()
        } else {
            self.servers.join(",\n  ")
        };
        format!(
            "[global]\n{}\n\n[[frontend]]\nname = \"web\"\nbind = [{}]\ndefault_backend = \"app\"\n{}\n\n[[backend]]\nname = \"app\"\n{}\nservers = [\n  {}\n]\n",
            self.global.join("\n"),
            self.binds.join(", "),
            self.frontend.join("\n"),
            self.backend.join("\n"),
            servers
        )
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

/// Writes a self-signed certificate for localhost/127.0.0.1 into `dir`: `<name>.pem` (chain and
/// key), `<name>.crt` and `<name>.key`. Returns the combined file's path.
pub fn write_cert(dir: &Path, name: &str, kind: tern_tls::KeyKind) -> String {
    let cert =
        tern_tls::self_signed(&["localhost".to_owned(), "127.0.0.1".to_owned()], kind).unwrap();
    std::fs::write(dir.join(format!("{name}.crt")), &cert.cert_pem).unwrap();
    std::fs::write(dir.join(format!("{name}.key")), &cert.key_pem).unwrap();
    let combined = dir.join(format!("{name}.pem"));
    std::fs::write(&combined, format!("{}{}", cert.cert_pem, cert.key_pem)).unwrap();
    combined.to_str().unwrap().to_owned()
}
