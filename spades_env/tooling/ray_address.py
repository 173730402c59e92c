"""`--address` of a Ray cluster, checked at once (before a run folder is made): Ray itself
retries an address where nothing answers for minutes, deaf to SIGTERM. Shared by
`spades train --backend ray` and `spades tournament --backend ray` (so it lives in the
lowest package, below both); imports nothing heavy."""

from __future__ import annotations

import socket

#: Seconds to wait for the head to accept a connection.
CONNECT_TIMEOUT = 5.0


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse in one line (ValueError) an address that is not `auto`, a `ray://` URL or
    HOST:PORT, or a HOST:PORT where nothing accepts a connection."""
    if address == "auto" or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    host = host.strip("[]")  # [::1]:6379
    well_formed = host and port.isdigit() and 0 < int(port) < 65536
    if not well_formed or any(c.isspace() for c in host):
        raise ValueError(f"--address {address!r}: give auto or HOST:PORT (the head's, e.g. :6379)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise ValueError(
            f"--address {address}: nothing answers there ({reason}); "
            "start the head with `ray start --head --port=6379`"
        ) from None
