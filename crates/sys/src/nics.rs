//! Linux: the network interfaces that are up, as `/sys/class/net` and the
//! ethtool ioctl show them.
//!
//! Rings and offloads come from the `SIOCETHTOOL` ioctl on a UDP socket
//! (`ETHTOOL_GRINGPARAM`, and the legacy one-value requests
//! `ETHTOOL_GTSO`, `GGSO`, `GGRO`, `GSG`, `GRXCSUM`, `GTXCSUM`, and
//! `GFLAGS` for LRO), as `ethtool -g` and `ethtool -k` would: no ethtool
//! binary is needed, and asking needs no privilege. A driver that does not
//! answer a request leaves that field out.

use super::tuning::{Channels, Nic, Offloads};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

// linux/if.h
const IFF_UP: u32 = 0x1;
const IFF_LOOPBACK: u32 = 0x8;

// linux/ethtool.h
const ETHTOOL_GRINGPARAM: u32 = 0x10;
const ETHTOOL_GRXCSUM: u32 = 0x14;
const ETHTOOL_GTXCSUM: u32 = 0x16;
const ETHTOOL_GSG: u32 = 0x18;
const ETHTOOL_GTSO: u32 = 0x1e;
const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_GFLAGS: u32 = 0x25;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_GCHANNELS: u32 = 0x3c;
const ETH_FLAG_LRO: u32 = 1 << 15;

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// `struct ethtool_ringparam`.
#[repr(C)]
#[derive(Default)]
struct EthtoolRingparam {
    cmd: u32,
    rx_max_pending: u32,
    rx_mini_max_pending: u32,
    rx_jumbo_max_pending: u32,
    tx_max_pending: u32,
    rx_pending: u32,
    rx_mini_pending: u32,
    rx_jumbo_pending: u32,
    tx_pending: u32,
}

/// `struct ethtool_channels`.
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

/// A socket to send ethtool requests on.
struct Ethtool(OwnedFd);

