"""What every headless-Chromium check script repeats around cdp.py: a check that prints what it
verified, a bounded wait for something on the page, a browser in a throw-away profile that is
always closed, and a main that turns a failed check or a DevTools error into exit status 1.

    import browser_checks
    from browser_checks import check

    def run(args):
        with browser_checks.chromium("my-check-", args.chromium) as browser:
            page = browser.page()
            ...
            check(ok, "what was verified")

    sys.exit(browser_checks.main(run, args, "my check passed"))
"""

import contextlib
import sys
import tempfile
import time

import cdp

CdpError = cdp.CdpError


class CheckFailed(Exception):
    pass


def check(condition, what):
    """Raises CheckFailed(what) unless condition holds; prints "ok: what" when it does."""
    if not condition:
        raise CheckFailed(what)
    print(f"ok: {what}")


def wait_for(page, expression, what, seconds=30, reload_url=None, interval=0.2):
    """Evaluates `expression` on the page (after loading `reload_url` again each time, when
    given) until it is truthy, and returns it; CheckFailed naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        if reload_url is not None:
            page.navigate(reload_url)
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckFailed(f"timed out waiting for {what}")
        time.sleep(interval)


@contextlib.contextmanager
def chromium(profile_prefix, binary="chromium"):
    """A headless Chromium in a temporary profile, closed (and the profile removed) on exit."""
    # ignore_cleanup_errors: a crash dump or lock file written while the browser exits must not
    # turn a passed check into a failure.
    with tempfile.TemporaryDirectory(prefix=profile_prefix, ignore_cleanup_errors=True) as profile:
        browser = cdp.Chromium.launch(profile, binary=binary)
        try:
            yield browser
        finally:
            browser.close()


def main(run, args, passed_message):
    """run(args); 0 after printing passed_message, 1 after printing why a check failed."""
    try:
        run(args)
    except (CheckFailed, cdp.CdpError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print(passed_message)
    return 0
