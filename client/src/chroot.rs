//! The client-side chroot (reference docs/protocol.md §15): a prefix added to every outgoing path and removed
//! from every returned one. The server never knows about it.
//!
//! Invariants: a chroot is absolute, has no trailing slash and is never `/` itself (a `/chroot`
//! suffix of `/` means "no chroot"); user paths must be absolute; `strip(prefix(p)) == p` for
//! every absolute `p`.

use crate::error::Error;

/// A chroot, or none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Chroot(Option<String>);

impl Chroot {
    /// Parses the chroot part of a connect string (`/app`), or `None`/`/` for no chroot.
    pub(crate) fn new(path: Option<&str>) -> Result<Chroot, Error> {
        match path {
            None | Some("") | Some("/") => Ok(Chroot(None)),
            Some(p) if !p.starts_with('/') || p.ends_with('/') || p.contains("//") => {
                Err(Error::InvalidArgument(format!("invalid chroot {p:?}")))
            }
            Some(p) => Ok(Chroot(Some(p.to_owned()))),
        }
    }

    /// The chroot as a string, `None` when there is none.
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The server path for a user path.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a path that is not absolute. Everything else about the
    /// path is for the server to judge (it answers `BadArguments`).
    pub(crate) fn prefix(&self, path: &str) -> Result<String, Error> {
        if !path.starts_with('/') {
            return Err(Error::InvalidArgument(format!(
                "path {path:?} does not start with '/'"
            )));
        }
        Ok(match &self.0 {
            None => path.to_owned(),
            Some(root) if path == "/" => root.clone(),
            Some(root) => format!("{root}{path}"),
        })
    }

    /// The user path for a server path. A path outside the chroot is returned unchanged.
    pub(crate) fn strip(&self, path: &str) -> String {
        match &self.0 {
            None => path.to_owned(),
            Some(root) => match path.strip_prefix(root.as_str()) {
                Some("") => "/".to_owned(),
                Some(rest) if rest.starts_with('/') => rest.to_owned(),
                _ => path.to_owned(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_and_strip_round_trip() {
        let c = Chroot::new(Some("/app")).unwrap();
        assert_eq!(c.prefix("/").unwrap(), "/app");
        assert_eq!(c.prefix("/a/b").unwrap(), "/app/a/b");
        assert_eq!(c.strip("/app"), "/");
        assert_eq!(c.strip("/app/a/b"), "/a/b");
        assert_eq!(c.strip("/apple"), "/apple");
        assert!(c.prefix("a").is_err());
        let none = Chroot::new(Some("/")).unwrap();
        assert_eq!(none.prefix("/x").unwrap(), "/x");
        assert_eq!(none.strip("/x"), "/x");
        assert!(Chroot::new(Some("/app/")).is_err());
        assert!(Chroot::new(Some("app")).is_err());
    }
}
