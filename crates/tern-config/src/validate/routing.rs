//! `use_backend` rules of a frontend: content switching on ACL conditions.

use super::condition::Acls;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::Route;
use crate::raw::RawRoute;

impl Checker<'_> {
    pub(super) fn use_backend(
        &mut self,
        raw: Option<&[RawRoute]>,
        acls: &Acls,
        path: &KeyPath,
        backends: &[Option<&str>],
    ) -> Vec<Route> {
        let mut routes = Vec::new();
        for (i, rule) in raw.unwrap_or_default().iter().enumerate() {
            let at = path.index(i);
            let backend = match rule.backend.as_deref() {
                Some(name) => {
                    self.backend_exists(name, &at.key("backend"), backends);
                    name.to_owned()
                }
                None => {
                    self.issue(
                        &at,
                        "missing key `backend`: name the backend this rule chooses",
                    );
                    String::new()
                }
            };
            let condition =
                self.rule_condition(acls, rule.if_.as_deref(), rule.unless.as_deref(), &at);
            routes.push(Route { backend, condition });
        }
        routes
    }
}
