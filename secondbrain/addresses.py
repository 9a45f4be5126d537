"""Which network addresses a server-side request may reach: the guard against server-side request forgery
(SSRF) the fetcher applies to every connection and the gateway to a URL before it is queued.

Only public internet addresses are allowed, unless the operator lists networks to allow
(``SB_FETCH_ALLOW_NETWORKS``).
"""

from __future__ import annotations

import ipaddress
import socket

from secondbrain.errors import PermanentError, RetryableError

Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def parse_networks(text: str) -> Networks:
    """``"10.1.2.0/24, 192.168.5.7"`` as networks; ``ValueError`` naming a bad entry."""
    out = []
    for item in (x.strip() for x in text.split(",")):
        if item:
            try:
                out.append(ipaddress.ip_network(item, strict=False))
            except ValueError as exc:
                raise ValueError(f"{item!r} is not a network such as 10.1.2.0/24") from exc
    return tuple(out)


def literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host written as an IP literal means, in any form a resolver accepts
    (``127.0.0.1``, ``2130706433``, ``0x7f000001``, ``0177.1``, ``[::ffff:127.0.0.1]``); None for a name."""
    host = host.strip().strip("[]")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host) and host[0].isdigit():
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def address_problem(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, allowed: Networks = ()) -> str | None:
    """Why ``ip`` must not be fetched from, or None for a public (or explicitly allowed) address."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip.version == net.version and ip in net for net in allowed):
        return None
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "the unspecified address (it reaches this machine)"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private network address"
    if ip.is_multicast or ip.is_reserved or not ip.is_global:
        return "not a public internet address"
    return None


def check_host_allowed(host: str, allowed: Networks = ()) -> None:
    """Refuse a host that is, or resolves to, a loopback, private, link-local or other non-public address.

    Every address the name resolves to must be public: one private answer is enough for a
    server-side request to reach the inside of the network.
    """
    public_address(host, allowed)


def public_address(host: str, allowed: Networks = ()) -> str:
    """Resolve ``host`` once, check every address, and return the one to connect to.

    Connecting to the address that was checked (never resolving again) is what defeats DNS
    rebinding, where a name answers a public address to the check and a private one to the
    connection.
    """
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno == getattr(socket, "EAI_AGAIN", None):
            raise RetryableError(f"the name {host} could not be looked up right now ({exc.strerror})") from exc
        raise PermanentError(f"the host {host} could not be found (DNS lookup failed)") from exc
    addresses = [str(info[4][0]).split("%")[0] for info in infos]  # drop an IPv6 zone id
    for address in addresses:
        problem = address_problem(ipaddress.ip_address(address), allowed)
        if problem:
            raise PermanentError(f"fetching from {host} is not allowed: {address} is {problem}, and this server "
                                 "only fetches public web pages")
    if not addresses:
        raise PermanentError(f"the host {host} could not be found (no addresses)")
    return addresses[0]
