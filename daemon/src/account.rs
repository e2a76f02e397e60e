//! The machine's users, as `/etc/passwd` lists them: who a witness account serves, and
//! whose logs it watches. Read from the file, not through NSS, so that a name resolves the
//! same for the daemon, the installer and `doctor`; a user only a directory service knows
//! is named by uid instead.

use std::path::PathBuf;

/// One user of the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

/// The file the users are read from.
pub const PASSWD: &str = "/etc/passwd";

/// Every user `/etc/passwd` lists (none when it cannot be read).
pub fn all() -> Vec<Account> {
    std::fs::read_to_string(PASSWD).map(|text| parse(&text)).unwrap_or_default()
}

fn parse(text: &str) -> Vec<Account> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            let [name, _, uid, gid, _, home, ..] = fields.as_slice() else { return None };
            Some(Account {
                name: (*name).to_owned(),
                uid: uid.parse().ok()?,
                gid: gid.parse().ok()?,
                home: home.into(),
            })
        })
        .collect()
}

/// The user `who` names (a name, or a uid in decimal) as `/etc/passwd` lists them.
pub fn find(who: &str) -> Option<Account> {
    let uid = who.parse::<u32>().ok();
    all().into_iter().find(|a| a.name == who || Some(a.uid) == uid)
}

/// The uid of `who`: a listed user's, or a uid in decimal (a user only a directory
/// service knows).
pub fn uid_of(who: &str) -> Option<u32> {
    find(who).map(|a| a.uid).or_else(|| who.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwd_lines_give_name_ids_and_home() {
        let text = "root:x:0:0:root:/root:/bin/bash\nbroken line\nalice:x:1000:1000:Alice,,,:/home/alice:/bin/sh\n";
        let accounts = parse(text);
        assert_eq!(accounts.len(), 2);
        assert_eq!(accounts[1], Account { name: "alice".into(), uid: 1000, gid: 1000, home: "/home/alice".into() });
    }
}
