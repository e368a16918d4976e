//! The access commands: `getacl`, `setacl` and `addauth`.
//!
//! Invariant: credentials live in the command's session only (see
//! [`super::connection::Conn`]); `addauth` adds one and shows the identities the session then
//! has, which is how a person checks a credential, and `--auth` on any command is how one is
//! used.

use clap::Args;
use serde::Serialize;
use shepherd_client::Client;

use super::acl::{AclJson, acl_text, parse_acl};
use super::error::{AtPath, CliError};
use super::output::{Out, StatJson, write_result};

/// `shepherd getacl PATH`.
#[derive(Args, Debug)]
pub struct GetAclArgs {
    /// The node whose ACL to print.
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
}

/// `shepherd setacl PATH ACL`.
#[derive(Args, Debug)]
pub struct SetAclArgs {
    /// The node whose ACL to replace.
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
    /// The new ACL: `scheme:id:perms[,…]`, perms from `cdrwa` (e.g. `world:anyone:r`,
    /// `digest:alice:HASH:cdrwa`, `auth::cdrwa` for the command's own credentials).
    pub acl: String,
    /// Replace only if the ACL version is this one (BadVersion otherwise).
    #[arg(long, short = 'v', allow_negative_numbers = true)]
    pub version: Option<i32>,
    /// Print the new stat.
    #[arg(long, short = 's')]
    pub stat: bool,
}

/// `shepherd addauth SCHEME AUTH`.
#[derive(Args, Debug)]
pub struct AddAuthArgs {
    /// The credential as `--auth` takes it (`digest:alice:secret`), or the scheme alone with
    /// the credential after it, as zkCli's `addauth digest alice:secret`.
    #[arg(value_name = "SCHEME[:AUTH]")]
    pub scheme: String,
    /// The credential (`user:password` for digest), when the scheme came alone.
    #[arg(value_name = "AUTH")]
    pub credential: Option<String>,
}

#[derive(Serialize)]
struct AclOut<'a> {
    path: &'a str,
    acl: Vec<AclJson>,
    stat: StatJson,
}

/// Prints one `scheme:id:perms` line per entry (what `setacl` takes back).
pub async fn getacl(client: &Client, args: &GetAclArgs, out: &mut Out) -> Result<(), CliError> {
    let (acl, stat) = client.get_acl(&args.path).await.at(&args.path)?;
    if out.json {
        return out.json_line(&AclOut {
            path: &args.path,
            acl: acl.iter().map(AclJson::from).collect(),
            stat: StatJson::from(&stat),
        });
    }
    for entry in &acl {
        out.line(acl_text(entry))?;
    }
    Ok(())
}

/// Replaces the ACL; prints nothing unless asked (`-s`, `--json`).
pub async fn setacl(client: &Client, args: &SetAclArgs, out: &mut Out) -> Result<(), CliError> {
    let acl = parse_acl(&args.acl).map_err(CliError::Usage)?;
    let stat = client
        .set_acl(&args.path, acl, args.version)
        .await
        .at(&args.path)?;
    write_result(out, &args.path, &stat, args.stat)
}

#[derive(Serialize)]
struct Identity {
    scheme: String,
    user: String,
}

/// Adds the credential to this command's session and prints the session's identities
/// (whoAmI): `scheme:user` a line.
pub async fn addauth(client: &Client, args: &AddAuthArgs, out: &mut Out) -> Result<(), CliError> {
    let (scheme, credential) = match &args.credential {
        Some(credential) => (args.scheme.as_str(), credential.as_str()),
        None => super::connection::parse_auth(&args.scheme)?,
    };
    if scheme == "sasl" {
        return Err(CliError::Usage(
            "SASL authenticates the connection before any request: give --auth \
             sasl:user:password (or --jaas FILE) instead"
                .into(),
        ));
    }
    client
        .add_auth(scheme, credential.as_bytes())
        .await
        .at("")?;
    let identities = client.who_am_i().await.at("")?;
    if out.json {
        let ids: Vec<Identity> = identities
            .into_iter()
            .map(|i| Identity {
                scheme: i.auth_scheme,
                user: i.user,
            })
            .collect();
        return out.json_line(&ids);
    }
    for identity in &identities {
        out.line(format!("{}:{}", identity.auth_scheme, identity.user))?;
    }
    Ok(())
}
