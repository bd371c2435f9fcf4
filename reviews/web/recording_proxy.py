#!/usr/bin/env python3
"""A TCP proxy that records every byte a client sends to a server, for browser_test.sh: the
browser talks to reviews-web through it, and the test then checks that nothing the server
received contains the identity key or the review secret (issue 16).

    recording_proxy.py --target 127.0.0.1:8080 --record received.bin --port-file port.txt

Listens on 127.0.0.1 (a free port, written to --port-file once listening); each connection is
relayed both ways; client-to-server bytes are appended to --record. Runs until killed.
"""

import argparse
import socket
import threading


def pump(source, sink, record, lock):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if record is not None:
                with lock:
                    record.write(data)
                    record.flush()
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="host:port of the server")
    parser.add_argument("--record", required=True, help="file the client's bytes go to")
    parser.add_argument("--port-file", required=True, help="where the listening port is written")
    args = parser.parse_args()
    host, port = args.target.rsplit(":", 1)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    lock = threading.Lock()
    with open(args.record, "ab") as record:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(listener.getsockname()[1]))
        import os
        os.replace(args.port_file + ".tmp", args.port_file)
        while True:
            client, _ = listener.accept()
            server = socket.create_connection((host, int(port)))
            threading.Thread(target=pump, args=(client, server, record, lock), daemon=True).start()
            threading.Thread(target=pump, args=(server, client, None, lock), daemon=True).start()


if __name__ == "__main__":
    main()
