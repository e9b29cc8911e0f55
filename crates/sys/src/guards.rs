//! Linux: what stands between the network and the programs measured — the
//! packet filter's rules and the security modules — read from the kernel
//! itself, so that no `nft` or `iptables` binary is needed.
//!
//! nftables rules come from a netlink dump (`NFT_MSG_GETRULE` on
//! `NETLINK_NETFILTER`, as `nft list ruleset` asks), counted by family and
//! table; it covers the network namespace the process is in, and the
//! rules iptables-nft makes. Legacy iptables tables are the ones
//! `/proc/net/ip{,6}_tables_names` lists (asking about another would load
//! its module), each with the kernel's entry count (`IPT_SO_GET_INFO`).
//! Both need CAP_NET_ADMIN; without it the part is left out and
//! `unreadable` says so.

use super::tuning::{Firewall, Security};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

// linux/netfilter/nfnetlink.h, nf_tables.h, netlink.h
const NFNL_SUBSYS_NFTABLES: u16 = 10;
const NFT_MSG_NEWRULE: u16 = 6;
const NFT_MSG_GETRULE: u16 = 7;
const NFTA_RULE_TABLE: u16 = 1;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
// linux/netfilter_ipv4/ip_tables.h (IPT_BASE_CTL), the same for IPv6.
const IPT_SO_GET_INFO: libc::c_int = 64;

/// Most netlink messages read from one dump (a bound on the loop).
const MOST_MESSAGES: usize = 1_000_000;

/// The name of the errno the last failed call left (`EPERM`).
fn last_errno() -> String {
    super::errno_name(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

/// The packet filter's rules, as far as this process may read them.
pub fn firewall() -> Firewall {
    let mut f = Firewall::default();
    match nftables_rules() {
        Ok(m) => f.nftables = Some(m),
        Err(e) => f.unreadable.push(format!("nftables: {e}")),
    }
    match iptables_legacy() {
        Ok(m) => f.iptables_legacy = Some(m),
        Err(e) => f.unreadable.push(format!("iptables (legacy): {e}")),
    }
    f
}

/// The family of an nfgenmsg, as `nft` names it.
fn family_name(f: u8) -> String {
    match f {
        1 => "inet".into(),
        2 => "ip".into(),
        3 => "arp".into(),
        5 => "netdev".into(),
        7 => "bridge".into(),
        10 => "ip6".into(),
        n => format!("family {n}"),
    }
}

/// The nftables rules by `family table`, from a netlink dump.
fn nftables_rules() -> Result<BTreeMap<String, u64>, String> {
    // SAFETY: socket(2) with constant arguments.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_NETFILTER,
        )
    };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: a descriptor just made, owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let tv = libc::timeval {
        tv_sec: 2,
        tv_usec: 0,
    };
    // SAFETY: setting a receive timeout from a valid timeval.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    // nlmsghdr (16 bytes) + nfgenmsg (family AF_UNSPEC, version 0, res_id 0).
    let mut req = Vec::with_capacity(20);
    req.extend_from_slice(&20u32.to_ne_bytes());
    req.extend_from_slice(&((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETRULE).to_ne_bytes());
    req.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&[0, 0, 0, 0]);
    // SAFETY: sending our buffer on our socket (the kernel is the peer).
    let sent = unsafe { libc::send(fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) };
    if sent < 0 {
        return Err(last_errno());
    }
    let mut counts = BTreeMap::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut seen = 0;
    while seen < MOST_MESSAGES {
        // SAFETY: receiving into our own buffer.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(format!("reading the dump: {}", last_errno()));
        }
        match parse_rule_dump(&buf[..n as usize], &mut counts)? {
            Dump::More(k) => seen += k.max(1),
            Dump::Done => return Ok(counts),
        }
    }
    Err(format!("more than {MOST_MESSAGES} messages"))
}

/// Whether a dump goes on.
#[derive(Debug, PartialEq)]
enum Dump {
    /// Messages read so far in this datagram.
    More(usize),
    Done,
}

