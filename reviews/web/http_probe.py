#!/usr/bin/env python3
"""One HTTP request to reviews-web, checked: exit 0 when the answer has the expected status and
contains the expected text, 1 otherwise (printing what came back). For the answers a browser
session cannot easily reach in browser_test.sh (a review before the window opens, an unknown
item, the ledger gone).

    http_probe.py URL STATUS TEXT                         GET
    http_probe.py URL STATUS TEXT --field rating=3 --file key_file=alice.key.json
                                                          POST multipart/form-data
"""

import argparse
import os
import sys
import urllib.error
import urllib.request


def multipart(fields, files):
    boundary = "----probe" + os.urandom(8).hex()
    parts = []
    for name, value in fields:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     .encode() + value.encode() + b"\r\n")
    for name, path in files:
        with open(path, "rb") as f:
            data = f.read()
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                     f'filename="{os.path.basename(path)}"\r\n'
                     "Content-Type: application/json\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("status", type=int)
    parser.add_argument("text")
    parser.add_argument("--field", action="append", default=[], help="name=value (POST)")
    parser.add_argument("--file", action="append", default=[], help="name=path (POST)")
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()

    request = urllib.request.Request(args.url)
    if args.field or args.file:
        body, content_type = multipart([f.split("=", 1) for f in args.field],
                                       [f.split("=", 1) for f in args.file])
        request = urllib.request.Request(args.url, data=body, method="POST",
                                         headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            status, body = response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read().decode(errors="replace")
    what = f"{request.get_method()} {args.url}"
    if status != args.status or args.text not in body:
        print(f"FAIL: {what}: want {args.status} with '{args.text}', got {status}:\n{body}",
              file=sys.stderr)
        return 1
    print(f"ok: {what}: {status} with '{args.text}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
