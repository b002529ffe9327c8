#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::*;
use crate::exchange::servers;

/// Servers `a`, `b` and `c` with these `disabled` values.
fn config(disabled: [bool; 3]) -> Config {
    let servers: Vec<String> = ["a", "b", "c"]
        .iter()
        .zip(disabled)
        .enumerate()
        .map(|(i, (name, d))| {
            format!(
                "{{ name = \"{name}\", address = \"127.0.0.1:{}\", disabled = {d} }}",
                i + 1
            )
        })
        .collect();
    let text = format!(
        "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
         [[backend]]\nname = \"b\"\nservers = [ {} ]\n",
        servers.join(", ")
    );
    tern_config::parse(&text, Path::new("test.toml")).unwrap()
}

fn admin(states: &[BackendState], server: usize) -> AdminState {
    states[0].server(server).unwrap().admin()
}

#[test]
fn the_operators_word_outlives_a_reload_and_a_changed_disabled_wins_otherwise() {
    let old = config([true, false, false]);
    let running = servers::for_backends(&old.backends);
    assert_eq!(
        admin(&running, 0),
        AdminState::Maint,
        "disabled in the file"
    );
    // At runtime: a enabled, c disabled; b left as the file said.
    running[0].set_admin(0, AdminState::Ready);
    running[0].set_admin(2, AdminState::Maint);
    let carry = servers_of(&old, &running);

    // The new file disables a (already so in the old one), b (new) and not c.
    let new = config([true, true, false]);
    let next = servers::for_backends(&new.backends);
    apply_servers(&new, &next, &carry);
    assert_eq!(admin(&next, 0), AdminState::Ready, "enabled at runtime");
    assert_eq!(admin(&next, 1), AdminState::Maint, "the file changed");
    assert_eq!(admin(&next, 2), AdminState::Maint, "disabled at runtime");

    // A file that drops `disabled` enables a server nobody touched.
    let carry = servers_of(&new, &next);
    let last = config([false, false, false]);
    let after = servers::for_backends(&last.backends);
    apply_servers(&last, &after, &carry);
    assert_eq!(admin(&after, 1), AdminState::Ready);
    assert_eq!(admin(&after, 2), AdminState::Maint, "still the operator's");
}