/// Counts the rules in one datagram of an `NFT_MSG_GETRULE` dump into
/// `counts` by `family table`.
fn parse_rule_dump(mut b: &[u8], counts: &mut BTreeMap<String, u64>) -> Result<Dump, String> {
    let u32_at = |b: &[u8], i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let u16_at = |b: &[u8], i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
    let mut k = 0;
    while b.len() >= 16 {
        let len = u32_at(b, 0) as usize;
        if len < 16 || len > b.len() {
            return Err(format!("a netlink message of {len} bytes in {}", b.len()));
        }
        let msg = &b[..len];
        b = &b[len.next_multiple_of(4).min(b.len())..];
        let kind = u16_at(msg, 4);
        match kind {
            NLMSG_DONE => return Ok(Dump::Done),
            NLMSG_ERROR if msg.len() >= 20 => {
                let code = i32::from_ne_bytes([msg[16], msg[17], msg[18], msg[19]]);
                if code == 0 {
                    continue;
                }
                return Err(super::errno_name(-code));
            }
            t if t == (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE && msg.len() >= 20 => {
                let family = family_name(msg[16]);
                let table = rule_table(&msg[20..]).unwrap_or_else(|| "?".into());
                *counts.entry(format!("{family} {table}")).or_insert(0) += 1;
                k += 1;
            }
            _ => {}
        }
    }
    Ok(Dump::More(k))
}

/// The `NFTA_RULE_TABLE` attribute among a rule message's attributes.
fn rule_table(mut a: &[u8]) -> Option<String> {
    while a.len() >= 4 {
        let len = u16::from_ne_bytes([a[0], a[1]]) as usize;
        let kind = u16::from_ne_bytes([a[2], a[3]]) & 0x3fff;
        if len < 4 || len > a.len() {
            return None;
        }
        if kind == NFTA_RULE_TABLE {
            let v = &a[4..len];
            let v = v.split(|&c| c == 0).next().unwrap_or(v);
            return Some(String::from_utf8_lossy(v).into_owned());
        }
        a = &a[len.next_multiple_of(4).min(a.len())..];
    }
    None
}

/// The legacy iptables tables loaded and their entry counts.
fn iptables_legacy() -> Result<BTreeMap<String, u64>, String> {
    let mut m = BTreeMap::new();
    for (family, names, domain, level) in [
        (
            "ipv4",
            "/proc/net/ip_tables_names",
            libc::AF_INET,
            libc::IPPROTO_IP,
        ),
        (
            "ipv6",
            "/proc/net/ip6_tables_names",
            libc::AF_INET6,
            libc::IPPROTO_IPV6,
        ),
    ] {
        let Ok(text) = std::fs::read_to_string(names) else {
            continue; // the module is not loaded: no tables
        };
        for table in text.split_whitespace() {
            let n = table_entries(domain, level, table)?;
            m.insert(format!("{family} {table}"), n);
        }
    }
    Ok(m)
}

/// `struct ipt_getinfo` (the same layout as `ip6t_getinfo`).
#[repr(C)]
struct GetInfo {
    name: [u8; 32],
    valid_hooks: u32,
    hook_entry: [u32; 5],
    underflow: [u32; 5],
    num_entries: u32,
    size: u32,
}

/// The kernel's entry count of legacy table `table`.
fn table_entries(domain: i32, level: i32, table: &str) -> Result<u64, String> {
    // SAFETY: socket(2) with constant arguments.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::IPPROTO_RAW,
        )
    };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: a descriptor just made, owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: GetInfo is plain data.
    let mut info: GetInfo = unsafe { std::mem::zeroed() };
    let name = table.as_bytes();
    if name.len() >= info.name.len() {
        return Err(format!("table name `{table}` too long"));
    }
    info.name[..name.len()].copy_from_slice(name);
    let mut len = std::mem::size_of::<GetInfo>() as libc::socklen_t;
    // SAFETY: the kernel fills our GetInfo, whose size is given.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            IPT_SO_GET_INFO,
            (&mut info as *mut GetInfo).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(format!("{table}: {}", last_errno()));
    }
    Ok(u64::from(info.num_entries))
}

