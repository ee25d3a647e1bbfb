//! What the kernel reports: its namespace counters (`/proc/net/snmp`, `netstat`) for the
//! end-of-case check, and a socket's `TCP_INFO` for failure reports.

use super::netns::os_err;
use super::*;

/// The namespace's `/proc/net/snmp` counters, `Tcp.InSegs` style.
pub(in crate::suites::tcp) fn snmp() -> Result<Vec<(String, u64)>, String> {
    let text = std::fs::read_to_string("/proc/thread-self/net/snmp")
        .map_err(|e| format!("/proc/thread-self/net/snmp: {e}"))?;
    Ok(parse_snmp(&text))
}

/// The namespace's `/proc/net/netstat` counters, `TcpExt.TCPTimeouts` style.
pub(super) fn netstat() -> Result<Vec<(String, u64)>, String> {
    let text = std::fs::read_to_string("/proc/thread-self/net/netstat")
        .map_err(|e| format!("/proc/thread-self/net/netstat: {e}"))?;
    Ok(parse_snmp(&text))
}

/// `/proc/net/snmp`'s text (pairs of lines: `Group: names...`, `Group: values...`) as
/// `Group.Name` counters (a negative value, such as `Tcp.MaxConn` -1, wraps).
pub(super) fn parse_snmp(text: &str) -> Vec<(String, u64)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for pair in lines.chunks(2) {
        if pair.len() < 2 {
            break;
        }
        let names: Vec<&str> = pair[0].split_whitespace().collect();
        let values: Vec<&str> = pair[1].split_whitespace().collect();
        let group = names[0].trim_end_matches(':');
        for (n, v) in names.iter().zip(&values).skip(1) {
            out.push((format!("{group}.{n}"), v.parse::<i64>().unwrap_or(0) as u64));
        }
    }
    out
}

pub(in crate::suites::tcp) fn counter(s: &[(String, u64)], name: &str) -> u64 {
    s.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v)
}

/// The kernel's namespace counters that tell what it made of the engine's frames.
pub(super) fn kernel_summary(ns: &Netns) -> String {
    match ns.enter(snmp) {
        Ok(Ok(k)) => [
            "Tcp.InSegs",
            "Tcp.OutSegs",
            "Tcp.RetransSegs",
            "Tcp.InErrs",
            "Tcp.InCsumErrors",
            "Tcp.OutRsts",
            "Tcp.AttemptFails",
            "Ip.InHdrErrors",
            "Icmp.InEchoReps",
        ]
        .iter()
        .map(|n| format!("{n} {}", counter(&k, n)))
        .collect::<Vec<_>>()
        .join(", "),
        Ok(Err(e)) | Err(e) => e,
    }
}

/// The kernel's `TCP_INFO` of socket `fd`.
pub(super) fn tcp_info(fd: i32) -> Result<libc::tcp_info, String> {
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut ti as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if r != 0 {
        return Err(os_err("TCP_INFO"));
    }
    Ok(ti)
}

/// What a stalled kernel socket says about itself: state, congestion state, retransmission
/// and probe counts, backoff, RTO, unacknowledged segments, congestion window, time since it
/// last sent data and last received an ACK.
pub(super) fn show_tcp_info(ti: &libc::tcp_info) -> String {
    format!(
        "state {}, ca_state {}, retransmits {}, probes {}, backoff {}, rto {} us, unacked {}, \
         cwnd {}, ssthresh {}, total_retrans {}, last data sent {} ms ago, last ACK received \
         {} ms ago",
        ti.tcpi_state,
        ti.tcpi_ca_state,
        ti.tcpi_retransmits,
        ti.tcpi_probes,
        ti.tcpi_backoff,
        ti.tcpi_rto,
        ti.tcpi_unacked,
        ti.tcpi_snd_cwnd,
        ti.tcpi_snd_ssthresh,
        ti.tcpi_total_retrans,
        ti.tcpi_last_data_sent,
        ti.tcpi_last_ack_recv
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snmp_text_is_read_by_group_and_name() {
        let text = "Ip: Forwarding DefaultTTL InReceives\nIp: 2 64 17\n\
                    Tcp: RtoAlgorithm MaxConn InSegs InCsumErrors\nTcp: 1 -1 42 0\n";
        let k = parse_snmp(text);
        assert_eq!(counter(&k, "Ip.InReceives"), 17);
        assert_eq!(counter(&k, "Tcp.InSegs"), 42);
        assert_eq!(counter(&k, "Tcp.MaxConn"), u64::MAX);
        assert_eq!(counter(&k, "Tcp.Nothing"), 0);
    }
}
