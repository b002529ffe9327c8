//! Several hosts on one machine: network namespaces made by the test, joined by a bridge.
//!
//! The fleet tests run several tern nodes, their servers and their DNS server as if on
//! separate hosts, each with an address of its own. A [`Fabric`] is one private /24
//! (`10.78.K.0/24`) on a bridge that lives in a namespace of its own: a bridge in the root
//! namespace would see the host's firewall (with `br_netfilter` loaded, a `FORWARD` policy of
//! `DROP` drops bridged packets), one in its own namespace sees none. The test's own process
//! (the clients) stays in the root namespace at `10.78.K.1`; every [`Host`] gets a namespace
//! and `10.78.K.(10 + n)`, K counting the fabrics of the test process, so tests running at
//! once do not share a subnet. Everything is removed on drop: deleting a namespace deletes its
//! end of each veth pair, and the pair with it.
//!
//! Needs root (`ip netns`): `.ci/run` runs as root; elsewhere [`Fabric::create`] says why it
//! could not and returns `None`, and the test skips.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};

use super::process::{tern_bin, Proc};

/// A bridge in a namespace of its own, with the root namespace attached at `10.78.K.1`.
pub struct Fabric {
    /// A tag unique to this fabric of this test process, in every name made.
    tag: String,
    /// K, the third octet of the fabric's addresses.
    subnet: u8,
    /// The namespace holding the bridge.
    bridge_ns: String,
    /// Namespaces of the hosts, removed on drop.
    hosts: Vec<String>,
}

/// One host on a fabric: a network namespace with an address.
#[derive(Debug, Clone)]
pub struct Host {
    /// The namespace's name (`ip netns exec NAME ...`).
    pub ns: String,
    pub addr: Ipv4Addr,
}

impl Fabric {
    /// A fabric named after this process and `name`, or `None` (the reason printed) where
    /// namespaces cannot be made.
    pub fn create(name: &str) -> Option<Fabric> {
        static FABRICS: AtomicU8 = AtomicU8::new(0);
        let subnet = FABRICS.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{name}{}-{subnet}", std::process::id());
        let bridge_ns = format!("tern-{tag}-br");
        if !run(&["ip", "netns", "add", &bridge_ns]) {
            eprintln!("skipped: cannot create a network namespace (root needed)");
            return None;
        }
        let fabric = Fabric {
            tag,
            subnet,
            bridge_ns,
            hosts: Vec::new(),
        };
        let steps: [&[&str]; 3] = [
            &[
                "ip",
                "-n",
                &fabric.bridge_ns,
                "link",
                "add",
                "br0",
                "type",
                "bridge",
            ],
            &["ip", "-n", &fabric.bridge_ns, "link", "set", "br0", "up"],
            &["ip", "-n", &fabric.bridge_ns, "link", "set", "lo", "up"],
        ];
        for step in steps {
            assert!(run(step), "setting up the bridge failed at {step:?}");
        }
        fabric.attach(None, "r", fabric.addr(1));
        Some(fabric)
    }

    /// The address of the root namespace on this fabric (the test's clients).
    pub fn client_addr(&self) -> Ipv4Addr {
        self.addr(1)
    }

    fn addr(&self, last: u8) -> Ipv4Addr {
        Ipv4Addr::new(10, 78, self.subnet, last)
    }

    /// A new host `10.78.K.(10 + n)` in a namespace of its own.
    pub fn host(&mut self, n: u8) -> Host {
        let ns = format!("tern-{}-{n}", self.tag);
        assert!(run(&["ip", "netns", "add", &ns]), "ip netns add {ns}");
        self.hosts.push(ns.clone());
        let addr = self.addr(10 + n);
        self.attach(Some(&ns), &n.to_string(), addr);
        assert!(run(&["ip", "-n", &ns, "link", "set", "lo", "up"]));
        Host { ns, addr }
    }

    /// A veth pair from `ns` (`None`: the root namespace) to the bridge, `addr/24` on the
    /// host's end. Interface names stay under the kernel's 15 characters.
    fn attach(&self, ns: Option<&str>, id: &str, addr: Ipv4Addr) {
        let near = format!("t{}f{}{id}", self.subnet, std::process::id() % 100_000);
        let far = format!("{near}b");
        let cidr = format!("{addr}/24");
        let run_in = |args: &[&str]| -> bool {
            match ns {
                Some(ns) => {
                    let mut all = vec!["ip", "netns", "exec", ns];
                    all.extend_from_slice(args);
                    run(&all)
                }
                None => run(args),
            }
        };
        let ok = run_in(&[
            "ip", "link", "add", &near, "type", "veth", "peer", "name", &far,
        ]) && run_in(&["ip", "link", "set", &far, "netns", &self.bridge_ns])
            && run_in(&["ip", "addr", "add", &cidr, "dev", &near])
            && run_in(&["ip", "link", "set", &near, "up"])
            && run(&[
                "ip",
                "-n",
                &self.bridge_ns,
                "link",
                "set",
                &far,
                "master",
                "br0",
            ])
            && run(&["ip", "-n", &self.bridge_ns, "link", "set", &far, "up"]);
        assert!(ok, "attaching {near} ({addr}) to the fabric failed");
    }
}

impl Drop for Fabric {
    fn drop(&mut self) {
        for ns in self.hosts.iter().chain([&self.bridge_ns]) {
            run(&["ip", "netns", "del", ns]);
        }
    }
}

impl Host {
    /// `tern ARGS...` running in this host's namespace, stderr to a file in `dir`.
    pub fn tern(&self, args: &[&str], dir: &Path) -> Proc {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns, tern_bin()]).args(args);
        Proc::spawn_command(cmd, args, dir)
    }
}

/// Runs a command quietly; whether it succeeded.
pub fn run(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