/// The security modules and their modes.
pub fn security() -> Security {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let lsm = read("/sys/kernel/security/lsm").map(|s| {
        s.split(',')
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .collect()
    });
    let selinux = Some(match read("/sys/fs/selinux/enforce").as_deref() {
        Some("1") => "enforcing".to_string(),
        Some("0") => "permissive".to_string(),
        Some(v) => format!("enforce = {v}"),
        None => "off".to_string(),
    });
    let apparmor = Some(
        match read("/sys/module/apparmor/parameters/enabled").as_deref() {
            Some("Y") => read("/sys/kernel/security/apparmor/profiles")
                .map_or("on".to_string(), |p| apparmor_profiles(&p)),
            _ => "off".to_string(),
        },
    );
    Security {
        lsm,
        selinux,
        apparmor,
        securelevel: None,
    }
}

/// AppArmor's mode from its profile list (`name (enforce)` a line):
/// `on: 40 profiles (38 enforce, 2 complain)`.
fn apparmor_profiles(list: &str) -> String {
    let mut modes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut all = 0;
    for line in list.lines().filter(|l| !l.trim().is_empty()) {
        all += 1;
        let mode = line
            .rsplit_once('(')
            .map_or("unknown", |(_, m)| m.trim_end_matches(')'));
        *modes.entry(mode).or_insert(0) += 1;
    }
    let parts: Vec<String> = modes.iter().map(|(m, n)| format!("{n} {m}")).collect();
    if parts.is_empty() {
        "on: 0 profiles".into()
    } else {
        format!("on: {all} profiles ({})", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One netlink message: header, then `body`.
    fn msg(kind: u16, body: &[u8]) -> Vec<u8> {
        let len = 16 + body.len();
        let mut v = Vec::new();
        v.extend_from_slice(&(len as u32).to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(&[0; 10]);
        v.extend_from_slice(body);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    /// A rule message of `family` in `table` (nfgenmsg, then attributes).
    fn rule(family: u8, table: &str) -> Vec<u8> {
        let mut body = vec![family, 0, 0, 0];
        let name = format!("{table}\0");
        body.extend_from_slice(&((4 + name.len()) as u16).to_ne_bytes());
        body.extend_from_slice(&NFTA_RULE_TABLE.to_ne_bytes());
        body.extend_from_slice(name.as_bytes());
        while body.len() % 4 != 0 {
            body.push(0);
        }
        msg((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE, &body)
    }

    #[test]
    fn a_dump_is_counted_by_family_and_table_until_done() {
        let mut d = rule(1, "filter");
        d.extend(rule(1, "filter"));
        d.extend(rule(2, "nat"));
        let mut counts = BTreeMap::new();
        assert_eq!(parse_rule_dump(&d, &mut counts), Ok(Dump::More(3)));
        let done = msg(NLMSG_DONE, &[0, 0, 0, 0]);
        assert_eq!(parse_rule_dump(&done, &mut counts), Ok(Dump::Done));
        assert_eq!(counts["inet filter"], 2);
        assert_eq!(counts["ip nat"], 1);
        assert_eq!(counts.len(), 2);
    }

    #[test]
    fn an_error_answer_is_named_and_a_bad_length_refused() {
        let mut counts = BTreeMap::new();
        let e = msg(NLMSG_ERROR, &(-libc::EPERM).to_ne_bytes());
        assert_eq!(parse_rule_dump(&e, &mut counts), Err("EPERM".into()));
        let mut bad = rule(1, "t");
        bad[0] = 200;
        assert!(parse_rule_dump(&bad, &mut counts).is_err());
    }

    #[test]
    fn apparmor_profiles_are_counted_by_mode() {
        let list = "/usr/bin/man (enforce)\nnvidia_modprobe (enforce)\nlsb_release (complain)\n";
        assert_eq!(
            apparmor_profiles(list),
            "on: 3 profiles (1 complain, 2 enforce)"
        );
        assert_eq!(apparmor_profiles(""), "on: 0 profiles");
    }

    #[test]
    fn this_machine_has_a_firewall_record_and_a_security_record() {
        let f = firewall();
        // As root here: both parts read, or the reason named.
        assert!(
            f.nftables.is_some() || f.unreadable.iter().any(|u| u.starts_with("nftables")),
            "{f:?}"
        );
        let s = security();
        assert!(s.selinux.is_some() && s.apparmor.is_some(), "{s:?}");
    }
}
