"""What an oversized upload costs the labelling server: a chunked POST of ``--mb`` MB (no
Content-Length, so a cap that reads only the header never sees it) to ``genir-eval label``
over the hostile test run, and the server's peak RSS (``VmHWM`` of its process) before and
after, with the status it answered.

    python bench/bench_label_upload.py              # 256 MB
    python bench/bench_label_upload.py --mb 64
"""

from __future__ import annotations

import argparse
import re
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "label"))

from label_helpers import label_server, make_run  # noqa: E402


def _peak_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(found.group(1)) / 1024 if found else float("nan")


def _upload(port: int, megabytes: int) -> tuple[str, int]:
    """The status line the server answered and how many bytes were sent before it did."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=300) as sock:
        sock.sendall(
            f"POST /api/queues/turn_satisfaction/undo HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
        try:
            for _ in range(megabytes):
                sock.sendall(chunk)
                sent += 1 << 20
            sock.sendall(b"0\r\n\r\n")
        except OSError:  # the server answered and closed while the upload went on
            pass
        reply = b""
        while b"\r\n" not in reply:
            part = sock.recv(65536)
            if not part:
                break
            reply += part
    return reply.split(b"\r\n", 1)[0].decode("latin-1"), sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=256, help="megabytes to upload")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        run = make_run(Path(folder) / "hostile")
        with label_server(run, "--store", str(Path(folder) / "l.sqlite")) as (url, process):
            port = int(url.rstrip("/").rsplit(":", 1)[1])
            before = _peak_mb(process.pid)
            start = time.monotonic()
            status, sent = _upload(port, args.mb)
            took = time.monotonic() - start
            after = _peak_mb(process.pid)
    print(f"{args.mb} MB chunked POST: {status!r} after {took:.1f} s, {sent >> 20} MB sent")
    print(f"server peak RSS {before:.0f} MB before, {after:.0f} MB after")


if __name__ == "__main__":
    main()