impl Ethtool {
    fn new() -> Option<Ethtool> {
        // SAFETY: socket(2) with constant arguments.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        // SAFETY: a descriptor just made and owned by nobody else.
        (fd >= 0).then(|| Ethtool(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Sends the ethtool request `data` (a struct starting with its
    /// command) about interface `name`; whether the driver answered.
    fn ask<T>(&self, name: &str, data: &mut T) -> bool {
        // SAFETY: ifreq is plain data.
        let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.len() >= ifr.ifr_name.len() {
            return false;
        }
        for (d, &b) in ifr.ifr_name.iter_mut().zip(bytes) {
            *d = b as libc::c_char;
        }
        ifr.ifr_ifru.ifru_data = data as *mut T as *mut libc::c_char;
        // SAFETY: SIOCETHTOOL reads the command from, and writes the
        // answer into, the struct ifr_data points to, which is `data`.
        unsafe { libc::ioctl(self.0.as_raw_fd(), libc::SIOCETHTOOL as _, &mut ifr) == 0 }
    }

    /// A one-value request's answer.
    fn value(&self, name: &str, cmd: u32) -> Option<u32> {
        let mut v = EthtoolValue { cmd, data: 0 };
        self.ask(name, &mut v).then_some(v.data)
    }

    /// The receive and transmit ring sizes.
    fn rings(&self, name: &str) -> Option<(u32, u32)> {
        let mut r = EthtoolRingparam {
            cmd: ETHTOOL_GRINGPARAM,
            ..Default::default()
        };
        self.ask(name, &mut r)
            .then_some((r.rx_pending, r.tx_pending))
    }

    /// The channels, as `ethtool -l` shows them.
    fn channels(&self, name: &str) -> Option<Channels> {
        let mut c = EthtoolChannels {
            cmd: ETHTOOL_GCHANNELS,
            ..Default::default()
        };
        self.ask(name, &mut c).then_some(Channels {
            rx: c.rx_count,
            tx: c.tx_count,
            other: c.other_count,
            combined: c.combined_count,
            max_combined: c.max_combined,
        })
    }

    fn offloads(&self, name: &str) -> Offloads {
        let on = |cmd| self.value(name, cmd).map(|v| v != 0);
        Offloads {
            tso: on(ETHTOOL_GTSO),
            gso: on(ETHTOOL_GGSO),
            gro: on(ETHTOOL_GGRO),
            lro: self
                .value(name, ETHTOOL_GFLAGS)
                .map(|f| f & ETH_FLAG_LRO != 0),
            sg: on(ETHTOOL_GSG),
            rx_checksum: on(ETHTOOL_GRXCSUM),
            tx_checksum: on(ETHTOOL_GTXCSUM),
        }
    }
}

/// Whether an interface with this `operstate` and `flags` (sysfs, hex) is
/// up and not loopback: administratively up, and its link up or of a kind
/// that does not tell (`unknown`, as tun devices say).
pub(crate) fn is_up(operstate: &str, flags: &str) -> bool {
    let Ok(flags) = u32::from_str_radix(flags.trim().trim_start_matches("0x"), 16) else {
        return false;
    };
    flags & IFF_UP != 0 && flags & IFF_LOOPBACK == 0 && matches!(operstate.trim(), "up" | "unknown")
}

/// The interfaces that are up, loopback left out, by name.
pub fn nics() -> Option<Vec<Nic>> {
    let base = Path::new("/sys/class/net");
    let mut names: Vec<String> = std::fs::read_dir(base)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let ethtool = Ethtool::new();
    let mut v = Vec::new();
    for name in names {
        let dir = base.join(&name);
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
        if !is_up(
            &read("operstate").unwrap_or_default(),
            &read("flags").unwrap_or_default(),
        ) {
            continue;
        }
        let driver = std::fs::read_link(dir.join("device/driver"))
            .ok()
            .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()));
        // Virtual devices say -1 or refuse the read.
        let speed_mbps = read("speed")
            .and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|&s| s > 0)
            .map(|s| s as u64);
        let mtu = read("mtu").and_then(|s| s.trim().parse().ok());
        let rings = ethtool.as_ref().and_then(|e| e.rings(&name));
        let offloads = ethtool
            .as_ref()
            .map(|e| e.offloads(&name))
            .unwrap_or_default();
        let (rx_queues, tx_queues) = queues(&dir.join("queues"));
        v.push(Nic {
            channels: ethtool.as_ref().and_then(|e| e.channels(&name)),
            name,
            driver,
            speed_mbps,
            mtu,
            rx_ring: rings.map(|r| r.0),
            tx_ring: rings.map(|r| r.1),
            rx_queues,
            tx_queues,
            offloads,
        });
    }
    Some(v)
}

/// The receive and transmit queues in an interface's sysfs `queues`
/// directory (`rx-0`, `tx-0`, …).
fn queues(dir: &Path) -> (Option<u32>, Option<u32>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (None, None);
    };
    let names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count() as u32;
    (Some(count("rx-")), Some(count("tx-")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn up_means_administratively_up_with_a_link_and_not_loopback() {
        assert!(is_up("up\n", "0x1003\n"));
        assert!(is_up("unknown", "0x1091"), "a tun device");
        assert!(!is_up("unknown", "0x9"), "loopback");
        assert!(!is_up("down", "0x1003"), "no link");
        assert!(!is_up("up", "0x1002"), "administratively down");
        assert!(!is_up("up", "junk"));
    }

    #[test]
    fn every_interface_that_is_up_is_listed_with_what_sysfs_says() {
        let nics = nics().expect("/sys/class/net");
        let up: Vec<String> = std::fs::read_dir("/sys/class/net")
            .unwrap()
            .flatten()
            .filter(|e| {
                let r = |f: &str| std::fs::read_to_string(e.path().join(f)).unwrap_or_default();
                is_up(&r("operstate"), &r("flags"))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(nics.len(), up.len(), "{nics:?} against {up:?}");
        for n in &nics {
            assert!(up.contains(&n.name), "{n:?}");
            assert!(n.mtu.is_some_and(|m| m > 0), "{n:?}");
            // Every driver answers the legacy value requests from the
            // device's feature flags.
            assert!(n.offloads.tso.is_some() && n.offloads.sg.is_some(), "{n:?}");
            // Every interface has at least one queue each way.
            assert!(n.rx_queues.is_some_and(|q| q >= 1), "{n:?}");
            assert!(n.tx_queues.is_some_and(|q| q >= 1), "{n:?}");
        }
        assert!(nics.iter().all(|n| n.name != "lo"));
    }

    #[test]
    fn a_name_too_long_for_ifreq_is_refused_without_asking() {
        let e = Ethtool::new().expect("a UDP socket");
        assert_eq!(
            e.value("an-interface-name-far-too-long", ETHTOOL_GTSO),
            None
        );
        assert_eq!(e.rings(""), None);
    }
}
