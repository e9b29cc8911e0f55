//! The addresses of this network namespace's interfaces, by
//! `getifaddrs(3)` (the same call on every system scalebench runs on).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One address of an interface that is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfAddr {
    /// The interface's name.
    pub interface: String,
    /// The address.
    pub ip: IpAddr,
    /// Its prefix length (from the netmask; 0 when none is given).
    pub prefix: u8,
}

impl IfAddr {
    /// Whether `other` is on this address's network (same prefix).
    pub fn same_network(&self, other: IpAddr) -> bool {
        match (self.ip, other) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                let p = u32::from(self.prefix.min(32));
                let mask = if p == 0 { 0 } else { u32::MAX << (32 - p) };
                u32::from(a) & mask == u32::from(b) & mask
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                let p = u32::from(self.prefix.min(128));
                let mask = if p == 0 { 0 } else { u128::MAX << (128 - p) };
                u128::from(a) & mask == u128::from(b) & mask
            }
            _ => false,
        }
    }

    /// Usable to reach another host: not loopback, not link-local, not
    /// unspecified.
    pub fn is_global(&self) -> bool {
        match self.ip {
            IpAddr::V4(a) => !a.is_loopback() && !a.is_link_local() && !a.is_unspecified(),
            IpAddr::V6(a) => {
                !a.is_loopback() && !a.is_unspecified() && (a.segments()[0] & 0xffc0) != 0xfe80
            }
        }
    }
}

/// A sockaddr's address, if it is IPv4 or IPv6.
///
/// # Safety
/// `sa` is null or points to a sockaddr of its family's size.
unsafe fn ip_of(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: non-null, per the contract.
    match i32::from(unsafe { (*sa).sa_family }) {
        libc::AF_INET => {
            // SAFETY: an AF_INET sockaddr is a sockaddr_in.
            let s = unsafe { &*(sa as *const libc::sockaddr_in) };
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(s.sin_addr.s_addr))))
        }
        libc::AF_INET6 => {
            // SAFETY: an AF_INET6 sockaddr is a sockaddr_in6.
            let s = unsafe { &*(sa as *const libc::sockaddr_in6) };
            Some(IpAddr::V6(Ipv6Addr::from(s.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}

/// Every IPv4 and IPv6 address of the interfaces that are up, in the
/// order the system lists them; empty when it cannot say.
pub fn addresses() -> Vec<IfAddr> {
    const IFF_UP: libc::c_uint = 0x1;
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Vec::new();
    }
    let mut v = Vec::new();
    let mut p = head;
    while !p.is_null() {
        // SAFETY: a node of the list getifaddrs made, not yet freed.
        let a = unsafe { &*p };
        p = a.ifa_next;
        if a.ifa_flags & IFF_UP == 0 || a.ifa_name.is_null() {
            continue;
        }
        // SAFETY: ifa_addr is null or a sockaddr of its family.
        let Some(ip) = (unsafe { ip_of(a.ifa_addr) }) else {
            continue;
        };
        // SAFETY: ifa_netmask is null or a sockaddr of the same family.
        let prefix = match unsafe { ip_of(a.ifa_netmask) } {
            Some(IpAddr::V4(m)) => u32::from(m).count_ones() as u8,
            Some(IpAddr::V6(m)) => u128::from(m).count_ones() as u8,
            None => 0,
        };
        // SAFETY: ifa_name is a NUL-terminated string.
        let interface = unsafe { std::ffi::CStr::from_ptr(a.ifa_name) }
            .to_string_lossy()
            .into_owned();
        v.push(IfAddr {
            interface,
            ip,
            prefix,
        });
    }
    // SAFETY: the list getifaddrs made, freed once.
    unsafe { libc::freeifaddrs(head) };
    v
}

/// The packets, errors and receive drops of every interface added up,
/// from the `if_data` of each link-level address (the BSDs and macOS;
/// Linux reads /proc/net/dev instead); `None` when the system lists none.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[allow(clippy::unnecessary_cast)] // the field types differ between systems
pub fn link_counters() -> Option<super::counters::NetCounters> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return None;
    }
    let mut sum = super::counters::NetCounters {
        dropped: Some(0),
        ..Default::default()
    };
    let mut any = false;
    let mut p = head;
    while !p.is_null() {
        // SAFETY: a node of the list getifaddrs made, not yet freed.
        let a = unsafe { &*p };
        p = a.ifa_next;
        // SAFETY: ifa_addr is null or a sockaddr.
        let link =
            !a.ifa_addr.is_null() && i32::from(unsafe { (*a.ifa_addr).sa_family }) == libc::AF_LINK;
        if !link || a.ifa_data.is_null() {
            continue;
        }
        // SAFETY: a link-level address's ifa_data is its struct if_data.
        let d = unsafe { &*(a.ifa_data as *const libc::if_data) };
        any = true;
        sum.rx_packets += d.ifi_ipackets as u64;
        sum.tx_packets += d.ifi_opackets as u64;
        sum.errors += d.ifi_ierrors as u64 + d.ifi_oerrors as u64;
        sum.dropped = sum.dropped.map(|x| x + d.ifi_iqdrops as u64);
    }
    // SAFETY: the list getifaddrs made, freed once.
    unsafe { libc::freeifaddrs(head) };
    any.then_some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_compare_under_the_prefix() {
        let a = IfAddr {
            interface: "to-h1".into(),
            ip: "198.18.1.2".parse().unwrap(),
            prefix: 24,
        };
        assert!(a.same_network("198.18.1.1".parse().unwrap()));
        assert!(!a.same_network("198.18.2.1".parse().unwrap()));
        assert!(!a.same_network("::1".parse().unwrap()));
        assert!(a.is_global());
        let six = IfAddr {
            interface: "x".into(),
            ip: "2001:2:0:1::2".parse().unwrap(),
            prefix: 64,
        };
        assert!(six.same_network("2001:2:0:1::1".parse().unwrap()));
        assert!(!six.same_network("2001:2:0:2::1".parse().unwrap()));
        let ll = IfAddr {
            interface: "x".into(),
            ip: "fe80::1".parse().unwrap(),
            prefix: 64,
        };
        assert!(!ll.is_global());
    }

    #[test]
    fn loopback_is_listed_here() {
        // Every machine that runs the tests has an interface up with an
        // address (loopback at least).
        let all = addresses();
        assert!(
            all.iter().any(|a| a.ip.is_loopback()),
            "no loopback address among {all:?}"
        );
    }
}
